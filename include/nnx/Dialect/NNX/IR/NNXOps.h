//===- NNXOps.h - nnx operations --------------------------------*- C++ -*-===//
#ifndef NNX_DIALECT_NNX_IR_NNXOPS_H
#define NNX_DIALECT_NNX_IR_NNXOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/RegionKindInterface.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "nnx/Dialect/NNX/IR/NNXDialect.h"
#include "nnx/Dialect/NNX/IR/Window.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <array>
#include <optional>
#include <string>

#include "nnx/Dialect/NNX/IR/NNXEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "nnx/Dialect/NNX/IR/NNXAttrs.h.inc"

namespace mlir::nnx::detail {
/// Checks the attributes every module carries (requires_grad, hooks,
/// parametrizations, pruned name tensors the module has).
LogicalResult verifyModuleOpInterface(Operation *op);
} // namespace mlir::nnx::detail

namespace mlir::nnx {
/// The sizes a module fixes, per feature axis: what a sequential's verifier
/// chains. Two axes carry features: the last dim (Linear, LayerNorm, an
/// embedding's output) and dim 1, the channels of N x C x ... input (Conv,
/// BatchNorm, pools). Each fact is exact for every input the module accepts,
/// so two facts are compared only on the same axis: a conv's channels are
/// never compared with a LayerNorm's last dim. A module whose input rank is
/// not fixed (a Linear on (N, C) or on (N, T, C)) leaves the other axis
/// unknown rather than guessing.
struct FeatureSignature {
  enum Axis : unsigned { Last = 0, Channel = 1, NumAxes = 2 };
  /// What a module does to one axis's size.
  struct Effect {
    enum Kind { Keeps, Sets, Unknown } kind = Keeps;
    int64_t size = 0; // for Sets
    static Effect keeps() { return {Keeps, 0}; }
    static Effect sets(std::optional<int64_t> n) {
      return n ? Effect{Sets, *n} : Effect{Unknown, 0};
    }
    static Effect unknown() { return {Unknown, 0}; }
  };
  /// The size the input must have in each axis, where the module fixes it.
  std::array<std::optional<int64_t>, NumAxes> in;
  /// The output's size in each axis.
  std::array<Effect, NumAxes> out;
  bool integerInput = false; // takes ids (an embedding first)

  /// Keeps every dim (activations, norms, dropout, softmax).
  static FeatureSignature keepsShape() { return {}; }
  /// Nothing known of the output (a flatten, a module of unknown kind).
  static FeatureSignature opaque() {
    FeatureSignature s;
    s.out = {Effect::unknown(), Effect::unknown()};
    return s;
  }
  /// Maps axis `axis` from `in` to `out` features; the other axis is unknown
  /// after it (a Linear, a conv).
  static FeatureSignature projecting(Axis axis, std::optional<int64_t> in,
                                     std::optional<int64_t> out) {
    FeatureSignature s = opaque();
    s.in[axis] = in;
    s.out[axis] = Effect::sets(out);
    return s;
  }
  /// The signature of `first` followed by `second` (a sequential's fold);
  /// a disagreement between them is the verifier's to report.
  static FeatureSignature compose(const FeatureSignature &first,
                                  const FeatureSignature &second);
};

/// How a layer's output features depend on its input features.
enum class FeatureDependence {
  /// Output element i depends on input element i only (activations,
  /// dropout, identity): duplicated units stay duplicated through it.
  Elementwise,
  /// Keeps the width, but scales by statistics over features or the batch
  /// (layer_norm, rms_norm, batch_norm).
  Normalizing,
  /// Keeps the width, but mixes the features (softmax).
  Mixing,
  /// Keeps the channels (dim 1) of N x C x spatial input; each output
  /// channel depends on the same input channel only, mixing positions
  /// within it (pooling): duplicated channels stay duplicated through it.
  PerChannel,
  /// Maps the input features to a new feature space (linear, embedding).
  Projecting,
};

/// What a layer that does not fix sizes does to the feature axes, by how it
/// depends on its input: elementwise, normalizing and mixing layers keep the
/// shape; per-channel ones (pools) keep the channels only; projecting ones
/// leave both axes unknown.
FeatureSignature getDependenceSignature(FeatureDependence dependence);

/// Reports why a module cannot run on an input, as "module 'path' (op) ...",
/// at an optional location: with none it only fails (StableHLO's
/// emitOptionalError pattern), so verifiers and passes share one check.
class ModuleTypeError {
public:
  ModuleTypeError(Operation *module, std::optional<Location> loc)
      : module(module), loc(loc) {}

