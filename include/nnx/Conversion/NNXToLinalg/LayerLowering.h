//===- LayerLowering.h - leaf layers to linalg on tensors -------*- C++ -*-===//
//
// The lowering side of a layer kind: `LayerLoweringOpInterface` (how a leaf
// layer builds its forward) and `LayerEmitter`, the builder state and linalg
// helpers every layer lowering shares. The per-family files of
// lib/Conversion/NNXToLinalg/ attach the interface to the ops.
//
//===----------------------------------------------------------------------===//
#ifndef NNX_CONVERSION_NNXTOLINALG_LAYERLOWERING_H
#define NNX_CONVERSION_NNXTOLINALG_LAYERLOWERING_H

#include "nnx/Dialect/NNX/IR/NNXOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace mlir::nnx {

/// The trailing arguments of a forward built with its parameters as
/// runtime values: one per distinct tensor of a layer (a module reached
/// twice, through an alias or a call, shares its arguments), in the order
/// the forward first reads them.
/// Whether `type` is a float type nnx stores but does not compute in under
/// accumulate=f32: bf16 and f16.
bool isNarrowFloat(Type type);

/// The type narrow-float ops of `op`'s forward compute in: f32, unless the
/// forward's `nnx.accumulate` is "storage" (then null).
FloatType getComputeType(Operation *op);

/// `x` (a ranked tensor) with its float elements converted to `elt`
/// (`arith.extf` / `arith.truncf` on the tensor; rounding to nearest even),
/// or `x` itself when they already are.
Value convertElements(OpBuilder &b, Location loc, Value x, Type elt);

class ParameterArguments {
public:
  explicit ParameterArguments(func::FuncOp func) : func(func) {}
  /// The argument of tensor `name` (`attr`) of `layer`, added on first use.
  Value get(Operation *layer, StringRef name, ElementsAttr attr);
  /// Records the arguments on the function: `nnx.parameters` (the tensor
  /// attributes), `nnx.parameter_names` (their dotted names), `nnx.weights`
  /// (the file #nnx.external tensors come from, if any), and
  /// `bufferization.writable = false` on each argument (the runner passes
  /// the stored bytes, which the forward must never write).
  void annotate(StringRef weightsPath);

private:
  func::FuncOp func;
  llvm::DenseMap<std::pair<Operation *, Attribute>, Value> arguments;
  SmallVector<Attribute> values, names;
};

/// A run-time bounds check of integer indices (an embedding's ids): the
/// compiled forward returns, for each check, the row-major position p of the
/// first index outside [0, bound), as INT64_MAX - p (0 when there is none),
/// and that index, as two 0-d i64 tensors (nnx-build-forward appends them to
/// the results and describes them in `nnx.index_checks`).
struct IndexCheck {
  /// The layer that indexes (`nnx.embedding`).
  Operation *layer;
  /// The checked indices.
  Value indices;
  int64_t bound;
  /// The first bad position and its index.
  Value position, index;
};

/// Builder state and helpers shared by the lowerings of all layer kinds:
/// where to insert, the location of the layer being lowered, how its tensors
/// are materialized, and the linalg idioms (maps, reductions) they use.
class LayerEmitter {
public:
  using BodyFn = function_ref<Value(OpBuilder &, Location, ValueRange)>;
  using ScalarFn = function_ref<Value(OpBuilder &, Location, Value)>;
  using CombineFn =
      function_ref<Value(OpBuilder &, Location, ValueRange, Value)>;

  explicit LayerEmitter(OpBuilder &builder)
      : builder(builder), loc(builder.getUnknownLoc()) {}

  OpBuilder &getBuilder() { return builder; }
  Location getLoc() const { return loc; }
  void setLoc(Location l) { loc = l; }

  /// Parameters become arguments of the forward (`params` set) or
  /// `arith.constant`s (null: the default).
  void setParameterArguments(ParameterArguments *p) { params = p; }

  /// The value of tensor `name` (a parameter or buffer) of `layer`: its
  /// argument of the forward, or a constant. Fails with a diagnostic if the
  /// layer has no such tensor or (as a constant) its data is not available.
  FailureOr<Value> getTensor(Operation *layer, StringRef name);
  /// The tensor an `nnx.state` op reads from its module's `state`,
  /// materialized as getTensor does (named `<module path>.<name>`).
  FailureOr<Value> getStateTensor(StateOp op);
  /// As getTensor, but a layer without tensor `name` gives a null Value.
  FailureOr<Value> getOptionalTensor(Operation *layer, StringRef name);

