//===- LoraMerge.cpp - nnx-lora-merge, nnx-lora-unmerge ---------*- C++ -*-===//
//
// Folds a LoRA adapter into its base weight for inference and takes it out
// again. The update `W +- scaling * B A` is computed in double precision
// from the stored values and rounded once to the weight's element type, so
// a bf16/f16 merge rounds exactly once (not once per product and sum).
//
//===----------------------------------------------------------------------===//
#include "SurgeryUtils.h"

#include "nnx/Dialect/NNX/IR/TensorUtils.h"
#include "nnx/Dialect/NNX/Transforms/Passes.h"
#include "nnx/Dialect/NNX/Transforms/Recipes.h"

namespace mlir::nnx {
#define GEN_PASS_DEF_NNXLORAMERGEPASS
#define GEN_PASS_DEF_NNXLORAUNMERGEPASS
#include "nnx/Dialect/NNX/Transforms/Passes.h.inc"
} // namespace mlir::nnx

using namespace mlir;
using namespace mlir::nnx;
using namespace mlir::nnx::surgery;

/// The LoRA layers the pass edits: the one at `layer`, or every one.
static FailureOr<SmallVector<LoraOp>>
selectLayers(ModelOp model, StringRef layer, StringRef pass) {
  SmallVector<LoraOp> layers;
  if (layer.empty()) {
    model.walk([&](LoraOp op) { layers.push_back(op); });
    return layers;
  }
  FailureOr<Operation *> slot = lookupSlot(model, layer, pass, "layer");
  if (failed(slot))
    return failure();
  auto lora = dyn_cast<LoraOp>(*slot);
  if (!lora)
    return refuse(*slot, pass, "layer") << "is not an 'nnx.lora'";
  layers.push_back(lora);
  return layers;
}

/// `W + sign * scaling * B A` of `op`, in double precision.
static FailureOr<std::vector<double>> updatedWeight(LoraOp op, double sign,
                                                    StringRef pass) {
  FailureOr<std::vector<double>> w =
      readTensorOrRefuse(op, op.getWeight(), "weight", pass, "layer");
  FailureOr<std::vector<double>> a =
      readTensorOrRefuse(op, op.getLora_A(), "lora_A", pass, "layer");
  FailureOr<std::vector<double>> b =
      readTensorOrRefuse(op, op.getLora_B(), "lora_B", pass, "layer");
  if (failed(w) || failed(a) || failed(b))
    return failure();
  int64_t out = op.getOutFeaturesCount(), in = op.getInFeatures();
  int64_t r = op.getRank();
  double s = sign * op.getScaling();
  for (int64_t i = 0; i < out; ++i)
    for (int64_t j = 0; j < in; ++j) {
      double delta = 0;
      for (int64_t k = 0; k < r; ++k)
        delta += (*b)[i * r + k] * (*a)[k * in + j];
      (*w)[i * in + j] += s * delta;
    }
  return w;
}

/// Merges (`merge`) or unmerges every selected layer; all or nothing.
static LogicalResult mergeOrUnmerge(ModelOp model, StringRef layer, bool merge,
                                    StringRef pass) {
  FailureOr<SmallVector<LoraOp>> layers = selectLayers(model, layer, pass);
  if (failed(layers))
    return failure();
  bool problems = false;
  SmallVector<std::vector<double>> weights;
  for (LoraOp op : *layers) {
    if (op.getMerged() == merge) {
      refuse(op, pass, "layer")
          << (merge ? "is already merged" : "is not merged");
      problems = true;
      continue;
    }
    FailureOr<std::vector<double>> w =
        updatedWeight(op, merge ? 1.0 : -1.0, pass);
    if (failed(w)) {
      problems = true;
      continue;
    }
    weights.push_back(std::move(*w));
  }
  if (problems)
    return failure();
  for (auto [op, w] : llvm::zip(*layers, weights)) {
    replaceTensor(op, "weight",
                  makeTensor(cast<ShapedType>(op.getWeight().getType()), w));
    op.setMerged(merge);
  }
  return success();
}

LogicalResult mlir::nnx::mergeLora(ModelOp model, StringRef layer) {
  return mergeOrUnmerge(model, layer, true, "nnx-lora-merge");
}

LogicalResult mlir::nnx::unmergeLora(ModelOp model, StringRef layer) {
  return mergeOrUnmerge(model, layer, false, "nnx-lora-unmerge");
}

namespace {
struct NNXLoraMergePass
    : public mlir::nnx::impl::NNXLoraMergePassBase<NNXLoraMergePass> {
  using Base::Base;
  void runOnOperation() override {
    if (failed(mergeLora(getOperation(), layer)))
      signalPassFailure();
  }
};

struct NNXLoraUnmergePass
    : public mlir::nnx::impl::NNXLoraUnmergePassBase<NNXLoraUnmergePass> {
  using Base::Base;
  void runOnOperation() override {
    if (failed(unmergeLora(getOperation(), layer)))
      signalPassFailure();
  }
};
} // namespace
