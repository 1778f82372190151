//===- TensorUtils.h - reading and making parameter tensors -----*- C++ -*-===//
#ifndef NNX_DIALECT_NNX_IR_TENSORUTILS_H
#define NNX_DIALECT_NNX_IR_TENSORUTILS_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Support/LLVM.h"
#include <vector>

namespace mlir::nnx {

/// The values of a floating-point tensor attribute (dense, splat or
/// dense_resource), widened to double, in row-major order. An
/// #nnx.external tensor needs its model's weights file: read its bytes with
/// getTensorData (Weights.h) and decode them with decodeFloatTensor.
FailureOr<std::vector<double>> readTensor(ElementsAttr attr);

/// The values of the row-major little-endian bytes `data` of a float
/// tensor of `type` (f16, bf16, f32, f64), widened to double; failure if
/// the size does not match.
FailureOr<std::vector<double>> decodeFloatTensor(ArrayRef<char> data,
                                                 ShapedType type);

/// Tensors up to this size that surgery creates are `dense<...>` literals,
/// readable in the IR; larger ones are `dense_resource` blobs.
inline constexpr size_t kMaxDenseTensorBytes = 1024;

/// A tensor attribute of `type` holding `values` (rounded to the element
/// type, which may be any float type): `dense<...>` when it is a splat or at
/// most kMaxDenseTensorBytes, else a `dense_resource` blob (never a large
/// uniqued DenseElementsAttr).
ElementsAttr makeTensor(ShapedType type, ArrayRef<double> values);

/// `attr` as a DenseElementsAttr (copying a dense_resource blob if needed);
/// null if its data is unavailable.
DenseElementsAttr toDenseElements(ElementsAttr attr);

} // namespace mlir::nnx

#endif // NNX_DIALECT_NNX_IR_TENSORUTILS_H
