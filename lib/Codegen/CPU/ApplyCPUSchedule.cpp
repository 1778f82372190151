//===- ApplyCPUSchedule.cpp - nnx-apply-cpu-schedule -----------*- C++ -*-===//
//
// The pass: one stage of the matmul schedule (MatmulSchedule.cpp). Stage
// `tile-matmul` first rewrites convolutions (ConvToMatmuls.cpp) and batched
// contractions (BatchedContractions.cpp) into matmuls, pools into
// elementwise generics (PoolingTaps.cpp), and settles the weights' layouts
// (ParameterLayouts.cpp), then tiles, splits the row
// remainders (RowRemainders.cpp) and vectorizes; `lower-vectors` lowers the
// vectors to FMAs on buffers.
//
//===----------------------------------------------------------------------===//
#include "MatmulSchedule.h"

#include "nnx/Codegen/CPU/Layouts.h"
#include "nnx/Codegen/CPU/Passes.h"
#include "nnx/Dialect/NNX/IR/NNXOps.h"
#include "nnx/Dialect/NNX/IR/Target.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/TransformOps/DialectExtension.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/TransformOps/SCFTransformOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/SubsetInsertionOpInterfaceImpl.h"
#include "mlir/Dialect/Transform/IR/TransformOps.h"
#include "mlir/Dialect/Transform/LoopExtension/LoopExtension.h"
#include "mlir/Dialect/Transform/Transforms/TransformInterpreterUtils.h"
#include "mlir/Dialect/Vector/TransformOps/VectorTransformOps.h"
#include "mlir/Dialect/Vector/Transforms/SubsetOpInterfaceImpl.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cstring>
#include <memory>

namespace mlir::nnx {
#define GEN_PASS_DEF_NNXAPPLYCPUSCHEDULEPASS
#include "nnx/Codegen/CPU/Passes.h.inc"
} // namespace mlir::nnx

using namespace mlir;

namespace {
/// A linalg op on tensors whose static iteration domain is empty (a loop of
/// size 0: a batch of no rows) runs no iteration: its results are its
/// inits (a Linear on 0 rows gives 0 rows; a sum over nothing gives the
/// accumulator). Folded before the schedule, whose tiling cannot size
/// tiles of an empty loop.
struct FoldEmptyIterationDomain
    : public OpInterfaceRewritePattern<linalg::LinalgOp> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;

  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics() || !op.getShapesToLoopsMap())
      return rewriter.notifyMatchFailure(op, "not on tensors, or no loops");
    if (!llvm::is_contained(op.getStaticLoopRanges(), 0))
      return rewriter.notifyMatchFailure(op, "no empty loop");
    rewriter.replaceOp(op, op.getDpsInits());
    return success();
  }
};

