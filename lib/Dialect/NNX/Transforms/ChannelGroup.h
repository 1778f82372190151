//===- ChannelGroup.h - channels tied by data flow --------------*- C++ -*-===//
//
// A convolution's (or Linear's) output channels are one axis of the
// AxisAnalysis run over the whole model: every tensor dim and every value
// dim the forward ties to them (residual adds, the downsample branch,
// norms' statistics, depthwise groups, squeeze-excitation gates, a flatten
// into a Linear) carries the same axis. The group is that axis and its
// members; an edit of it resizes the axis, so every member follows.
//
//===----------------------------------------------------------------------===//
#ifndef NNX_LIB_DIALECT_NNX_TRANSFORMS_CHANNELGROUP_H
#define NNX_LIB_DIALECT_NNX_TRANSFORMS_CHANNELGROUP_H

#include "AxisAnalysis.h"

namespace mlir::nnx::surgery {

/// How a tensor dim of the group uses the channels.
enum class ChannelRole {
  /// A per-channel entry: written per channel (a weight's output rows, a
  /// bias, a norm's statistics, a depthwise filter).
  PerChannel,
  /// A contraction: a Linear's or convolution's input columns, summed over
  /// the channels.
  Reads,
};

/// One tensor dim of the group.
struct ChannelTensor {
  const TensorSite *site;
  unsigned dim;
  ChannelRole role;
};

/// One value dim of the group, in a forward.
struct ChannelValue {
  Value value;
  unsigned dim;
};

struct ChannelGroup {
  /// The layer whose output channels name the group.
  Operation *target;
  /// The root module: the model's top `nnx.module`.
  CustomModuleOp root;
  /// The channels' axis (one leaf).
  Axis axis;
  llvm::SmallVector<ChannelTensor> tensors;
  llvm::SmallVector<ChannelValue> values;
  /// Norms, means and softmaxes that reduce over the channels.
  llvm::SmallVector<Operation *> reductions;
};

/// The channel group of the convolution or Linear at `layer`, with `a` run
/// over the model's top module. Refuses (naming the op and its location)
/// when an op the analysis does not follow touches the channels.
FailureOr<ChannelGroup> findChannelGroup(ModelOp model, llvm::StringRef layer,
                                         AxisAnalysis &a, llvm::StringRef pass);

/// Whether `op` names a channel group: a convolution, or a Linear with
/// its weight.
bool writesChannels(Operation *op);

/// Runs `a` over the model's top module (every run of every layer
/// related): the analysis that `channelGroupOf` reads. Returns the root.
FailureOr<CustomModuleOp> analyzeChannels(ModelOp model, AxisAnalysis &a,
                                          llvm::StringRef pass);

/// The channel group of `target` (a Linear or convolution of the model)
/// under `a`, which `analyzeChannels` ran: refused, naming the op, where
/// the proof breaks.
FailureOr<ChannelGroup> channelGroupOf(AxisAnalysis &a, CustomModuleOp root,
                                       Operation *target, llvm::StringRef pass);

/// The values of every tensor of the group, read (from the weights file
/// where the tensor lives there) before anything changes: a tensor that
/// cannot be read is refused.
using GroupValues = std::map<const TensorSite *, std::vector<double>>;
FailureOr<GroupValues> readGroupTensors(const ChannelGroup &g,
                                        llvm::StringRef pass);

/// The tensor `t` (read into `values`) gathered along each dim from
/// `source` (per dim, per new index, the old index).
ElementsAttr
gatherGroupTensor(const TensorSite &t, ElementsAttr attr,
                  const std::vector<double> &values,
                  llvm::ArrayRef<llvm::SmallVector<int64_t>> source,
                  llvm::function_ref<double(llvm::ArrayRef<int64_t>)> scale);

/// Whether dim list `list` holds `axis`, directly or in a concatenation's
/// part.
bool holdsAxis(AxisAnalysis &a, llvm::ArrayRef<Axis> list, Axis axis);

/// The model's one top module, a custom module with a forward; `why` ends
/// the refusal.
FailureOr<CustomModuleOp> findRootModule(ModelOp model, llvm::StringRef pass,
                                         llvm::StringRef why);

/// A dotted path for a value of a forward: the module's path, then the
/// defining op's source label (or its name), or the argument number.
std::string describeValue(Value v);

} // namespace mlir::nnx::surgery

#endif // NNX_LIB_DIALECT_NNX_TRANSFORMS_CHANNELGROUP_H
