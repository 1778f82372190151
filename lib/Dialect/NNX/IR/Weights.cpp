//===- Weights.cpp - where a parameter tensor's bytes come from -*- C++ -*-===//
#include "nnx/Dialect/NNX/IR/Weights.h"

#include "nnx/Dialect/NNX/IR/ModuleTree.h"
#include "nnx/Dialect/NNX/IR/NNXDialect.h"
#include "nnx/Dialect/NNX/IR/NNXOps.h"
#include "nnx/Support/Npy.h"
#include "nnx/Support/SafeTensors.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include "llvm/Support/MathExtras.h"

#include <cstring>

using namespace mlir;
using namespace mlir::nnx;

//===----------------------------------------------------------------------===//
// The context's open files
//===----------------------------------------------------------------------===//

std::shared_ptr<SafeTensorsFile> WeightsFileCache::lookup(StringRef path) {
  std::lock_guard<std::mutex> lock(mutex);
  auto it = files.find(path);
  return it == files.end() ? nullptr : it->second;
}

void WeightsFileCache::insert(StringRef path,
                              std::shared_ptr<SafeTensorsFile> file) {
  std::lock_guard<std::mutex> lock(mutex);
  files[path] = std::move(file);
}

void WeightsFileCache::erase(StringRef path) {
  std::lock_guard<std::mutex> lock(mutex);
  files.erase(path);
}

static WeightsFileCache &getCache(MLIRContext *context) {
  return context->getOrLoadDialect<NNXDialect>()->getWeightsFiles();
}

/// The file at `path` from the context's cache, opened and cached on the
/// first request.
static llvm::Expected<std::shared_ptr<SafeTensorsFile>>
openCached(MLIRContext *context, StringRef path) {
  WeightsFileCache &cache = getCache(context);
  if (std::shared_ptr<SafeTensorsFile> file = cache.lookup(path))
    return file;
  llvm::Expected<std::unique_ptr<SafeTensorsFile>> opened =
      SafeTensorsFile::open(path);
  if (!opened)
    return opened.takeError();
  std::shared_ptr<SafeTensorsFile> file = std::move(*opened);
  cache.insert(path, file);
  return file;
}

FailureOr<std::shared_ptr<SafeTensorsFile>>
mlir::nnx::openWeightsFile(MLIRContext *context, StringRef path, Location loc) {
  llvm::Expected<std::shared_ptr<SafeTensorsFile>> file =
      openCached(context, path);
  if (!file)
    return emitError(loc) << "cannot read the weights file: "
                          << llvm::toString(file.takeError());
  return std::move(*file);
}

void mlir::nnx::forgetWeightsFile(MLIRContext *context, StringRef path) {
  getCache(context).erase(path);
}

std::optional<std::string> mlir::nnx::resolveWeightsPath(ModelOp model) {
  std::optional<StringRef> weights = model.getWeights();
  if (!weights)
    return std::nullopt;
  SmallString<256> path(*weights);
  if (llvm::sys::path::is_relative(path)) {
    // Relative to the directory of the file the model was parsed from.
    if (auto fileLoc = dyn_cast<FileLineColLoc>(model.getLoc())) {
      StringRef dir = llvm::sys::path::parent_path(fileLoc.getFilename());
      if (!dir.empty() && fileLoc.getFilename() != "-") {
        SmallString<256> joined(dir);
        llvm::sys::path::append(joined, path);
        path = joined;
      }
    }
  }
  (void)llvm::sys::fs::make_absolute(path);
  llvm::sys::path::remove_dots(path, /*remove_dot_dot=*/true);
  return std::string(path);
}

std::string mlir::nnx::getEnclosingWeightsPath(Operation *op) {
  auto model =
      isa<ModelOp>(op) ? cast<ModelOp>(op) : op->getParentOfType<ModelOp>();
  if (!model)
    return "";
  return resolveWeightsPath(model).value_or("");
}

//===----------------------------------------------------------------------===//
// Tensor bytes
//===----------------------------------------------------------------------===//

/// A copy of `bytes` that the result owns.
static TensorData ownedCopy(ArrayRef<char> bytes) {
  auto storage =
      std::make_shared<std::vector<char>>(bytes.begin(), bytes.end());
  return TensorData{ArrayRef<char>(*storage), storage};
}

