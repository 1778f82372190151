//===- FuseElementwise.cpp - elementwise fusion that keeps contractions ---===//
//
// Upstream's linalg-fuse-elementwise-ops, except that no producer is fused
// into a contraction (a generic whose body is `out + a * b` over a
// reduction loop, what nnx.fn.matmul lowers to). Fused, the contraction's
// body is no longer a multiply-add: the CPU schedule (and the CUDA
// contraction kernel) no longer recognize it and it runs as scalar loops
// of a rounded multiply and an add instead of vector FMAs. Whether a
// producer fuses depends on its uses, so a probe that reads the operand
// (one use more) or writes it (no producer left) would change how the
// contraction computes every one of its values: probes must observe, not
// perturb (docs/Tracing.md).
//
// Nor is a tensor.expand_shape folded into its producer unless its sizes
// provably split the producer's dims. Sizes that are not proven are
// checked at run time beside the reshape (nnx-lower-functional); folded,
// the producer would compute in the claimed shape, and write past its
// buffer, before that check ran.
//
//===----------------------------------------------------------------------===//
#include "Stages.h"
#include "nnx/Codegen/CPU/MulAdd.h"
#include "nnx/Support/SizeProofs.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/IR/ValueBoundsOpInterfaceImpl.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/ValueBoundsOpInterfaceImpl.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/IR/ValueBoundsOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace {
/// Whether `op` is a named contraction (a Linear's `linalg.matmul`: folding
/// a flatten into it made it a 5-D generic the schedule does not tile) or a
/// generic with a reduction loop whose body is `out + a * b` on floats
/// (either order of either operation).
bool isMulAddContraction(Operation *op) {
  auto linalgOp = dyn_cast_or_null<linalg::LinalgOp>(op);
  if (linalgOp && !isa<linalg::GenericOp>(op) &&
      linalg::isaContractionOpInterface(linalgOp))
    return true;
  auto generic = dyn_cast_or_null<linalg::GenericOp>(op);
  if (!generic || generic.getNumReductionLoops() == 0 ||
      generic.getNumDpsInputs() != 2 || generic.getNumDpsInits() != 1)
    return false;
  return mlir::nnx::isMulAddBody(generic);
}

/// Whether the result sizes of every group of `expand` provably multiply to
/// the source dim the group splits (each group has at most one dynamic
/// size, as nnx-lower-functional writes them; another is not proven).
bool hasProvenSizes(tensor::ExpandShapeOp expand) {
  using Variable = ValueBoundsConstraintSet::Variable;
  Builder b(expand.getContext());
  SmallVector<OpFoldResult> sizes = expand.getMixedOutputShape();
  for (auto [d, group] : llvm::enumerate(expand.getReassociationIndices())) {
    int64_t factor = 1;
    std::optional<OpFoldResult> dynamic;
    for (int64_t i : group) {
      if (std::optional<int64_t> c = getConstantIntValue(sizes[i]))
        factor *= *c;
      else if (dynamic)
        return false;
      else
        dynamic = sizes[i];
    }
    Variable claimed =
        dynamic ? Variable(AffineMap::get(1, 0, b.getAffineDimExpr(0) * factor),
                           ArrayRef<Variable>{Variable(*dynamic)})
                : Variable(OpFoldResult(b.getIndexAttr(factor)));
    if (!nnx::isProvablyEqual(claimed, Variable(expand.getSrc(), d)))
      return false;
  }
  return true;
}

/// Whether fusing `producer` into the consumer that reads it through `map`
/// recomputes more than a load would cost: a broadcast (the consumer has
/// more loops than the map has results, so each produced value is computed
/// once per broadcast element) of a body that divides, calls math or does
/// more than two operations. BatchNorm's per-channel scale, w / sqrt(var +
/// eps), fused into its N x C x H x W consumer was a square root and a
/// division per element; its shift, b - mean * scale (two operations), is
/// fused. nnx-outline-layers puts the scale in its consumer's kernel.
bool recomputesBroadcast(Operation *producer, AffineMap map) {
  if (map.isPermutation())
    return false;
  auto generic = dyn_cast<linalg::GenericOp>(producer);
  if (!generic)
    return false;
  Block &body = generic.getRegion().front();
  if (body.getOperations().size() > 3)
    return true;
  return llvm::any_of(body.without_terminator(), [](Operation &op) {
    return isa<arith::DivFOp, arith::RemFOp>(op) ||
           op.getDialect()->getNamespace() == "math";
  });
}

/// How many times the fusion patterns sweep a function at most.
constexpr int64_t kMaxSweeps = 64;

struct FuseElementwisePass
    : public PassWrapper<FuseElementwisePass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(FuseElementwisePass)

  StringRef getArgument() const final { return "nnx-fuse-elementwise"; }
  StringRef getDescription() const final {
    return "linalg-fuse-elementwise-ops, no producer fused into a "
           "contraction";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<affine::AffineDialect, linalg::LinalgDialect,
                    memref::MemRefDialect, tensor::TensorDialect>();
    arith::registerValueBoundsOpInterfaceExternalModels(registry);
    linalg::registerValueBoundsOpInterfaceExternalModels(registry);
    tensor::registerValueBoundsOpInterfaceExternalModels(registry);
  }

  void runOnOperation() override {
    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    // Upstream's default (a producer with one use), contractions kept, no
    // costly broadcast recomputed, and no reshape with unproven sizes
    // folded into its producer.
    linalg::ControlFusionFn control = [](OpOperand *fused) {
      Operation *producer = fused->get().getDefiningOp();
      if (!producer || !producer->hasOneUse() ||
          isMulAddContraction(fused->getOwner()))
        return false;
      if (auto consumer = dyn_cast<linalg::GenericOp>(fused->getOwner()))
        if (recomputesBroadcast(producer,
                                consumer.getMatchingIndexingMap(fused)))
          return false;
      auto expand = dyn_cast<tensor::ExpandShapeOp>(fused->getOwner());
      return !expand || hasProvenSizes(expand);
    };
    // The patterns of upstream's pass (LinalgElementwiseOpFusionPass).
    linalg::populateElementwiseOpsFusionPatterns(patterns, control);
    linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, control);
    tensor::populateBubbleUpExpandShapePatterns(patterns);
    affine::AffineApplyOp::getCanonicalizationPatterns(patterns, context);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, context);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, context);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, context);
    context->getLoadedDialect<linalg::LinalgDialect>()
        ->getCanonicalizationPatterns(patterns);
    linalg::populateConstantFoldLinalgOperations(patterns, control);
    // Sweeps until nothing fuses: a model whose fusions unlock others
    // layers deep (MaxViT's attention reshapes between channels-last convs)
    // needs more than the driver's default 10.
    if (failed(applyPatternsGreedily(
            getOperation(), std::move(patterns),
            GreedyRewriteConfig().setUseTopDownTraversal().setMaxIterations(
                kMaxSweeps)))) {
      getOperation().emitError("nnx-fuse-elementwise: the fusions did not "
                               "settle within ")
          << kMaxSweeps << " sweeps";
      return signalPassFailure();
    }
  }
};
} // namespace

std::unique_ptr<Pass> mlir::nnx::pipeline::createFuseElementwisePass() {
  return std::make_unique<FuseElementwisePass>();
}

void mlir::nnx::pipeline::registerFuseElementwisePass() {
  PassRegistration<FuseElementwisePass>();
}
