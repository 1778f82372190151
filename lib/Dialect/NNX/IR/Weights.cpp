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
#include "llvm/Support/raw_ostream.h"

#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemAlloc.h"

#include <cstring>

#if defined(__unix__)
#include <sys/mman.h>
#include <unistd.h>
#endif

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

/// The tensor `key` of the weights file at `path`, checked against `type`
/// (and its slices, gathered).
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
  TensorSlices slices = getTensorSlices(ext);
  bool shapeOk =
      !slices.empty() || ArrayRef<int64_t>(info->shape) == type.getShape();
  if (info->dtype != dtype || !shapeOk)
    return emitError(loc) << what << ": tensor '" << ext.getKey() << "' of '"
                          << path << "' is " << info->dtype << " of shape "
                          << formatShape(info->shape) << ", the model expects "
                          << dtype << " of shape "
                          << formatShape(type.getShape());
  if (!slices.empty()) {
    std::string problem =
        checkTensorSlices(info->shape, slices, type.getShape());
    if (!problem.empty())
      return emitError(loc)
             << what << ": tensor '" << ext.getKey() << "' of '" << path
             << "' is " << info->dtype << " of shape "
             << formatShape(info->shape)
             << ", which the model's slice of it does not fit: " << problem;
    return gatherTensorSlices(**file, *info, slices);
  }
  ArrayRef<char> bytes = (*file)->getData(*info);
  size_t align = std::max<size_t>(1, getSafeTensorsDTypeSize(info->dtype));
  if (reinterpret_cast<uintptr_t>(bytes.data()) % align != 0)
    return ownedCopy(bytes);
  return TensorData{bytes, *file, /*mapped=*/(*file)->isMapped()};
}

//===----------------------------------------------------------------------===//
// Slices of a stored tensor
//===----------------------------------------------------------------------===//

TensorSlices mlir::nnx::getTensorSlices(ExternalTensorAttr ext) {
  TensorSlices slices;
  if (ArrayAttr attr = ext.getSlices())
    for (Attribute entry : attr)
      slices.emplace_back(cast<DenseI64ArrayAttr>(entry).asArrayRef());
  return slices;
}

std::string mlir::nnx::checkTensorSlices(ArrayRef<int64_t> stored,
                                         const TensorSlices &slices,
                                         ArrayRef<int64_t> shape) {
  std::string problem;
  llvm::raw_string_ostream os(problem);
  if (stored.size() != slices.size() || shape.size() != slices.size()) {
    os << "the slice names " << slices.size() << " dims, the stored tensor has "
       << stored.size();
    return problem;
  }
  for (auto [dim, runs] : llvm::enumerate(slices)) {
    if (runs.empty()) {
      if (stored[dim] != shape[dim])
        os << "dim " << dim << " is taken whole, but the stored dim is "
           << stored[dim] << " and the model's " << shape[dim];
      if (!problem.empty())
        return problem;
      continue;
    }
    int64_t total = 0;
    for (size_t i = 0; i + 1 < runs.size(); i += 2) {
      int64_t start = runs[i], length = runs[i + 1];
      if (start < 0 || length <= 0 || start > stored[dim] - length) {
        os << "dim " << dim << "'s run (start " << start << ", length "
           << length << ") lies outside the stored dim of " << stored[dim];
        return problem;
      }
      total += length;
    }
    if (runs.size() % 2 != 0 || total != shape[dim]) {
      os << "dim " << dim << "'s runs take " << total
         << " elements, the model's dim is " << shape[dim];
      return problem;
    }
  }
  return problem;
}

namespace {
/// Copies spans of a stored tensor, in order, into a buffer. When the file
/// is mapped, the source pages a span touched are dropped (madvise
/// MADV_DONTNEED) once the next span is copied (except the pages that one
/// touches too), and spans are copied in chunks of at most kChunk bytes:
/// a process binding a slice of a weight keeps only the slice (plus a few
/// pages) resident, never the whole weight. We chose copy-then-madvise over
/// pread() because it reads the same mapping the whole tensors are viewed
/// through (no second open of a path that may since have been replaced)
/// and needs no file descriptor; dropping pages of a read-only file mapping
/// is always safe (they are read again from the file if touched).
class SpanGatherer {
public:
  SpanGatherer(const SafeTensorsFile &file, ArrayRef<char> source, char *out)
      : source(source), out(out), mapped(file.isMapped()) {
#if defined(__unix__) && defined(MADV_DONTNEED)
    page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
#endif
    uintptr_t begin = reinterpret_cast<uintptr_t>(source.data());
    // Only whole pages of the tensor: the neighbours' are left alone.
    lo = llvm::alignTo(begin, page);
    hi = llvm::alignDown(begin + source.size(), page);
  }

