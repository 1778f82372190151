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

/// Where the channels lie in a dim of leaves `l` that has other factors
/// too: index = (o * channels + c) * inner + i, for o < outer, i < inner.
static void printLayout(llvm::raw_ostream &os, AxisAnalysis &a, Axis axis,
                        const AxisList &l) {
  auto pos = llvm::find_if(l, [&](Axis x) { return a.find(x) == axis; });
  if (pos == l.end() || l.size() == 1)
    return;
  int64_t outer = 1, inner = 1;
  for (auto it = l.begin(); it != pos; ++it)
    outer *= a.size(*it);
  for (auto it = std::next(pos); it != l.end(); ++it)
    inner *= a.size(*it);
  os << " (outer " << outer << " inner " << inner << ")";
}

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
    printLayout(os, a, g.axis, l);
    os << "\n";
  }
  for (const ChannelValue &v : g.values)
    os << "  value " << describeValue(v.value) << " dim " << v.dim << "\n";
  // The model's results that carry the channels: an edit would change
  // what the model returns.
  CustomModuleOp root = g.root;
  Operation *ret = root.getForward().getBodyBlock().getTerminator();
  for (auto [i, v] : llvm::enumerate(ret->getOperands()))
    if (auto type = dyn_cast<RankedTensorType>(v.getType()))
      for (int64_t d = 0; d < type.getRank(); ++d)
        if (holdsAxis(a, a.leaves(v, d), g.axis))
          os << "  output #" << i << " dim " << d << "\n";
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

/// Prints the refusal `diag` of `target`'s group: its message, then each
/// note with its location.
static void printRefusal(llvm::raw_ostream &os, Operation *target,
                         Diagnostic &diag) {
  os << "channel group of '" << getDisplayPath(target) << "' ("
     << target->getName() << "): refused: " << diag.str() << "\n";
  for (Diagnostic &note : diag.getNotes())
    if (!StringRef(note.str()).starts_with("see current operation"))
      os << "  note: " << note.str() << " (at " << note.getLocation() << ")\n";
}

/// Every channel group of the model, one analysis: per convolution and
/// Linear in the module tree's order, its group or its refusal.
static LogicalResult printAllGroups(llvm::raw_ostream &os, ModelOp model) {
  AxisAnalysis a(kPass);
  FailureOr<CustomModuleOp> root = analyzeChannels(model, a, kPass);
  if (failed(root))
    return failure();
  SmallVector<Operation *> targets;
  model.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (writesChannels(op))
      targets.push_back(op);
  });
  for (Operation *target : targets) {
    std::optional<Diagnostic> refusal;
    FailureOr<ChannelGroup> g;
    {
      ScopedDiagnosticHandler capture(model.getContext(), [&](Diagnostic &d) {
        if (!refusal)
          refusal.emplace(std::move(d));
        return success();
      });
      g = channelGroupOf(a, *root, target, kPass);
    }
    if (succeeded(g))
      printGroup(os, a, *g);
    else if (refusal)
      printRefusal(os, target, *refusal);
    else
      return target->emitError()
             << kPass << ": the group of '" << getDisplayPath(target)
             << "' failed without a diagnostic";
  }
  return success();
}

namespace {
struct NNXChannelGroupsPass
    : public mlir::nnx::impl::NNXChannelGroupsPassBase<NNXChannelGroupsPass> {
  using Base::Base;
  void runOnOperation() override {
    if (layer.empty()) {
      if (failed(printAllGroups(llvm::outs(), getOperation())))
        return signalPassFailure();
      markAllAnalysesPreserved();
      return;
    }
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
