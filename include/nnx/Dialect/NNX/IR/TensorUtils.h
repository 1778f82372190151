//===- TensorUtils.h - reading and making parameter tensors -----*- C++ -*-===//
#ifndef NNX_DIALECT_NNX_IR_TENSORUTILS_H
#define NNX_DIALECT_NNX_IR_TENSORUTILS_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Support/LLVM.h"
#include <vector>

namespace mlir::nnx {

/// The values of a floating-point tensor attribute (dense, splat or
/// dense_resource), widened to double, in row-major order.
FailureOr<std::vector<double>> readTensor(ElementsAttr attr);

/// A dense tensor attribute of `type` holding `values` (rounded to the
/// element type, which may be any float type).
ElementsAttr makeTensor(ShapedType type, ArrayRef<double> values);

/// `attr` as a DenseElementsAttr (copying a dense_resource blob if needed);
/// null if its data is unavailable.
DenseElementsAttr toDenseElements(ElementsAttr attr);

} // namespace mlir::nnx

#endif // NNX_DIALECT_NNX_IR_TENSORUTILS_H
