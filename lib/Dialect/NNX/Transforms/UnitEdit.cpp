//===- UnitEdit.cpp - nnx-widen's and nnx-prune's shared edit ---*- C++ -*-===//
#include "UnitEdit.h"

#include "nnx/Dialect/NNX/IR/TensorUtils.h"
#include "nnx/Support/Npy.h"

#include <cmath>
#include <numeric>
#include <random>

using namespace mlir;
using namespace mlir::nnx;
using namespace mlir::nnx::surgery;

/// `values` as `rows x (units * block)` with each unit's `block` columns
/// gathered by `map`: the edited tensor, `rows x (width * block)`. With
/// `columns`, the entries are a consumer's columns (ConsumerColumns).
static std::vector<double> gatherUnits(llvm::ArrayRef<double> values,
                                       int64_t rows, int64_t block,
                                       const UnitMap &map,
                                       std::optional<ConsumerColumns> columns) {
  int64_t oldWidth = map.count.size();
  int64_t oldCols = oldWidth * block;
  int64_t width = map.source.size();
  std::vector<double> out(rows * width * block);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < width; ++j) {
      int64_t src = map.source[j];
      double scale = 1.0;
      if (columns == ConsumerColumns::Rescale)
        scale = 1.0 / static_cast<double>(map.count[src]);
      else if (columns == ConsumerColumns::ZeroNew && j >= oldWidth)
        scale = 0.0;
      for (int64_t k = 0; k < block; ++k)
        out[(r * width + j) * block + k] =
            values[r * oldCols + src * block + k] * scale;
    }
  return out;
}

/// Reads tensor `name` of `op` (none when absent).
static FailureOr<std::optional<UnitTensor>>
readUnitTensor(Operation *op, llvm::StringRef name, llvm::StringRef pass,
               llvm::StringRef role) {
  auto attr = op->getAttrOfType<ElementsAttr>(name);
  if (!attr)
    return std::optional<UnitTensor>();
  FailureOr<std::vector<double>> values =
      readTensorOrRefuse(op, attr, name, pass, role);
  if (failed(values))
    return failure();
  return std::optional<UnitTensor>(UnitTensor{op, name, attr, *values});
}

/// Appends the tensors `names` of `op` that exist to `out`.
static LogicalResult readUnitTensors(Operation *op,
                                     llvm::ArrayRef<llvm::StringRef> names,
                                     llvm::StringRef pass, llvm::StringRef role,
                                     SmallVectorImpl<UnitTensor> &out) {
  for (llvm::StringRef name : names) {
    auto t = readUnitTensor(op, name, pass, role);
    if (failed(t))
      return failure();
    if (*t)
      out.push_back(**t);
  }
  return success();
}

/// The shape of `t` with dim `dim` (the units, or units x block folded
/// into it) set to `size`.
static ShapedType withDim(const UnitTensor &t, unsigned dim, int64_t size) {
  auto type = cast<ShapedType>(t.attr.getType());
  SmallVector<int64_t> shape(type.getShape());
  shape[dim] = size;
  return type.clone(shape);
}

/// A Linear or groups-1 convolution with units and nothing a rebuild drops.
static LogicalResult checkUnitTarget(Operation *target, StringRef pass) {
  auto conv = dyn_cast<ConvLayerOpInterface>(target);
  if (!isa<LinearOp>(target) && !conv)
    return refuse(target, pass, "target")
           << "is not an 'nnx.linear' or a convolution ('nnx.conv1d', "
              "'nnx.conv2d')";
  if (failed(checkRefusable(target, AllRebuildProperties, pass, "target")))
    return failure();
  if (conv && conv.getGroupCount() != 1)
    return refuse(target, pass, "target")
           << "has groups = " << conv.getGroupCount()
           << ": changing its output channels would change its grouping; "
              "only a convolution with groups = 1 is widened or pruned";
  if (getUnitCount(target) == 0)
    return refuse(target, pass, "target")
           << "has " << (conv ? "out_channels" : "out_features")
           << " = 0: there is no unit to edit";
  return success();
}

FailureOr<Operation *> surgery::lookupUnitTarget(ModelOp model, StringRef layer,
                                                 StringRef pass) {
  FailureOr<Operation *> slot =
      lookupEditModule(model, layer, pass, "layer", "target");
  if (failed(slot))
    return failure();
  if (failed(checkUnitTarget(*slot, pass)))
    return failure();
  return *slot;
}

FailureOr<ConsumerChain> surgery::findUnitConsumer(Operation *target,
                                                   bool throughBatchNorm,
                                                   StringRef pass) {
  FailureOr<ConsumerChain> chain = findConsumer(target, throughBatchNorm, pass);
  if (failed(chain))
    return failure();
  if (!isa<CustomModuleOp>(chain->container) &&
      failed(checkRefusable(target, Called, pass, "target")))
    return failure();
  return chain;
}

