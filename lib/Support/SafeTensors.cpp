//===- SafeTensors.cpp - safetensors files: map, validate, write ----------===//
#include "nnx/Support/SafeTensors.h"
#include "nnx/Support/OutputFile.h"

#include "mlir/IR/BuiltinTypes.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <tuple>

using namespace mlir;
using namespace mlir::nnx;

/// The largest header accepted, as in the reference implementation.
static constexpr uint64_t kMaxHeaderSize = 100'000'000;
/// Deeper nesting than this in the header is refused before it is parsed
/// (llvm::json::parse recurses once per level).
static constexpr size_t kMaxHeaderDepth = 64;
/// The writer aligns the data region and every tensor to this many bytes.
static constexpr uint64_t kAlignment = 64;
static constexpr llvm::StringLiteral kMetadataKey("__metadata__");

static llvm::Error makeError(StringRef name, const Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 name + ": " + msg);
}

/// A shape the way the header writes it: "[2, 3]", "[]".
static std::string formatDims(ArrayRef<int64_t> shape) {
  std::string result = "[";
  llvm::raw_string_ostream os(result);
  llvm::interleave(shape, os, ", ");
  os << "]";
  return result;
}

/// The number of elements of `shape`, or nullopt when a dimension is negative
/// or the product overflows. A zero dimension makes it 0 whatever the others.
static std::optional<int64_t> checkedNumElements(ArrayRef<int64_t> shape) {
  if (llvm::is_contained(shape, 0))
    return llvm::any_of(shape, [](int64_t d) { return d < 0; })
               ? std::nullopt
               : std::optional<int64_t>(0);
  int64_t n = 1;
  for (int64_t d : shape)
    if (d < 0 || llvm::MulOverflow(n, d, n))
      return std::nullopt;
  return n;
}

/// numElements(shape) * dtypeSize, or nullopt when a dimension is negative
/// or either product overflows.
static std::optional<uint64_t> checkedNumBytes(ArrayRef<int64_t> shape,
                                               size_t dtypeSize) {
  std::optional<int64_t> n = checkedNumElements(shape);
  if (!n)
    return std::nullopt;
  bool overflow = false;
  uint64_t bytes = llvm::SaturatingMultiply(static_cast<uint64_t>(*n),
                                            uint64_t(dtypeSize), &overflow);
  if (overflow)
    return std::nullopt;
  return bytes;
}

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

size_t mlir::nnx::getSafeTensorsDTypeSize(StringRef dtype) {
  return llvm::StringSwitch<size_t>(dtype)
      .Cases({"F64", "I64", "U64"}, 8)
      .Cases({"F32", "I32", "U32"}, 4)
      .Cases({"F16", "BF16", "I16", "U16"}, 2)
      .Cases({"I8", "U8", "BOOL", "F8_E4M3", "F8_E5M2"}, 1)
      .Default(0);
}

static StringRef getIntegerDTypeName(IntegerType type) {
  if (type.isUnsigned()) {
    switch (type.getWidth()) {
    case 8:
      return "U8";
    case 16:
      return "U16";
    case 32:
      return "U32";
    case 64:
      return "U64";
    default:
      return "";
    }
  }
  switch (type.getWidth()) {
  case 1:
    return type.isSignless() ? "BOOL" : "";
  case 8:
    return "I8";
  case 16:
    return "I16";
  case 32:
    return "I32";
  case 64:
    return "I64";
  default:
    return "";
  }
}

StringRef mlir::nnx::getSafeTensorsDTypeName(DType dtype) {
  switch (dtype) {
  case DType::F16:
    return "F16";
  case DType::BF16:
    return "BF16";
  case DType::F32:
    return "F32";
  case DType::F64:
    return "F64";
  case DType::I32:
    return "I32";
  case DType::I64:
    return "I64";
  case DType::Bool:
    return "BOOL";
  }
  llvm_unreachable("unknown dtype");
}

StringRef mlir::nnx::getSafeTensorsDTypeName(Type elementType) {
  if (auto intType = dyn_cast<IntegerType>(elementType))
    return getIntegerDTypeName(intType);
  if (elementType.isF64())
    return "F64";
  if (elementType.isF32())
    return "F32";
  if (elementType.isF16())
    return "F16";
  if (elementType.isBF16())
    return "BF16";
  if (isa<Float8E4M3FNType>(elementType))
    return "F8_E4M3";
  if (isa<Float8E5M2Type>(elementType))
    return "F8_E5M2";
  return "";
}

int64_t SafeTensorInfo::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

//===----------------------------------------------------------------------===//
// A structural scan of the header
//===----------------------------------------------------------------------===//

