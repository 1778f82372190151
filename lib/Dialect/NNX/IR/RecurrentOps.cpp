//===- RecurrentOps.cpp - nnx.lstm, nnx.gru, nnx.rnn and cells ------------===//
//
// One verifier, one type function and one tensor-name list for the six
// recurrent ops, driven by their RecurrentSpec.
//
//===----------------------------------------------------------------------===//
#include "nnx/Dialect/NNX/IR/ModuleTree.h"
#include "nnx/Dialect/NNX/IR/NNXRecurrentOps.h"

#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::nnx;
using Kind = RecurrentSpec::Kind;

#include "nnx/Dialect/NNX/IR/NNXRecurrentInterfaces.cpp.inc"

#define GET_OP_CLASSES
#include "nnx/Dialect/NNX/IR/NNXRecurrentOps.cpp.inc"

void mlir::nnx::registerRecurrentOps(NNXDialect &dialect) {
  // What Dialect::addOperations does, from outside the dialect class.
  RegisteredOperationName::insert<LSTMOp>(dialect);
  RegisteredOperationName::insert<GRUOp>(dialect);
  RegisteredOperationName::insert<RNNOp>(dialect);
  RegisteredOperationName::insert<LSTMCellOp>(dialect);
  RegisteredOperationName::insert<GRUCellOp>(dialect);
  RegisteredOperationName::insert<RNNCellOp>(dialect);
}

template <typename OpTy>
static RecurrentSpec recurrentSpec(OpTy op, Kind kind) {
  RecurrentSpec s;
  s.kind = kind;
  s.inputSize = op.getInputSize();
  s.hiddenSize = op.getHiddenSize();
  s.numLayers = op.getNumLayers();
  s.bias = op.getBias();
  s.batchFirst = op.getBatchFirst();
  s.bidirectional = op.getBidirectional();
  s.dropout = op.getDropout().convertToDouble();
  s.nonlinearity = ActivationKind::tanh;
  return s;
}

template <typename OpTy> static RecurrentSpec cellSpec(OpTy op, Kind kind) {
  RecurrentSpec s;
  s.kind = kind;
  s.cell = true;
  s.inputSize = op.getInputSize();
  s.hiddenSize = op.getHiddenSize();
  s.bias = op.getBiasIhAttr() || op.getBiasHhAttr();
  s.nonlinearity = ActivationKind::tanh;
  return s;
}

RecurrentSpec LSTMOp::getSpec() { return recurrentSpec(*this, Kind::LSTM); }
RecurrentSpec GRUOp::getSpec() { return recurrentSpec(*this, Kind::GRU); }
RecurrentSpec RNNOp::getSpec() {
  RecurrentSpec s = recurrentSpec(*this, Kind::RNN);
  s.nonlinearity = getNonlinearity();
  return s;
}
RecurrentSpec LSTMCellOp::getSpec() { return cellSpec(*this, Kind::LSTM); }
RecurrentSpec GRUCellOp::getSpec() { return cellSpec(*this, Kind::GRU); }
RecurrentSpec RNNCellOp::getSpec() {
  RecurrentSpec s = cellSpec(*this, Kind::RNN);
  s.nonlinearity = getNonlinearity();
  return s;
}

/// Every tensor `spec` names, with its shape, in PyTorch's order (layer by
/// layer, forward direction first). Biases only with `spec.bias`, unless
/// `allBiases` (a cell lists its optional biases as a Linear does).
static SmallVector<std::pair<std::string, SmallVector<int64_t>>>
expectedTensors(const RecurrentSpec &spec, bool allBiases) {
  SmallVector<std::pair<std::string, SmallVector<int64_t>>> out;
  int64_t rows = spec.gates() * spec.hiddenSize;
  int64_t layers = spec.cell ? 1 : spec.numLayers;
  int64_t dirs = spec.cell ? 1 : spec.directions();
  for (int64_t l = 0; l < layers; ++l) {
    for (int64_t d = 0; d < dirs; ++d) {
      out.push_back(
          {spec.tensorName("weight_ih", l, d), {rows, spec.layerInputSize(l)}});
      out.push_back(
          {spec.tensorName("weight_hh", l, d), {rows, spec.hiddenSize}});
      if (spec.bias || allBiases) {
        out.push_back({spec.tensorName("bias_ih", l, d), {rows}});
        out.push_back({spec.tensorName("bias_hh", l, d), {rows}});
      }
    }
  }
  return out;
}

static SmallVector<StringRef> parameterNames(Operation *op,
                                             const RecurrentSpec &spec) {
  SmallVector<StringRef> names;
  for (auto &[name, shape] : expectedTensors(spec, spec.cell))
    names.push_back(StringAttr::get(op->getContext(), name).getValue());
  return names;
}

#define NNX_RECURRENT_NAMES(OP)                                                \
  SmallVector<StringRef> OP::getParameterNames() {                             \
    return parameterNames(*this, getSpec());                                   \
  }
