//===- ResolveDims.h - tensor.dim of results, resolved once -----*- C++ -*-===//
//
// The sizes of a forward's tensors in terms of its arguments' sizes.
// Upstream's `resolve-shaped-type-result-dims` rewrites one `tensor.dim`
// of an op's result into dims of the op's operands, then rewrites those in
// turn: a size asked of the last layer walks back through every layer, and
// a forward asks for the sizes of all of them, so the rewrite is quadratic
// in depth (ResNet-152's shape functions: 5 s). `DimResolver` walks a block
// once, in order, and remembers what each size of each value resolved to:
// each op's result shapes are reified at most once.
//
//===----------------------------------------------------------------------===//
#ifndef NNX_SUPPORT_RESOLVEDIMS_H
#define NNX_SUPPORT_RESOLVEDIMS_H

#include "mlir/IR/Block.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir::nnx {

/// Resolves sizes of the ranked tensors of one block (`block`) to the sizes
/// they derive from: through destination-style ops to their inits, through
/// `tensor.empty` to its operands, through other ops by their
/// ReifyRankedShapedTypeOpInterface; a size of an argument, or of what
/// none of these describes, stays its `tensor.dim`.
class DimResolver {
public:
  explicit DimResolver(Block &block);

  /// The index value that is size `dim` of `value` (a ranked tensor
  /// defined in or above the block), created where it dominates every use
  /// of `value` in the block.
  Value resolve(Value value, int64_t dim);

  /// Replaces `dim` (a `tensor.dim` with a constant index, of a result of
  /// an op of the block) by the size it resolves to, and erases it (and its
  /// index, when nothing else uses it). Returns the replacement, or null
  /// when `dim` is left as it is (a size of an argument, say).
  Value replace(Operation *dim);

private:
  Value resolveResult(OpResult result, int64_t dim);
  Value reify(Operation *op, OpResult result, int64_t dim);
  Value createDim(Value value, int64_t dim);

  Block &block;
  OpBuilder builder;
  llvm::DenseMap<std::pair<Value, int64_t>, Value> sizes;
};

/// Replaces every `tensor.dim` (with a constant index) nested in `block`'s
/// ops by the size it resolves to; returns how many it replaced.
int64_t resolveDims(Block &block);

} // namespace mlir::nnx

#endif // NNX_SUPPORT_RESOLVEDIMS_H