namespace {
/// What llvm::json::parse would choke on or hide: nesting deep enough to
/// exhaust the stack, and duplicate keys (the parser keeps one silently).
struct HeaderScan {
  bool tooDeep = false;
  /// The first key that repeats within one object.
  std::optional<std::string> duplicateKey;
  /// Where the duplicate is: "the header", "the entry of 'w'", ...
  std::string duplicateWhere;
};

/// An open `{` or `[` during the scan.
struct ScanFrame {
  bool isObject = false;
  /// In an object: the next string is a key (after `{` or `,`).
  bool expectKey = false;
  std::string lastKey;
  llvm::StringSet<> keys;
};
} // namespace

/// The text of a JSON string literal (quotes included), unescaped.
static std::string decodeJsonString(StringRef literal) {
  StringRef inner = literal.drop_front().drop_back();
  if (!inner.contains('\\'))
    return inner.str();
  llvm::Expected<llvm::json::Value> value = llvm::json::parse(literal);
  if (!value) {
    llvm::consumeError(value.takeError());
    return inner.str();
  }
  std::optional<StringRef> text = value->getAsString();
  return text ? text->str() : inner.str();
}

/// Scans `text` without recursion, following strings the way the JSON parser
/// does, so that its view of the nesting matches the parser's up to the first
/// syntax error. Its findings matter only once the parser accepts the text.
static HeaderScan scanHeader(StringRef text) {
  HeaderScan scan;
  SmallVector<ScanFrame, 4> stack;
  for (size_t i = 0, e = text.size(); i < e; ++i) {
    char c = text[i];
    if (c == '{' || c == '[') {
      if (stack.size() >= kMaxHeaderDepth) {
        scan.tooDeep = true;
        return scan;
      }
      stack.emplace_back();
      stack.back().isObject = stack.back().expectKey = c == '{';
    } else if (c == '}' || c == ']') {
      if (!stack.empty())
        stack.pop_back();
    } else if (c == ',') {
      if (!stack.empty() && stack.back().isObject)
        stack.back().expectKey = true;
    } else if (c == '"') {
      size_t start = i;
      for (++i; i < e && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
      if (i >= e)
        return scan; // Unterminated: the parser says so.
      if (stack.empty() || !stack.back().expectKey)
        continue;
      ScanFrame &frame = stack.back();
      frame.expectKey = false;
      frame.lastKey = decodeJsonString(text.slice(start, i + 1));
      if (!frame.keys.insert(frame.lastKey).second && !scan.duplicateKey) {
        scan.duplicateKey = frame.lastKey;
        const ScanFrame *parent =
            stack.size() >= 2 ? &stack[stack.size() - 2] : nullptr;
        scan.duplicateWhere = !parent ? "the header"
                              : parent->isObject && stack.size() == 2
                                  ? "the entry of '" + parent->lastKey + "'"
                                  : "an object nested in the header";
      }
    }
  }
  return scan;
}

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

/// Parses `shape` of the entry of tensor `key` into `shape`.
static llvm::Error parseShape(StringRef name, StringRef key,
                              const llvm::json::Value *value,
                              SmallVectorImpl<int64_t> &shape) {
  if (!value)
    return makeError(name, "tensor '" + key + "': missing 'shape'");
  const llvm::json::Array *dims = value->getAsArray();
  if (!dims)
    return makeError(name, "tensor '" + key + "': 'shape' is not an array");
  for (const llvm::json::Value &dim : *dims) {
    if (std::optional<uint64_t> d = dim.getAsUINT64();
        d && *d <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      shape.push_back(static_cast<int64_t>(*d));
      continue;
    }
    std::optional<int64_t> d = dim.getAsInteger();
    if (d && *d < 0)
      return makeError(name, "tensor '" + key + "': negative dimension " +
                                 Twine(*d) + " in 'shape'");
    return makeError(name, "tensor '" + key +
                               "': 'shape' is not an array of integers "
                               "(each at most 2^63-1)");
  }
  return llvm::Error::success();
}

/// Parses `data_offsets` of the entry of tensor `key` into `info`.
static llvm::Error parseOffsets(StringRef name, StringRef key,
                                const llvm::json::Value *value,
                                SafeTensorInfo &info) {
  if (!value)
    return makeError(name, "tensor '" + key + "': missing 'data_offsets'");
  const llvm::json::Array *offsets = value->getAsArray();
  std::optional<uint64_t> begin, end;
  if (offsets && offsets->size() == 2) {
    begin = (*offsets)[0].getAsUINT64();
    end = (*offsets)[1].getAsUINT64();
  }
  if (!begin || !end)
    return makeError(name, "tensor '" + key +
                               "': 'data_offsets' is not an array of two "
                               "non-negative integers");
  if (*begin > *end)
    return makeError(name, "tensor '" + key + "': 'data_offsets' [" +
                               Twine(*begin) + ", " + Twine(*end) +
                               "] begins after it ends");
  info.begin = *begin;
  info.end = *end;
  return llvm::Error::success();
}

/// Parses and checks the header entry `value` of tensor `key`; `dataSize` is
/// the size of the data region.
static llvm::Expected<SafeTensorInfo> parseEntry(StringRef name, StringRef key,
                                                 const llvm::json::Value &value,
                                                 uint64_t dataSize) {
  const llvm::json::Object *entry = value.getAsObject();
  if (!entry)
    return makeError(name, "tensor '" + key + "': entry is not a JSON object");
  // writeSafeTensors refuses an empty name too: what one writes the other
  // reads (fuzz-safetensors).
  if (key.empty())
    return makeError(name, "a tensor has an empty name");
  SafeTensorInfo info;
  info.name = key.str();
  const llvm::json::Value *dtype = entry->get("dtype");
  if (!dtype)
    return makeError(name, "tensor '" + key + "': missing 'dtype'");
  if (!dtype->getAsString())
    return makeError(name, "tensor '" + key + "': 'dtype' is not a string");
  info.dtype = dtype->getAsString()->str();
  size_t dtypeSize = getSafeTensorsDTypeSize(info.dtype);
  if (dtypeSize == 0)
    return makeError(name, "tensor '" + key + "': unknown dtype '" +
                               info.dtype + "'");
  if (llvm::Error err = parseShape(name, key, entry->get("shape"), info.shape))
    return std::move(err);
  if (llvm::Error err =
          parseOffsets(name, key, entry->get("data_offsets"), info))
    return std::move(err);

  std::optional<uint64_t> needed = checkedNumBytes(info.shape, dtypeSize);
  if (!needed)
    return makeError(name, "tensor '" + key + "': the element count of shape " +
                               formatDims(info.shape) + " overflows");
  if (info.numBytes() != *needed)
    return makeError(
        name, "tensor '" + key + "': 'data_offsets' [" + Twine(info.begin) +
                  ", " + Twine(info.end) + "] span " + Twine(info.numBytes()) +
                  " bytes, but " + info.dtype + " of shape " +
                  formatDims(info.shape) + " needs " + Twine(*needed));
  if (info.end > dataSize)
    return makeError(name, "tensor '" + key + "': 'data_offsets' [" +
                               Twine(info.begin) + ", " + Twine(info.end) +
                               "] run past the end of the data region (" +
                               Twine(dataSize) + " bytes)");
  return info;
}

/// Parses `__metadata__` into `metadata`.
static llvm::Error parseMetadata(StringRef name, const llvm::json::Value &value,
                                 std::map<std::string, std::string> &metadata) {
  const llvm::json::Object *object = value.getAsObject();
  if (!object)
    return makeError(name, "'__metadata__' is not a JSON object");
  // Report the first offending key in order, not in hash order.
  std::optional<StringRef> badKey;
  for (const auto &[key, item] : *object) {
    if (std::optional<StringRef> text = item.getAsString())
      metadata.emplace(key.str(), text->str());
    else if (!badKey || StringRef(key) < *badKey)
      badKey = key;
  }
  if (badKey)
    return makeError(name, "'__metadata__' is not an object of strings: "
                           "the value of '" +
                               *badKey + "' is not a string");
  return llvm::Error::success();
}

/// Checks that no two tensors of `tensors` (sorted by begin) with bytes share
/// any; sorted, an overlap always shows between neighbours.
static llvm::Error checkOverlaps(StringRef name,
                                 ArrayRef<SafeTensorInfo> tensors) {
  const SafeTensorInfo *previous = nullptr;
  for (const SafeTensorInfo &info : tensors) {
    if (info.numBytes() == 0)
      continue;
    if (previous && info.begin < previous->end)
      return makeError(name, "tensors '" + previous->name + "' (bytes [" +
                                 Twine(previous->begin) + ", " +
                                 Twine(previous->end) + ")) and '" + info.name +
                                 "' (bytes [" + Twine(info.begin) + ", " +
                                 Twine(info.end) + ")) overlap");
    previous = &info;
  }
  return llvm::Error::success();
}

SafeTensorsFile::SafeTensorsFile(std::unique_ptr<llvm::MemoryBuffer> buffer,
                                 StringRef name)
    : buffer(std::move(buffer)), name(name.str()) {}

llvm::Expected<std::unique_ptr<SafeTensorsFile>>
SafeTensorsFile::open(StringRef path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false,
                                  /*IsVolatile=*/false);
  if (std::error_code ec = buffer.getError())
    return makeError(path, "cannot open file: " + ec.message());
  return fromBuffer(std::move(*buffer), path);
}

