//===- ExternalizeWeights.cpp - tensors into a safetensors file -*- C++ -*-===//
#include "nnx/Dialect/NNX/IR/ModuleTree.h"
#include "nnx/Dialect/NNX/IR/NNXDialect.h"
#include "nnx/Dialect/NNX/IR/Weights.h"
#include "nnx/Dialect/NNX/Transforms/Passes.h"
#include "nnx/Support/SafeTensors.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

namespace mlir::nnx {
#define GEN_PASS_DEF_NNXEXTERNALIZEWEIGHTSPASS
#include "nnx/Dialect/NNX/Transforms/Passes.h.inc"
} // namespace mlir::nnx

using namespace mlir;
using namespace mlir::nnx;

namespace {
/// A tensor that moves to the new file: where it is, its key there, and its
/// bytes (kept alive by `data.owner` until the file is written).
struct MovedTensor {
  ModelTensor tensor;
  std::string key;
  std::string dtype;
  TensorData data;
  /// False for a tensor tied to an earlier one of its model (the same
  /// dense_resource blob, the same external key): it takes that tensor's
  /// key and its bytes are not written again.
  bool written = true;
};

struct NNXExternalizeWeightsPass
    : public mlir::nnx::impl::NNXExternalizeWeightsPassBase<
          NNXExternalizeWeightsPass> {
  using Base::Base;

  void runOnOperation() override;

private:
  LogicalResult collect(ModelOp model, StringRef keyPrefix,
                        SmallVectorImpl<MovedTensor> &moved);
  LogicalResult write(ArrayRef<MovedTensor> moved);
};
} // namespace

/// The byte size of `type`'s data as stored (i1 as one byte), or nullopt
/// for element types without a fixed byte width.
static std::optional<uint64_t> storedSize(ShapedType type) {
  Type elt = type.getElementType();
  if (elt.isInteger(1))
    return type.getNumElements();
  if (!elt.isIntOrFloat() || elt.getIntOrFloatBitWidth() % 8 != 0)
    return std::nullopt;
  return type.getNumElements() * (elt.getIntOrFloatBitWidth() / 8);
}

/// Adds the tensors of `model` that move to `moved`; every problem is a
/// diagnostic on the module that holds the tensor.
LogicalResult
NNXExternalizeWeightsPass::collect(ModelOp model, StringRef keyPrefix,
                                   SmallVectorImpl<MovedTensor> &moved) {
  SmallVector<ModelTensor> tensors = getModelTensors(model);
  if (failed(checkWeightsFile(model, tensors, "nnx-externalize-weights: ")))
    return failure();
  std::string weightsPath = resolveWeightsPath(model).value_or("");
  // Tied tensors: a blob or an external key seen before, and where it went.
  llvm::DenseMap<Attribute, size_t> tied;
  bool ok = true;
  for (const ModelTensor &tensor : tensors) {
    auto type = cast<ShapedType>(tensor.value.getType());
    bool external = isa<ExternalTensorAttr>(tensor.value);
    std::optional<uint64_t> size = storedSize(type);
    if (!external && size && *size < minBytes)
      continue;
    StringRef dtype = getSafeTensorsDTypeName(type.getElementType());
    if (dtype.empty()) {
      tensor.module->emitOpError()
          << "nnx-externalize-weights: " << tensor.describe() << " has type "
          << type << ", whose element type safetensors cannot store";
      ok = false;
      continue;
    }
    // A dense attribute is uniqued by value: equal tensors are not tied.
    bool tieable = !isa<DenseElementsAttr>(tensor.value);
    if (auto it = tied.find(tensor.value); tieable && it != tied.end()) {
      moved.push_back({tensor,
                       moved[it->second].key,
                       dtype.str(),
                       {},
                       /*written=*/false});
      continue;
    }
    FailureOr<TensorData> data =
        getTensorData(tensor.value, weightsPath, tensor.module->getLoc(),
                      "nnx-externalize-weights: " + tensor.describe());
    if (failed(data)) {
      ok = false;
      continue;
    }
    if (tieable)
      tied[tensor.value] = moved.size();
    moved.push_back({tensor, (keyPrefix + tensor.getDottedName()).str(),
                     dtype.str(), std::move(*data)});
  }
  return success(ok);
}

/// Writes the moved tensors to `file` (through a temporary, renamed into
/// place) and drops any stale mapping of it from the context's cache.
LogicalResult NNXExternalizeWeightsPass::write(ArrayRef<MovedTensor> moved) {
  std::vector<SafeTensorsEntry> entries;
  entries.reserve(moved.size());
  for (const MovedTensor &m : moved) {
    if (!m.written)
      continue;
    auto type = cast<ShapedType>(m.tensor.value.getType());
    entries.push_back({m.key, m.dtype, SmallVector<int64_t, 4>(type.getShape()),
                       m.data.bytes});
  }
  if (llvm::Error err =
          writeSafeTensorsFile(file, entries, {{"format", "pt"}})) {
    emitError(getOperation().getLoc())
        << "nnx-externalize-weights: cannot write the weights file: "
        << llvm::toString(std::move(err));
    return failure();
  }
  SmallString<256> absolute(file);
  (void)llvm::sys::fs::make_absolute(absolute);
  llvm::sys::path::remove_dots(absolute, /*remove_dot_dot=*/true);
  forgetWeightsFile(&getContext(), absolute);
  return success();
}

void NNXExternalizeWeightsPass::runOnOperation() {
  ModuleOp module = getOperation();
  if (file.empty()) {
    emitError(module.getLoc())
        << "nnx-externalize-weights needs the file to write: "
           "--nnx-externalize-weights=file=<path>";
    return signalPassFailure();
  }
  SmallVector<ModelOp> models;
  module.walk([&](ModelOp model) { models.push_back(model); });
  SmallVector<MovedTensor> moved;
  bool ok = true;
  for (ModelOp model : models) {
    std::string prefix =
        models.size() > 1 ? (model.getSymName() + "/").str() : "";
    ok &= succeeded(collect(model, prefix, moved));
  }
  // Everything was read: only now write the file and edit the IR.
  if (!ok || failed(write(moved)))
    return signalPassFailure();
  MLIRContext *context = &getContext();
  llvm::SmallPtrSet<Operation *, 4> referencing;
  for (const MovedTensor &m : moved) {
    auto type = cast<ShapedType>(m.tensor.value.getType());
    setModelTensor(m.tensor, ExternalTensorAttr::get(context, type, m.key));
    referencing.insert(getParentModel(m.tensor.module));
  }
  for (ModelOp model : models)
    if (referencing.contains(model))
      model.setWeights(StringRef(file));
}
