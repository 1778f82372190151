//===- Broadcast.h - the broadcasting rule of the nnx.fn ops ----*- C++ -*-===//
//
// One rule, used by the binary ops, nnx.fn.where, the batch dims of
// nnx.fn.matmul and nnx.fn.expand, for verifying, reifying and lowering:
// shapes are aligned from the right; an operand dim broadcasts only where it
// is a static 1 and the result's dim is not 1; any other operand dim equals
// the result's (static sizes are checked, a dynamic one is assumed equal at
// run time).
//
//===----------------------------------------------------------------------===//
#ifndef NNX_DIALECT_NNX_IR_BROADCAST_H
#define NNX_DIALECT_NNX_IR_BROADCAST_H

#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Support/LLVM.h"

#include <optional>
#include <utility>

namespace mlir::nnx {

/// Where the result's dims come from.
enum class BroadcastResult {
  /// From the operands (binary ops, where, matmul batch dims): the result
  /// has the largest rank, and a dim is static exactly when the operands
  /// determine it.
  Derived,
  /// From elsewhere (expand's size list): the result rank may exceed the
  /// operands', and a dim every operand broadcasts may be any size.
  Given,
};

/// One operand of a broadcast: its name in diagnostics and its shape.
struct BroadcastOperand {
  StringRef name;
  ArrayRef<int64_t> shape;
};

/// Checks that every operand broadcasts to `result` under `mode`. On failure
/// reports through `emitError` (the op's diagnostic; null: fail silently),
/// naming the dim and both sizes.
LogicalResult verifyBroadcast(ArrayRef<BroadcastOperand> operands,
                              ArrayRef<int64_t> result, BroadcastResult mode,
                              function_ref<InFlightDiagnostic()> emitError);

/// Whether an operand dim of `operandSize` is read at index 0 against a
/// result dim of `resultSize`.
bool isBroadcastDim(int64_t operandSize, int64_t resultSize);

/// The indexing expressions of an operand of `operandShape` inside loops
/// whose first `resultShape.size()` dims run over the result (right-aligned;
/// broadcast dims read index 0).
SmallVector<AffineExpr> getBroadcastExprs(ArrayRef<int64_t> operandShape,
                                          ArrayRef<int64_t> resultShape,
                                          MLIRContext *context);

/// For result dim `dim` of a broadcast of rank `resultRank`: an operand
/// (index) and its dim whose run-time size is the result's, i.e. one that is
/// dynamic and not broadcast there; none when no operand dim is dynamic.
std::optional<std::pair<unsigned, unsigned>>
getBroadcastSizeSource(ArrayRef<ArrayRef<int64_t>> shapes, unsigned resultRank,
                       unsigned dim);

} // namespace mlir::nnx

#endif // NNX_DIALECT_NNX_IR_BROADCAST_H
