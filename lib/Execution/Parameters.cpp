//===- Parameters.cpp - the weights a compiled forward is bound to --------===//
#include "Parameters.h"
#include "ExecutionError.h"

#include "nnx/Dialect/NNX/IR/NNXOps.h"
#include "nnx/Support/SafeTensors.h"

#include "mlir/IR/BuiltinAttributes.h"

#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemAlloc.h"

#include <cstring>

#if defined(__unix__)
#include <sys/mman.h>
#include <unistd.h>
#endif

using namespace mlir;
using namespace mlir::nnx;

/// `size` bytes of storage aligned to a cache line (the compiled code's
/// vector loads prefer it), owned by the result; filled from `from` when
/// given.
static TensorData alignedCopy(size_t size, const char *from = nullptr) {
  constexpr size_t kAlign = 64;
  size_t rounded = std::max<size_t>(kAlign, llvm::alignTo(size, kAlign));
  std::shared_ptr<char> storage(
      static_cast<char *>(llvm::allocate_buffer(rounded, kAlign)),
      [rounded](char *p) { llvm::deallocate_buffer(p, rounded, kAlign); });
  if (from && size)
    std::memcpy(storage.get(), from, size);
  return TensorData{ArrayRef<char>(storage.get(), size), storage};
}

/// Whether `data` holds the bytes of `spec` (count and element alignment).
static bool fitsSpec(const TensorData &data, const TensorSpec &spec) {
  int64_t n = 1;
  for (int64_t d : spec.shape)
    n *= d;
  size_t size = getDTypeSize(spec.dtype);
  return data.bytes.size() == static_cast<size_t>(n) * size &&
         reinterpret_cast<uintptr_t>(data.bytes.data()) % size == 0;
}

/// The stored bytes of parameter `name` (`attr`), owned by the result.
static llvm::Expected<TensorData> readParameter(ElementsAttr attr,
                                                StringRef name,
                                                StringRef weightsPath,
                                                Location loc) {
  FailureOr<TensorData> data =
      getTensorData(attr, weightsPath, loc, "parameter '" + name + "'");
  if (failed(data))
    return makeError("failed to read parameter '" + name + "'");
  // Inline tensors live in the MLIRContext, which may go before the
  // compiled model does: keep a copy (a mapped file is shared instead).
  if (!data->owner) {
    *data = alignedCopy(data->bytes.size(), data->bytes.data());
  }
  return *data;
}

//===----------------------------------------------------------------------===//
// Binding
//===----------------------------------------------------------------------===//

llvm::Error ParameterBindings::readForward(func::FuncOp forward,
                                           size_t numInputs, bool readData) {
  auto values = forward->getAttrOfType<ArrayAttr>(kParametersAttrName);
  auto names = forward->getAttrOfType<ArrayAttr>(kParameterNamesAttrName);
  if (!values && !names)
    return llvm::Error::success();
  if (!values || !names || values.size() != names.size() ||
      numInputs + values.size() > forward.getNumArguments())
    return makeError("@forward: 'nnx.parameters' and 'nnx.parameter_names' "
                     "must list the same number of tensors, one per "
                     "argument after the inputs");
  StringRef weightsPath;
  if (auto weights = forward->getAttrOfType<StringAttr>(kWeightsAttrName))
    weightsPath = weights.getValue();
  for (auto [i, value, nameAttr] : llvm::enumerate(values, names)) {
    auto attr = cast<ElementsAttr>(value);
    std::string name = cast<StringAttr>(nameAttr).str();
    llvm::Expected<TensorSpec> spec =
        makeTensorSpec(attr.getType(), "parameter '" + name + "'");
    if (!spec)
      return spec.takeError();
    spec->name = name;
    auto ext = dyn_cast<ExternalTensorAttr>(attr);
    keys.push_back(ext ? ext.getKey().str() : name);
    slices.push_back(ext ? getTensorSlices(ext) : TensorSlices());
    if (readData) {
      // The argument's location is the layer's: diagnostics point there.
      Location loc = forward.getArgument(numInputs + i).getLoc();
      llvm::Expected<TensorData> data =
          readParameter(attr, name, weightsPath, loc);
      if (!data)
        return data.takeError();
      if (!fitsSpec(*data, *spec))
        return makeError("parameter '" + name +
                         "': the stored bytes do not hold a " +
                         spec->typeString);
      stored.push_back(std::move(*data));
    }
    specs.push_back(std::move(*spec));
  }
  return llvm::Error::success();
}

