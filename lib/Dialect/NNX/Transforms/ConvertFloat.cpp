//===- ConvertFloat.cpp - nnx-convert-float ---------------------*- C++ -*-===//
//
// A model's floating-point type changed, as PyTorch's `model.to(dtype)`:
// every `from` element type of the module becomes `to`, tensors converted
// element by element (AttrTypeReplacer does the types, in values,
// attributes and function types alike; tensor and float attributes get new
// values).
//
//===----------------------------------------------------------------------===//
#include "nnx/Dialect/NNX/IR/ModuleTree.h"
#include "nnx/Dialect/NNX/IR/NNXDialect.h"
#include "nnx/Dialect/NNX/IR/TensorUtils.h"
#include "nnx/Dialect/NNX/IR/Weights.h"
#include "nnx/Dialect/NNX/Transforms/Passes.h"

#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringSwitch.h"

namespace mlir::nnx {
#define GEN_PASS_DEF_NNXCONVERTFLOATPASS
#include "nnx/Dialect/NNX/Transforms/Passes.h.inc"
} // namespace mlir::nnx

using namespace mlir;
using namespace mlir::nnx;

namespace {

/// The float type named `name` (f16, bf16, f32, f64), or null.
FloatType parseFloatType(MLIRContext *ctx, StringRef name) {
  return llvm::StringSwitch<FloatType>(name)
      .Case("f16", Float16Type::get(ctx))
      .Case("bf16", BFloat16Type::get(ctx))
      .Case("f32", Float32Type::get(ctx))
      .Case("f64", Float64Type::get(ctx))
      .Default(FloatType());
}

struct NNXConvertFloatPass
    : public mlir::nnx::impl::NNXConvertFloatPassBase<NNXConvertFloatPass> {
  using Base::Base;

  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    ModuleOp module = getOperation();
    FloatType source = parseFloatType(ctx, from);
    FloatType target = parseFloatType(ctx, to);
    for (auto [option, value, type] :
         {std::make_tuple("from", StringRef(from), source),
          std::make_tuple("to", StringRef(to), target)})
      if (!type) {
        module.emitError("nnx-convert-float: ")
            << option << "=" << value
            << " is not a float type nnx converts (expected f16, bf16, f32 "
               "or f64)";
        return signalPassFailure();
      }
    if (source == target) {
      module.emitError("nnx-convert-float: from and to are both ") << from;
      return signalPassFailure();
    }
    if (failed(checkNoExternalTensors(source)))
      return signalPassFailure();
    // A value that cannot be read (a dense_resource whose blob is gone)
    // cannot be converted: the first such attribute is reported.
    Attribute unreadable;
    AttrTypeReplacer replacer;
    replacer.addReplacement([&](FloatType t) -> std::optional<Type> {
      return t == source ? std::optional<Type>(target) : std::nullopt;
    });
    replacer.addReplacement(
        [&](FloatAttr attr) -> std::optional<std::pair<Attribute, WalkResult>> {
          if (attr.getType() != source)
            return std::nullopt;
          return std::make_pair(FloatAttr::get(target, attr.getValueAsDouble()),
                                WalkResult::skip());
        });
    replacer.addReplacement(
        [&](ElementsAttr attr)
            -> std::optional<std::pair<Attribute, WalkResult>> {
          auto type = dyn_cast<RankedTensorType>(attr.getShapedType());
          if (!type || type.getElementType() != source ||
              isa<ExternalTensorAttr>(attr))
            return std::nullopt;
          FailureOr<std::vector<double>> values = readTensor(attr);
          if (failed(values)) {
            unreadable = unreadable ? unreadable : Attribute(attr);
            return std::nullopt;
          }
          return std::make_pair(
              Attribute(makeTensor(type.clone(target), *values)),
              WalkResult::skip());
        });
    replacer.recursivelyReplaceElementsIn(module, /*replaceAttrs=*/true,
                                          /*replaceLocs=*/false,
                                          /*replaceTypes=*/true);
    if (unreadable) {
      module.emitError("nnx-convert-float: the data of a ")
          << from << " tensor cannot be read: " << unreadable;
      return signalPassFailure();
    }
  }

  /// Refuses a `source` tensor in a weights file: its bytes are not in the
  /// IR to convert.
  LogicalResult checkNoExternalTensors(FloatType source) {
    LogicalResult result = success();
    getOperation().walk([&](ModelOp model) {
      for (const ModelTensor &tensor : getModelTensors(model)) {
        auto ext = dyn_cast<ExternalTensorAttr>(tensor.value);
        if (!ext || ext.getType().getElementType() != source)
          continue;
        emitModuleError(tensor.module)
            << "nnx-convert-float: " << tensor.describe()
            << " is in the weights file (#nnx.external<\"" << ext.getKey()
            << "\">); run nnx-internalize-weights first, or convert the "
               "checkpoint";
        result = failure();
      }
    });
    return result;
  }
};

} // namespace
