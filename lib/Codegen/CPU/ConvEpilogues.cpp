//===- ConvEpilogues.cpp - a conv's epilogue on its blocks ------*- C++ -*-===//
//
// nnx-outline-layers puts a convolution and its elementwise consumer (its
// epilogue: BatchNorm, ReLU, a residual add) in one kernel. ConvToMatmuls
// computes the conv as an scf.forall over blocks of its result; the
// epilogue then read the whole result back from memory and wrote another:
// ResNet-50's BatchNorms were 6% of its time at batch 16, memory-bound.
// Here the epilogue joins the conv's blocks:
//
// * Summed in place (a 1 x 1 conv, the patches): the forall's result,
//   reshaped, is the epilogue's operand. The epilogue's loops are collapsed
//   to the forall's shape (the reshape folds away), then it is tiled into
//   the forall (upstream's consumer fusion): each block gets its epilogue
//   while it is in cache. The conv's own result is then read nowhere else,
//   so each block's sums go to a temporary of the block's size rather than
//   to a whole tensor (sharedOutToTemporary).
// * By the phases (a wide result narrowed by an elementwise copy): the copy
//   and the epilogue become one generic (elementwise fusion), one pass
//   where there were two.
//
// Every element is computed by the same arithmetic in the same order: the
// results are bit for bit those of the unfused kernels.
//
//===----------------------------------------------------------------------===//
#include "MatmulSchedule.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/RegionUtils.h"

using namespace mlir;