llvm::Error ParameterBindings::readWeightsFile(StringRef path) {
  llvm::Expected<std::unique_ptr<SafeTensorsFile>> opened =
      SafeTensorsFile::open(path);
  if (!opened)
    return opened.takeError();
  std::shared_ptr<SafeTensorsFile> file = std::move(*opened);
  std::vector<TensorData> bound;
  for (auto [spec, key, slice] : llvm::zip_equal(specs, keys, slices)) {
    const SafeTensorInfo *info = file->lookup(key);
    if (!info)
      return makeError(path + ": no tensor '" + key + "' (parameter '" +
                       spec.name + "', " + spec.typeString + ")");
    StringRef expected = getSafeTensorsDTypeName(spec.dtype);
    if (info->dtype != expected ||
        (slice.empty() &&
         ArrayRef<int64_t>(info->shape) != ArrayRef<int64_t>(spec.shape)))
      return makeError(path + ": tensor '" + key + "' is " + info->dtype +
                       " of shape " + formatShape(info->shape) +
                       ", parameter '" + spec.name + "' is " + spec.typeString);
    if (!slice.empty()) {
      // The parameter is a slice of the stored tensor: gather it.
      std::string problem = checkTensorSlices(info->shape, slice, spec.shape);
      if (!problem.empty())
        return makeError(path + ": tensor '" + key + "' is " + info->dtype +
                         " of shape " + formatShape(info->shape) +
                         ", which parameter '" + spec.name + "' (" +
                         spec.typeString +
                         ", a slice of it) does not fit: " + problem);
      bound.push_back(gatherTensorSlices(*file, *info, slice));
      continue;
    }
    TensorData data{file->getData(*info), file, /*mapped=*/file->isMapped()};
    if (!fitsSpec(data, spec)) {
      data = alignedCopy(data.bytes.size(), data.bytes.data());
    }
    bound.push_back(std::move(data));
  }
  stored = std::move(bound);
  return llvm::Error::success();
}

llvm::Error ParameterBindings::readLayouts(Operation *forward) {
  return readLayouts(forward ? forward->getAttrOfType<DictionaryAttr>(
                                   kParameterLayoutsAttrName)
                             : DictionaryAttr());
}

llvm::Error ParameterBindings::readLayouts(DictionaryAttr dict) {
  layouts.assign(specs.size(), {});
  if (!dict)
    return llvm::Error::success();
  for (auto [spec, layout] : llvm::zip_equal(specs, layouts)) {
    Attribute entry = dict.get(spec.name);
    auto perm = dyn_cast_or_null<DenseI64ArrayAttr>(entry);
    ArrayRef<int64_t> view = spec.shape;
    // {shape, permutation}: the stored tensor viewed as `shape` first (the
    // dialect verified both are there, of one rank).
    if (auto split = dyn_cast_or_null<DictionaryAttr>(entry)) {
      perm = split.getAs<DenseI64ArrayAttr>("permutation");
      view = split.getAs<DenseI64ArrayAttr>("shape").asArrayRef();
      int64_t stored = 1, viewed = 1;
      for (int64_t d : spec.shape)
        stored *= d;
      for (int64_t d : view)
        viewed *= d;
      if (stored != viewed)
        return makeError("parameter '" + spec.name + "' (" + spec.typeString +
                         "): the compiled forward views it as a tensor of " +
                         std::to_string(viewed) + " elements");
    }
    if (!perm)
      continue;
    if (perm.size() != static_cast<int64_t>(view.size()))
      return makeError("parameter '" + spec.name + "' (" + spec.typeString +
                       "): the compiled forward asks for a layout of rank " +
                       std::to_string(perm.size()));
    layout.view.assign(view.begin(), view.end());
    layout.perm.assign(perm.asArrayRef().begin(), perm.asArrayRef().end());
  }
  return llvm::Error::success();
}

/// Tells the kernel the whole pages of `data`, a read-only file mapping, are
/// not needed any more: they leave this process's memory (and come back
/// from the file if read again).
static void dropMappedPages(ArrayRef<char> data) {
#if defined(__unix__) && defined(MADV_DONTNEED)
  uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  uintptr_t begin =
      llvm::alignTo(reinterpret_cast<uintptr_t>(data.data()), page);
  uintptr_t end = llvm::alignDown(
      reinterpret_cast<uintptr_t>(data.data()) + data.size(), page);
  if (end > begin)
    (void)madvise(reinterpret_cast<void *>(begin), end - begin, MADV_DONTNEED);
#else
  (void)data;
#endif
}

void ParameterBindings::dropPermutedPages() const {
  for (auto [data, layout] : llvm::zip(stored, layouts))
    if (data.mapped && !layout.perm.empty())
      dropMappedPages(data.bytes);
}

void mlir::nnx::printProgram(ModuleOp module, llvm::raw_ostream &os,
                             bool withLocations) {
  SmallVector<std::pair<func::FuncOp, NamedAttrList>> removed;
  for (auto func : module.getOps<func::FuncOp>()) {
    NamedAttrList attrs;
    for (StringRef name : {kParametersAttrName, kWeightsAttrName})
      if (Attribute attr = func->removeAttr(name))
        attrs.append(name, attr);
    removed.emplace_back(func, std::move(attrs));
  }
  OpPrintingFlags flags;
  flags.elideLargeElementsAttrs(0).elideLargeResourceString(0);
  if (withLocations)
    flags.enableDebugInfo();
  module->print(os, flags);
  for (auto &[func, attrs] : removed)
    for (NamedAttribute attr : attrs)
      func->setAttr(attr.getName(), attr.getValue());
}
