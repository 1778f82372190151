//===- PruneChannels.cpp - keep a channel group's best channels -*- C++ -*-===//
//
// The channel group of a layer (ChannelGroup.h) is one axis of the model's
// AxisAnalysis: keeping some of its indices slices every member tensor,
// retypes every value and rewrites every static size, as nnx-prune heads=
// does for attention heads.
//
//===----------------------------------------------------------------------===//
#include "ChannelGroup.h"
#include "UnitEdit.h"

#include "nnx/Dialect/NNX/Transforms/Passes.h"
#include "nnx/Dialect/NNX/Transforms/Surgery.h"

#include <cmath>

namespace mlir::nnx {
#define GEN_PASS_DEF_NNXPRUNECHANNELSPASS
#include "nnx/Dialect/NNX/Transforms/Passes.h.inc"
} // namespace mlir::nnx

using namespace mlir;
using namespace mlir::nnx;
using namespace mlir::nnx::surgery;

static constexpr llvm::StringLiteral kPass = "nnx-prune-channels";

/// For each of the `n` indices of a dim with axes `dims`, the channel it
/// belongs to (-1: none): a factor of the dim, or a concatenation's part at
/// its offset.
static std::vector<int64_t> channelOfIndex(AxisAnalysis &a,
                                           const ChannelGroup &g,
                                           ArrayRef<Axis> dims, int64_t n) {
  std::vector<int64_t> channel(n, -1);
  AxisList l = a.leaves(dims);
  auto pos = llvm::find_if(l, [&](Axis x) { return a.find(x) == g.axis; });
  if (pos != l.end()) {
    for (int64_t i = 0; i < n; ++i)
      channel[i] = a.digits(l, i, nullptr)[pos - l.begin()];
    return channel;
  }
  std::optional<int64_t> offset =
      l.size() == 1 ? a.offsetOf(l[0], g.axis) : std::nullopt;
  for (int64_t c = 0; offset && c < a.size(g.axis) && *offset + c < n; ++c)
    channel[*offset + c] = c;
  return channel;
}

/// Per channel, the L2 norm of the group's parameters at it.
static std::vector<double> groupImportance(AxisAnalysis &a,
                                           const ChannelGroup &g,
                                           const GroupValues &values) {
  std::vector<double> sumsq(a.size(g.axis), 0.0);
  for (const ChannelTensor &t : g.tensors) {
    const TensorSite &s = *t.site;
    auto module = dyn_cast<ModuleOpInterface>(s.op);
    if (s.isState || !module ||
        !llvm::is_contained(module.getParameterNames(), s.name))
      continue;
    auto type =
        cast<ShapedType>(s.op->getAttrOfType<ElementsAttr>(s.name).getType());
    int64_t inner = 1, n = type.getDimSize(t.dim);
    for (int64_t d = t.dim + 1; d < type.getRank(); ++d)
      inner *= type.getDimSize(d);
    std::vector<int64_t> channel = channelOfIndex(a, g, s.dims[t.dim], n);
    const std::vector<double> &v = values.at(&s);
    for (size_t i = 0; i < v.size(); ++i)
      if (int64_t c = channel[(i / inner) % n]; c >= 0)
        sumsq[c] += v[i] * v[i];
  }
  for (double &x : sumsq)
    x = std::sqrt(x);
  return sumsq;
}

LogicalResult mlir::nnx::pruneChannels(ModelOp model, StringRef layer,
                                       int64_t keep, StringRef importanceFile) {
  AxisAnalysis a(kPass);
  FailureOr<ChannelGroup> g = findChannelGroup(model, layer, a, kPass);
  if (failed(g))
    return failure();
  int64_t n = a.size(g->axis);
  if (keep < 1 || keep >= n)
    return refuse(g->target, kPass, "target")
           << "names a group of " << n << " channels; option keep=" << keep
           << " must be in 1.." << n - 1;
  std::map<Axis, AxisResize> resize;
  // Checked with the final size; the kept indices are chosen after.
  resize[g->axis] = AxisResize::keep(SmallVector<int64_t>(keep, 0));
  if (failed(a.checkEdit(resize, CallOp(), g->target)))
    return failure();
  FailureOr<GroupValues> values = readGroupTensors(*g, kPass);
  if (failed(values))
    return failure();
  FailureOr<std::vector<double>> score =
      importanceFile.empty()
          ? FailureOr<std::vector<double>>(groupImportance(a, *g, *values))
          : readImportance(g->target, importanceFile, n, kPass);
  if (failed(score))
    return failure();
  std::vector<int64_t> kept = keepUnits(*score, keep).source;
  resize[g->axis] = AxisResize::keep(kept);
  a.applyKeepEdit(resize, CallOp(),
                  [](const TensorSite &, ElementsAttr attr,
                     ArrayRef<SmallVector<int64_t>> source) {
                    return keepIndices(attr, source);
                  });
  return success();
}

namespace {
struct NNXPruneChannelsPass
    : public mlir::nnx::impl::NNXPruneChannelsPassBase<NNXPruneChannelsPass> {
  using Base::Base;
  void runOnOperation() override {
    if (failed(pruneChannels(getOperation(), layer, keep, importance)))
      signalPassFailure();
  }
};
} // namespace