/// The bytes of a dense attribute: its storage, or an expanded copy for a
/// splat and for i1 (stored packed).
static TensorData denseData(DenseElementsAttr dense) {
  auto type = cast<ShapedType>(dense.getType());
  if (type.getElementType().isInteger(1)) {
    auto storage = std::make_shared<std::vector<char>>();
    for (bool b : dense.getValues<bool>())
      storage->push_back(b ? 1 : 0);
    return TensorData{ArrayRef<char>(*storage), storage};
  }
  ArrayRef<char> raw = dense.getRawData();
  if (!dense.isSplat())
    return TensorData{raw, nullptr};
  auto storage = std::make_shared<std::vector<char>>();
  storage->reserve(raw.size() * type.getNumElements());
  for (int64_t i = 0, e = type.getNumElements(); i < e; ++i)
    storage->insert(storage->end(), raw.begin(), raw.end());
  return TensorData{ArrayRef<char>(*storage), storage};
}

/// Bytes per element as nnx stores them (i1 as one byte).
static int64_t storedElementSize(Type elt) {
  return elt.isInteger(1) ? 1 : elt.getIntOrFloatBitWidth() / 8;
}

std::optional<uint64_t> mlir::nnx::getStoredByteSize(ShapedType type) {
  Type elt = type.getElementType();
  if (!type.hasStaticShape() || !elt.isIntOrFloat())
    return std::nullopt;
  int64_t bytes = storedElementSize(elt);
  for (int64_t dim : type.getShape())
    if (llvm::MulOverflow(bytes, dim, bytes))
      return std::nullopt;
  return static_cast<uint64_t>(bytes);
}

/// The weights file at `path` that `ext` is read from; no path or a file
/// that cannot be read is a diagnostic at `loc` naming `what` and the key.
static FailureOr<std::shared_ptr<SafeTensorsFile>>
openExternalFile(ExternalTensorAttr ext, StringRef path, Location loc,
                 const Twine &what) {
  if (path.empty())
    return emitError(loc) << what << " is #nnx.external<\"" << ext.getKey()
                          << "\">, but the model names no weights file (give "
                             "it one: its 'weights' attribute, or a tool's "
                             "--weights)";
  llvm::Expected<std::shared_ptr<SafeTensorsFile>> file =
      openCached(loc.getContext(), path);
  if (!file)
    return emitError(loc) << what << " is #nnx.external<\"" << ext.getKey()
                          << "\">, but the weights file cannot be read: "
                          << llvm::toString(file.takeError());
  return std::move(*file);
}

/// The tensor `key` of the weights file at `path`, checked against `type`.
static FailureOr<TensorData> externalData(ExternalTensorAttr ext,
                                          StringRef path, Location loc,
                                          const Twine &what) {
  FailureOr<std::shared_ptr<SafeTensorsFile>> file =
      openExternalFile(ext, path, loc, what);
  if (failed(file))
    return failure();
  const SafeTensorInfo *info = (*file)->lookup(ext.getKey());
  if (!info)
    return emitError(loc) << what << ": the weights file '" << path
                          << "' has no tensor '" << ext.getKey() << "'";
  ShapedType type = ext.getType();
  StringRef dtype = getSafeTensorsDTypeName(type.getElementType());
  if (info->dtype != dtype || ArrayRef<int64_t>(info->shape) != type.getShape())
    return emitError(loc) << what << ": tensor '" << ext.getKey() << "' of '"
                          << path << "' is " << info->dtype << " of shape "
                          << formatShape(info->shape) << ", the model expects "
                          << dtype << " of shape "
                          << formatShape(type.getShape());
  ArrayRef<char> bytes = (*file)->getData(*info);
  size_t align = std::max<size_t>(1, getSafeTensorsDTypeSize(info->dtype));
  if (reinterpret_cast<uintptr_t>(bytes.data()) % align != 0)
    return ownedCopy(bytes);
  return TensorData{bytes, *file, /*mapped=*/true};
}

