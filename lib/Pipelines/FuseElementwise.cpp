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
//===----------------------------------------------------------------------===//
#include "Stages.h"
#include "nnx/Conversion/LinalgToCPU/MulAdd.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace {
/// Whether `op` is a generic with a reduction loop whose body is
/// `out + a * b` on floats (either order of either operation).
bool isMulAddContraction(Operation *op) {
  auto generic = dyn_cast_or_null<linalg::GenericOp>(op);
  if (!generic || generic.getNumReductionLoops() == 0 ||
      generic.getNumDpsInputs() != 2 || generic.getNumDpsInits() != 1)
    return false;
  return mlir::nnx::isMulAddBody(generic);
}

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
  }

  void runOnOperation() override {
    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    // Upstream's default (a producer with one use), contractions kept.
    linalg::ControlFusionFn control = [](OpOperand *fused) {
      Operation *producer = fused->get().getDefiningOp();
      return producer && producer->hasOneUse() &&
             !isMulAddContraction(fused->getOwner());
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
    if (failed(applyPatternsGreedily(
            getOperation(), std::move(patterns),
            GreedyRewriteConfig().setUseTopDownTraversal())))
      return signalPassFailure();
  }
};
} // namespace

std::unique_ptr<Pass> mlir::nnx::pipeline::createFuseElementwisePass() {
  return std::make_unique<FuseElementwisePass>();
}
