//===- PrepareForward.cpp - everything nnx-run does before the target -----===//
//
// nnx-prepare-forward (Passes.td): model selection, probe requests, the
// forward, its shape functions and run-time checks, as one pass, so that
// `nnx-opt --nnx-prepare-forward --nnx-cpu-pipeline` produces the module
// CompiledModel::compile hands to the JIT.
//
//===----------------------------------------------------------------------===//
#include "nnx/Pipelines/Passes.h"
#include "nnx/Pipelines/ResultShapes.h"

#include "nnx/Conversion/NNXToLinalg/LayerLowering.h"
#include "nnx/Conversion/NNXToLinalg/NNXToLinalg.h"
#include "nnx/Dialect/NNX/IR/ModuleTree.h"
#include "nnx/Dialect/NNX/IR/NNXDialect.h"
#include "nnx/Dialect/NNX/IR/NNXOps.h"
#include "nnx/Dialect/NNX/Tracing/Passes.h"
#include "nnx/Dialect/NNX/Transforms/Surgery.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/IR/TensorInferTypeOpInterfaceImpl.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"

namespace mlir::nnx {
#define GEN_PASS_DEF_NNXPREPAREFORWARDPASS
#include "nnx/Pipelines/Passes.h.inc"
} // namespace mlir::nnx

using namespace mlir;
using namespace mlir::nnx;

/// The nnx.model named `modelName` (or the only one), the others erased.
static FailureOr<ModelOp> selectModel(ModuleOp module, StringRef modelName) {
  SmallVector<ModelOp> models(module.getOps<ModelOp>());
  std::string names;
  llvm::raw_string_ostream os(names);
  llvm::interleaveComma(models, os,
                        [&](ModelOp m) { os << "@" << m.getSymName(); });
  ModelOp selected;
  if (!modelName.empty()) {
    for (ModelOp model : models)
      if (model.getSymName() == modelName)
        selected = model;
    if (!selected)
      return module.emitError() << "no nnx.model named @" << modelName
                                << " in the module (it holds " << names << ")";
  } else if (models.size() > 1) {
    return module.emitError()
           << "the module holds " << models.size() << " nnx.model ops ("
           << names << "); choose one by name (nnx-run --model NAME)";
  } else {
    selected = models.front();
  }
  for (ModelOp model : models)
    if (model != selected)
      model.erase();
  return selected;
}

/// Gives every result of `forward` a value of its own: an operand a return
/// repeats becomes a copy. Each result is then a buffer of its own, which
/// hoisting a returned allocation into the caller's argument needs (LLVM
/// 22's buffer-results-to-out-params uses a freed op on a repeated one).
static void copyRepeatedResults(func::FuncOp forward) {
  forward.walk([](func::ReturnOp ret) {
    llvm::DenseSet<Value> seen;
    OpBuilder b(ret);
    for (OpOperand &operand : ret->getOpOperands()) {
      auto type = dyn_cast<RankedTensorType>(operand.get().getType());
      if (!type || seen.insert(operand.get()).second)
        continue;
      operand.set(bufferization::AllocTensorOp::create(
          b, ret.getLoc(), type, ValueRange(), operand.get()));
    }
  });
}

namespace {
struct NNXPrepareForwardPass
    : public mlir::nnx::impl::NNXPrepareForwardPassBase<NNXPrepareForwardPass> {
  using NNXPrepareForwardPassBase::NNXPrepareForwardPassBase;

  void getDependentDialects(DialectRegistry &registry) const override {
    registry
        .insert<arith::ArithDialect, bufferization::BufferizationDialect,
                func::FuncDialect, linalg::LinalgDialect, LLVM::LLVMDialect,
                math::MathDialect, scf::SCFDialect, tensor::TensorDialect>();
    registerLayerLoweringExternalModels(registry);
    // The shape functions resolve expand/collapse_shape results through
    // their reified shapes.
    tensor::registerInferTypeOpInterfaceExternalModels(registry);
  }

  void runOnOperation() override {
    FailureOr<func::FuncOp> forward = buildForwardFunction();
    if (failed(forward) || failed(lowerProbes(*forward)) ||
        failed(deriveGeneration()))
      return signalPassFailure();
    forward = getOperation().lookupSymbol<func::FuncOp>("forward");
    copyRepeatedResults(*forward);
    std::vector<ShapeCheck> checks;
    if (failed(buildResultShapesFunction(*forward, kResultShapesFuncName)) ||
        failed(
            buildShapeChecksFunction(*forward, kShapeChecksFuncName, checks)))
      return signalPassFailure();
    // After the shape functions (their clones need no checks): the
    // temporaries' sizes.
    addTemporarySizeChecks(*forward);
  }

private:
  bool isTracing() const { return !reads.empty() || !writes.empty(); }
  FailureOr<func::FuncOp> buildForwardFunction();
  LogicalResult splitForTensorParallel(ModelOp model);
  LogicalResult checkNotSplit(ModelOp model);
  LogicalResult lowerProbes(func::FuncOp forward);
  LogicalResult deriveGeneration();
  LogicalResult takeDerivedInputs(func::FuncOp derived, unsigned forwardArgs);
  void takeCachesByReference(func::FuncOp decode);
};
} // namespace