llvm::Expected<std::unique_ptr<SafeTensorsFile>>
SafeTensorsFile::fromBuffer(std::unique_ptr<llvm::MemoryBuffer> buffer,
                            StringRef name) {
  if (!buffer)
    return makeError(name, "no buffer");
  std::unique_ptr<SafeTensorsFile> file(
      new SafeTensorsFile(std::move(buffer), name));
  if (llvm::Error err = file->parse())
    return std::move(err);
  return std::move(file);
}

llvm::Error SafeTensorsFile::parse() {
  StringRef bytes = buffer->getBuffer();
  if (bytes.size() < 8)
    return makeError(name,
                     "truncated safetensors file: " + Twine(bytes.size()) +
                         " bytes, too short for the 8-byte header "
                         "length");
  uint64_t headerSize = llvm::support::endian::read64le(bytes.data());
  if (headerSize == 0)
    return makeError(name, "the header length is 0");
  if (headerSize > kMaxHeaderSize)
    return makeError(name, "the header length " + Twine(headerSize) +
                               " exceeds the limit of " +
                               Twine(kMaxHeaderSize) + " bytes");
  if (headerSize > bytes.size() - 8)
    return makeError(name, "truncated safetensors file: the header length is " +
                               Twine(headerSize) + " but only " +
                               Twine(bytes.size() - 8) +
                               " bytes follow the length");
  dataOffset = 8 + headerSize;
  return parseHeaderObject(bytes.substr(8, headerSize));
}