  /// A scalar constant `v` of float type `elt`.
  static Value scalar(OpBuilder &b, Location l, Type elt, double v);
  /// `tensor.empty` of `sizes`.
  Value empty(ArrayRef<OpFoldResult> sizes, Type elt);
  /// A tensor of `sizes` filled with `v`.
  Value filled(ArrayRef<OpFoldResult> sizes, Type elt, double v);
  /// A `linalg.generic` with one result written into `init`. When `init`
  /// holds f32 (or f64), bf16 / f16 operands reach `body` extended to it, so
  /// a lowering computing in f32 may read narrow weights; a wider value
  /// `body` returns for a narrow `init` is rounded to it.
  Value generic(ValueRange ins, ArrayRef<AffineMap> inMaps, Value init,
                AffineMap outMap, ArrayRef<utils::IteratorType> iters,
                BodyFn body);
  /// `f` applied to every element of `x`.
  Value map(Value x, ScalarFn f);
  /// The map from a rank-`rank` iteration space to the dims with `keep[d]`.
  AffineMap keptDims(unsigned rank, ArrayRef<bool> keep);
  /// The sizes of the dims of `x` with `keep[d]`.
  SmallVector<OpFoldResult> keptSizes(Value x, ArrayRef<bool> keep);
  /// Folds `combine` over the dims of `x` without `keep[d]`, starting from
  /// `init`; `extra` tensors have the result's shape and are read alongside.
  Value reduce(Value x, ArrayRef<bool> keep, double init, ValueRange extra,
               CombineFn combine);
  /// The sizes of every dim of `x`.
  SmallVector<OpFoldResult> sizesOf(Value x);

  /// The type bf16 / f16 layers compute and accumulate in (f32, the
  /// default), or null to compute in their tensors' own type.
  void setComputeType(FloatType type) { computeType = type; }
  FloatType getComputeType() const { return computeType; }
  /// The accumulator element type of a contraction (matmul, convolution)
  /// over elements of `elt`: the compute type for bf16 / f16, else `elt`.
  Type accumulatorFor(Type elt) const;

  /// Whether lowerings emit run-time index checks (the default).
  void setCheckIndices(bool check) { checkIndicesEnabled = check; }
  /// Emits a check that every element of `indices` (a tensor of integers)
  /// of `layer` lies in [0, bound); a no-op when checks are off.
  void checkIndices(Operation *layer, Value indices, int64_t bound);
  /// The checks emitted so far, in order.
  ArrayRef<IndexCheck> getIndexChecks() const { return indexChecks; }

private:
  /// `attr`, tensor `name` of `owner`: a forward argument or a constant.
  FailureOr<Value> materialize(Operation *owner, StringRef name,
                               ElementsAttr attr);

  OpBuilder &builder;
  Location loc;
  ParameterArguments *params = nullptr;
  FloatType computeType;
  bool checkIndicesEnabled = true;
  SmallVector<IndexCheck> indexChecks;
};

/// Attaches LayerLoweringOpInterface to every leaf layer op of the nnx
/// dialect. Each family registers its own ops.
void registerLayerLoweringExternalModels(DialectRegistry &registry);
/// nnx.linear, nnx.embedding (lib/Conversion/NNXToLinalg/LowerProjections.cpp).
void registerProjectionLowerings(DialectRegistry &registry);
/// The norms (lib/Conversion/NNXToLinalg/LowerNorms.cpp).
void registerNormLowerings(DialectRegistry &registry);
/// The convolutional layers (lib/Conversion/NNXToLinalg/LowerConv.cpp).
void registerConvLowerings(DialectRegistry &registry);
/// The activations, softmax and dropout
/// (lib/Conversion/NNXToLinalg/LowerActivations.cpp).
void registerActivationLowerings(DialectRegistry &registry);

/// Train-mode dropout with probability `p` and hash `seed` (docs/Lowering.md
/// spells out the mask), as `nnx.dropout` and a FeedFwdNN in train mode use.
FailureOr<Value> emitDropout(LayerEmitter &emitter, Value input, double p,
                             uint64_t seed);

/// Lowers the activation a FeedFwdNN applies as `kind`: the forward of the
/// leaf op `nnx.<kind>` with its default attributes.
FailureOr<Value> emitActivationKind(LayerEmitter &emitter, ActivationKind kind,
                                    Value input);
/// As above, but the leaf's attributes named in `attrs` take their values
/// from there (`approximate` of `nnx.fn.gelu`, `dim` of `nnx.fn.softmax`);
/// other names are ignored.
FailureOr<Value> emitActivationKind(LayerEmitter &emitter, ActivationKind kind,
                                    Value input,
                                    ArrayRef<NamedAttribute> attrs);

} // namespace mlir::nnx

#include "nnx/Conversion/NNXToLinalg/LayerLoweringOpInterface.h.inc"

#endif // NNX_CONVERSION_NNXTOLINALG_LAYERLOWERING_H
