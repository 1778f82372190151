//===- Prune.cpp - keep a layer's most important units ----------*- C++ -*-===//
#include "AttentionCore.h"
#include "UnitEdit.h"

#include "nnx/Dialect/NNX/IR/TensorUtils.h"
#include "nnx/Dialect/NNX/Transforms/Passes.h"
#include "nnx/Dialect/NNX/Transforms/Surgery.h"

#include <cmath>
#include <numeric>

namespace mlir::nnx {
#define GEN_PASS_DEF_NNXPRUNEPASS
#include "nnx/Dialect/NNX/Transforms/Passes.h.inc"
} // namespace mlir::nnx

using namespace mlir;
using namespace mlir::nnx;
using namespace mlir::nnx::surgery;

static constexpr llvm::StringLiteral kPass = "nnx-prune";

/// The importance of each of the plan's `units`: the product over the
/// target's and siblings' tensors (dim 0 = units) and the consumer (dim 1 =
/// units x block) of the L2 norm of the unit's entries.
static std::vector<double> importance(const UnitPlan &plan, int64_t units) {
  std::vector<double> score(units, 1.0);
  auto multiply = [&](const std::vector<double> &sumsq) {
    for (int64_t j = 0; j < units; ++j)
      score[j] *= std::sqrt(sumsq[j]);
  };
  // The rows tensors of the target and its siblings, grouped per module.
  for (size_t i = 0; i < plan.rows.size();) {
    Operation *op = plan.rows[i].op;
    std::vector<double> sumsq(units, 0.0);
    for (; i < plan.rows.size() && plan.rows[i].op == op; ++i) {
      const std::vector<double> &v = plan.rows[i].values;
      int64_t per = v.size() / units;
      for (int64_t j = 0; j < units; ++j)
        for (int64_t k = 0; k < per; ++k)
          sumsq[j] += v[j * per + k] * v[j * per + k];
    }
    multiply(sumsq);
  }
  const std::vector<double> &c = plan.consumer.values;
  int64_t block = plan.chain.columnsPerUnit;
  int64_t cols = units * block, down = c.size() / cols;
  std::vector<double> sumsq(units, 0.0);
  for (int64_t r = 0; r < down; ++r)
    for (int64_t j = 0; j < units; ++j)
      for (int64_t k = 0; k < block; ++k) {
        double x = c[r * cols + j * block + k];
        sumsq[j] += x * x;
      }
  multiply(sumsq);
  return score;
}

LogicalResult mlir::nnx::prune(ModelOp model, StringRef layer, int64_t keep,
                               StringRef importanceFile) {
  FailureOr<Operation *> slot = lookupUnitTarget(model, layer, kPass);
  if (failed(slot))
    return failure();
  Operation *target = *slot;
  int64_t units = getUnitCount(target);
  if (keep < 1 || keep >= units)
    return refuse(target, kPass, "target")
           << "has "
           << (isa<ConvLayerOpInterface>(target) ? "out_channels"
                                                 : "out_features")
           << " = " << units << "; option keep=" << keep << " must be in 1.."
           << units - 1;
  FailureOr<ConsumerChain> chain = findUnitConsumer(target, false, kPass);
  if (failed(chain))
    return failure();
  FailureOr<UnitPlan> plan =
      planUnitEdit(target, keep, std::move(*chain), kPass,
                   "option keep=" + std::to_string(keep));
  if (failed(plan))
    return failure();
  FailureOr<std::vector<double>> score =
      importanceFile.empty()
          ? FailureOr<std::vector<double>>(importance(*plan, units))
          : readImportance(target, importanceFile, units, kPass);
  if (failed(score))
    return failure();
  applyUnitEdit(*plan, keepUnits(*score, keep), ConsumerColumns::Rescale);
  return success();
}