/// `@forward` from the module's nnx.model (probe requests resolved first),
/// or the module's own `@forward`; marked for the C interface. Its probes
/// are still `nnx.probe` ops.
FailureOr<func::FuncOp> NNXPrepareForwardPass::buildForwardFunction() {
  ModuleOp module = getOperation();
  if (!module.getOps<ModelOp>().empty()) {
    if (Operation *clash = module.lookupSymbol("forward"))
      return clash->emitError("the module holds both an nnx.model and a "
                              "symbol @forward; remove one");
    FailureOr<ModelOp> model = selectModel(module, this->model);
    if (failed(model))
      return failure();
    if (isTracing()) {
      NNXInsertProbesPassOptions probes;
      probes.family = family;
      probes.familiesDir = familiesDir;
      probes.reads.assign(reads.begin(), reads.end());
      probes.writes.assign(writes.begin(), writes.end());
      OpPassManager pm(ModuleOp::getOperationName());
      pm.addPass(createNNXInsertProbesPass(probes));
      if (failed(runPipeline(pm, module)))
        return failure();
    }
    if (failed(tensorParallelRanks > 0 ? splitForTensorParallel(*model)
                                       : checkNotSplit(*model)))
      return failure();
    if (failed(buildForward(*model, "forward")))
      return failure();
    model->erase();
  } else if (isTracing()) {
    return module.emitError("probes need an nnx.model; the module holds a "
                            "forward-level function");
  }
  auto forward = module.lookupSymbol<func::FuncOp>("forward");
  if (!forward || forward.isExternal())
    return module.emitError("the module holds neither an nnx.model nor a "
                            "func.func @forward with a body");
  forward->setAttr("llvm.emit_c_interface", UnitAttr::get(&getContext()));
  return forward;
}

/// `model` as rank `tensorParallelRank` of `tensorParallelRanks`: split
/// here, or kept when it is split already (it must then be this rank's).
LogicalResult NNXPrepareForwardPass::splitForTensorParallel(ModelOp model) {
  if (auto split =
          model->getAttrOfType<DictionaryAttr>(kTensorParallelAttrName)) {
    auto ranks = split.getAs<IntegerAttr>("ranks");
    auto rank = split.getAs<IntegerAttr>("rank");
    if (!ranks || !rank || ranks.getInt() != tensorParallelRanks ||
        rank.getInt() != tensorParallelRank)
      return model.emitOpError("is already split for tensor parallelism (")
             << split << "), but this is rank "
             << static_cast<int64_t>(tensorParallelRank) << " of "
             << static_cast<int64_t>(tensorParallelRanks)
             << "; give every rank the unsplit model";
    return success();
  }
  bool handSplit = model
                       .walk([](Operation *op) {
                         return op->hasAttr(kPartialSumAttrName)
                                    ? WalkResult::interrupt()
                                    : WalkResult::advance();
                       })
                       .wasInterrupted();
  if (handSplit)
    return success();
  return shardTensorParallel(model, tensorParallelRanks, tensorParallelRank);
}

/// Refuses a model split for tensor parallelism when this compile is not
/// one rank's: its sums over the ranks would call MPI in a process that is
/// not one rank of an MPI job.
LogicalResult NNXPrepareForwardPass::checkNotSplit(ModelOp model) {
  Operation *partial = nullptr;
  model.walk([&](Operation *op) {
    if (!op->hasAttr(kPartialSumAttrName))
      return WalkResult::advance();
    partial = op;
    return WalkResult::interrupt();
  });
  if (!partial && !model->hasAttr(kTensorParallelAttrName))
    return success();
  InFlightDiagnostic diag =
      model.emitOpError("is split for tensor parallelism");
  if (partial)
    diag << " (" << kPartialSumAttrName << " on '" << getModulePath(partial)
         << "')";
  return diag << ": compile it as one rank of an MPI job (nnx-run "
                 "--tensor-parallel under mpirun, nnx.compile(..., "
                 "tensor_parallel=True), CompileOptions::tensorParallel, or "
                 "nnx-prepare-forward's tensor-parallel-ranks and "
                 "tensor-parallel-rank)";
}

