//===- Compatibility.cpp - reading what earlier nnx versions wrote --------===//
//
// The dialect's bytecode version, its properties encoding and the upgrades
// of legacy spellings (Compatibility.h; docs/Dialect.md, "Compatibility").
//
//===----------------------------------------------------------------------===//
#include "nnx/Dialect/NNX/IR/Compatibility.h"
#include "nnx/Dialect/NNX/IR/NNXDialect.h"
#include "nnx/Dialect/NNX/IR/NNXFnOps.h"
#include "nnx/Dialect/NNX/IR/NNXOps.h"
#include "nnx/Dialect/NNX/IR/NNXRecurrentOps.h"

#include "mlir/Bytecode/BytecodeImplementation.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::nnx;

//===----------------------------------------------------------------------===//
// Legacy spellings
//===----------------------------------------------------------------------===//

/// The enum `E` (with ODS's symbolize/stringify functions) that `attr`
/// spells as a string, or failure with the values it takes.
template <typename E, typename AttrT>
static FailureOr<AttrT>
upgradeEnumString(StringAttr str, StringRef attrName, StringRef what,
                  std::optional<E> (*symbolize)(StringRef),
                  StringRef (*stringify)(E), uint64_t maxValue,
                  function_ref<InFlightDiagnostic()> emitError) {
  if (std::optional<E> value = symbolize(str.getValue()))
    return AttrT::get(str.getContext(), *value);
  InFlightDiagnostic diag = emitError();
  diag << "attribute '" << attrName << "' is \"" << str.getValue()
       << "\", which is not " << what << " (";
  for (uint64_t v = 0; v <= maxValue; ++v)
    diag << (v ? ", " : "") << stringify(static_cast<E>(v));
  diag << ")";
  return failure();
}

/// GELU's `approximate`: a string before #nnx.gelu_approximation.
static FailureOr<Attribute>
upgradeGeluApproximation(StringAttr str, StringRef name,
                         function_ref<InFlightDiagnostic()> emitError) {
  return upgradeEnumString<GeluApproximation, GeluApproximationAttr>(
      str, name, "a GELU approximation", symbolizeGeluApproximation,
      stringifyGeluApproximation, getMaxEnumValForGeluApproximation(),
      emitError);
}

/// An activation kind: a string before #nnx.activation.
static FailureOr<Attribute>
upgradeActivationKind(StringAttr str, StringRef name,
                      function_ref<InFlightDiagnostic()> emitError) {
  return upgradeEnumString<ActivationKind, ActivationKindAttr>(
      str, name, "an activation", symbolizeActivationKind,
      stringifyActivationKind, getMaxEnumValForActivationKind(), emitError);
}

using StringUpgrade = FailureOr<Attribute> (*)(
    StringAttr, StringRef, function_ref<InFlightDiagnostic()>);

/// Applies `upgrade` to attribute `name` when it is a string, or an array
/// holding strings (each upgraded); other values are left to the verifier.
static LogicalResult
upgradeStrings(NamedAttrList &attrs, StringRef name, StringUpgrade upgrade,
               function_ref<InFlightDiagnostic()> emitError) {
  Attribute attr = attrs.get(name);
  if (auto str = dyn_cast_if_present<StringAttr>(attr)) {
    FailureOr<Attribute> upgraded = upgrade(str, name, emitError);
    if (failed(upgraded))
      return failure();
    attrs.set(name, *upgraded);
    return success();
  }
  auto array = dyn_cast_if_present<ArrayAttr>(attr);
  if (!array || llvm::none_of(array, llvm::IsaPred<StringAttr>))
    return success();
  SmallVector<Attribute> elements;
  for (Attribute element : array) {
    auto str = dyn_cast<StringAttr>(element);
    FailureOr<Attribute> upgraded =
        str ? upgrade(str, name, emitError) : FailureOr<Attribute>(element);
    if (failed(upgraded))
      return failure();
    elements.push_back(*upgraded);
  }
  attrs.set(name, ArrayAttr::get(array.getContext(), elements));
  return success();
}

