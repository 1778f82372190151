//===- FunctionalLowering.h - nnx-lower-functional internals ----*- C++ -*-===//
//
// Shared by the files of `nnx-lower-functional`: LowerFunctional.cpp (the
// pass), LowerFunctionalElementwise.cpp (one linalg.generic per op) and
// LowerFunctionalStructured.cpp (contractions, reshapes, reductions).
//
//===----------------------------------------------------------------------===//
#ifndef NNX_LIB_CONVERSION_NNXTOLINALG_FUNCTIONALLOWERING_H
#define NNX_LIB_CONVERSION_NNXTOLINALG_FUNCTIONALLOWERING_H

#include "mlir/IR/PatternMatch.h"

namespace mlir::nnx {

/// The sizes of `op`'s (single) result, from its shape function.
FailureOr<SmallVector<OpFoldResult>> getResultSizes(OpBuilder &b,
                                                    Operation *op);

/// A `tensor.empty` of `op`'s result type and sizes.
FailureOr<Value> emptyResult(OpBuilder &b, Operation *op);

/// The constant zero (false for i1) of scalar type `type`.
Value zeroOf(OpBuilder &b, Location loc, Type type);

/// The affine map of an operand of `operandShape` in a `linalg.generic`
/// with `numLoops` loops, the first `resultShape.size()` of which run over
/// the broadcast result, followed by `extra` expressions.
AffineMap broadcastMap(ArrayRef<int64_t> operandShape,
                       ArrayRef<int64_t> resultShape, unsigned numLoops,
                       ArrayRef<AffineExpr> extra, MLIRContext *context);

/// Binary ops, where, activations, dropout, tril/triu, arange.
void populateFunctionalElementwisePatterns(RewritePatternSet &patterns);
/// matmul, reshape, expand, permute, softmax, mean, sum.
void populateFunctionalStructuredPatterns(RewritePatternSet &patterns);

} // namespace mlir::nnx

#endif // NNX_LIB_CONVERSION_NNXTOLINALG_FUNCTIONALLOWERING_H