llvm::Error SafeTensorsFile::parseHeaderObject(StringRef header) {
  HeaderScan scan = scanHeader(header);
  if (scan.tooDeep)
    return makeError(name, "the header nests more than " +
                               Twine(kMaxHeaderDepth) + " levels deep");
  llvm::Expected<llvm::json::Value> json = llvm::json::parse(header);
  if (!json)
    return makeError(name, "the header is not valid JSON: " +
                               llvm::toString(json.takeError()));
  if (scan.duplicateKey)
    return makeError(name, "duplicate key '" + *scan.duplicateKey + "' in " +
                               scan.duplicateWhere);
  const llvm::json::Object *root = json->getAsObject();
  if (!root)
    return makeError(name, "the header is not a JSON object");

  // Visit the keys in order, so that the first problem reported does not
  // depend on hashing.
  std::vector<StringRef> keys;
  for (const auto &entry : *root)
    keys.push_back(entry.first);
  llvm::sort(keys);
  uint64_t dataSize = buffer->getBufferSize() - dataOffset;
  for (StringRef key : keys) {
    const llvm::json::Value &value = *root->get(key);
    if (key == kMetadataKey) {
      if (llvm::Error err = parseMetadata(name, value, metadata))
        return err;
      continue;
    }
    llvm::Expected<SafeTensorInfo> info =
        parseEntry(name, key, value, dataSize);
    if (!info)
      return info.takeError();
    tensors.push_back(std::move(*info));
  }
  // By offsets, then name: the order a stable sort of the sorted keys gives
  // (std::stable_sort's buffer trips a deprecation warning of libstdc++ 12
  // under clang).
  llvm::sort(tensors, [](const SafeTensorInfo &a, const SafeTensorInfo &b) {
    return std::tie(a.begin, a.end, a.name) < std::tie(b.begin, b.end, b.name);
  });
  for (auto [i, info] : llvm::enumerate(tensors))
    indexByName[info.name] = i;
  return checkOverlaps(name, tensors);
}

const SafeTensorInfo *SafeTensorsFile::lookup(StringRef tensorName) const {
  auto it = indexByName.find(tensorName);
  return it == indexByName.end() ? nullptr : &tensors[it->second];
}

