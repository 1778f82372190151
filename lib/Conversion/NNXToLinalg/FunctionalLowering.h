//===- FunctionalLowering.h - nnx-lower-functional internals ----*- C++ -*-===//
//
// Shared by the files of `nnx-lower-functional`: LowerFunctional.cpp (the
// pass), LowerFunctionalElementwise.cpp (one linalg.generic per op),
// LowerFunctionalStructured.cpp (contractions, reshapes, reductions),
// LowerFunctionalIndexing.cpp (gather, index_select, topk, cumsum) and
// LowerFunctionalPooling.cpp (the pools).
//
//===----------------------------------------------------------------------===//
#ifndef NNX_LIB_CONVERSION_NNXTOLINALG_FUNCTIONALLOWERING_H
#define NNX_LIB_CONVERSION_NNXTOLINALG_FUNCTIONALLOWERING_H

#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

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

//===----------------------------------------------------------------------===//
// Run-time checks (RuntimeChecks.cpp; the rule is in docs/Lowering.md)
//===----------------------------------------------------------------------===//

/// Before `lowered` (the lowering of `source`): every dynamic operand dim
/// that indexes a loop another operand dim indexes must equal it (the
/// contracted dim of a matmul, the dims of a broadcast that do not
/// broadcast). `operandNames` names the operands in messages ("lhs", ...).
void emitLoopChecks(OpBuilder &b, linalg::LinalgOp lowered, Operation *source,
                    ArrayRef<StringRef> operandNames);

/// At `b`'s insertion point: `sizes` (a reshape of `source`) hold as many
/// elements as `input`.
void emitElementCountCheck(OpBuilder &b, Location loc, Operation *source,
                           Value input, ArrayRef<OpFoldResult> sizes);

/// At `b`'s insertion point: for a reshape of `source` lowered to
/// tensor.expand_shape / collapse_shape with `groups` (group `d` of the
/// `longer` sizes for dim `d` of the `shorter` ones), each group holds as
/// many elements as its dim. `resultIsLonger`: the result's sizes are
/// `longer` (an expansion), else the input's.
void emitReshapeGroupChecks(OpBuilder &b, Location loc, Operation *source,
                            ArrayRef<OpFoldResult> longer,
                            ArrayRef<OpFoldResult> shorter,
                            ArrayRef<ReassociationIndices> groups,
                            bool resultIsLonger);

/// Before `op`: its operands agree in every dim but the concatenated one.
void emitConcatChecks(OpBuilder &b, tensor::ConcatOp op);

/// Before `op` (an extract_slice of `source`, or an insert_slice into it):
/// the slice lies inside `source`.
void emitSliceChecks(OpBuilder &b, OffsetSizeAndStrideOpInterface op,
                     Value source);

/// At `b`'s insertion point: every element of `indices` (integers) of
/// `source` lies in [0, bound) (`bound`: an index value, the size of the
/// input's dimension `dim`). A reduction over the indices finds the first
/// bad one in row-major order; the failure names it and the size. The data
/// is read, so the check costs one pass over the indices.
void emitIndexRangeCheck(OpBuilder &b, Location loc, Operation *source,
                         Value indices, Value bound, int64_t dim);

/// Resolves the sizes the checks under `root` compare through the ops that
/// produce them and folds them; a check that holds in every run goes away.
void simplifyRuntimeChecks(Operation *root);

/// Binary ops, where, activations, dropout, tril/triu, arange.
void populateFunctionalElementwisePatterns(RewritePatternSet &patterns);
/// matmul, reshape, expand, permute, softmax, mean, sum, amax, amin.
void populateFunctionalStructuredPatterns(RewritePatternSet &patterns);
/// gather, index_select, topk, cumsum.
void populateFunctionalIndexingPatterns(RewritePatternSet &patterns);
/// max_pool2d, avg_pool2d, adaptive_avg_pool2d.
void populateFunctionalPoolingPatterns(RewritePatternSet &patterns);

} // namespace mlir::nnx

#endif // NNX_LIB_CONVERSION_NNXTOLINALG_FUNCTIONALLOWERING_H
