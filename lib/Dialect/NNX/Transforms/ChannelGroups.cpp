//===- ChannelGroups.cpp - print a channel group ----------------*- C++ -*-===//
#include "ChannelGroup.h"

#include "nnx/Dialect/NNX/IR/ModuleTree.h"
#include "nnx/Dialect/NNX/Transforms/Passes.h"

namespace mlir::nnx {
#define GEN_PASS_DEF_NNXCHANNELGROUPSPASS
#include "nnx/Dialect/NNX/Transforms/Passes.h.inc"
} // namespace mlir::nnx

using namespace mlir;
using namespace mlir::nnx;
using namespace mlir::nnx::surgery;

static constexpr llvm::StringLiteral kPass = "nnx-channel-groups";

static void printGroup(llvm::raw_ostream &os, AxisAnalysis &a,
                       const ChannelGroup &g) {
  os << "channel group of '" << getDisplayPath(g.target) << "' ("
     << g.target->getName() << "): " << a.size(g.axis) << " channels\n";
  for (const ChannelTensor &t : g.tensors) {
    os << "  tensor " << getDisplayPath(t.site->op) << "."
       << (t.site->isState ? "state." : "") << t.site->name << " dim " << t.dim;
    AxisList l = a.leaves(t.site->dims[t.dim]);
    std::optional<int64_t> at =
        l.size() == 1 ? a.offsetOf(l[0], g.axis) : std::nullopt;
    if (at && *at != 0)
      os << " at " << *at;
    if (t.role == ChannelRole::Reads)
      os << " (reads)";
    os << "\n";
  }
  for (const ChannelValue &v : g.values)
    os << "  value " << describeValue(v.value) << " dim " << v.dim << "\n";
  for (Operation *op : g.reductions) {
    os << "  reduced by ";
    if (auto call = dyn_cast<CallOp>(op))
      os << getDisplayPath(call.resolveCalleeModule()) << " ("
         << call.resolveCalleeModule()->getName() << ")\n";
    else if (op->getNumResults() == 1)
      os << describeValue(op->getResult(0)) << " (" << op->getName() << ")\n";
    else
      os << getDisplayPath(op) << " (" << op->getName() << ")\n";
  }
}

namespace {
struct NNXChannelGroupsPass
    : public mlir::nnx::impl::NNXChannelGroupsPassBase<NNXChannelGroupsPass> {
  using Base::Base;
  void runOnOperation() override {
    AxisAnalysis a(kPass);
    FailureOr<ChannelGroup> g =
        findChannelGroup(getOperation(), layer, a, kPass);
    if (failed(g))
      return signalPassFailure();
    printGroup(llvm::outs(), a, *g);
    markAllAnalysesPreserved();
  }
};
} // namespace