namespace {
/// Whether `op` is an elementwise generic with one result: an epilogue.
bool isEpilogueGeneric(Operation *op) {
  auto generic = dyn_cast_or_null<linalg::GenericOp>(op);
  return generic && generic.hasPureTensorSemantics() &&
         generic->getNumResults() == 1 &&
         generic.getNumParallelLoops() == generic.getNumLoops();
}

/// The one use of `v`, if it has exactly one.
OpOperand *soleUse(Value v) {
  return v.hasOneUse() ? &*v.getUses().begin() : nullptr;
}

/// `v` folded where it is a reshape (the collapse_shape of an expand_shape
/// that the epilogue's collapse leaves on the forall's result).
Value foldReshape(Value v) {
  Operation *reshape = v.getDefiningOp<tensor::CollapseShapeOp>();
  SmallVector<OpFoldResult> folded;
  if (!reshape || failed(reshape->fold(folded)) || folded.size() != 1 ||
      !isa<Value>(folded[0]))
    return v;
  return cast<Value>(folded[0]);
}

/// The epilogue of `forall`'s result, collapsed to the result's shape so
/// that it reads the result itself: the result's one use is an
/// expand_shape (or nothing) whose one use is an elementwise generic
/// reading it through the identity. Null if there is none or its loops do
/// not collapse.
linalg::GenericOp collapsedEpilogue(RewriterBase &rewriter,
                                    scf::ForallOp forall) {
  // Upstream's consumer fusion tiles the consumer by the inserted block's
  // rank: a rank-reducing insert (a block of one image's rows of N x M x
  // F) would give it operands of the wrong rank.
  bool rankReducing =
      llvm::any_of(forall.getTerminator().getYieldingOps(), [](Operation &op) {
        auto insert = dyn_cast<tensor::ParallelInsertSliceOp>(op);
        return !insert || insert.getSourceType().getRank() !=
                              insert.getDestType().getRank();
      });
  OpOperand *use = soleUse(forall.getResult(0));
  if (rankReducing || !use)
    return {};
  auto expand = dyn_cast<tensor::ExpandShapeOp>(use->getOwner());
  if (expand && !(use = soleUse(expand.getResult())))
    return {};
  auto epilogue = dyn_cast<linalg::GenericOp>(use->getOwner());
  if (!isEpilogueGeneric(epilogue) ||
      !epilogue.getMatchingIndexingMap(use).isIdentity())
    return {};
  if (!expand)
    return epilogue;
  SmallVector<ReassociationIndices> groups;
  for (ReassociationIndices group : expand.getReassociationIndices())
    if (group.size() > 1)
      groups.push_back(group);
  if (!linalg::areDimSequencesPreserved(epilogue.getIndexingMapsArray(),
                                        groups))
    return {};
  rewriter.setInsertionPoint(epilogue);
  FailureOr<linalg::CollapseResult> collapsed =
      linalg::collapseOpIterationDims(epilogue, groups, rewriter);
  if (failed(collapsed))
    return {};
  rewriter.replaceOp(epilogue, collapsed->results);
  auto generic = cast<linalg::GenericOp>(collapsed->collapsedOp.getOperation());
  for (OpOperand &operand : generic->getOpOperands())
    operand.set(foldReshape(operand.get()));
  return generic;
}

/// Erases the users of `v` that are dead once their own dead users are,
/// the sizes read of a reshape of it taken from the reshape's sizes.
void eraseDeadUsers(RewriterBase &rewriter, Value v) {
  if (auto expand = v.getDefiningOp<tensor::ExpandShapeOp>()) {
    for (Operation *user : llvm::make_early_inc_range(v.getUsers())) {
      auto dim = dyn_cast<tensor::DimOp>(user);
      std::optional<int64_t> d = dim ? dim.getConstantIndex() : std::nullopt;
      if (!d)
        continue;
      rewriter.setInsertionPoint(dim);
      rewriter.replaceOp(
          dim, getValueOrCreateConstantIndexOp(
                   rewriter, dim.getLoc(), expand.getMixedOutputShape()[*d]));
    }
  }
  for (Operation *user : llvm::make_early_inc_range(v.getUsers())) {
    for (Value result : user->getResults())
      eraseDeadUsers(rewriter, result);
    if (isOpTriviallyDead(user))
      rewriter.eraseOp(user);
  }
}

/// Shared output `i` of `forall`, whose result is used nowhere, as a
/// temporary of each iteration: its blocks, only ever filled before they
/// are read, are taken from a tensor.empty and no longer inserted, so
/// bufferization gives each iteration a buffer of the block's size instead
/// of a whole tensor written out to memory. False (nothing changed) if the
/// shared output is read otherwise (a conv's bias, broadcast into it).
bool sharedOutToTemporary(RewriterBase &rewriter, scf::ForallOp forall,
                          unsigned i) {
  BlockArgument shared = forall.getRegionIterArgs()[i];
  // The reshapes the epilogue read the result through are dead now.
  eraseDeadUsers(rewriter, forall.getResult(i));
  if (!forall.getResult(i).use_empty())
    return false;
  // Consumer fusion leaves dead reads of the block behind.
  for (Operation &op : llvm::make_early_inc_range(
           llvm::reverse(forall.getBody()->getOperations())))
    if (isOpTriviallyDead(&op))
      rewriter.eraseOp(&op);
  SmallVector<tensor::ExtractSliceOp> reads;
  SmallVector<Operation *> inserts;
  // A block read only to be filled (forallSlices' fill of a zero
  // accumulator): what the shared output held there is never seen.
  auto onlyFilled = [](tensor::ExtractSliceOp slice) {
    return llvm::all_of(slice->getUses(), [](OpOperand &use) {
      auto fill = dyn_cast<linalg::FillOp>(use.getOwner());
      return fill && fill.isDpsInit(&use);
    });
  };
  for (Operation *user : shared.getUsers()) {
    auto slice = dyn_cast<tensor::ExtractSliceOp>(user);
    if (slice && onlyFilled(slice))
      reads.push_back(slice);
    else if (isa<tensor::ParallelInsertSliceOp>(user))
      inserts.push_back(user);
    else
      return false;
  }
  for (tensor::ExtractSliceOp slice : reads) {
    SmallVector<OpFoldResult> sizes;
    llvm::SmallBitVector dropped = slice.getDroppedDims();
    for (auto [d, size] : llvm::enumerate(slice.getMixedSizes()))
      if (!dropped.test(d))
        sizes.push_back(size);
    rewriter.setInsertionPoint(slice);
    rewriter.replaceOpWithNewOp<tensor::EmptyOp>(
        slice, sizes, slice.getType().getElementType());
  }
  for (Operation *insert : inserts)
    rewriter.eraseOp(insert);
  return true;
}

/// The elementwise generic that alone defines `read` (the phases'
/// narrowing copy of the wide result, or of a block: ConvToMatmuls'
/// convByTapsInBlocks) and the epilogue generic reading it, fused into one
/// (one pass where there were two). False if `read` has no such producer.
bool fuseWithProducer(RewriterBase &rewriter, OpOperand *read) {
  Operation *consumer = read->getOwner();
  Operation *producer = read->get().getDefiningOp();
  if (!isEpilogueGeneric(consumer) || !isEpilogueGeneric(producer) ||
      !read->get().hasOneUse() || !linalg::areElementwiseOpsFusable(read))
    return false;
  rewriter.setInsertionPoint(consumer);
  FailureOr<linalg::ElementwiseOpFusionResult> fused =
      linalg::fuseElementwiseOps(rewriter, read);
  if (failed(fused))
    return false;
  for (auto [original, replacement] : fused->replacements)
    if (original.getDefiningOp() == consumer)
      rewriter.replaceAllUsesWith(original, replacement);
  rewriter.eraseOp(consumer);
  if (producer->use_empty())
    rewriter.eraseOp(producer);
  return true;
}

/// The phases' narrowing copy of `forall`'s wide result (an elementwise
/// generic reading a slice of it) and the epilogue that reads the copy,
/// fused into one generic. False if there are not both.
bool fuseNarrowingCopy(RewriterBase &rewriter, scf::ForallOp forall) {
  Value v = forall.getResult(0);
  while (OpOperand *use = soleUse(v)) {
    Operation *user = use->getOwner();
    if (!isa<tensor::ExpandShapeOp, tensor::ExtractSliceOp>(user))
      break;
    v = user->getResult(0);
  }
  OpOperand *use = soleUse(v);
  if (!use || !isEpilogueGeneric(use->getOwner()))
    return false;
  OpOperand *read = soleUse(use->getOwner()->getResult(0));
  return read && fuseWithProducer(rewriter, read);
}
} // namespace

