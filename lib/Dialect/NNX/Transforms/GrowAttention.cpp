//===- GrowAttention.cpp - add heads, widen head dims -----------*- C++ -*-===//
//
// Gesmundo & Maile 2023's head addition and heads/attention expansion on an
// attention module's forward. New heads and new head coordinates are
// appended to their axes (AxisAnalysis); the Linears that read them (the
// output projection) get zero columns there, so the module's output is
// unchanged. When the query/key head dim grows, the query's new coordinates
// are zero too (found by walking back from the scores' left operand), so
// every `q . k` and the constant 1/sqrt(d) scale stay as they were. Other
// new rows are drawn from a normal distribution with the old weight's
// root-mean-square, so that the new units train.
//
//===----------------------------------------------------------------------===//
#include "AttentionCore.h"

#include "nnx/Dialect/NNX/IR/TensorUtils.h"
#include "nnx/Dialect/NNX/Transforms/Passes.h"
#include "nnx/Dialect/NNX/Transforms/Surgery.h"

#include <cmath>
#include <random>
#include <set>

namespace mlir::nnx {
#define GEN_PASS_DEF_NNXGROWATTENTIONPASS
#include "nnx/Dialect/NNX/Transforms/Passes.h.inc"
} // namespace mlir::nnx

using namespace mlir;
using namespace mlir::nnx;
using namespace mlir::nnx::surgery;

static constexpr llvm::StringLiteral kPass = "nnx-grow-attention";

using ResizeMap = std::map<Axis, AxisResize>;

/// The resize of the heads to `heads` query heads and `kvHeads` kv heads
/// (0: keep the kv heads, growing the groups).
static LogicalResult planHeads(AttentionCore &core, AxisAnalysis &a,
                               int64_t heads, int64_t kvHeads,
                               ResizeMap &resize) {
  int64_t n = core.numHeads(a);
  int64_t kv = core.kvHeads ? a.size(*core.kvHeads) : 1;
  if (heads < n)
    return refuse(core.module, kPass, "target")
           << "has " << n << " heads; option heads=" << heads
           << " must not be smaller (nnx-prune removes heads)";
  if (!core.group) {
    // Every query head has its own keys: kv heads and heads grow together.
    if (kvHeads && kvHeads != heads)
      return refuse(core.module, kPass, "target")
             << "has one kv head per query head (no repeat_kv); option "
                "kv-heads="
             << kvHeads << " must equal heads=" << heads;
    if (heads > n)
      resize[a.find(*core.kvHeads)] = AxisResize::grow(heads);
    return success();
  }
  int64_t newKv = kvHeads ? kvHeads : kv;
  int64_t groupSize = a.size(*core.group);
  Operation *expand = a.expandOrigin(*core.group);
  auto refuseRatio = [&](const Twine &why) {
    InFlightDiagnostic diag = refuse(core.module, kPass, "target") << why;
    if (expand)
      diag.attachNote(expand->getLoc())
          << "repeat_kv's expand is here: it repeats each of the " << kv
          << " kv heads " << groupSize << " times";
    else
      diag.attachNote(core.scores.getLoc())
          << "the scores broadcast " << kv << " kv head over " << groupSize
          << " query heads here";
    return diag;
  };
  if (newKv < kv || (!core.kvHeads && newKv != 1))
    return refuseRatio("has " + Twine(kv) +
                       " kv heads; option kv-heads=" + Twine(newKv) +
                       (core.kvHeads ? " must not be smaller"
                                     : " cannot change (a unit dim)"));
  if (heads % newKv != 0)
    return refuseRatio("would have " + Twine(heads) + " query heads over " +
                       Twine(newKv) +
                       " kv heads: num_heads / num_kv_heads must stay an "
                       "integer");
  if (heads / newKv < groupSize)
    return refuseRatio("would give each kv head " + Twine(heads / newKv) +
                       " query heads, fewer than its " + Twine(groupSize));
  if (newKv > kv)
    resize[a.find(*core.kvHeads)] = AxisResize::grow(newKv);
  if (heads / newKv > groupSize)
    resize[a.find(*core.group)] = AxisResize::grow(heads / newKv);
  return success();
}

/// The resize of a head dim (axes `dim`) to `size`: its one axis that is not
/// a rotary half grows.
static LogicalResult planHeadDim(AttentionCore &core, AxisAnalysis &a,
                                 ArrayRef<Axis> dim, int64_t size,
                                 StringRef what, ResizeMap &resize) {
  int64_t old = 1, fixed = 1;
  SmallVector<Axis> free;
  for (Axis x : dim) {
    old *= a.size(x);
    if (a.isStructural(x))
      fixed *= a.size(x);
    else
      free.push_back(x);
  }
  if (size < old)
    return refuse(core.module, kPass, "target")
           << "has a " << what << " head dim of " << old
           << "; option head-dim=" << size << " must not be smaller";
  if (size == old)
    return success();
  if (free.size() != 1 || size % fixed != 0) {
    InFlightDiagnostic diag = refuse(core.module, kPass, "target")
                              << "has a " << what << " head dim of " << old
                              << " that is not `halves x n` with one n to grow "
                                 "to head-dim="
                              << size;
    diag.attachNote(core.scores.getLoc()) << "the scores are computed here";
    return diag;
  }
  Axis x = a.find(free[0]);
  if (!resize.count(x))
    resize[x] = AxisResize::grow(size / fixed);
  return success();
}