  /// Fails with the message `parts...` streamed together.
  template <typename... Parts>
  LogicalResult operator()(const Parts &...parts) const {
    if (!loc)
      return failure();
    std::string msg;
    llvm::raw_string_ostream os(msg);
    (os << ... << parts);
    return emit(msg);
  }

  /// Fails unless `input` holds floats (of type `paramType`, if given).
  LogicalResult requireFloat(RankedTensorType input, Type paramType) const;
  /// Fails unless the last dimension of `input` is `features` (or dynamic).
  LogicalResult requireFeatures(RankedTensorType input, int64_t features) const;

private:
  LogicalResult emit(llvm::StringRef msg) const;
  Operation *module;
  std::optional<Location> loc;
};
namespace detail {
/// A stock net's effective per-site values (StockNetOpInterface's default
/// methods): `overrides[i]` if the per-site list is given, else `fallback`.
ActivationKind getSiteActivation(ArrayAttr overrides, ActivationKind fallback,
                                 unsigned i);
double getSiteDropout(std::optional<ArrayAttr> probs, llvm::APFloat fallback,
                      unsigned i);
} // namespace detail
} // namespace mlir::nnx

#include "nnx/Dialect/NNX/IR/NNXInterfaces.h.inc"

namespace mlir::nnx {
class ReturnOp;
class ModuleListOp;
class ForwardOp;
} // namespace mlir::nnx

#define GET_OP_CLASSES
#include "nnx/Dialect/NNX/IR/NNXOps.h.inc"

