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

namespace {
/// The units nnx-widen keeps and replicates: unit j of the widened layer
/// copies unit `source[j]`, which `count[source[j]]` units now share.
struct UnitMap {
  std::vector<int64_t> source, count;
};

/// A tensor whose dim 0 (or, for a consumer, dim 1) is split into units.
struct UnitTensor {
  Operation *op;
  llvm::StringRef name;
  ElementsAttr attr;
  std::vector<double> values;
};
} // namespace

/// Unit j >= n copies unit rng() % n. mt19937_64 is fully specified, so the
/// choice is the same everywhere.
static UnitMap chooseUnits(int64_t oldWidth, int64_t width, uint64_t seed) {
  std::mt19937_64 rng(seed);
  UnitMap map{std::vector<int64_t>(width), std::vector<int64_t>(oldWidth, 1)};
  for (int64_t j = 0; j < width; ++j) {
    map.source[j] = j < oldWidth ? j : static_cast<int64_t>(rng() % oldWidth);
    if (j >= oldWidth)
      ++map.count[map.source[j]];
  }
  return map;
}

/// `values` as `rows x (units * block)` with each unit's `block` columns
/// gathered by `map` (divided by their count when `rescale`): the widened
/// tensor, `rows x (width * block)`.
static std::vector<double> gatherUnits(llvm::ArrayRef<double> values,
                                       int64_t rows, int64_t block,
                                       const UnitMap &map, bool rescale) {
  int64_t oldCols = map.count.size() * block;
  int64_t width = map.source.size();
  std::vector<double> out(rows * width * block);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < width; ++j) {
      int64_t src = map.source[j];
      double divisor = rescale ? static_cast<double>(map.count[src]) : 1.0;
      for (int64_t k = 0; k < block; ++k)
        out[(r * width + j) * block + k] =
            values[r * oldCols + src * block + k] / divisor;
    }
  return out;
}

/// Reads tensor `name` of `op` (null when absent and `optional`).
static FailureOr<std::optional<UnitTensor>>
readUnitTensor(Operation *op, llvm::StringRef name, llvm::StringRef role) {
  auto attr = op->getAttrOfType<ElementsAttr>(name);
  if (!attr)
    return std::optional<UnitTensor>();
  FailureOr<std::vector<double>> values =
      readTensorOrRefuse(op, attr, name, kPass, role);
  if (failed(values))
    return failure();
  return std::optional<UnitTensor>(UnitTensor{op, name, attr, *values});
}

/// The shape of `t` with dim `dim` (the units, or units x block folded
/// into it) set to `size`.
static ShapedType withDim(const UnitTensor &t, unsigned dim, int64_t size) {
  auto type = cast<ShapedType>(t.attr.getType());
  SmallVector<int64_t> shape(type.getShape());
  shape[dim] = size;
  return type.clone(shape);
}

/// Everything widen reads, checked before anything changes.
struct WidenPlan {
  Operation *target;
  ConsumerChain chain;
  SmallVector<UnitTensor> rows; // dim 0 holds the units (blocks of 1)
  UnitTensor consumer;          // dim 1 holds units x columnsPerUnit
  SmallVector<std::pair<UnitTensor, int64_t>> statistics; // batch norms
};

/// The target's checks: a Linear or groups-1 convolution narrower than
/// `width`.
static LogicalResult checkTarget(Operation *target, int64_t width) {
  auto conv = dyn_cast<ConvLayerOpInterface>(target);
  if (!isa<LinearOp>(target) && !conv)
    return refuse(target, kPass, "target")
           << "is not an 'nnx.linear' or a convolution ('nnx.conv1d', "
              "'nnx.conv2d')";
  if (failed(checkRefusable(target, AllRebuildProperties, kPass, "target")))
    return failure();
  if (conv && conv.getGroupCount() != 1)
    return refuse(target, kPass, "target")
           << "has groups = " << conv.getGroupCount()
           << ": widening its output channels would change its grouping; "
              "only a convolution with groups = 1 widens";
  StringRef unit = conv ? "out_channels" : "out_features";
  int64_t oldWidth = getUnitCount(target);
  if (oldWidth == 0)
    return refuse(target, kPass, "target")
           << "has " << unit << " = 0: there is no unit to replicate";
  if (width <= oldWidth)
    return refuse(target, kPass, "target")
           << "has " << unit << " = " << oldWidth << "; option width=" << width
           << " must be larger";
  return success();
}