LogicalResult mlir::nnx::upgradeLegacyAttributes(
    OperationName opName, NamedAttrList &attrs,
    function_ref<InFlightDiagnostic()> emitError) {
  // Before the enum attributes (2026-12-01): `nnx.gelu @act {approximate =
  // "tanh"}`, `nnx.feed_fwd ... {activation = "relu", activations = [...]}`.
  if (opName.getStringRef() == GELUOp::getOperationName())
    return upgradeStrings(attrs, "approximate", upgradeGeluApproximation,
                          emitError);
  if (opName.getStringRef() == FeedFwdOp::getOperationName()) {
    if (failed(upgradeStrings(attrs, "activation", upgradeActivationKind,
                              emitError)))
      return failure();
    return upgradeStrings(attrs, "activations", upgradeActivationKind,
                          emitError);
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Bytecode
//===----------------------------------------------------------------------===//

namespace {
/// The nnx version a bytecode file was written by.
struct NNXDialectVersion : public DialectVersion {
  explicit NNXDialectVersion(uint64_t value) : value(value) {}
  uint64_t value;
};

/// Writes kNNXDialectVersion; refuses a file of a newer version. The nnx
/// attributes are written as their text (the default), whose parsers
/// accept what earlier versions printed.
struct NNXBytecodeInterface : public BytecodeDialectInterface {
  explicit NNXBytecodeInterface(Dialect *dialect)
      : BytecodeDialectInterface(dialect) {}

  void writeVersion(DialectBytecodeWriter &writer) const override {
    writer.writeVarInt(kNNXDialectVersion);
  }

  std::unique_ptr<DialectVersion>
  readVersion(DialectBytecodeReader &reader) const override {
    uint64_t value;
    if (failed(reader.readVarInt(value)))
      return nullptr;
    if (value > kNNXDialectVersion) {
      reader.emitError() << "the file was written by version " << value
                         << " of the nnx dialect; this nnx reads versions up "
                            "to "
                         << kNNXDialectVersion << " (use a newer nnx)";
      return nullptr;
    }
    return std::make_unique<NNXDialectVersion>(value);
  }
};
} // namespace

void mlir::nnx::addNNXBytecodeInterface(NNXDialect &dialect) {
  dialect.addInterfaces<NNXBytecodeInterface>();
}

/// An op's properties from the dictionary writeDictionaryProperties wrote:
/// legacy spellings upgraded, then checked as the text parser checks them
/// (a corrupt file gets a diagnostic, not a null attribute).
template <typename OpT>
static LogicalResult readDictionaryProperties(DialectBytecodeReader &reader,
                                              OperationState &state) {
  // Before the dialect had a version (2026-12-04) bytecode held each
  // op's attributes in ODS's positional encoding, which this reader does
  // not decode.
  if (failed(reader.getDialectVersion<NNXDialect>()))
    return reader.emitError()
           << "'" << state.name.getStringRef()
           << "': the file has no nnx dialect version: it was written by an "
              "nnx before 2026-12-04, whose bytecode this one does not read "
              "(write it as text with that nnx: nnx-opt file.mlirbc -o "
              "file.mlir)";
  DictionaryAttr dict;
  if (failed(reader.readAttribute(dict)))
    return failure();
  NamedAttrList attrs(dict);
  auto emitError = [&]() {
    InFlightDiagnostic diag = reader.emitError();
    diag << "'" << state.name.getStringRef() << "' op ";
    return diag;
  };
  if (failed(upgradeLegacyAttributes(state.name, attrs, emitError)) ||
      failed(OpT::verifyInherentAttrs(state.name, attrs, emitError)))
    return failure();
  return OpT::setPropertiesFromAttr(
      state.getOrAddProperties<typename OpT::Properties>(),
      attrs.getDictionary(state.getContext()), emitError);
}

/// Every inherent attribute of `op`, as one dictionary (empty when none is
/// set: ODS then gives a null attribute).
static void writeDictionaryProperties(Operation *op,
                                      DialectBytecodeWriter &writer) {
  Attribute props = op->getPropertiesAsAttribute();
  writer.writeAttribute(props ? props
                              : DictionaryAttr::get(op->getContext(), {}));
}

// The nnx ops with properties (ODS declares readProperties and
// writeProperties for them: NNX_Op's useCustomPropertiesEncoding). An op
// added without a line here fails to link.
#define NNX_DICTIONARY_PROPERTIES(OP)                                          \
  LogicalResult OP::readProperties(DialectBytecodeReader &reader,              \
                                   OperationState &state) {                    \
    return readDictionaryProperties<OP>(reader, state);                        \
  }                                                                            \
  void OP::writeProperties(DialectBytecodeWriter &writer) {                    \
    writeDictionaryProperties(getOperation(), writer);                         \
  }

namespace mlir::nnx {
// Structure level.
NNX_DICTIONARY_PROPERTIES(AdaptiveAvgPool2dOp)
NNX_DICTIONARY_PROPERTIES(AliasOp)
NNX_DICTIONARY_PROPERTIES(AvgPool2dOp)
NNX_DICTIONARY_PROPERTIES(BatchNormOp)
NNX_DICTIONARY_PROPERTIES(CallOp)
NNX_DICTIONARY_PROPERTIES(Conv1dOp)
NNX_DICTIONARY_PROPERTIES(Conv2dOp)
NNX_DICTIONARY_PROPERTIES(ConvNNOp)
NNX_DICTIONARY_PROPERTIES(CustomModuleOp)
NNX_DICTIONARY_PROPERTIES(DropoutOp)
NNX_DICTIONARY_PROPERTIES(EmbeddingOp)
NNX_DICTIONARY_PROPERTIES(FeedFwdOp)
NNX_DICTIONARY_PROPERTIES(FlattenOp)
NNX_DICTIONARY_PROPERTIES(ForwardOp)
NNX_DICTIONARY_PROPERTIES(GELUOp)
NNX_DICTIONARY_PROPERTIES(HardswishOp)
NNX_DICTIONARY_PROPERTIES(IdentityOp)
NNX_DICTIONARY_PROPERTIES(LayerNormOp)
NNX_DICTIONARY_PROPERTIES(LeakyReLUOp)
NNX_DICTIONARY_PROPERTIES(LinearOp)
NNX_DICTIONARY_PROPERTIES(LoraOp)
NNX_DICTIONARY_PROPERTIES(MaxPool2dOp)
NNX_DICTIONARY_PROPERTIES(ModelOp)
NNX_DICTIONARY_PROPERTIES(ModuleDictOp)
NNX_DICTIONARY_PROPERTIES(ModuleListOp)
NNX_DICTIONARY_PROPERTIES(ProbeOp)
NNX_DICTIONARY_PROPERTIES(RMSNormOp)
NNX_DICTIONARY_PROPERTIES(ReLUOp)
NNX_DICTIONARY_PROPERTIES(SequentialOp)
NNX_DICTIONARY_PROPERTIES(SiLUOp)
NNX_DICTIONARY_PROPERTIES(SigmoidOp)
NNX_DICTIONARY_PROPERTIES(SoftmaxOp)
NNX_DICTIONARY_PROPERTIES(StateOp)
NNX_DICTIONARY_PROPERTIES(TanhOp)
// Recurrent layers (NNXRecurrentOps.td).
NNX_DICTIONARY_PROPERTIES(GRUCellOp)
NNX_DICTIONARY_PROPERTIES(GRUOp)
NNX_DICTIONARY_PROPERTIES(LSTMCellOp)
NNX_DICTIONARY_PROPERTIES(LSTMOp)
NNX_DICTIONARY_PROPERTIES(RNNCellOp)
NNX_DICTIONARY_PROPERTIES(RNNOp)
// Functional ops (nnx.fn.*).
NNX_DICTIONARY_PROPERTIES(FnAdaptiveAvgPool2dOp)
NNX_DICTIONARY_PROPERTIES(FnAmaxOp)
NNX_DICTIONARY_PROPERTIES(FnAminOp)
NNX_DICTIONARY_PROPERTIES(FnAvgPool2dOp)
NNX_DICTIONARY_PROPERTIES(FnCumsumOp)
NNX_DICTIONARY_PROPERTIES(FnDropoutOp)
NNX_DICTIONARY_PROPERTIES(FnExpandOp)
NNX_DICTIONARY_PROPERTIES(FnGatherOp)
NNX_DICTIONARY_PROPERTIES(FnGeluOp)
NNX_DICTIONARY_PROPERTIES(FnGuardOp)
NNX_DICTIONARY_PROPERTIES(FnIndexSelectOp)
NNX_DICTIONARY_PROPERTIES(FnMatmulOp)
NNX_DICTIONARY_PROPERTIES(FnMaxPool2dOp)
NNX_DICTIONARY_PROPERTIES(FnMeanOp)
NNX_DICTIONARY_PROPERTIES(FnPermuteOp)
NNX_DICTIONARY_PROPERTIES(FnReshapeOp)
NNX_DICTIONARY_PROPERTIES(FnSoftmaxOp)
NNX_DICTIONARY_PROPERTIES(FnSumOp)
NNX_DICTIONARY_PROPERTIES(FnTopkOp)
NNX_DICTIONARY_PROPERTIES(FnTrilOp)
NNX_DICTIONARY_PROPERTIES(FnTriuOp)
} // namespace mlir::nnx