namespace mlir::nnx {
/// The dims [start, end] an `nnx.flatten` merges on a rank-`rank` input
/// (negative dims counted from the end), or failure if they are out of range
/// or out of order.
FailureOr<std::pair<int64_t, int64_t>> getFlattenedDims(FlattenOp op,
                                                        int64_t rank);

// The discardable attributes of the dialect, declared (and verified) once in
// NNXDialect.td; these are their names.

/// On an `nnx.model`: its base descriptor (#nnx.base) and its recipe
/// (#nnx.recipe), docs/Recipes.md.
inline constexpr llvm::StringLiteral kBaseAttrName =
    NNXDialect::BaseAttrHelper::getNameStr();
inline constexpr llvm::StringLiteral kRecipeAttrName =
    NNXDialect::RecipeAttrHelper::getNameStr();
/// On a container: the names of its `state` entries that are buffers.
inline constexpr llvm::StringLiteral kBuffersAttrName =
    NNXDialect::BuffersAttrHelper::getNameStr();
/// Labels an op inside a forward region for tracing paths
/// (`source.<label>.output`): StringAttr, unique within the forward.
inline constexpr llvm::StringLiteral kSourceAttrName =
    NNXDialect::SourceAttrHelper::getNameStr();
/// Tracing requests `nnx-build-forward` turns into `nnx.probe` ops: an
/// ArrayAttr of #nnx.probe.
inline constexpr llvm::StringLiteral kProbesAttrName =
    NNXDialect::ProbesAttrHelper::getNameStr();
/// Names the trailing operands of an op (usually an `nnx.call`) as keyword
/// arguments: ArrayAttr of StringAttr.
inline constexpr llvm::StringLiteral kKwargsAttrName =
    NNXDialect::KwargsAttrHelper::getNameStr();
/// On an `nnx.forward`: one StringAttr per result, its Python path in the
/// returned structure (a dropped None has no entry).
inline constexpr llvm::StringLiteral kOutputNamesAttrName =
    NNXDialect::OutputNamesAttrHelper::getNameStr();
/// On an `nnx.forward`: one StringAttr per argument, its path in the PyTorch
/// call (`1.0`: the first tensor of the tuple given as argument 1).
inline constexpr llvm::StringLiteral kInputNamesAttrName =
    NNXDialect::InputNamesAttrHelper::getNameStr();
/// Marks an op that overwrites one of its operands in place (the Python
/// `t += u`): the operand index. Its result 0 is the new state of that
/// operand's tensor.
inline constexpr llvm::StringLiteral kInPlaceAttrName =
    NNXDialect::InPlaceAttrHelper::getNameStr();
/// On a forward function: the probes `nnx-lower-probes` turned into trailing
/// results (reads) and trailing arguments (writes), in order.
inline constexpr llvm::StringLiteral kReadProbesAttrName =
    NNXDialect::ReadProbesAttrHelper::getNameStr();
inline constexpr llvm::StringLiteral kWriteProbesAttrName =
    NNXDialect::WriteProbesAttrHelper::getNameStr();
/// On a forward function: its run-time index checks (LayerLowering.h's
/// IndexCheck), one dictionary per pair of results after the outputs.
inline constexpr llvm::StringLiteral kIndexChecksAttrName =
    NNXDialect::IndexChecksAttrHelper::getNameStr();
/// On @forward_shape_checks: the checks whose sizes it returns (ShapeCheck,
/// nnx/Pipelines/ResultShapes.h).
inline constexpr llvm::StringLiteral kShapeChecksAttrName =
    NNXDialect::ShapeChecksAttrHelper::getNameStr();
/// On a forward function built with parameters as arguments: the tensor
/// attribute and the dotted name of each parameter argument (they follow the
/// inputs), and the absolute path of the weights file its #nnx.external
/// tensors come from.
inline constexpr llvm::StringLiteral kParametersAttrName =
    NNXDialect::ParametersAttrHelper::getNameStr();
inline constexpr llvm::StringLiteral kParameterNamesAttrName =
    NNXDialect::ParameterNamesAttrHelper::getNameStr();
inline constexpr llvm::StringLiteral kWeightsAttrName =
    NNXDialect::WeightsAttrHelper::getNameStr();
/// On a forward: {parameter name = array<i64: permutation>} for parameter
/// arguments that hold the stored tensor permuted (the CPU schedule asks
/// for a Linear's weight as K x N).
inline constexpr llvm::StringLiteral kParameterLayoutsAttrName =
    NNXDialect::ParameterLayoutsAttrHelper::getNameStr();
/// On a forward: what its bf16 / f16 ops compute in ("f32" or "storage").
inline constexpr llvm::StringLiteral kAccumulateAttrName =
    NNXDialect::AccumulateAttrHelper::getNameStr();
/// On an `nnx.linear` of one rank of a tensor-parallel model: {ranks = N}
/// (N >= 2), its matmul is a partial sum over the ranks; on its
/// `nnx.model`: {ranks = N, rank = R}.
inline constexpr llvm::StringLiteral kPartialSumAttrName =
    NNXDialect::PartialSumAttrHelper::getNameStr();
inline constexpr llvm::StringLiteral kTensorParallelAttrName =
    NNXDialect::TensorParallelAttrHelper::getNameStr();
/// On a builtin.module: the #nnx.target its code is generated for.
inline constexpr llvm::StringLiteral kTargetAttrName =
    NNXDialect::TargetAttrHelper::getNameStr();
/// The ranks N of `nnx.partial_sum` on `op`: 0 when it has none; failure,
/// reported at `loc` when given, for a value that is not {ranks = N : i64}
/// with N >= 2 or an op that is not an `nnx.linear` (the dialect's verifier
/// and the Linear's lowering share this check).
FailureOr<int64_t> getPartialSumRanks(Operation *op,
                                      std::optional<Location> loc);

/// On each parameter argument of such a forward: its dotted name. A target
/// may keep these arguments resident in its memory (the CUDA pipeline
/// expects them in device memory, uploaded once by the runtime).
inline constexpr llvm::StringLiteral kParameterArgAttrName = "nnx.parameter";
} // namespace mlir::nnx

#endif // NNX_DIALECT_NNX_IR_NNXOPS_H