  /// Appends `size` bytes at `offset` of the tensor, merged with the
  /// previous span when they are adjacent.
  void add(uint64_t offset, uint64_t size) {
    if (pendingSize && pendingOffset + pendingSize == offset) {
      pendingSize += size;
      return;
    }
    flush();
    pendingOffset = offset;
    pendingSize = size;
  }

  void finish() {
    flush();
    drop(touchedBegin, touchedEnd);
    touchedBegin = touchedEnd = 0;
  }

private:
  void flush() {
    for (uint64_t done = 0; done < pendingSize; done += kChunk)
      copy(pendingOffset + done, std::min(kChunk, pendingSize - done));
    pendingSize = 0;
  }

  void copy(uint64_t offset, uint64_t size) {
    const char *from = source.data() + offset;
    std::memcpy(out, from, size);
    out += size;
    uintptr_t begin = llvm::alignDown(reinterpret_cast<uintptr_t>(from), page);
    uintptr_t end =
        llvm::alignTo(reinterpret_cast<uintptr_t>(from) + size, page);
    // The previous span's pages, less the ones this span touched.
    drop(touchedBegin, std::min(touchedEnd, begin));
    drop(std::max(touchedBegin, end), touchedEnd);
    touchedBegin = begin;
    touchedEnd = end;
  }

  void drop(uintptr_t begin, uintptr_t end) {
#if defined(__unix__) && defined(MADV_DONTNEED)
    begin = std::max(begin, lo);
    end = std::min(end, hi);
    if (mapped && end > begin)
      (void)madvise(reinterpret_cast<void *>(begin), end - begin,
                    MADV_DONTNEED);
#else
    (void)begin;
    (void)end;
#endif
  }

  static constexpr uint64_t kChunk = uint64_t(64) << 20;
  ArrayRef<char> source;
  char *out;
  bool mapped;
  uintptr_t page = 4096, lo = 0, hi = 0;
  uint64_t pendingOffset = 0, pendingSize = 0;
  uintptr_t touchedBegin = 0, touchedEnd = 0;
};
} // namespace

/// Adds the spans of dims `dim`... of `runs` at byte `offset` to `g`: dims
/// up to `last` are walked index by index, dim `last` run by run (the dims
/// after it are whole, so a run of it is one contiguous span).
static void addSpans(SpanGatherer &g, ArrayRef<SmallVector<int64_t, 4>> runs,
                     ArrayRef<uint64_t> strides, size_t dim, size_t last,
                     uint64_t offset) {
  ArrayRef<int64_t> dimRuns = runs[dim];
  for (size_t i = 0; i + 1 < dimRuns.size(); i += 2) {
    uint64_t start = dimRuns[i], length = dimRuns[i + 1];
    if (dim == last) {
      g.add(offset + start * strides[dim], length * strides[dim]);
      continue;
    }
    for (uint64_t j = start; j < start + length; ++j)
      addSpans(g, runs, strides, dim + 1, last, offset + j * strides[dim]);
  }
}

TensorData mlir::nnx::gatherTensorSlices(const SafeTensorsFile &file,
                                         const SafeTensorInfo &info,
                                         const TensorSlices &slices) {
  ArrayRef<int64_t> stored = info.shape;
  size_t rank = stored.size();
  // Every dim's runs, a whole dim as the one run (0, dim).
  SmallVector<SmallVector<int64_t, 4>> runs(rank);
  uint64_t size = getSafeTensorsDTypeSize(info.dtype);
  for (size_t d = 0; d < rank; ++d) {
    if (slices[d].empty())
      runs[d] = {0, stored[d]};
    else
      runs[d] = slices[d];
    int64_t length = 0;
    for (size_t i = 1; i < runs[d].size(); i += 2)
      length += runs[d][i];
    size *= static_cast<uint64_t>(length);
  }
  SmallVector<uint64_t> strides(rank);
  uint64_t stride = getSafeTensorsDTypeSize(info.dtype);
  for (size_t d = rank; d-- > 0;) {
    strides[d] = stride;
    stride *= static_cast<uint64_t>(stored[d]);
  }
  // The last dim not taken whole: the dims after it fold into its spans.
  size_t last = rank;
  while (last > 0 && runs[last - 1].size() == 2 && runs[last - 1][0] == 0 &&
         runs[last - 1][1] == stored[last - 1])
    --last;
  constexpr size_t kAlign = 64;
  size_t rounded = std::max<size_t>(kAlign, llvm::alignTo(size, kAlign));
  std::shared_ptr<char> storage(
      static_cast<char *>(llvm::allocate_buffer(rounded, kAlign)),
      [rounded](char *p) { llvm::deallocate_buffer(p, rounded, kAlign); });
  SpanGatherer gatherer(file, file.getData(info), storage.get());
  if (size) {
    if (last == 0)
      gatherer.add(0, size);
    else
      addSpans(gatherer, runs, strides, 0, last - 1, 0);
  }
  gatherer.finish();
  return TensorData{ArrayRef<char>(storage.get(), size), storage};
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