ArrayRef<char> SafeTensorsFile::getData(const SafeTensorInfo &info) const {
  assert(info.begin <= info.end &&
         info.end <= buffer->getBufferSize() - dataOffset &&
         "tensor is not from this file");
  return ArrayRef<char>(buffer->getBufferStart() + dataOffset + info.begin,
                        info.numBytes());
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

/// Checks one entry to write; `seen` holds the names before it.
static llvm::Error checkEntry(const SafeTensorsEntry &entry,
                              llvm::StringSet<> &seen) {
  auto error = [&](const Twine &msg) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "tensor '" + entry.name + "': " + msg);
  };
  if (entry.name.empty())
    return error("empty name");
  if (!llvm::json::isUTF8(entry.name))
    return error("the name is not valid UTF-8");
  if (entry.name == kMetadataKey)
    return error("the name is reserved for the metadata");
  if (!seen.insert(entry.name).second)
    return error("duplicate name");
  size_t dtypeSize = getSafeTensorsDTypeSize(entry.dtype);
  if (dtypeSize == 0)
    return error("unknown dtype '" + entry.dtype + "'");
  for (int64_t d : entry.shape)
    if (d < 0)
      return error("negative dimension " + Twine(d) + " in shape " +
                   formatDims(entry.shape));
  std::optional<uint64_t> needed = checkedNumBytes(entry.shape, dtypeSize);
  if (!needed)
    return error("the element count of shape " + formatDims(entry.shape) +
                 " overflows");
  if (entry.data.size() != *needed)
    return error(Twine(entry.data.size()) + " bytes of data, but " +
                 entry.dtype + " of shape " + formatDims(entry.shape) +
                 " needs " + Twine(*needed));
  return llvm::Error::success();
}

static llvm::Error
checkEntries(ArrayRef<SafeTensorsEntry> entries,
             const std::map<std::string, std::string> &metadata) {
  llvm::StringSet<> seen;
  for (const SafeTensorsEntry &entry : entries)
    if (llvm::Error err = checkEntry(entry, seen))
      return err;
  for (const auto &[key, value] : metadata)
    if (!llvm::json::isUTF8(key) || !llvm::json::isUTF8(value))
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "metadata '" + key + "': not valid UTF-8");
  return llvm::Error::success();
}

/// The JSON header for `entries` placed at `offsets`, unpadded.
static std::string
buildHeader(ArrayRef<SafeTensorsEntry> entries, ArrayRef<uint64_t> offsets,
            const std::map<std::string, std::string> &metadata) {
  std::string header;
  llvm::raw_string_ostream os(header);
  llvm::json::OStream json(os);
  json.object([&] {
    if (!metadata.empty())
      json.attributeObject(kMetadataKey, [&] {
        for (const auto &[key, value] : metadata)
          json.attribute(key, value);
      });
    for (size_t i = 0, e = entries.size(); i < e; ++i) {
      const SafeTensorsEntry &entry = entries[i];
      uint64_t begin = offsets[i];
      json.attributeObject(entry.name, [&] {
        json.attribute("dtype", entry.dtype);
        json.attributeArray("shape", [&] {
          for (int64_t d : entry.shape)
            json.value(d);
        });
        json.attributeArray("data_offsets", [&] {
          json.value(begin);
          json.value(begin + entry.data.size());
        });
      });
    }
  });
  return header;
}

/// Writes entries that checkEntries() accepted.
static void serialize(llvm::raw_ostream &os, ArrayRef<SafeTensorsEntry> entries,
                      const std::map<std::string, std::string> &metadata) {
  SmallVector<uint64_t> offsets;
  uint64_t size = 0;
  for (const SafeTensorsEntry &entry : entries) {
    offsets.push_back(llvm::alignTo(size, kAlignment));
    size = offsets.back() + entry.data.size();
  }
  std::string header = buildHeader(entries, offsets, metadata);
  header.append(
      llvm::alignTo(8 + header.size(), kAlignment) - 8 - header.size(), ' ');
  char length[8];
  llvm::support::endian::write64le(length, header.size());
  os.write(length, sizeof(length));
  os << header;
  uint64_t written = 0;
  for (auto [entry, begin] : llvm::zip_equal(entries, offsets)) {
    os.write_zeros(begin - written);
    os.write(entry.data.data(), entry.data.size());
    written = begin + entry.data.size();
  }
}

llvm::Error mlir::nnx::writeSafeTensors(
    llvm::raw_ostream &os, ArrayRef<SafeTensorsEntry> entries,
    const std::map<std::string, std::string> &metadata) {
  if (llvm::Error err = checkEntries(entries, metadata))
    return err;
  serialize(os, entries, metadata);
  return llvm::Error::success();
}

llvm::Error mlir::nnx::writeSafeTensorsFile(
    StringRef path, ArrayRef<SafeTensorsEntry> entries,
    const std::map<std::string, std::string> &metadata) {
  if (llvm::Error err = checkEntries(entries, metadata))
    return makeError(path, llvm::toString(std::move(err)));
  return writeOutputFile(path, [&](llvm::raw_ostream &os) {
    serialize(os, entries, metadata);
    return llvm::Error::success();
  });
}
