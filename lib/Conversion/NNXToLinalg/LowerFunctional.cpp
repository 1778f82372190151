//===- LowerFunctional.cpp - nnx.fn ops to linalg/tensor --------*- C++ -*-===//
//
// `nnx-lower-functional`: the pass, the helpers its pattern files share,
// and the upstream tensor ops it rewrites for the pipelines (tensor.concat,
// tensor.splat), and nnx.fn.guard. The other nnx.fn patterns are in
// LowerFunctionalElementwise.cpp, LowerFunctionalStructured.cpp and
// LowerFunctionalIndexing.cpp.
//
//===----------------------------------------------------------------------===//
#include "FunctionalLowering.h"
#include "nnx/Conversion/NNXToLinalg/LayerLowering.h"
#include "nnx/Conversion/NNXToLinalg/RuntimeChecks.h"
#include "nnx/Conversion/Passes.h"
#include "nnx/Dialect/NNX/IR/Broadcast.h"
#include "nnx/Dialect/NNX/IR/NNXFnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/IR/ValueBoundsOpInterfaceImpl.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/ValueBoundsOpInterfaceImpl.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/IR/ValueBoundsOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace mlir::nnx {
#define GEN_PASS_DEF_NNXLOWERFUNCTIONALPASS
#include "nnx/Conversion/Passes.h.inc"
} // namespace mlir::nnx

using namespace mlir;
using namespace mlir::nnx;

FailureOr<SmallVector<OpFoldResult>> mlir::nnx::getResultSizes(OpBuilder &b,
                                                               Operation *op) {
  ReifiedRankedShapedTypeDims shapes;
  if (failed(reifyResultShapes(b, op, shapes)) || shapes.size() != 1)
    return failure();
  return shapes.front();
}

FailureOr<Value> mlir::nnx::emptyResult(OpBuilder &b, Operation *op) {
  FailureOr<SmallVector<OpFoldResult>> sizes = getResultSizes(b, op);
  if (failed(sizes))
    return failure();
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  return tensor::EmptyOp::create(b, op->getLoc(), *sizes, type.getElementType())
      .getResult();
}

Value mlir::nnx::zeroOf(OpBuilder &b, Location loc, Type type) {
  return arith::ConstantOp::create(b, loc,
                                   cast<TypedAttr>(b.getZeroAttr(type)));
}

AffineMap mlir::nnx::broadcastMap(ArrayRef<int64_t> operandShape,
                                  ArrayRef<int64_t> resultShape,
                                  unsigned numLoops, ArrayRef<AffineExpr> extra,
                                  MLIRContext *context) {
  SmallVector<AffineExpr> exprs =
      getBroadcastExprs(operandShape, resultShape, context);
  llvm::append_range(exprs, extra);
  return AffineMap::get(numLoops, 0, exprs, context);
}

namespace {
/// A ranked `tensor.splat` (ones/zeros/full with run-time sizes) becomes a
/// `linalg.fill` of a `tensor.empty`, which both pipelines run as a loop.
struct SplatToFill : public OpRewritePattern<tensor::SplatOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::SplatOp op,
                                PatternRewriter &rewriter) const override {
    auto type = dyn_cast<RankedTensorType>(op.getType());
    if (!type)
      return rewriter.notifyMatchFailure(op, "not a ranked tensor");
    Value empty = tensor::EmptyOp::create(rewriter, op.getLoc(), type,
                                          op.getDynamicSizes());
    rewriter.replaceOpWithNewOp<linalg::FillOp>(op, op.getInput(), empty);
    return success();
  }
};

/// A guard becomes the run-time check it stands for (RuntimeChecks.h), with
/// its own message: the exporter wrote the model's source line into it.
struct LowerGuard : public OpRewritePattern<FnGuardOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(FnGuardOp op,
                                PatternRewriter &rewriter) const override {
    emitRuntimeCheck(rewriter, op.getLoc(), op.getPredicate(), op.getLhs(),
                     op.getRhs(), op.getMessage());
    rewriter.eraseOp(op);
    return success();
  }
};

