//===- SurgeryUtils.h - logic the surgery passes share ----------*- C++ -*-===//
//
// One home for what several surgery primitives need: refusal diagnostics,
// the checks of properties a rebuilt plain module would drop, the consumer
// walk through elementwise modules, the sibling walk, reference retargeting
// after keys change, and tensor/flag/mode helpers.
//
//===----------------------------------------------------------------------===//
#ifndef NNX_LIB_DIALECT_NNX_TRANSFORMS_SURGERYUTILS_H
#define NNX_LIB_DIALECT_NNX_TRANSFORMS_SURGERYUTILS_H

#include "nnx/Dialect/NNX/IR/ModuleTree.h"
#include "nnx/Dialect/NNX/IR/NNXOps.h"

#include "mlir/IR/Diagnostics.h"
#include <vector>

namespace mlir::nnx::surgery {

/// Starts a refusal at `op`: "<pass>: <role> '<path>' (<op name>) ". The
/// caller streams the reason. `role` is e.g. "target", "consumer".
InFlightDiagnostic refuse(Operation *op, llvm::StringRef pass,
                          llvm::StringRef role);

/// The op registered at the dotted `path` of option `option` (a module or an
/// `nnx.alias`). Emits an error at `model` for an empty option or a path that
/// names nothing.
FailureOr<Operation *> lookupSlot(ModelOp model, llvm::StringRef path,
                                  llvm::StringRef pass, llvm::StringRef option);

/// The slot a surgery edit starts from: refuses a model that carries a
/// recipe (refuseRecipeModel), then looks `path` up (lookupSlot).
FailureOr<Operation *> lookupEditSlot(ModelOp model, llvm::StringRef path,
                                      llvm::StringRef pass,
                                      llvm::StringRef option);

/// The module an edit starts from: lookupEditSlot, then a refusal (as
/// `role`) of a slot that is an `nnx.alias`.
FailureOr<Operation *> lookupEditModule(ModelOp model, llvm::StringRef path,
                                        llvm::StringRef pass,
                                        llvm::StringRef option,
                                        llvm::StringRef role);

/// Properties of a module that a rebuilt plain module would drop, or that
/// make an edit ambiguous.
enum Property : unsigned {
  Hooks = 1u << 0,
  Parametrizations = 1u << 1,
  Pruned = 1u << 2,
  Subclass = 1u << 3,
  Aliases = 1u << 4,  // registered under more than one path
  Lazy = 1u << 5,     // uninitialized lazy layer
  OwnState = 1u << 6, // a container's own parameters/buffers
  Called = 1u << 7,   // run by an `nnx.call` outside its container's order
  AllRebuildProperties =
      Hooks | Parametrizations | Pruned | Subclass | Aliases | Lazy,
};

/// Refuses `op` (as `role`) if it carries any of `properties`. For aliases,
/// notes point at every other registration.
LogicalResult checkRefusable(Operation *op, unsigned properties,
                             llvm::StringRef pass, llvm::StringRef role);

/// Refuses a slot that is an `nnx.alias` (the edit would have to change a
/// module registered under several paths), with a note at the module.
LogicalResult refuseAliasSlot(AliasOp alias, llvm::StringRef pass,
                              llvm::StringRef role);

/// Visits the registered siblings after (`forward`) or before `slot` in its
/// container, nearest first, until `stop` returns true; returns that sibling,
/// or null when the container ends.
Operation *walkSiblings(Operation *slot, bool forward,
                        llvm::function_ref<bool(Operation *)> stop);

/// The units nnx-widen grows on `target`: a Linear's out_features or a
/// convolution's out_channels (dim 0 of the weight either way).
int64_t getUnitCount(Operation *target);

/// Where a widen / prune target's output goes, proven by execution order or
/// by a forward's SSA uses.
struct ConsumerChain {
  /// The `nnx.sequential` or stock net (feed_fwd, conv_nn) that fixes the
  /// order, or the custom module whose forward proves the flow.
  Operation *container = nullptr;
  /// Modules strictly between target and consumer (sequential only).
  llvm::SmallVector<Operation *> path;
  /// The next Linear or convolution. Its weight, seen as `rows x (units *
  /// columnsPerUnit)`, holds `columnsPerUnit` consecutive columns per unit.
  Operation *consumer = nullptr;
  /// 1 after a Linear; a conv consumer's kernel taps; for a Linear after an
  /// `nnx.flatten` the positions each channel became.
  int64_t columnsPerUnit = 1;
  /// The batch norms on the path (option through-batchnorm), each with the
  /// consecutive entries per unit of its tensors.
  llvm::SmallVector<std::pair<BatchNormOp, int64_t>> batchNorms;
  /// For a stock net's layer: its site (`StockNetOpInterface`).
  std::optional<unsigned> hiddenIndex;
  /// In a custom module's forward: the Linears whose units meet the target's
  /// elementwise (SwiGLU's `up_proj` beside `gate_proj`), edited in lockstep.
  llvm::SmallVector<Operation *> siblings;
  /// In a custom module's forward: every value whose last dim holds the
  /// units, from the target's call to the consumer's operand.
  llvm::SmallVector<Value> unitValues;
};

/// Finds the consumer of `target` (a Linear or a groups-1 convolution): in
/// its `nnx.sequential` the next Linear or convolution, through elementwise
/// modules (and, after a convolution, pooling, one `nnx.flatten` of dims 1
/// to -1, and with `throughBatchNorm` eval-mode batch norms); in a stock
/// net (`nnx.feed_fwd`, `nnx.conv_nn`), layer `i + 1` through
/// `activation_for(i)` / `dropout_for(i)` (and a conv_nn's pools). Refuses
/// (with an error) other containers, container subclasses/hooks,
/// width-dependent or other modules on the path that mix units,
/// hooked/subclassed/aliased modules on the path, a missing consumer, a
/// consumer that reads another dim or groups its input channels, and a consumer
/// a rebuild would change.
FailureOr<ConsumerChain> findConsumer(Operation *target, bool throughBatchNorm,
                                      llvm::StringRef pass);

/// The consumer of a Linear in a custom module, proven on its forward's SSA
/// uses (ForwardFlow.cpp): from the target's only `nnx.call`, every value
/// holding the units goes through elementwise ops and leaf modules, binary
/// ops with values broadcast across the units or with a sibling Linear's
/// units, into exactly one Linear. Refuses a second use (another Linear, the
/// forward's return, a `tensor.dim` of the units), a reduction, a reshape or
/// permute, a norm, a custom module's call and any other op, with a note at
/// the use.
FailureOr<ConsumerChain> findForwardConsumer(LinearOp target,
                                             CustomModuleOp module,
                                             llvm::StringRef pass);

/// Gives every value of `chain.unitValues` `width` units (its last dim).
void setUnitCount(const ConsumerChain &chain, int64_t width);

/// The one `nnx.call` in the model that runs `module`; refuses (as `role`)
/// a module no call runs or several calls run.
FailureOr<CallOp> getOnlyCall(Operation *module, llvm::StringRef pass,
                              llvm::StringRef role);

/// The one call of block `module` in a chain (getOnlyCall) whose first
/// result has its first input's type; refuses another, with `why` ("a copy
/// cannot follow it in the chain") after the reason.
FailureOr<CallOp> getChainCall(Operation *module, llvm::StringRef pass,
                               llvm::StringRef role, llvm::StringRef why);

/// True for layers that normalize by statistics (FeatureDependence::
/// Normalizing): they keep the width, so deepen may look through them.
bool isNormModule(Operation *op);

/// True for layers that keep the width but whose output features depend on
/// other input features (norms, softmax): duplicated units do not stay
/// duplicated through them.
bool isWidthDependent(Operation *op);

/// Records what every `nnx.alias` and `nnx.call` in a model resolves to, so
/// that after keys are renamed the references can be retargeted to the same
/// modules. Only valid while no recorded module is erased.
class ReferenceSnapshot {
public:
  explicit ReferenceSnapshot(ModelOp model);
  /// Rewrites each alias target / call callee whose resolution changed.
  void retarget();

private:
  llvm::SmallVector<std::pair<AliasOp, Operation *>> aliases;
  llvm::SmallVector<std::pair<CallOp, Operation *>> calls;
};

/// Refuses (at `op`, as `role`) a tensor of `shape` that the pass would have
/// to hold before allocating it: one whose element count overflows 64 bits or
/// whose values, as the doubles the passes compute in, take more than
/// kMaxExpandedTensorBytes (16 GiB). `what` says which tensor it is and why it
/// has that shape ("option num=N would grow its weight to").
LogicalResult checkHoldable(Operation *op, llvm::ArrayRef<int64_t> shape,
                            llvm::StringRef pass, llvm::StringRef role,
                            const llvm::Twine &what);

/// Reads a float tensor; refuses `op` (as `role`) if its data is unavailable.
FailureOr<std::vector<double>>
readTensorOrRefuse(Operation *op, ElementsAttr attr, llvm::StringRef name,
                   llvm::StringRef pass, llvm::StringRef role);

/// Sets `requires_grad` of tensor `name` on `op`: `false` is recorded,
/// `true` is the default (no entry).
void setRequiresGrad(Operation *op, llvm::StringRef name, bool value);

/// Gives `replacement` tensor `toName` the `requires_grad` flag of tensor
/// `fromName` of `source`.
void copyRequiresGrad(ModuleOpInterface source, llvm::StringRef fromName,
                      Operation *replacement, llvm::StringRef toName);

/// Gives `to` the train/eval mode of `from`.
void copyMode(Operation *from, Operation *to);

/// Replaces tensor `name` of `op` in place, keeping its `requires_grad` flag
/// and the module's mode (both live on `op`, which stays).
void replaceTensor(Operation *op, llvm::StringRef name, ElementsAttr value);

/// Refuses surgery on a model that carries a recipe: the edit would make its
/// topology differ from base descriptor + recipe, so no checkpoint could
/// rebuild it. The error says to record the edit as a recipe operation.
LogicalResult refuseRecipeModel(ModelOp model, llvm::StringRef pass);

/// nnx-low-rank's SVD factorization without the recipe check: the
/// materialization of a recorded `low_rank` operation.
LogicalResult lowRankUnrecorded(ModelOp model, llvm::StringRef layer,
                                int64_t rank);

/// The position of `op` among the ops of its block (a container's children
/// in registration order).
int64_t positionInBlock(Operation *op);

/// A positional key for index `i`.
std::string positionalKey(int64_t i);

/// Renames every child after `slot` of a positional container from key k to
/// k + shift (in an order where keys never collide).
void shiftPositionalKeys(Operation *slot, int64_t shift);

/// Whether zeroing `m`'s weight and bias makes its output zero whatever
/// its input: a Linear, a convolution, a norm with a weight (layer, RMS,
/// batch).
bool isZeroableAffine(Operation *m);

/// The affine layers (isZeroableAffine) that end the residual branches of
/// `block`'s forward (result 0 as the block's input plus branch terms,
/// through `nnx.fn.add`s and the forwards of custom modules; each branch
/// followed back through dropout, reshapes and products to a layer of the
/// block): attention's and the MLP's output projections, a conv block's
/// last batch norm. Refuses a branch that ends in no such layer.
FailureOr<llvm::SmallVector<Operation *>>
findBranchProjections(CustomModuleOp block, llvm::StringRef pass);

/// True when `block`'s forward returns exactly its first input (result 0)
/// once the weights and biases of `zeroed` are zero: the forward evaluated
/// on {Zero, Input, Other}, through the forwards of custom modules. With
/// `inputNonNegative`, a ReLU of the input is the input.
bool isIdentityWithZeroed(CustomModuleOp block,
                          llvm::ArrayRef<Operation *> zeroed,
                          bool inputNonNegative);

/// Whether `block`'s forward returns (result 0) a ReLU's output: a value
/// that is never negative.
bool returnsNonNegative(CustomModuleOp block);

/// The stock net (`nnx.feed_fwd`, `nnx.conv_nn`) one of whose layer lists
/// holds `slot`, or null.
StockNetOpInterface getStockNetOf(Operation *slot);

/// "layers.2", "fcs.0": `slot`'s name inside its stock net.
std::string getSlotName(Operation *slot);

/// "feed_fwd 'net'": a stock net as refusals name it.
std::string describeStockNet(StockNetOpInterface net);

} // namespace mlir::nnx::surgery

#endif // NNX_LIB_DIALECT_NNX_TRANSFORMS_SURGERYUTILS_H