void mlir::nnx::fuseConvEpilogues(Operation *root) {
  // ConvToMatmuls reshapes its result more than once: one reshape each.
  MLIRContext *context = root->getContext();
  RewritePatternSet reshapes(context);
  tensor::ExpandShapeOp::getCanonicalizationPatterns(reshapes, context);
  tensor::CollapseShapeOp::getCanonicalizationPatterns(reshapes, context);
  (void)applyPatternsGreedily(root, std::move(reshapes));
  SmallVector<scf::ForallOp> foralls;
  root->walk([&](scf::ForallOp forall) {
    if (forall->getNumResults() == 1 &&
        isa<func::FuncOp>(forall->getParentOp()))
      foralls.push_back(forall);
  });
  IRRewriter rewriter(root->getContext());
  for (scf::ForallOp forall : foralls) {
    if (fuseNarrowingCopy(rewriter, forall))
      continue;
    linalg::GenericOp epilogue = collapsedEpilogue(rewriter, forall);
    if (!epilogue)
      continue;
    // What else the epilogue reads (BatchNorm's scale, a residual) is
    // computed ahead of the forall, which the fused epilogue reads it in.
    SmallVector<Value> operands;
    for (Value v : epilogue->getOperands())
      if (v != forall.getResult(0))
        operands.push_back(v);
    DominanceInfo dominance(forall->getParentOp());
    if (failed(moveValueDefinitions(rewriter, operands, forall, dominance)))
      continue;
    SmallVector<LoopLikeOpInterface> loops{forall};
    rewriter.setInsertionPoint(epilogue);
    FailureOr<scf::SCFFuseConsumerOfSliceResult> fused =
        scf::tileAndFuseConsumer(rewriter, epilogue, loops);
    if (failed(fused))
      continue;
    if (epilogue->use_empty())
      rewriter.eraseOp(epilogue);
    auto grown = cast<scf::ForallOp>(loops.front().getOperation());
    (void)sharedOutToTemporary(rewriter, grown, 0);
    for (OpOperand *read : fused->tiledAndFusedConsumerOperands)
      (void)fuseWithProducer(rewriter, read);
  }
}
