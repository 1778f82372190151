//===- WidenChannels.cpp - Net2WiderNet on a channel group ------*- C++ -*-===//
//
// The channel group of a layer (ChannelGroup.h) grows by copies: new
// channel j replicates old channel source[j] in every per-channel entry,
// and every contraction over the channels (a Linear's or convolution's
// input columns) divides the columns of a replicated channel by its count.
//
//===----------------------------------------------------------------------===//
#include "ChannelGroup.h"
#include "UnitEdit.h"

#include "nnx/Dialect/NNX/IR/NNXFnOps.h"
#include "nnx/Dialect/NNX/Transforms/Passes.h"
#include "nnx/Dialect/NNX/Transforms/Surgery.h"

namespace mlir::nnx {
#define GEN_PASS_DEF_NNXWIDENCHANNELSPASS
#include "nnx/Dialect/NNX/Transforms/Passes.h.inc"
} // namespace mlir::nnx

using namespace mlir;
using namespace mlir::nnx;
using namespace mlir::nnx::surgery;

static constexpr llvm::StringLiteral kPass = "nnx-widen-channels";

/// Refuses a matrix product of the forwards that contracts the channels:
/// it has no weight whose columns could be divided.
static LogicalResult checkContractions(AxisAnalysis &a, const ChannelGroup &g) {
  for (ForwardOp forward : a.getForwards()) {
    WalkResult res = forward.walk([&](FnMatmulOp mm) {
      auto lt = cast<RankedTensorType>(mm.getLhs().getType());
      if (lt.getRank() == 0 ||
          !holdsAxis(a, a.leaves(mm.getLhs(), lt.getRank() - 1), g.axis))
        return WalkResult::advance();
      InFlightDiagnostic diag =
          refuse(g.target, kPass, "target")
          << "has output channels that a matrix product contracts: copies "
             "would be summed twice, and it has no weight to divide";
      diag.attachNote(mm.getLoc()) << "the op is here";
      return WalkResult::interrupt();
    });
    if (res.wasInterrupted())
      return failure();
  }
  return success();
}

LogicalResult mlir::nnx::widenChannels(ModelOp model, StringRef layer,
                                       int64_t width, uint64_t seed) {
  AxisAnalysis a(kPass);
  FailureOr<ChannelGroup> g = findChannelGroup(model, layer, a, kPass);
  if (failed(g))
    return failure();
  int64_t n = a.size(g->axis);
  if (width <= n)
    return refuse(g->target, kPass, "target")
           << "names a group of " << n << " channels; option width=" << width
           << " must be larger";
  // Checked with the final size (every tensor holdable) before the
  // channels are chosen.
  std::map<Axis, AxisResize> resize;
  resize[g->axis] = AxisResize::grow(width);
  if (failed(a.checkEdit(resize, CallOp(), g->target)) ||
      failed(checkContractions(a, *g)))
    return failure();
  FailureOr<GroupValues> values = readGroupTensors(*g, kPass);
  if (failed(values))
    return failure();
  UnitMap units = chooseUnits(n, width, seed);
  resize[g->axis] = AxisResize{
      width, SmallVector<int64_t>(units.source.begin(), units.source.end())};
  // The dims of each tensor that contract the channels.
  std::map<const TensorSite *, SmallVector<unsigned>> reads;
  for (const ChannelTensor &t : g->tensors)
    if (t.role == ChannelRole::Reads)
      reads[t.site].push_back(t.dim);
  a.applyKeepEdit(
      resize, CallOp(),
      [&](const TensorSite &t, ElementsAttr attr,
          ArrayRef<SmallVector<int64_t>> source) {
        // Per contracted dim, how many new indices share an old.
        SmallVector<std::pair<unsigned, std::map<int64_t, int>>> count;
        for (unsigned d : reads[&t]) {
          count.push_back({d, {}});
          for (int64_t s : source[d])
            ++count.back().second[s];
        }
        auto scale = [&](ArrayRef<int64_t> index) {
          double f = 1.0;
          for (auto &[d, c] : count)
            f /= c.at(source[d][index[d]]);
          return f;
        };
        return gatherGroupTensor(t, attr, values->at(&t), source, scale);
      });
  return success();
}

namespace {
struct NNXWidenChannelsPass
    : public mlir::nnx::impl::NNXWidenChannelsPassBase<NNXWidenChannelsPass> {
  using Base::Base;
  void runOnOperation() override {
    if (failed(widenChannels(getOperation(), layer, width, seed)))
      signalPassFailure();
  }
};
} // namespace
