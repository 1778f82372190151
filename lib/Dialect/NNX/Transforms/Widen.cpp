//===- Widen.cpp - Net2WiderNet on a Linear and its consumer ----*- C++ -*-===//
#include "SurgeryUtils.h"

#include "nnx/Dialect/NNX/IR/TensorUtils.h"
#include "nnx/Dialect/NNX/Transforms/Passes.h"
#include "nnx/Dialect/NNX/Transforms/Surgery.h"

#include <random>

namespace mlir::nnx {
#define GEN_PASS_DEF_NNXWIDENPASS
#include "nnx/Dialect/NNX/Transforms/Passes.h.inc"
} // namespace mlir::nnx

using namespace mlir;
using namespace mlir::nnx;
using namespace mlir::nnx::surgery;

static constexpr llvm::StringLiteral kPass = "nnx-widen";

LogicalResult mlir::nnx::widen(ModelOp model, StringRef layer, int64_t width,
                               uint64_t seed) {
  if (failed(refuseRecipeModel(model, kPass)))
    return failure();
  // Check everything first.
  FailureOr<Operation *> slot = lookupSlot(model, layer, kPass, "layer");
  if (failed(slot))
    return failure();
  if (auto alias = dyn_cast<AliasOp>(*slot))
    return refuseAliasSlot(alias, kPass, "target");
  auto target = dyn_cast<LinearOp>(*slot);
  if (!target)
    return refuse(*slot, kPass, "target") << "is not an 'nnx.linear'";
  if (failed(checkRefusable(target, AllRebuildProperties, kPass, "target")))
    return failure();
  int64_t oldWidth = target.getOutFeaturesCount();
  if (oldWidth == 0)
    return refuse(target, kPass, "target")
           << "has out_features = 0: there is no unit to replicate";
  if (width <= oldWidth)
    return refuse(target, kPass, "target")
           << "has out_features = " << oldWidth << "; option width=" << width
           << " must be larger";
  FailureOr<ConsumerChain> chain = findConsumer(target, kPass);
  if (failed(chain) || failed(checkRefusable(target, Called, kPass, "target")))
    return failure();
  LinearOp consumer = chain->consumer;

  auto weightType = cast<ShapedType>(target.getWeightAttr().getType());
  int64_t in = weightType.getDimSize(1);
  FailureOr<std::vector<double>> w = readTensorOrRefuse(
      target, target.getWeightAttr(), "weight", kPass, "target");
  if (failed(w))
    return failure();
  std::optional<std::vector<double>> b;
  if (ElementsAttr bias = target.getBiasAttr()) {
    FailureOr<std::vector<double>> values =
        readTensorOrRefuse(target, bias, "bias", kPass, "target");
    if (failed(values))
      return failure();
    b = std::move(*values);
  }
  auto consumerType = cast<ShapedType>(consumer.getWeightAttr().getType());
  int64_t down = consumerType.getDimSize(0);
  std::string option = "option width=" + std::to_string(width);
  // (At least one column: the unit map has `width` entries of its own.)
  if (failed(checkHoldable(target, {width, std::max<int64_t>(in, 1)}, kPass,
                           "target", option + " would grow its weight to")) ||
      failed(checkHoldable(consumer, {down, width}, kPass, "consumer",
                           option + " would grow its weight to")))
    return failure();
  FailureOr<std::vector<double>> u = readTensorOrRefuse(
      consumer, consumer.getWeightAttr(), "weight", kPass, "consumer");
  if (failed(u))
    return failure();

  // Choose the replicated units: unit j >= oldWidth copies unit rng() % n.
  // mt19937_64 is fully specified, so the choice is the same everywhere.
  std::mt19937_64 rng(seed);
  std::vector<int64_t> source(width);
  std::vector<int64_t> count(oldWidth, 1);
  for (int64_t j = 0; j < width; ++j) {
    source[j] = j < oldWidth ? j : static_cast<int64_t>(rng() % oldWidth);
    if (j >= oldWidth)
      ++count[source[j]];
  }

  std::vector<double> newW(width * in), newU(down * width);
  for (int64_t j = 0; j < width; ++j)
    for (int64_t k = 0; k < in; ++k)
      newW[j * in + k] = (*w)[source[j] * in + k];
  for (int64_t r = 0; r < down; ++r)
    for (int64_t j = 0; j < width; ++j)
      newU[r * width + j] = (*u)[r * oldWidth + source[j]] /
                            static_cast<double>(count[source[j]]);

  // Mutate: both Linears stay (flags and modes live on them).
  replaceTensor(target, "weight",
                makeTensor(weightType.clone({width, in}), newW));
  if (b) {
    std::vector<double> newB(width);
    for (int64_t j = 0; j < width; ++j)
      newB[j] = (*b)[source[j]];
    auto biasType = cast<ShapedType>(target.getBiasAttr().getType());
    replaceTensor(target, "bias", makeTensor(biasType.clone({width}), newB));
  }
  if (target.getOutFeatures())
    target.setOutFeatures(width);
  replaceTensor(consumer, "weight",
                makeTensor(consumerType.clone({down, width}), newU));
  if (chain->hiddenIndex) {
    auto ff = cast<FeedFwdOp>(chain->container);
    SmallVector<int64_t> hidden(ff.getHiddenDims());
    hidden[*chain->hiddenIndex] = width;
    ff.setHiddenDims(hidden);
  }
  return success();
}

namespace {
struct NNXWidenPass : public mlir::nnx::impl::NNXWidenPassBase<NNXWidenPass> {
  using Base::Base;
  void runOnOperation() override {
    if (failed(widen(getOperation(), layer, width, seed)))
      signalPassFailure();
  }
};
} // namespace