/// Adds `@forward_write_shapes` while `forward` still holds its probes, then
/// lowers them to trailing arguments and results.
LogicalResult NNXPrepareForwardPass::lowerProbes(func::FuncOp forward) {
  if (!forward.walk([](ProbeOp) { return WalkResult::interrupt(); })
           .wasInterrupted())
    return success();
  SmallVector<std::string> names;
  if (failed(buildWriteShapesFunction(forward, kWriteShapesFuncName, names)))
    return failure();
  OpPassManager pm(ModuleOp::getOperationName());
  pm.addPass(createNNXLowerProbesPass());
  if (failed(runPipeline(pm, getOperation())))
    return failure();
  if (!getOperation().lookupSymbol<func::FuncOp>("forward"))
    return getOperation().emitError("nnx-lower-probes removed @forward");
  return success();
}

/// With `generate`, nnx-derive-kv-cache's @prefill or @decode becomes
/// @forward (the other two functions are erased).
LogicalResult NNXPrepareForwardPass::deriveGeneration() {
  if (generate.empty())
    return success();
  ModuleOp module = getOperation();
  if (generate != "prefill" && generate != "decode")
    return module.emitError("nnx-prepare-forward: generate must be prefill "
                            "or decode, got '")
           << generate << "'";
  unsigned forwardArgs =
      module.lookupSymbol<func::FuncOp>("forward").getNumArguments();
  NNXDeriveKVCachePassOptions options;
  options.maxLength = maxLength;
  OpPassManager pm(ModuleOp::getOperationName());
  pm.addPass(createNNXDeriveKVCachePass(options));
  if (failed(runPipeline(pm, module)))
    return failure();
  for (StringRef name : {"forward", "prefill", "decode"})
    if (name != generate)
      module.lookupSymbol<func::FuncOp>(name).erase();
  auto derived = module.lookupSymbol<func::FuncOp>(generate);
  derived.setSymName("forward");
  if (generate == "decode")
    takeCachesByReference(derived);
  return takeDerivedInputs(derived, forwardArgs);
}

/// Decode updates its cache arguments in place and does not return them:
/// the caller's cache buffers are bound without a copy (the runtime reads
/// `nnx.updated_in_place` on an argument) and no result is copied into an
/// out-param. A returned cache is the `tensor.insert_slice` of the new rows
/// into its argument, which bufferization writes into the argument's buffer.
void NNXPrepareForwardPass::takeCachesByReference(func::FuncOp decode) {
  auto ret = cast<func::ReturnOp>(decode.getBody().front().getTerminator());
  SmallVector<Value> kept;
  for (Value v : ret.getOperands()) {
    auto insert = v.getDefiningOp<tensor::InsertSliceOp>();
    auto cache = insert ? dyn_cast<BlockArgument>(insert.getDest()) : nullptr;
    if (!cache || cache.getOwner() != &decode.getBody().front()) {
      kept.push_back(v);
      continue;
    }
    decode.setArgAttr(cache.getArgNumber(), kUpdatedInPlaceArgAttrName,
                      UnitAttr::get(&getContext()));
  }
  ret->setOperands(kept);
  decode.setType(FunctionType::get(&getContext(), decode.getArgumentTypes(),
                                   ValueRange(kept).getTypes()));
}

/// Patches' shapes follow the new tokens: `@forward_write_shapes` (built
/// from the forward: ids, then the parameters) takes the derived function's
/// inputs, so decode's position and caches are inserted after the ids,
/// unused.
LogicalResult NNXPrepareForwardPass::takeDerivedInputs(func::FuncOp derived,
                                                       unsigned forwardArgs) {
  auto shapes = getOperation().lookupSymbol<func::FuncOp>(kWriteShapesFuncName);
  unsigned added = derived.getNumArguments() - forwardArgs;
  if (!shapes || added == 0)
    return success();
  SmallVector<unsigned> indices(added, 1);
  SmallVector<Type> types(derived.getArgumentTypes().slice(1, added).begin(),
                          derived.getArgumentTypes().slice(1, added).end());
  // Read only, as the ids.
  SmallVector<DictionaryAttr> attrs(added, shapes.getArgAttrDict(0));
  SmallVector<Location> locs(added, shapes.getLoc());
  if (failed(shapes.insertArguments(indices, types, attrs, locs)))
    return shapes.emitError("nnx-prepare-forward: cannot add decode's inputs "
                            "to @")
           << kWriteShapesFuncName;
  return success();
}
