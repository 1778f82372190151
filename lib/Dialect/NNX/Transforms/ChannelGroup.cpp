//===- ChannelGroup.cpp - channels tied by data flow ------------*- C++ -*-===//
#include "ChannelGroup.h"

#include "nnx/Dialect/NNX/IR/ModuleTree.h"
#include "nnx/Dialect/NNX/IR/TensorUtils.h"

using namespace mlir;
using namespace mlir::nnx;
using namespace mlir::nnx::surgery;

FailureOr<CustomModuleOp> surgery::findRootModule(ModelOp model, StringRef pass,
                                                  StringRef why) {
  SmallVector<Operation *> tops;
  for (Operation &op : model.getBody().front())
    if (isa<ModuleOpInterface>(op))
      tops.push_back(&op);
  auto root =
      tops.size() == 1 ? dyn_cast<CustomModuleOp>(tops[0]) : CustomModuleOp();
  if (!root || !root.getForward())
    return model.emitError()
           << pass << ": model '@" << model.getSymName()
           << "' is not one custom module with a forward " << why;
  if (failed(checkRefusable(root, Hooks, pass, "model")))
    return failure();
  return root;
}

bool surgery::holdsAxis(AxisAnalysis &a, ArrayRef<Axis> list, Axis axis) {
  std::map<Axis, AxisResize> probe;
  probe[a.find(axis)] = AxisResize::grow(a.size(axis) + 1);
  return llvm::any_of(a.leaves(list),
                      [&](Axis x) { return a.isResized(x, probe); });
}

std::string surgery::describeValue(Value v) {
  Operation *owner = v.getParentRegion()->getParentOp();
  while (owner && !isa<ModuleOpInterface>(owner))
    owner = owner->getParentOp();
  std::string out = owner ? getDisplayPath(owner) : "?";
  if (auto arg = dyn_cast<BlockArgument>(v))
    return out + ":argument #" + std::to_string(arg.getArgNumber());
  Operation *def = v.getDefiningOp();
  if (auto source = def->getAttrOfType<StringAttr>("nnx.source"))
    out += ":" + source.getValue().str();
  else
    out += ":" + def->getName().getStringRef().str();
  if (def->getNumResults() > 1)
    out += "#" + std::to_string(cast<OpResult>(v).getResultNumber());
  return out;
}

bool surgery::writesChannels(Operation *op) {
  return (isa<LinearOp>(op) && op->getAttr("weight")) ||
         isa<ConvLayerOpInterface>(op);
}

/// The target's own checks: a Linear or convolution with nothing a rebuild
/// would drop.
static FailureOr<Operation *> lookupTarget(ModelOp model, StringRef layer,
                                           StringRef pass) {
  FailureOr<Operation *> slot =
      lookupEditModule(model, layer, pass, "layer", "target");
  if (failed(slot))
    return failure();
  Operation *target = *slot;
  if (!writesChannels(target))
    return refuse(target, pass, "target")
           << "is not a Linear or a convolution: a channel group is named by "
              "the layer that writes it";
  return target;
}

/// Whether a reduction of the forwards covers `x`.
static bool isReducedOver(AxisAnalysis &a, Axis x) {
  return llvm::any_of(a.getReductions(), [&](const auto &r) {
    return llvm::any_of(r.second,
                        [&](const AxisList &d) { return holdsAxis(a, d, x); });
  });
}

/// Whether `x` is a grouped convolution's `groups`.
static bool isGroupsAxis(AxisAnalysis &a, Axis x) {
  return llvm::any_of(a.getTensors(), [&](const TensorSite &t) {
    std::optional<Axis> g = a.groupsAxis(t.op);
    return g && a.find(*g) == a.find(x);
  });
}

/// The axis that names the group of output channels `out` (leaves, major to
/// minor). One leaf: itself. Channels split into parts (a grouped conv's
/// groups x per-group, a GroupNorm's view into groups, reduced over per
/// group): the minor-most factor that nothing pins and no reduction
/// covers, so that every part is edited the same way (a GroupNorm keeps
/// whole groups). Other splits (a reshape mixing them with space, attention
/// heads, whose Python forwards compute their sizes) are refused. Refused, with
/// a note at the op responsible, where no factor is free or the one leaf is
/// pinned.
static FailureOr<Axis> chooseGroupAxis(AxisAnalysis &a, Operation *target,
                                       ArrayRef<Axis> out, StringRef pass) {
  Operation *at = nullptr;
  std::string why;
  if (out.size() != 1) {
    bool parts = llvm::any_of(
        out, [&](Axis x) { return isGroupsAxis(a, x) || isReducedOver(a, x); });
    if (parts)
      for (Axis x : llvm::reverse(out))
        if (!a.pinOf(x) && !isReducedOver(a, x))
          return a.find(x);
    Operation *root = target;
    const TensorSite *w = a.lookupTensor(target, "weight");
    for (Axis x : w->dims[0])
      if (Operation *s = a.splitOf(x))
        root = s;
    at = root;
    why = "has output channels that '" + at->getName().getStringRef().str() +
          "' splits into " + std::to_string(out.size()) +
          (parts ? " factors, each pinned or reduced over: no factor can be "
                   "edited the same way in every part"
                 : " factors that no grouped convolution or per-group norm "
                   "defines (it mixes them with another dim; attention heads "
                   "have their own passes): the channels are no one axis");
  } else if (Operation *p = a.pinOf(out[0])) {
    at = p;
    why = "has output channels that '" + at->getName().getStringRef().str() +
          "' uses in a way the analysis does not follow: the channel group "
          "cannot be proven";
  } else {
    return a.find(out[0]);
  }
  InFlightDiagnostic diag = refuse(target, pass, "target") << why;
  diag.attachNote(at->getLoc()) << "the op is here";
  return diag;
}