/// Checks that the widened tensors can be held, then reads them.
static FailureOr<WidenPlan> planWiden(Operation *target, int64_t width,
                                      ConsumerChain chain) {
  WidenPlan plan{target, std::move(chain), {}, {}, {}};
  int64_t oldWidth = getUnitCount(target);
  std::string option = "option width=" + std::to_string(width);
  auto weightType =
      cast<ShapedType>(target->getAttrOfType<ElementsAttr>("weight").getType());
  int64_t row = weightType.getNumElements() / oldWidth;
  Operation *consumer = plan.chain.consumer;
  auto consumerType = cast<ShapedType>(
      consumer->getAttrOfType<ElementsAttr>("weight").getType());
  int64_t down = consumerType.getDimSize(0);
  // (At least one column: the unit map has `width` entries of its own.)
  if (failed(checkHoldable(target, {width, std::max<int64_t>(row, 1)}, kPass,
                           "target", option + " would grow its weight to")) ||
      failed(checkHoldable(consumer, {down, width, plan.chain.columnsPerUnit},
                           kPass, "consumer",
                           option + " would grow its weight to")))
    return failure();
  for (StringRef name : {"weight", "bias"}) {
    auto t = readUnitTensor(target, name, "target");
    if (failed(t))
      return failure();
    if (*t)
      plan.rows.push_back(**t);
  }
  auto u = readUnitTensor(consumer, "weight", "consumer");
  if (failed(u))
    return failure();
  plan.consumer = **u;
  for (auto [bn, block] : plan.chain.batchNorms)
    for (StringRef name : {"running_mean", "running_var", "weight", "bias"}) {
      auto t = readUnitTensor(bn, name, "module on the path");
      if (failed(t))
        return failure();
      if (*t)
        plan.statistics.push_back({**t, block});
    }
  return plan;
}

/// Writes the widened tensors and the sizes that describe them.
static void applyWiden(const WidenPlan &plan, const UnitMap &map) {
  int64_t width = map.source.size();
  for (const UnitTensor &t : plan.rows) {
    int64_t row = t.values.size() / map.count.size();
    std::vector<double> values = gatherUnits(t.values, 1, row, map, false);
    replaceTensor(t.op, t.name, makeTensor(withDim(t, 0, width), values));
  }
  for (const auto &[t, block] : plan.statistics)
    replaceTensor(t.op, t.name,
                  makeTensor(withDim(t, 0, width * block),
                             gatherUnits(t.values, 1, block, map, false)));
  const UnitTensor &u = plan.consumer;
  int64_t block = plan.chain.columnsPerUnit;
  int64_t down = cast<ShapedType>(u.attr.getType()).getDimSize(0);
  auto conv = dyn_cast<ConvLayerOpInterface>(u.op);
  replaceTensor(u.op, u.name,
                makeTensor(withDim(u, 1, conv ? width : width * block),
                           gatherUnits(u.values, down, block, map, true)));
  if (conv)
    conv.setChannelCounts(width, conv.getOutChannelCount());
  if (auto targetConv = dyn_cast<ConvLayerOpInterface>(plan.target))
    targetConv.setChannelCounts(targetConv.getInChannelCount(), width);
  else if (auto lin = cast<LinearOp>(plan.target); lin.getOutFeatures())
    lin.setOutFeatures(width);
  if (plan.chain.hiddenIndex)
    cast<StockNetOpInterface>(plan.chain.container)
        .setSiteWidth(*plan.chain.hiddenIndex, width);
}

LogicalResult mlir::nnx::widen(ModelOp model, StringRef layer, int64_t width,
                               uint64_t seed, bool throughBatchNorm) {
  if (failed(refuseRecipeModel(model, kPass)))
    return failure();
  // Check everything first.
  FailureOr<Operation *> slot = lookupSlot(model, layer, kPass, "layer");
  if (failed(slot))
    return failure();
  if (auto alias = dyn_cast<AliasOp>(*slot))
    return refuseAliasSlot(alias, kPass, "target");
  Operation *target = *slot;
  if (failed(checkTarget(target, width)))
    return failure();
  FailureOr<ConsumerChain> chain =
      findConsumer(target, throughBatchNorm, kPass);
  if (failed(chain) || failed(checkRefusable(target, Called, kPass, "target")))
    return failure();
  FailureOr<WidenPlan> plan = planWiden(target, width, std::move(*chain));
  if (failed(plan))
    return failure();
  // Mutate: every module stays (flags and modes live on them).
  applyWiden(*plan, chooseUnits(getUnitCount(target), width, seed));
  return success();
}

namespace {
struct NNXWidenPass : public mlir::nnx::impl::NNXWidenPassBase<NNXWidenPass> {
  using Base::Base;
  void runOnOperation() override {
    if (failed(widen(getOperation(), layer, width, seed, throughBatchNorm)))
      signalPassFailure();
  }
};
} // namespace