struct NNXApplyCPUSchedulePass
    : public mlir::nnx::impl::NNXApplyCPUSchedulePassBase<
          NNXApplyCPUSchedulePass> {
  using Base::Base;

  void getDependentDialects(DialectRegistry &registry) const override {
    Base::getDependentDialects(registry);
    linalg::registerTransformDialectExtension(registry);
    scf::registerTransformDialectExtension(registry);
    transform::registerLoopExtension(registry);
    // Subset hoisting sees tensor slices and vector transfers through these.
    tensor::registerSubsetOpInterfaceExternalModels(registry);
    vector::registerSubsetOpInterfaceExternalModels(registry);
    vector::registerTransformDialectExtension(registry);
  }

  LogicalResult initialize(MLIRContext *context) override {
    if (vectorBits != 0 && vectorBits != 128 && vectorBits != 256 &&
        vectorBits != 512)
      return emitError(UnknownLoc::get(context))
             << "nnx-apply-cpu-schedule: vector-bits="
             << static_cast<unsigned>(vectorBits)
             << " is not a vector width the schedule knows (expected 0 for "
                "the module's target, 128, 256 or 512)";
    if (bf16Dot != "target" && bf16Dot != "on" && bf16Dot != "off")
      return emitError(UnknownLoc::get(context))
             << "nnx-apply-cpu-schedule: bf16-dot=" << bf16Dot
             << " is not a choice the schedule knows (expected target, on or "
                "off)";
    OwningOpRef<ModuleOp> parsed = nnx::parseMatmulSchedule(context, parallel);
    if (!parsed)
      return failure();
    library = std::make_shared<OwningOpRef<ModuleOp>>(std::move(parsed));
    return success();
  }

  void runOnOperation() override {
    // The tiles and the bf16 kernels follow the module's target (the
    // default target without one): vector-bits overrides its width, and
    // bf16-dot=target takes vdpbf16ps when it has AVX512_BF16 at 512 bits.
    nnx::TargetAttr target = nnx::getModuleTarget(getOperation());
    tileBits = vectorBits != 0 ? unsigned(vectorBits) : target.getVectorBits();
    useBF16Dot = bf16Dot == "on" || (bf16Dot == "target" && tileBits == 512 &&
                                     target.getAvx512Bf16());
    bool tiling = stage == nnx::CPUScheduleStage::TileMatmul;
    StringRef entry = tiling ? "tile_matmul" : "lower_vectors";
    if (tiling) {
      RewritePatternSet patterns(&getContext());
      patterns.add<FoldEmptyIterationDomain>(&getContext());
      nnx::populateBatchedContractionPatterns(patterns);
      nnx::populateConvToMatmulsPatterns(patterns);
      nnx::populatePoolingTapsPatterns(patterns);
      nnx::populateReductionLoopOrderPatterns(patterns);
      nnx::populateMatmulToDefaultLayoutPatterns(patterns);
      nnx::populateLayoutAlgebraPatterns(patterns);
      if (useBF16Dot)
        nnx::populateBF16PairMatmulPatterns(patterns);
      if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
        return signalPassFailure();
      nnx::fuseConvEpilogues(getOperation());
      // Layer kernels (nnx-outline-layers) read their weights through the
      // layouts their callers then bind; there those compose with the
      // callers' own (a convolution's HWCF weight, then its bf16 pairs).
      nnx::hoistKernelArgumentLayouts(getOperation());
      RewritePatternSet algebra(&getContext());
      nnx::populateLayoutAlgebraPatterns(algebra);
      if (failed(applyPatternsGreedily(getOperation(), std::move(algebra))))
        return signalPassFailure();
      for (auto func : getOperation().getOps<func::FuncOp>())
        nnx::foldParameterPermutations(func);
      const nnx::MatmulTiles &tiles = nnx::matmulTilesFor(tileBits);
      nnx::splitColumnRemainders(getOperation(), tiles.cacheN, tiles.regN);
    }
    if (!tiling) {
      nnx::lowerBF16PairContractions(getOperation(), parallel);
      nnx::vectorizeNarrowFloatElementwise(getOperation(), tileBits / 32);
      nnx::splitAccumulatorRows(getOperation());
    }
    if (failed(applySequence(entry)))
      return signalPassFailure();
    if (tiling) {
      nnx::splitRowRemainders(getOperation(),
                              nnx::matmulTilesFor(tileBits).regM);
      if (failed(applySequence("tile_registers_all")))
        return signalPassFailure();
      nnx::sumKBlocksFromZero(getOperation());
      if (parallel)
        nnx::parallelizeElementwise(getOperation());
    }
  }

  /// Applies the schedule's sequence `@name` to the module.
  LogicalResult applySequence(StringRef name) {
    ModuleOp lib = library->get();
    auto sequence = lib.lookupSymbol<transform::NamedSequenceOp>(name);
    if (!sequence)
      return getOperation().emitError("nnx-apply-cpu-schedule: no sequence @")
             << name;
    // The payload, then the tile sizes as !transform.param<i64> values.
    RaggedArray<transform::MappedValue> bindings;
    transform::MappedValue root = getOperation().getOperation();
    bindings.push_back(ArrayRef(root));
    Builder b(&getContext());
    for (int64_t size :
         nnx::scheduleParams(name, nnx::matmulTilesFor(tileBits))) {
      transform::MappedValue param = Attribute(b.getI64IntegerAttr(size));
      bindings.push_back(ArrayRef(param));
    }
    return transform::applyTransformNamedSequence(
        bindings,
        cast<transform::TransformOpInterface>(sequence.getOperation()), lib,
        transform::TransformOptions());
  }

private:
  // Shared by clones of the pass (parsed once in initialize()).
  std::shared_ptr<OwningOpRef<ModuleOp>> library;
  /// The width the tiles are chosen for (vector-bits, or the target's).
  unsigned tileBits = 0;
  /// Whether bf16 matmuls run as vdpbf16ps tiles (bf16-dot).
  bool useBF16Dot = false;
};
} // namespace
