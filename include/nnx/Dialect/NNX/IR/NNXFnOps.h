//===- NNXFnOps.h - nnx.fn functional ops -----------------------*- C++ -*-===//
//
// The functional ops of forward regions (NNXFnOps.td). Include this header,
// not the generated ones.
//
//===----------------------------------------------------------------------===//
#ifndef NNX_DIALECT_NNX_IR_NNXFNOPS_H
#define NNX_DIALECT_NNX_IR_NNXFNOPS_H

#include "nnx/Dialect/NNX/IR/NNXOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include "nnx/Dialect/NNX/IR/NNXFnEnums.h.inc"

namespace mlir::nnx {

/// Marks the `nnx.fn` ops: pure ops on ranked tensors (and `nnx.fn.guard`,
/// a run-time check on index values) that nnx-build-forward accepts in
/// forward regions and nnx-lower-functional rewrites.
template <typename ConcreteType>
class FunctionalOpTrait
    : public OpTrait::TraitBase<ConcreteType, FunctionalOpTrait> {};

/// Whether `op` is an `nnx.fn` op.
inline bool isFunctionalOp(Operation *op) {
  return op->hasTrait<FunctionalOpTrait>();
}

/// Whether `kind` compares (an i1 result).
inline bool isComparison(FnBinaryKind kind) {
  return kind >= FnBinaryKind::eq && kind <= FnBinaryKind::ge;
}

/// Whether `kind` is a logical op (i1 operands and result).
inline bool isLogical(FnBinaryKind kind) {
  return kind >= FnBinaryKind::logical_and;
}

// The verifier and shape function of each family of ops (NNXFnOps.cpp).
#define NNX_FN_FAMILY(Family)                                                  \
  LogicalResult verifyFn##Family##Op(Operation *op);                           \
  LogicalResult reifyFn##Family##Op(OpBuilder &builder, Operation *op,         \
                                    ReifiedRankedShapedTypeDims &shapes);
NNX_FN_FAMILY(Binary)
NNX_FN_FAMILY(Where)
NNX_FN_FAMILY(Matmul)
NNX_FN_FAMILY(ShapeList)
NNX_FN_FAMILY(Permute)
NNX_FN_FAMILY(Softmax)
NNX_FN_FAMILY(Reduce)
NNX_FN_FAMILY(Activation)
NNX_FN_FAMILY(Dropout)
NNX_FN_FAMILY(Arange)
NNX_FN_FAMILY(Triangle)
NNX_FN_FAMILY(Gather)
NNX_FN_FAMILY(IndexSelect)
NNX_FN_FAMILY(Topk)
NNX_FN_FAMILY(Cumsum)
NNX_FN_FAMILY(Pool2d)
NNX_FN_FAMILY(AdaptiveAvgPool2d)
#undef NNX_FN_FAMILY

/// Which of `rank` dims a reduction (mean, sum, amax, amin) over `dims` keeps:
/// all but `dims` (negative ones count from the end), none when `dims` is
/// empty. `dims` must be in range.
SmallVector<bool> getReductionKeptDims(ArrayRef<int64_t> dims, int64_t rank);

/// The custom directive `custom<I64List>` (`[0, 2, 1, 3]`).
ParseResult parseI64List(OpAsmParser &parser, DenseI64ArrayAttr &values);
void printI64List(OpAsmPrinter &printer, Operation *op,
                  DenseI64ArrayAttr values);

} // namespace mlir::nnx

#include "nnx/Dialect/NNX/IR/NNXFnOpInterfaces.h.inc"

#define GET_OP_CLASSES
#include "nnx/Dialect/NNX/IR/NNXFnOps.h.inc"

#endif // NNX_DIALECT_NNX_IR_NNXFNOPS_H