/// How dim `dim` of `t` uses the channels.
static ChannelRole roleOf(const TensorSite &t, unsigned dim) {
  bool contracts = isa<LinearOp>(t.op) || isa<ConvLayerOpInterface>(t.op);
  return contracts && !t.isState && t.name == "weight" && dim == 1
             ? ChannelRole::Reads
             : ChannelRole::PerChannel;
}

FailureOr<CustomModuleOp>
surgery::analyzeChannels(ModelOp model, AxisAnalysis &a, StringRef pass) {
  FailureOr<CustomModuleOp> root =
      findRootModule(model, pass,
                     "(an exported model): its channels are traced through "
                     "its forward");
  if (failed(root))
    return failure();
  a.relateAllRuns();
  a.run(*root);
  return root;
}

/// Every value dim of the forwards `a` relates that holds `axis`.
static SmallVector<ChannelValue> groupValues(AxisAnalysis &a, Axis axis) {
  SmallVector<ChannelValue> values;
  auto addValue = [&](Value v) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type)
      return;
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (holdsAxis(a, a.leaves(v, d), axis))
        values.push_back(ChannelValue{v, static_cast<unsigned>(d)});
  };
  for (ForwardOp forward : a.getForwards())
    forward.walk([&](Operation *op) {
      for (Region &region : op->getRegions())
        for (BlockArgument arg : region.getArguments())
          addValue(arg);
      for (Value v : op->getResults())
        addValue(v);
    });
  return values;
}

FailureOr<ChannelGroup> surgery::channelGroupOf(AxisAnalysis &a,
                                                CustomModuleOp root,
                                                Operation *target,
                                                StringRef pass) {
  if (failed(checkRefusable(target, AllRebuildProperties, pass, "target")))
    return failure();
  const TensorSite *w = a.lookupTensor(target, "weight");
  if (!w)
    return refuse(target, pass, "target")
           << "is never run by the model's forward: there is no data flow to "
              "prove";
  AxisList out = a.leaves(w->dims[0]);
  if (out.empty())
    return refuse(target, pass, "target")
           << "has one output channel: there is no group to edit";
  FailureOr<Axis> axis = chooseGroupAxis(a, target, out, pass);
  if (failed(axis))
    return failure();
  ChannelGroup group{target, root, *axis, {}, {}, {}};
  for (const TensorSite &t : a.getTensors())
    for (auto [d, dims] : llvm::enumerate(t.dims))
      if (holdsAxis(a, dims, group.axis))
        group.tensors.push_back(
            ChannelTensor{&t, static_cast<unsigned>(d), roleOf(t, d)});
  group.values = groupValues(a, group.axis);
  for (auto &[op, dims] : a.getReductions())
    if (llvm::any_of(dims, [&, &a = a](const AxisList &d) {
          return holdsAxis(a, d, group.axis);
        }))
      group.reductions.push_back(op);
  return group;
}

FailureOr<ChannelGroup> surgery::findChannelGroup(ModelOp model,
                                                  StringRef layer,
                                                  AxisAnalysis &a,
                                                  StringRef pass) {
  FailureOr<Operation *> target = lookupTarget(model, layer, pass);
  if (failed(target))
    return failure();
  FailureOr<CustomModuleOp> root = analyzeChannels(model, a, pass);
  if (failed(root))
    return failure();
  return channelGroupOf(a, *root, *target, pass);
}

FailureOr<GroupValues> surgery::readGroupTensors(const ChannelGroup &g,
                                                 StringRef pass) {
  GroupValues out;
  for (const ChannelTensor &t : g.tensors) {
    const TensorSite &s = *t.site;
    if (out.count(&s))
      continue;
    ElementsAttr attr = s.isState ? cast<CustomModuleOp>(s.op).getTensor(s.name)
                                  : s.op->getAttrOfType<ElementsAttr>(s.name);
    FailureOr<std::vector<double>> v =
        readTensorOrRefuse(s.op, attr, s.name, pass, "group member");
    if (failed(v))
      return failure();
    out[&s] = std::move(*v);
  }
  return out;
}

ElementsAttr surgery::gatherGroupTensor(
    const TensorSite &t, ElementsAttr attr, const std::vector<double> &values,
    ArrayRef<SmallVector<int64_t>> source,
    llvm::function_ref<double(ArrayRef<int64_t>)> scale) {
  auto type = cast<ShapedType>(attr.getType());
  int64_t rank = type.getRank(), total = 1;
  SmallVector<int64_t> shape, stride(rank, 1);
  for (const SmallVector<int64_t> &s : source) {
    shape.push_back(s.size());
    total *= s.size();
  }
  for (int64_t d = rank - 2; d >= 0; --d)
    stride[d] = stride[d + 1] * type.getDimSize(d + 1);
  std::vector<double> out(total);
  SmallVector<int64_t> index(rank);
  for (int64_t flat = 0; flat < total; ++flat) {
    int64_t rest = flat, oldFlat = 0;
    for (int64_t d = rank - 1; d >= 0; --d) {
      index[d] = rest % shape[d];
      oldFlat += source[d][index[d]] * stride[d];
      rest /= shape[d];
    }
    out[flat] = values[oldFlat] * scale(index);
  }
  return makeTensor(type.clone(shape), out);
}
