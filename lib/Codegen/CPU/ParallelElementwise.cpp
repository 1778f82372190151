//===- ParallelElementwise.cpp - elementwise loops among threads -*- C++ -*-=//
//
// The tile-matmul stage splits matmuls among threads (an scf.forall over
// their N cache tiles, or a conv's images and row blocks); everything else
// ran on one thread. A model's elementwise generics (BatchNorm, activations,
// residual adds, layout permutations) are memory-bound passes over whole
// activations: with two threads and only the matmuls split, a ResNet
// bottleneck ran 1.4x faster instead of 2x. Here each large elementwise
// generic at a function's top level becomes an scf.forall over blocks of
// its outer dims, each block a generic of at least kElementsPerBlock
// elements. Every element is still computed by the same arithmetic, so
// results do not depend on the thread count.
//
//===----------------------------------------------------------------------===//
#include "MatmulSchedule.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Interfaces/TilingInterface.h"

using namespace mlir;

namespace {
/// The elements one thread's block of an elementwise generic holds at
/// least: below that, the OpenMP dispatch costs more than it spreads.
constexpr int64_t kElementsPerBlock = 1 << 14;

/// Tile sizes that split `op`'s loops into blocks of at least
/// kElementsPerBlock elements: the outer loops one by one, the loop where
/// the inner ones reach the size in chunks, the inner ones whole. Empty if
/// the inner loops' sizes are not static or the whole op is smaller.
SmallVector<int64_t> blockSizes(linalg::GenericOp op) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t inner = 1;
  for (int64_t d = ranges.size() - 1; d >= 0; --d) {
    if (ShapedType::isDynamic(ranges[d]))
      return {};
    if (inner * ranges[d] >= kElementsPerBlock) {
      SmallVector<int64_t> sizes(ranges.size(), 0);
      for (int64_t outer = 0; outer < d; ++outer)
        sizes[outer] = 1;
      sizes[d] = llvm::divideCeil(kElementsPerBlock, inner);
      // A dim that holds a single block is not worth a loop.
      if (d == 0 && sizes[0] >= ranges[0])
        return {};
      return sizes;
    }
    inner *= ranges[d];
  }
  return {};
}

/// Whether `op` is an elementwise generic at its function's top level.
bool isTopLevelElementwise(linalg::GenericOp op) {
  return isa<func::FuncOp>(op->getParentOp()) && op.hasPureTensorSemantics() &&
         op.getNumLoops() > 0 && op.getNumParallelLoops() == op.getNumLoops();
}
} // namespace

void mlir::nnx::parallelizeElementwise(Operation *root) {
  SmallVector<linalg::GenericOp> generics;
  root->walk([&](linalg::GenericOp op) {
    if (isTopLevelElementwise(op))
      generics.push_back(op);
  });
  IRRewriter rewriter(root->getContext());
  for (linalg::GenericOp op : generics) {
    SmallVector<int64_t> sizes = blockSizes(op);
    if (sizes.empty())
      continue;
    scf::SCFTilingOptions options;
    options.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
    options.setTileSizes(getAsIndexOpFoldResult(root->getContext(), sizes));
    rewriter.setInsertionPoint(op);
    FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
        rewriter, cast<TilingInterface>(op.getOperation()), options);
    // An op the tiling refuses keeps its loops (on one thread).
    if (succeeded(tiled))
      rewriter.replaceOp(op, tiled->replacements);
  }
}