/// Whether `op` is an nnx.fn op that computes on bf16 / f16 elements in
/// more than one rounded step (reductions, softmax, the activations, average
/// pools): under accumulate=f32 it runs in f32 (promoteNarrowFloatOps).
/// Matmuls accumulate in f32 in their own lowering; the elementwise binary
/// ops round once per op as they are.
bool computesInSteps(Operation *op) {
  if (!isa<FnSoftmaxOp, FnMeanOp, FnSumOp, FnCumsumOp, FnGeluOp, FnSiluOp,
           FnSigmoidOp, FnAvgPool2dOp, FnAdaptiveAvgPool2dOp>(op))
    return false;
  return llvm::any_of(op->getResultTypes(), [](Type t) {
    return isNarrowFloat(getElementTypeOrSelf(t));
  });
}

/// Runs each computesInSteps op of `func` in its compute type: narrow float
/// operands extended, the op cloned on them, its results rounded back once
/// (PyTorch's CPU kernels compute these in f32 and round the result).
void promoteNarrowFloatOps(func::FuncOp func) {
  FloatType compute = getComputeType(func);
  if (!compute)
    return;
  SmallVector<Operation *> ops;
  func.walk([&](Operation *op) {
    if (computesInSteps(op))
      ops.push_back(op);
  });
  for (Operation *op : ops) {
    OpBuilder b(op);
    Location loc = op->getLoc();
    IRMapping mapping;
    for (Value v : op->getOperands())
      if (isa<RankedTensorType>(v.getType()) &&
          isNarrowFloat(getElementTypeOrSelf(v.getType())))
        mapping.map(v, convertElements(b, loc, v, compute));
    Operation *wide = b.clone(*op, mapping);
    b.setInsertionPointAfter(wide);
    for (auto [narrow, result] :
         llvm::zip_equal(op->getResults(), wide->getResults())) {
      auto type = dyn_cast<RankedTensorType>(narrow.getType());
      if (!type || !isNarrowFloat(type.getElementType()))
        continue;
      result.setType(type.clone(compute));
      narrow.replaceAllUsesWith(
          convertElements(b, loc, result, type.getElementType()));
    }
    op->replaceAllUsesWith(wide->getResults());
    op->erase();
  }
}

struct NNXLowerFunctionalPass
    : public mlir::nnx::impl::NNXLowerFunctionalPassBase<
          NNXLowerFunctionalPass> {
  void getDependentDialects(DialectRegistry &registry) const override {
    NNXLowerFunctionalPassBase::getDependentDialects(registry);
    // The activations and softmax lower as the leaf layers do.
    registerLayerLoweringExternalModels(registry);
    // The run-time checks (RuntimeChecks.h), and the value bounds that
    // prove a reshape the identity.
    registry.insert<func::FuncDialect, LLVM::LLVMDialect, scf::SCFDialect>();
    arith::registerValueBoundsOpInterfaceExternalModels(registry);
    linalg::registerValueBoundsOpInterfaceExternalModels(registry);
    tensor::registerValueBoundsOpInterfaceExternalModels(registry);
  }
  void runOnOperation() override {
    // The upstream ops the exporter writes whose sizes must agree: checked
    // before they are rewritten (the nnx.fn patterns check their own).
    OpBuilder b(&getContext());
    getOperation()->walk([&](Operation *op) {
      if (auto concat = dyn_cast<tensor::ConcatOp>(op))
        emitConcatChecks(b, concat);
      else if (auto extract = dyn_cast<tensor::ExtractSliceOp>(op))
        emitSliceChecks(b, extract, extract.getSource());
      else if (auto insert = dyn_cast<tensor::InsertSliceOp>(op))
        emitSliceChecks(b, insert, insert.getDest());
    });
    getOperation()->walk(
        [](func::FuncOp func) { promoteNarrowFloatOps(func); });
    RewritePatternSet patterns(&getContext());
    populateFunctionalElementwisePatterns(patterns);
    populateFunctionalStructuredPatterns(patterns);
    populateFunctionalIndexingPatterns(patterns);
    populateFunctionalPoolingPatterns(patterns);
    tensor::populateDecomposeTensorConcatPatterns(patterns);
    patterns.add<SplatToFill, LowerGuard>(&getContext());
    walkAndApplyPatterns(getOperation(), std::move(patterns));
    // Every nnx.fn op has a pattern that applies to any op that verifies.
    WalkResult left = getOperation()->walk([](Operation *op) {
      if (!isFunctionalOp(op))
        return WalkResult::advance();
      op->emitOpError("could not be lowered to linalg (nnx-lower-functional)");
      return WalkResult::interrupt();
    });
    if (left.wasInterrupted())
      return signalPassFailure();
    simplifyRuntimeChecks(getOperation());
  }
};
} // namespace
