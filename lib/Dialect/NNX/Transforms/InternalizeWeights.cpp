//===- InternalizeWeights.cpp - external tensors into the IR ---*- C++ -*-===//
#include "nnx/Dialect/NNX/IR/NNXDialect.h"
#include "nnx/Dialect/NNX/IR/Weights.h"
#include "nnx/Dialect/NNX/Transforms/Passes.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectResourceBlobManager.h"

namespace mlir::nnx {
#define GEN_PASS_DEF_NNXINTERNALIZEWEIGHTSPASS
#include "nnx/Dialect/NNX/Transforms/Passes.h.inc"
} // namespace mlir::nnx

using namespace mlir;
using namespace mlir::nnx;

namespace {
/// An external tensor and its bytes (kept alive by `data.owner`).
struct LoadedTensor {
  ModelTensor tensor;
  TensorData data;
};

struct NNXInternalizeWeightsPass
    : public mlir::nnx::impl::NNXInternalizeWeightsPassBase<
          NNXInternalizeWeightsPass> {
  void runOnOperation() override;
};
} // namespace

/// The alignment of a blob of `type`'s elements: their byte size (one byte
/// for i1).
static size_t blobAlignment(ShapedType type) {
  Type elt = type.getElementType();
  if (!elt.isIntOrFloat() || elt.getIntOrFloatBitWidth() < 8)
    return 1;
  return elt.getIntOrFloatBitWidth() / 8;
}

/// Reads every external tensor of `model` into `loaded`; a problem is a
/// diagnostic on the module that holds the tensor.
static LogicalResult load(ModelOp model,
                          SmallVectorImpl<LoadedTensor> &loaded) {
  SmallVector<ModelTensor> tensors = getModelTensors(model);
  if (failed(checkWeightsFile(model, tensors, "nnx-internalize-weights: ")))
    return failure();
  std::string weightsPath = resolveWeightsPath(model).value_or("");
  bool ok = true;
  for (const ModelTensor &tensor : tensors) {
    if (!isa<ExternalTensorAttr>(tensor.value))
      continue;
    FailureOr<TensorData> data =
        getTensorData(tensor.value, weightsPath, tensor.module->getLoc(),
                      "nnx-internalize-weights: " + tensor.describe());
    if (failed(data)) {
      ok = false;
      continue;
    }
    loaded.push_back({tensor, std::move(*data)});
  }
  return success(ok);
}

/// Replaces each loaded tensor (all of one model) by a dense_resource blob,
/// one blob per key and type.
static void internalize(ArrayRef<LoadedTensor> loaded) {
  llvm::DenseMap<Attribute, ElementsAttr> blobs;
  for (const LoadedTensor &l : loaded) {
    auto ext = cast<ExternalTensorAttr>(l.tensor.value);
    ElementsAttr &blob = blobs[ext];
    if (!blob) {
      ShapedType type = ext.getType();
      blob = DenseResourceElementsAttr::get(
          type, ext.getKey(),
          HeapAsmResourceBlob::allocateAndCopyWithAlign(
              l.data.bytes, blobAlignment(type), /*dataIsMutable=*/false));
    }
    setModelTensor(l.tensor, blob);
  }
}

void NNXInternalizeWeightsPass::runOnOperation() {
  SmallVector<ModelOp> models;
  getOperation().walk([&](ModelOp model) { models.push_back(model); });
  SmallVector<SmallVector<LoadedTensor>> loaded(models.size());
  bool ok = true;
  for (auto [model, tensors] : llvm::zip_equal(models, loaded))
    ok &= succeeded(load(model, tensors));
  // Everything was read: only now edit the IR.
  if (!ok)
    return signalPassFailure();
  for (auto [model, tensors] : llvm::zip_equal(models, loaded)) {
    internalize(tensors);
    model.removeWeightsAttr();
  }
}