FailureOr<TensorData> mlir::nnx::getTensorData(ElementsAttr attr,
                                               StringRef weightsPath,
                                               Location loc,
                                               const Twine &what) {
  if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
    // A splat is one element in the IR; its bytes are all of them.
    auto type = cast<ShapedType>(attr.getType());
    std::optional<uint64_t> bytes = getStoredByteSize(type);
    if (!bytes || *bytes > kMaxExpandedTensorBytes)
      return emitError(loc) << what << " is " << type << ", more than "
                            << (kMaxExpandedTensorBytes >> 30)
                            << " GiB: too large to hold in memory";
    return denseData(dense);
  }
  if (auto ext = dyn_cast<ExternalTensorAttr>(attr))
    return externalData(ext, weightsPath, loc, what);
  auto type = cast<ShapedType>(attr.getType());
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(attr)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return emitError(loc)
             << what << ": dense_resource<" << resource.getRawHandle().getKey()
             << "> has no data (its blob is not in the file)";
    ArrayRef<char> bytes = blob->getData();
    std::optional<uint64_t> needed = getStoredByteSize(type);
    if (!needed || bytes.size() != *needed)
      return emitError(loc)
             << what << ": dense_resource<" << resource.getRawHandle().getKey()
             << "> holds " << bytes.size()
             << " bytes, which is not the size of " << type;
    size_t align = storedElementSize(type.getElementType());
    if (reinterpret_cast<uintptr_t>(bytes.data()) % align != 0)
      return ownedCopy(bytes);
    return TensorData{bytes, nullptr};
  }
  return emitError(loc) << what << " is " << attr
                        << ", whose data nnx cannot read";
}

FailureOr<TensorData> mlir::nnx::getTensorData(Operation *op, StringRef name) {
  auto attr = op->getAttrOfType<ElementsAttr>(name);
  if (!attr)
    return op->emitOpError() << "has no tensor '" << name << "'";
  return getTensorData(attr, getEnclosingWeightsPath(op), op->getLoc(),
                       "tensor '" + name + "'");
}

//===----------------------------------------------------------------------===//
// The tensors of a model
//===----------------------------------------------------------------------===//

std::string ModelTensor::describe() const {
  std::string path = getModulePath(module);
  return ("tensor '" + name.getValue() + "' of '" +
          (path.empty() ? "<root>" : path) + "'")
      .str();
}

std::string ModelTensor::getDottedName() const {
  std::string path = getModulePath(module);
  return path.empty() ? name.str() : path + "." + name.str();
}

/// The tensors `m` holds itself, in the order getModelTensors promises.
static void appendOwnTensors(ModuleOpInterface m,
                             SmallVectorImpl<ModelTensor> &tensors) {
  Operation *op = m.getOperation();
  if (op->hasTrait<OpTrait::SymbolTable>()) {
    if (auto state = op->getAttrOfType<DictionaryAttr>("state"))
      for (NamedAttribute entry : state)
        if (auto value = dyn_cast<ElementsAttr>(entry.getValue()))
          tensors.push_back({op, entry.getName(), value, /*inState=*/true});
    return;
  }
  SmallVector<StringRef> names = m.getParameterNames();
  llvm::append_range(names, m.getBufferNames());
  for (StringRef name : names) {
    auto nameAttr = StringAttr::get(op->getContext(), name);
    if (auto value = op->getAttrOfType<ElementsAttr>(nameAttr))
      tensors.push_back({op, nameAttr, value, /*inState=*/false});
  }
}

SmallVector<ModelTensor> mlir::nnx::getModelTensors(ModelOp model) {
  SmallVector<ModelTensor> tensors;
  model.walk<WalkOrder::PreOrder>(
      [&](ModuleOpInterface m) { appendOwnTensors(m, tensors); });
  return tensors;
}

void mlir::nnx::setModelTensor(const ModelTensor &tensor, ElementsAttr value) {
  Operation *op = tensor.module;
  if (!tensor.inState) {
    op->setAttr(tensor.name, value);
    return;
  }
  NamedAttrList state(op->getAttrOfType<DictionaryAttr>("state"));
  state.set(tensor.name, value);
  op->setAttr("state", state.getDictionary(op->getContext()));
}

LogicalResult mlir::nnx::checkWeightsFile(ModelOp model,
                                          ArrayRef<ModelTensor> tensors,
                                          StringRef prefix) {
  const ModelTensor *first = llvm::find_if(tensors, [](const ModelTensor &t) {
    return isa<ExternalTensorAttr>(t.value);
  });
  if (first == tensors.end())
    return success();
  return openExternalFile(cast<ExternalTensorAttr>(first->value),
                          resolveWeightsPath(model).value_or(""),
                          first->module->getLoc(), prefix + first->describe());
}