FailureOr<UnitPlan> surgery::planUnitEdit(Operation *target, int64_t width,
                                          ConsumerChain chain, StringRef pass,
                                          const llvm::Twine &option) {
  UnitPlan plan{target, std::move(chain), {}, {}, {}};
  int64_t oldWidth = getUnitCount(target);
  auto weightType =
      cast<ShapedType>(target->getAttrOfType<ElementsAttr>("weight").getType());
  int64_t row = weightType.getNumElements() / oldWidth;
  Operation *consumer = plan.chain.consumer;
  auto consumerType = cast<ShapedType>(
      consumer->getAttrOfType<ElementsAttr>("weight").getType());
  int64_t down = consumerType.getDimSize(0);
  std::string grows = (option + " would grow its weight to").str();
  // (At least one column: the unit map has `width` entries of its own.)
  if (failed(checkHoldable(target, {width, std::max<int64_t>(row, 1)}, pass,
                           "target", grows)) ||
      failed(checkHoldable(consumer, {down, width, plan.chain.columnsPerUnit},
                           pass, "consumer", grows)))
    return failure();
  if (failed(readUnitTensors(target, {"weight", "bias"}, pass, "target",
                             plan.rows)))
    return failure();
  for (Operation *sibling : plan.chain.siblings)
    if (failed(readUnitTensors(sibling, {"weight", "bias"}, pass, "sibling",
                               plan.rows)))
      return failure();
  auto u = readUnitTensor(consumer, "weight", pass, "consumer");
  if (failed(u))
    return failure();
  plan.consumer = **u;
  for (auto [bn, block] : plan.chain.batchNorms) {
    SmallVector<UnitTensor> stats;
    if (failed(readUnitTensors(
            bn, {"running_mean", "running_var", "weight", "bias"}, pass,
            "module on the path", stats)))
      return failure();
    for (UnitTensor &t : stats)
      plan.statistics.push_back({std::move(t), block});
  }
  return plan;
}

void surgery::applyUnitEdit(const UnitPlan &plan, const UnitMap &map,
                            ConsumerColumns columns) {
  int64_t width = map.source.size();
  for (const UnitTensor &t : plan.rows) {
    int64_t row = t.values.size() / map.count.size();
    replaceTensor(t.op, t.name,
                  makeTensor(withDim(t, 0, width),
                             gatherUnits(t.values, 1, row, map, std::nullopt)));
  }
  for (const auto &[t, block] : plan.statistics)
    replaceTensor(
        t.op, t.name,
        makeTensor(withDim(t, 0, width * block),
                   gatherUnits(t.values, 1, block, map, std::nullopt)));
  const UnitTensor &u = plan.consumer;
  int64_t block = plan.chain.columnsPerUnit;
  int64_t down = cast<ShapedType>(u.attr.getType()).getDimSize(0);
  auto conv = dyn_cast<ConvLayerOpInterface>(u.op);
  replaceTensor(u.op, u.name,
                makeTensor(withDim(u, 1, conv ? width : width * block),
                           gatherUnits(u.values, down, block, map, columns)));
  if (conv)
    conv.setChannelCounts(width, conv.getOutChannelCount());
  if (auto targetConv = dyn_cast<ConvLayerOpInterface>(plan.target))
    targetConv.setChannelCounts(targetConv.getInChannelCount(), width);
  SmallVector<Operation *> linears(plan.chain.siblings);
  linears.push_back(plan.target);
  for (Operation *op : linears)
    if (auto lin = dyn_cast<LinearOp>(op); lin && lin.getOutFeatures())
      lin.setOutFeatures(width);
  if (plan.chain.hiddenIndex)
    cast<StockNetOpInterface>(plan.chain.container)
        .setSiteWidth(*plan.chain.hiddenIndex, width);
  setUnitCount(plan.chain, width);
}

/// Unit j >= n copies unit rng() % n. mt19937_64 is fully specified, so the
/// choice is the same everywhere.
UnitMap surgery::chooseUnits(int64_t oldWidth, int64_t width, uint64_t seed) {
  std::mt19937_64 rng(seed);
  UnitMap map{std::vector<int64_t>(width), std::vector<int64_t>(oldWidth, 1)};
  for (int64_t j = 0; j < width; ++j) {
    map.source[j] = j < oldWidth ? j : static_cast<int64_t>(rng() % oldWidth);
    if (j >= oldWidth)
      ++map.count[map.source[j]];
  }
  return map;
}

/// The importance of each of `units` units read from the .npy file at
/// `path`: one finite float per unit.
FailureOr<std::vector<double>> surgery::readImportance(Operation *target,
                                                       StringRef path,
                                                       int64_t units,
                                                       StringRef pass) {
  llvm::Expected<NpyArray> array = readNpy(path);
  if (!array)
    return refuse(target, pass, "target")
           << "is ranked by option importance='" << path
           << "', which cannot be read: " << llvm::toString(array.takeError());
  if (!isFloatDType(array->dtype) || array->rank() != 1 ||
      array->shape[0] != units)
    return refuse(target, pass, "target")
           << "has " << units << " units; option importance='" << path
           << "' holds a " << array->describe() << ", not a float array of "
           << "shape (" << units << ")";
  std::vector<double> score(units);
  for (int64_t j = 0; j < units; ++j) {
    score[j] = array->getAsDouble(j);
    if (!std::isfinite(score[j]))
      return refuse(target, pass, "target")
             << "is ranked by option importance='" << path << "', whose entry "
             << j << " is not finite";
  }
  return score;
}

/// The `keep` units of largest score (ties: the lower index), in order.
UnitMap surgery::keepUnits(const std::vector<double> &score, int64_t keep) {
  std::vector<int64_t> order(score.size());
  std::iota(order.begin(), order.end(), 0);
  llvm::sort(order, [&](int64_t a, int64_t b) {
    return score[a] != score[b] ? score[a] > score[b] : a < b;
  });
  order.resize(keep);
  llvm::sort(order);
  return UnitMap{order, std::vector<int64_t>(score.size(), 1)};
}