namespace {
/// New entries: zero where the module's output must not see them (columns
/// of a Linear reading new coordinates, biases, the query's new head-dim
/// rows), drawn where they should train.
class GrowFill {
public:
  /// `query`: the scores' left operand, whose new head-dim coordinates
  /// must be zero; `qkDim`: the query/key head dim's axes.
  GrowFill(AxisAnalysis &a, const ResizeMap &resize, Value query,
           ArrayRef<Axis> qkDim, uint64_t seed)
      : a(a), resize(resize), query(a.linearSources(query)), draws(seed) {
    for (Axis x : qkDim)
      qk.insert(a.find(x));
  }

  std::optional<double> operator()(const TensorSite &t, ArrayRef<int64_t> index,
                                   ArrayRef<bool> isNew) {
    if (t.isState)
      return std::nullopt;
    if (t.name != "weight" || !isa<LinearOp>(t.op))
      return isa<LinearOp>(t.op) ? std::optional<double>(0.0) : std::nullopt;
    if (isNew[1] || isQueryRow(t, index[0]))
      return 0.0;
    return draws.draw(t.op);
  }

private:
  /// True if `row` of Linear `t` is a new head-dim coordinate of the query.
  bool isQueryRow(const TensorSite &t, int64_t row) {
    AxisList out = a.leaves(t.dims[0]);
    SmallVector<int64_t> digits = a.digits(out, row, &resize);
    for (const AxisAnalysis::Source &s : query) {
      if (CallOp(s.call).resolveCalleeModule().getOperation() != t.op)
        continue;
      bool match = true, newCoord = false;
      for (auto [x, d] : llvm::zip(out, digits)) {
        auto sel = s.selection.find(a.find(x));
        if (sel != s.selection.end() && sel->second >= 0 && sel->second != d)
          match = false;
        if (sel != s.selection.end() && sel->second < 0) {
          // A segment (Falcon's query heads), by its old offset.
          auto range = a.segmentRange(x, -sel->second - 1, resize);
          if (!range || d < range->first || d >= range->first + range->second)
            match = false;
        }
        if (isQk(x) && d >= a.size(x))
          newCoord = true;
      }
      if (match && newCoord)
        return true;
    }
    return false;
  }
  bool isQk(Axis x) { return qk.count(a.find(x)); }

  AxisAnalysis &a;
  const ResizeMap &resize;
  SmallVector<AxisAnalysis::Source> query;
  std::set<Axis> qk;
  WeightDraws draws;
};
} // namespace

LogicalResult mlir::nnx::growAttention(ModelOp model, StringRef layer,
                                       int64_t heads, int64_t kvHeads,
                                       int64_t headDim, uint64_t seed) {
  if (heads < 0 || kvHeads < 0 || headDim < 0)
    return model.emitError()
           << kPass
           << ": options heads, kv-heads and head-dim must not be "
              "negative";
  if (!heads && !kvHeads && !headDim)
    return model.emitError()
           << kPass << ": nothing to grow: set heads=, kv-heads= or head-dim=";
  AxisAnalysis a(kPass);
  FailureOr<AttentionCore> core = findAttentionCore(model, layer, a, kPass);
  if (failed(core))
    return failure();
  ResizeMap resize;
  int64_t n = core->numHeads(a);
  if ((heads || kvHeads) &&
      failed(planHeads(*core, a, heads ? heads : n, kvHeads, resize)))
    return failure();
  if (headDim &&
      (failed(
           planHeadDim(*core, a, core->qkDim, headDim, "query/key", resize)) ||
       failed(planHeadDim(*core, a, core->vDim, headDim, "value", resize))))
    return failure();
  if (resize.empty())
    return success();
  if (failed(a.checkEdit(resize, core->call, core->module)))
    return failure();
  GrowFill fill(a, resize, core->scores.getLhs(), core->qkDim, seed);
  a.applyEdit(resize, core->call,
              [&](const TensorSite &t, ArrayRef<int64_t> index,
                  ArrayRef<bool> isNew) { return fill(t, index, isNew); });
  return success();
}

namespace {
struct NNXGrowAttentionPass
    : public mlir::nnx::impl::NNXGrowAttentionPassBase<NNXGrowAttentionPass> {
  using Base::Base;
  void runOnOperation() override {
    if (failed(growAttention(getOperation(), layer, heads, kvHeads, headDim,
                             seed)))
      signalPassFailure();
  }
};
} // namespace