/// The importance of each index of axis `unit`: the product over the
/// Linears whose weight carries it of the L2 norm of the index's entries.
static std::vector<double> axisImportance(AxisAnalysis &a, Axis unit) {
  std::vector<double> score(a.size(unit), 1.0);
  for (const TensorSite &t : a.getTensors()) {
    if (!isa<LinearOp>(t.op) || t.name != "weight")
      continue;
    auto type =
        cast<ShapedType>(t.op->getAttrOfType<ElementsAttr>("weight").getType());
    std::vector<double> v =
        *readTensor(t.op->getAttrOfType<ElementsAttr>("weight"));
    for (int64_t dim = 0; dim < 2; ++dim) {
      AxisList l = a.leaves(t.dims[dim]);
      auto pos = llvm::find_if(l, [&](Axis x) { return a.find(x) == unit; });
      if (pos == l.end())
        continue;
      std::vector<double> sumsq(score.size(), 0.0);
      int64_t cols = type.getDimSize(1);
      for (int64_t i = 0; i < static_cast<int64_t>(v.size()); ++i) {
        int64_t index = dim == 0 ? i / cols : i % cols;
        sumsq[a.digits(l, index, nullptr)[pos - l.begin()]] += v[i] * v[i];
      }
      for (size_t u = 0; u < score.size(); ++u)
        score[u] *= std::sqrt(sumsq[u]);
    }
  }
  return score;
}

LogicalResult mlir::nnx::pruneHeads(ModelOp model, StringRef layer,
                                    int64_t heads, StringRef importanceFile) {
  AxisAnalysis a(kPass);
  FailureOr<AttentionCore> core = findAttentionCore(model, layer, a, kPass);
  if (failed(core))
    return failure();
  int64_t n = core->numHeads(a);
  if (heads < 1 || heads >= n)
    return refuse(core->module, kPass, "target")
           << "has " << n << " heads; option heads=" << heads
           << " must be in 1.." << n - 1;
  // Under GQA a kv head leaves with its group; with one kv head (MQA) query
  // heads leave its group; otherwise heads leave with their keys.
  Axis unit = core->kvHeads ? *core->kvHeads : *core->group;
  int64_t perUnit = core->kvHeads && core->group ? a.size(*core->group) : 1;
  if (heads % perUnit != 0) {
    InFlightDiagnostic diag = refuse(core->module, kPass, "target")
                              << "shares each of its " << a.size(unit)
                              << " kv heads among " << perUnit
                              << " query heads; option heads=" << heads
                              << " must be a multiple of " << perUnit
                              << " (a kv head goes with all its query heads)";
    if (Operation *expand = a.expandOrigin(*core->group))
      diag.attachNote(expand->getLoc()) << "repeat_kv's expand is here";
    return diag;
  }
  int64_t units = a.size(unit), keep = heads / perUnit;
  unit = a.find(unit);
  std::map<Axis, AxisResize> resize;
  // Checked with the final size; the kept indices are chosen after.
  resize[unit] = AxisResize::keep(SmallVector<int64_t>(keep, 0));
  if (failed(a.checkEdit(resize, core->call, core->module)))
    return failure();
  FailureOr<std::vector<double>> score =
      importanceFile.empty()
          ? FailureOr<std::vector<double>>(axisImportance(a, unit))
          : readImportance(core->module, importanceFile, units, kPass);
  if (failed(score))
    return failure();
  std::vector<int64_t> kept = keepUnits(*score, keep).source;
  resize[unit] = AxisResize::keep(kept);
  a.applyEdit(resize, core->call,
              [](const TensorSite &, ArrayRef<int64_t>, ArrayRef<bool>) {
                return std::optional<double>();
              });
  return success();
}

namespace {
struct NNXPrunePass : public mlir::nnx::impl::NNXPrunePassBase<NNXPrunePass> {
  using Base::Base;
  void runOnOperation() override {
    if (heads && keep) {
      getOperation().emitError()
          << kPass << ": options keep= (units of a Linear) and heads= (heads "
          << "of an attention module) exclude each other";
      return signalPassFailure();
    }
    if (failed(heads ? pruneHeads(getOperation(), layer, heads, importance)
                     : prune(getOperation(), layer, keep, importance)))
      signalPassFailure();
  }
};
} // namespace