NNX_RECURRENT_NAMES(LSTMOp)
NNX_RECURRENT_NAMES(GRUOp)
NNX_RECURRENT_NAMES(RNNOp)
NNX_RECURRENT_NAMES(LSTMCellOp)
NNX_RECURRENT_NAMES(GRUCellOp)
NNX_RECURRENT_NAMES(RNNCellOp)
#undef NNX_RECURRENT_NAMES

/// Each expected tensor present (biases of a cell: both or neither), of its
/// shape, float, all of one element type; no other tensor attribute.
static LogicalResult verifyTensors(Operation *op, const RecurrentSpec &spec) {
  Type elt;
  llvm::StringSet<> expected;
  for (auto &[name, shape] : expectedTensors(spec, spec.cell)) {
    expected.insert(name);
    auto t = op->getAttrOfType<ElementsAttr>(name);
    if (!t) {
      if (spec.cell && StringRef(name).starts_with("bias"))
        continue;
      return emitModuleError(op) << "needs tensor '" << name << "'";
    }
    auto type = dyn_cast<RankedTensorType>(t.getType());
    if (!type || !isa<FloatType>(type.getElementType()) ||
        type.getShape() != ArrayRef<int64_t>(shape)) {
      InFlightDiagnostic diag = emitModuleError(op)
                                << "tensor '" << name << "' must be a float "
                                << "tensor of shape ";
      llvm::interleave(shape, diag, "x");
      return diag << ", got " << t.getType();
    }
    if (elt && type.getElementType() != elt)
      return emitModuleError(op)
             << "tensor '" << name << "' holds " << type.getElementType()
             << ", the others " << elt;
    elt = type.getElementType();
  }
  for (NamedAttribute a : op->getDiscardableAttrs())
    if (isa<ElementsAttr>(a.getValue()) &&
        !expected.contains(a.getName().getValue()))
      return emitModuleError(op)
             << "has tensor '" << a.getName().getValue() << "', which "
             << (spec.cell ? std::string("a cell")
                           : "a " + std::to_string(spec.numLayers) + "-layer " +
                                 (spec.bidirectional ? "bidirectional"
                                                     : "unidirectional") +
                                 (spec.bias ? "" : " bias-free") + " layer")
             << " does not have";
  if (spec.cell && (op->getAttr("bias_ih") == nullptr) !=
                       (op->getAttr("bias_hh") == nullptr))
    return emitModuleError(op)
           << "needs both 'bias_ih' and 'bias_hh', or neither";
  if (spec.kind == Kind::RNN && spec.nonlinearity != ActivationKind::tanh &&
      spec.nonlinearity != ActivationKind::relu)
    return emitModuleError(op) << "nonlinearity must be tanh or relu, got "
                               << stringifyActivationKind(spec.nonlinearity);
  if (!(spec.dropout >= 0.0 && spec.dropout <= 1.0))
    return emitModuleError(op)
           << "dropout must lie in [0, 1], got " << spec.dropout;
  return success();
}

LogicalResult LSTMOp::verify() { return verifyTensors(*this, getSpec()); }
LogicalResult GRUOp::verify() { return verifyTensors(*this, getSpec()); }
LogicalResult RNNOp::verify() { return verifyTensors(*this, getSpec()); }
LogicalResult LSTMCellOp::verify() { return verifyTensors(*this, getSpec()); }
LogicalResult GRUCellOp::verify() { return verifyTensors(*this, getSpec()); }
LogicalResult RNNCellOp::verify() { return verifyTensors(*this, getSpec()); }

//===----------------------------------------------------------------------===//
// Type function
//===----------------------------------------------------------------------===//

/// `a` and `b` merged: equal, or one dynamic; failure if both are static
/// and differ.
static FailureOr<int64_t> mergeDim(int64_t a, int64_t b) {
  if (ShapedType::isDynamic(a))
    return b;
  if (ShapedType::isDynamic(b) || a == b)
    return a;
  return failure();
}

static StringRef stateName(const RecurrentSpec &spec, unsigned i) {
  if (spec.cell)
    return i == 0 ? "h" : "c";
  return i == 0 ? "h_0" : "c_0";
}

/// The shape of h_0 / c_0 (and h_n / c_n) for batch `batch`.
static SmallVector<int64_t> stateShape(const RecurrentSpec &spec, bool batched,
                                       int64_t batch) {
  SmallVector<int64_t> shape;
  if (!spec.cell)
    shape.push_back(spec.numLayers * spec.directions());
  if (batched)
    shape.push_back(batch);
  shape.push_back(spec.hiddenSize);
  return shape;
}

/// Checks the states against their expected shape, merging the batch into
/// `batch` (the dim at `batchDim` of the state, if batched).
static LogicalResult checkStates(const RecurrentSpec &spec, TypeRange states,
                                 Type elt, bool batched, int64_t &batch,
                                 const ModuleTypeError &error) {
  for (auto [i, type] : llvm::enumerate(states)) {
    StringRef name = stateName(spec, i);
    SmallVector<int64_t> want = stateShape(spec, batched, batch);
    auto t = dyn_cast<RankedTensorType>(type);
    if (!t || t.getElementType() != elt || t.getRank() != (int64_t)want.size())
      return error("takes ", name, " of rank ", want.size(), " holding ", elt,
                   ", got ", type);
    for (auto [d, w] : llvm::enumerate(want)) {
      FailureOr<int64_t> m = mergeDim(w, t.getDimSize(d));
      if (failed(m))
        return error("takes ", name, " of shape ",
                     RankedTensorType::get(want, elt), ", got ", type);
      // The batch is the state's dim before the features.
      if (batched && d + 2 == want.size())
        batch = *m;
    }
  }
  return success();
}

static FailureOr<SmallVector<Type>>
inferRecurrentTypes(Operation *op, const RecurrentSpec &spec, TypeRange inputs,
                    const ModuleTypeError &error) {
  unsigned most = 1 + spec.numStates();
  if (inputs.empty() || (inputs.size() != 1 && inputs.size() != most))
    return error("takes the input", spec.numStates() == 2 ? ", h and c" : "",
                 spec.numStates() == 2 ? " (or the input alone)"
                                       : " and optionally the state",
                 ", got ", inputs.size(), " inputs");
  auto x = dyn_cast<RankedTensorType>(inputs.front());
  int64_t batchedRank = spec.cell ? 2 : 3;
  if (!x || (x.getRank() != batchedRank && x.getRank() != batchedRank - 1))
    return error("takes input of rank ", batchedRank, " (",
                 spec.cell         ? "batch, features"
                 : spec.batchFirst ? "batch, seq, features"
                                   : "seq, batch, features",
                 ") or ", batchedRank - 1, " (unbatched), got ",
                 inputs.front());
  auto weight =
      op->getAttrOfType<ElementsAttr>(spec.tensorName("weight_ih", 0, 0));
  if (!weight)
    return error("has no 'weight_ih' tensor");
  Type elt = cast<ShapedType>(weight.getType()).getElementType();
  if (failed(error.requireFloat(x, elt)) ||
      failed(error.requireFeatures(x, spec.inputSize)))
    return failure();
  bool batched = x.getRank() == batchedRank;
  int64_t batchDim = spec.cell ? 0 : spec.batchFirst ? 0 : 1;
  int64_t batch = batched ? x.getDimSize(batchDim) : 1;
  if (failed(
          checkStates(spec, inputs.drop_front(), elt, batched, batch, error)))
    return failure();
  auto state = RankedTensorType::get(stateShape(spec, batched, batch), elt);
  SmallVector<Type> results;
  if (!spec.cell) {
    SmallVector<int64_t> out(x.getShape());
    out.back() = spec.directions() * spec.hiddenSize;
    if (batched)
      out[batchDim] = batch;
    results.push_back(RankedTensorType::get(out, elt));
  }
  results.push_back(state);
  if (spec.kind == Kind::LSTM)
    results.push_back(state);
  return results;
}

#define NNX_RECURRENT_TYPES(OP)                                                \
  FailureOr<SmallVector<Type>> OP::inferOutputTypes(                           \
      TypeRange inputs, const ModuleTypeError &error) {                        \
    return inferRecurrentTypes(*this, getSpec(), inputs, error);               \
  }                                                                            \
  FailureOr<Type> OP::inferOutputType(RankedTensorType input,                  \
                                      const ModuleTypeError &error) {          \
    FailureOr<SmallVector<Type>> types =                                       \
        inferRecurrentTypes(*this, getSpec(), TypeRange{input}, error);        \
    if (failed(types))                                                         \
      return failure();                                                        \
    return types->front();                                                     \
  }                                                                            \
  unsigned OP::getNumOutputs() {                                               \
    RecurrentSpec spec = getSpec();                                            \
    return (spec.cell ? 0 : 1) + spec.numStates();                             \
  }                                                                            \
  FeatureSignature OP::getFeatureSignature() {                                 \
    RecurrentSpec spec = getSpec();                                            \
    return FeatureSignature::projecting(FeatureSignature::Last,                \
                                        spec.inputSize,                        \
                                        spec.directions() * spec.hiddenSize);  \
  }                                                                            \
  FeatureDependence OP::getFeatureDependence() {                               \
    return FeatureDependence::Projecting;                                      \
  }
NNX_RECURRENT_TYPES(LSTMOp)
NNX_RECURRENT_TYPES(GRUOp)
NNX_RECURRENT_TYPES(RNNOp)
NNX_RECURRENT_TYPES(LSTMCellOp)
NNX_RECURRENT_TYPES(GRUCellOp)
NNX_RECURRENT_TYPES(RNNCellOp)
#undef NNX_RECURRENT_TYPES
