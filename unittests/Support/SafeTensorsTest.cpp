//===- SafeTensorsTest.cpp - safetensors round trips and refusals ---------===//
#include "nnx/Support/SafeTensors.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"

#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <cstring>

using namespace mlir;
using namespace mlir::nnx;

namespace {

using FileOrError = llvm::Expected<std::unique_ptr<SafeTensorsFile>>;

/// A safetensors file assembled by hand: the 8-byte length `length`, then
/// `rest` (the header and the data).
std::string withLength(uint64_t length, StringRef rest) {
  std::string out(8, '\0');
  llvm::support::endian::write64le(out.data(), length);
  return out + rest.str();
}

/// A safetensors file assembled by hand: `header` padded with spaces to
/// `padTo` bytes, then `data`.
std::string makeSafeTensors(StringRef header, StringRef data = "",
                            size_t padTo = 1) {
  std::string padded = header.str();
  padded.append((padTo - padded.size() % padTo) % padTo, ' ');
  return withLength(padded.size(), padded + data.str());
}

FileOrError parse(StringRef bytes) {
  return SafeTensorsFile::fromBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(bytes, "x.safetensors"),
      "x.safetensors");
}

std::string errorText(FileOrError result) {
  EXPECT_FALSE(static_cast<bool>(result));
  if (result)
    return "";
  return llvm::toString(result.takeError());
}

std::string parseError(StringRef bytes) { return errorText(parse(bytes)); }

/// The error of a file whose data region is `dataSize` zero bytes.
std::string headerError(StringRef header, size_t dataSize = 0) {
  return parseError(makeSafeTensors(header, std::string(dataSize, '\0')));
}

template <typename T> ArrayRef<char> bytesOf(const std::vector<T> &values) {
  return ArrayRef<char>(reinterpret_cast<const char *>(values.data()),
                        values.size() * sizeof(T));
}

std::string str(ArrayRef<char> bytes) {
  return std::string(bytes.begin(), bytes.end());
}

/// A fresh directory for one test, removed with its files at the end.
class TempDir {
public:
  TempDir() {
    EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory("safetensors", path));
  }
  ~TempDir() { llvm::sys::fs::remove_directories(path); }
  std::string file(StringRef name) const {
    llvm::SmallString<128> result(path);
    llvm::sys::path::append(result, name);
    return std::string(result);
  }
  /// The names of the files in the directory, sorted.
  std::vector<std::string> list() const {
    std::vector<std::string> names;
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator it(path, ec), end; !ec && it != end;
         it.increment(ec))
      names.push_back(llvm::sys::path::filename(it->path()).str());
    llvm::sort(names);
    return names;
  }
  llvm::SmallString<128> path;
};

TEST(SafeTensorsTest, RoundTripThroughFile) {
  std::vector<float> f32 = {1.5f, -2.0f, 3.25f, 0.0f, 7.0f, -1e-3f};
  std::vector<uint16_t> f16 = {0x3c00, 0xc000, 0x3800};
  std::vector<uint16_t> bf16 = {0x3f80, 0xc000, 0x4040, 0x0000};
  std::vector<int64_t> i64 = {int64_t(1) << 40, -3};
  std::vector<uint8_t> mask = {1, 0, 1, 1, 0};
  std::vector<float> scalar = {42.0f};
  std::vector<SafeTensorsEntry> entries = {
      {"weight", "F32", {2, 3}, bytesOf(f32)},
      {"half", "F16", {3}, bytesOf(f16)},
      {"brain", "BF16", {2, 2}, bytesOf(bf16)},
      {"steps", "I64", {2}, bytesOf(i64)},
      {"mask", "BOOL", {5}, bytesOf(mask)},
      {"empty", "F32", {0, 4}, {}},
      {"scalar", "F32", {}, bytesOf(scalar)},
  };
  std::map<std::string, std::string> metadata = {{"format", "pt"},
                                                 {"note", "round \"trip\""}};
  TempDir dir;
  std::string path = dir.file("model.safetensors");
  llvm::Error err = writeSafeTensorsFile(path, entries, metadata);
  ASSERT_FALSE(static_cast<bool>(err)) << llvm::toString(std::move(err));
  // The temporary file was renamed, not left behind.
  EXPECT_EQ(dir.list(), std::vector<std::string>{"model.safetensors"});

  FileOrError file = SafeTensorsFile::open(path);
  ASSERT_TRUE(static_cast<bool>(file)) << llvm::toString(file.takeError());
  const SafeTensorsFile &st = **file;
  EXPECT_EQ(st.getName(), path);
  EXPECT_EQ(st.getMetadata(), metadata);
  EXPECT_EQ(st.getDataOffset() % 64, 0u);
  ASSERT_EQ(st.getTensors().size(), entries.size());
  for (auto [entry, info] : llvm::zip_equal(entries, st.getTensors())) {
    // Written in the order given, so sorted by begin in that order too.
    EXPECT_EQ(info.name, entry.name);
    const SafeTensorInfo *found = st.lookup(entry.name);
    ASSERT_EQ(found, &info) << entry.name;
    EXPECT_EQ(info.dtype, entry.dtype);
    EXPECT_EQ(info.shape, entry.shape);
    EXPECT_EQ(str(st.getData(info)), str(entry.data)) << entry.name;
    EXPECT_EQ(info.begin % 64, 0u) << entry.name;
    EXPECT_EQ((st.getData(info).data() - st.getBuffer().data()) % 64, 0)
        << entry.name;
  }
  EXPECT_EQ(st.lookup("scalar")->numElements(), 1);
  EXPECT_EQ(st.lookup("empty")->numElements(), 0);
  EXPECT_EQ(st.lookup("weight")->numBytes(), 24u);
  EXPECT_EQ(st.lookup("missing"), nullptr);
  // The file ends with the last tensor.
  EXPECT_EQ(st.getBuffer().size(),
            st.getDataOffset() + st.getTensors().back().end);
}

TEST(SafeTensorsTest, WritesTheExpectedBytes) {
  std::vector<float> value = {2.5f};
  std::vector<uint16_t> pair = {1, 2};
  std::string bytes;
  llvm::raw_string_ostream os(bytes);
  ASSERT_FALSE(static_cast<bool>(writeSafeTensors(
      os, {{"w", "F32", {1}, bytesOf(value)}, {"a", "I16", {2}, bytesOf(pair)}},
      {{"k", "v"}})));
  ASSERT_GE(bytes.size(), 8u);
  uint64_t headerSize = llvm::support::endian::read64le(bytes.data());
  EXPECT_EQ((8 + headerSize) % 64, 0u);
  StringRef header = StringRef(bytes).substr(8, headerSize);
  EXPECT_EQ(header.rtrim(' '),
            R"({"__metadata__":{"k":"v"},)"
            R"("w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
            R"("a":{"dtype":"I16","shape":[2],"data_offsets":[64,68]}})");
  // 4 bytes of "w", zeros up to 64, then the 4 bytes of "a".
  StringRef data = StringRef(bytes).drop_front(8 + headerSize);
  ASSERT_EQ(data.size(), 68u);
  EXPECT_EQ(data.take_front(4), StringRef(bytesOf(value).data(), 4));
  EXPECT_EQ(data.slice(4, 64), std::string(60, '\0'));
  EXPECT_EQ(data.drop_front(64), StringRef(bytesOf(pair).data(), 4));
}

/// The layout the reference library (and so PyTorch's save_file) writes: the
/// header padded with spaces to a multiple of 8, metadata first, tensors
/// packed without alignment, largest alignment first.
TEST(SafeTensorsTest, ReadsReferenceLayout) {
  std::vector<int64_t> step = {7};
  std::vector<float> bias = {0.5f, -0.5f};
  std::vector<float> weight = {1, 2, 3, 4};
  std::vector<uint16_t> half = {0x3c00, 0x4000, 0x4200};
  std::string data = str(bytesOf(step)) + str(bytesOf(bias)) +
                     str(bytesOf(weight)) + str(bytesOf(half));
  std::string header =
      R"({"__metadata__":{"format":"pt"},)"
      R"("step":{"dtype":"I64","shape":[],"data_offsets":[0,8]},)"
      R"("bias":{"dtype":"F32","shape":[2],"data_offsets":[8,16]},)"
      R"("weight":{"dtype":"F32","shape":[2,2],"data_offsets":[16,32]},)"
      R"("halves":{"dtype":"F16","shape":[3],"data_offsets":[32,38]}})";
  std::string bytes = makeSafeTensors(header, data, /*padTo=*/8);
  ASSERT_NE(header.size() % 8, 0u) << "the test should exercise padding";

  FileOrError file = parse(bytes);
  ASSERT_TRUE(static_cast<bool>(file)) << llvm::toString(file.takeError());
  const SafeTensorsFile &st = **file;
  EXPECT_EQ(st.getName(), "x.safetensors");
  EXPECT_EQ(st.getMetadata().at("format"), "pt");
  EXPECT_EQ(st.getDataOffset() % 8, 0u);
  std::vector<std::string> names;
  for (const SafeTensorInfo &info : st.getTensors())
    names.push_back(info.name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"step", "bias", "weight", "halves"}));
  const SafeTensorInfo *w = st.lookup("weight");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->shape, (SmallVector<int64_t, 4>{2, 2}));
  float values[4];
  ASSERT_EQ(st.getData(*w).size(), sizeof(values));
  std::memcpy(values, st.getData(*w).data(), sizeof(values));
  EXPECT_EQ(values[3], 4.0f);
  EXPECT_EQ(str(st.getData(*st.lookup("halves"))), str(bytesOf(half)));
  EXPECT_EQ(st.lookup("step")->shape.size(), 0u);
  EXPECT_EQ(str(st.getData(*st.lookup("step"))), str(bytesOf(step)));
}

TEST(SafeTensorsTest, AcceptsGapsEmptyTensorsAndWhitespace) {
  // A gap before "b", a zero-size tensor inside "a", whitespace around.
  FileOrError file = parse(makeSafeTensors(
      "\n { \"a\" : {\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4]},\n"
      "  \"z\": {\"dtype\":\"F64\",\"shape\":[3,0],\"data_offsets\":[2,2],"
      "\"extra\":{\"ignored\":[1]}},\n"
      "  \"b\": {\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[10,12]}}\t",
      std::string(16, 'x')));
  ASSERT_TRUE(static_cast<bool>(file)) << llvm::toString(file.takeError());
  ASSERT_EQ((*file)->getTensors().size(), 3u);
  EXPECT_EQ((*file)->getTensors()[1].name, "z");
  EXPECT_EQ((*file)->lookup("b")->begin, 10u);
  EXPECT_TRUE((*file)->getMetadata().empty());
}

//===----------------------------------------------------------------------===//
// Refusals of the file layout
//===----------------------------------------------------------------------===//

TEST(SafeTensorsTest, RefusesMissingFile) {
  std::string text =
      errorText(SafeTensorsFile::open("/nonexistent/dir/model.safetensors"));
  EXPECT_EQ(
      text.rfind("/nonexistent/dir/model.safetensors: cannot open file: ", 0),
      0u)
      << text;
}

TEST(SafeTensorsTest, RefusesTruncatedFiles) {
  EXPECT_EQ(parseError("abc"),
            "x.safetensors: truncated safetensors file: 3 bytes, too short "
            "for the 8-byte header length");
  EXPECT_EQ(parseError(withLength(200, "{\"a\": 1}")),
            "x.safetensors: truncated safetensors file: the header length is "
            "200 but only 8 bytes follow the length");

  TempDir dir;
  std::string path = dir.file("short.safetensors");
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    ASSERT_FALSE(ec);
    os.write("\x05\0\0", 3);
  }
  std::string text = errorText(SafeTensorsFile::open(path));
  EXPECT_EQ(text.rfind(path + ": truncated safetensors file", 0), 0u) << text;
}

TEST(SafeTensorsTest, RefusesBadHeaderLength) {
  EXPECT_EQ(parseError(withLength(0, "{}")),
            "x.safetensors: the header length is 0");
  EXPECT_EQ(parseError(withLength(uint64_t(1) << 40, "{}")),
            "x.safetensors: the header length 1099511627776 exceeds the limit "
            "of 100000000 bytes");
  EXPECT_EQ(parseError(withLength(~uint64_t(0), "{}")),
            "x.safetensors: the header length 18446744073709551615 exceeds "
            "the limit of 100000000 bytes");
}

TEST(SafeTensorsTest, RefusesHeaderThatIsNotAJsonObject) {
  std::string text = headerError("{\"w\": ");
  EXPECT_EQ(text.rfind("x.safetensors: the header is not valid JSON: ", 0), 0u)
      << text;
  text = headerError("{\"w\": \"\xff\xfe\"}");
  EXPECT_EQ(text.rfind("x.safetensors: the header is not valid JSON: ", 0), 0u)
      << text;
  EXPECT_EQ(headerError("[1, 2]"),
            "x.safetensors: the header is not a JSON object");
  EXPECT_EQ(headerError("\"text\""),
            "x.safetensors: the header is not a JSON object");
}

TEST(SafeTensorsTest, RefusesDeepNesting) {
  // llvm::json::parse recurses per level: this must not reach it.
  std::string deep(100000, '[');
  EXPECT_EQ(headerError(deep),
            "x.safetensors: the header nests more than 64 levels deep");
  // Brackets inside strings do not count.
  FileOrError file =
      parse(makeSafeTensors("{\"__metadata__\":{\"k\":\"" + deep + "\"}}"));
  ASSERT_TRUE(static_cast<bool>(file)) << llvm::toString(file.takeError());
  EXPECT_EQ((*file)->getMetadata().at("k"), deep);
}

TEST(SafeTensorsTest, RefusesDuplicateKeys) {
  StringRef entry = R"({"dtype":"U8","shape":[1],"data_offsets":[0,1]})";
  EXPECT_EQ(headerError(("{\"w\":" + entry + ",\"w\":" + entry + "}").str(), 1),
            "x.safetensors: duplicate key 'w' in the header");
  // The same key spelled with an escape.
  EXPECT_EQ(
      headerError(("{\"w\":" + entry + ",\"\\u0077\":" + entry + "}").str(), 1),
      "x.safetensors: duplicate key 'w' in the header");
  EXPECT_EQ(headerError(R"({"w":{"dtype":"U8","dtype":"I8","shape":[1],)"
                        R"("data_offsets":[0,1]}})",
                        1),
            "x.safetensors: duplicate key 'dtype' in the entry of 'w'");
  EXPECT_EQ(headerError(R"({"__metadata__":{"a":"1","a":"2"}})"),
            "x.safetensors: duplicate key 'a' in the entry of '__metadata__'");
  EXPECT_EQ(headerError(R"({"w":{"dtype":"U8","shape":[1],"data_offsets":)"
                        R"([0,1],"extra":[{"x":1,"x":2}]}})",
                        1),
            "x.safetensors: duplicate key 'x' in an object nested in the "
            "header");
  // The same key in two objects, or a value equal to a key, is fine.
  FileOrError file = parse(makeSafeTensors(
      R"({"__metadata__":{"w":"w"},"w":{"dtype":"U8","shape":[1],)"
      R"("data_offsets":[0,1]},"v":{"dtype":"U8","shape":[1],)"
      R"("data_offsets":[1,2]}})",
      "ab"));
  ASSERT_TRUE(static_cast<bool>(file)) << llvm::toString(file.takeError());
}

//===----------------------------------------------------------------------===//
// Refusals of a tensor entry
//===----------------------------------------------------------------------===//

TEST(SafeTensorsTest, RefusesMalformedEntries) {
  EXPECT_EQ(headerError(R"({"w": 3})"),
            "x.safetensors: tensor 'w': entry is not a JSON object");
  EXPECT_EQ(headerError(R"({"w": {"shape":[1],"data_offsets":[0,4]}})", 4),
            "x.safetensors: tensor 'w': missing 'dtype'");
  EXPECT_EQ(headerError(R"({"w": {"dtype":4,"shape":[1],)"
                        R"("data_offsets":[0,4]}})",
                        4),
            "x.safetensors: tensor 'w': 'dtype' is not a string");
  EXPECT_EQ(headerError(R"({"w": {"dtype":"F32","data_offsets":[0,4]}})", 4),
            "x.safetensors: tensor 'w': missing 'shape'");
  EXPECT_EQ(headerError(R"({"w": {"dtype":"F32","shape":"1",)"
                        R"("data_offsets":[0,4]}})",
                        4),
            "x.safetensors: tensor 'w': 'shape' is not an array");
  for (StringRef shape : {"[1, \"2\"]", "[1.5]", "[9223372036854775808]"})
    EXPECT_EQ(headerError((R"({"w": {"dtype":"F32","shape":)" + shape +
                           R"(,"data_offsets":[0,4]}})")
                              .str(),
                          4),
              "x.safetensors: tensor 'w': 'shape' is not an array of integers "
              "(each at most 2^63-1)")
        << shape.str();
  EXPECT_EQ(headerError(R"({"w": {"dtype":"F32","shape":[1]}})", 4),
            "x.safetensors: tensor 'w': missing 'data_offsets'");
  for (StringRef offsets : {"[0]", "[0, 4, 8]", "[-1, 4]", "[0, 4.5]",
                            "{\"begin\": 0}", "[0, 18446744073709551616]"})
    EXPECT_EQ(headerError((R"({"w": {"dtype":"F32","shape":[1],)"
                           R"("data_offsets":)" +
                           offsets + "}}")
                              .str(),
                          4),
              "x.safetensors: tensor 'w': 'data_offsets' is not an array of "
              "two non-negative integers")
        << offsets.str();
  EXPECT_EQ(headerError(R"({"w": {"dtype":"F32","shape":[0],)"
                        R"("data_offsets":[8,4]}})",
                        8),
            "x.safetensors: tensor 'w': 'data_offsets' [8, 4] begins after "
            "it ends");
}

TEST(SafeTensorsTest, RefusesUnknownDTypeAndBadShapes) {
  EXPECT_EQ(headerError(R"({"w": {"dtype":"F33","shape":[1],)"
                        R"("data_offsets":[0,4]}})",
                        4),
            "x.safetensors: tensor 'w': unknown dtype 'F33'");
  EXPECT_EQ(headerError(R"({"w": {"dtype":"F32","shape":[2,-3],)"
                        R"("data_offsets":[0,4]}})",
                        4),
            "x.safetensors: tensor 'w': negative dimension -3 in 'shape'");
  EXPECT_EQ(headerError(R"({"w": {"dtype":"F32","shape":)"
                        R"([4294967296,4294967296,4],"data_offsets":[0,4]}})",
                        4),
            "x.safetensors: tensor 'w': the element count of shape "
            "[4294967296, 4294967296, 4] overflows");
  // The element count fits, the byte count does not.
  EXPECT_EQ(headerError(R"({"w": {"dtype":"F64","shape":)"
                        R"([2305843009213693952],"data_offsets":[0,8]}})",
                        8),
            "x.safetensors: tensor 'w': the element count of shape "
            "[2305843009213693952] overflows");
}

TEST(SafeTensorsTest, RefusesWrongByteCount) {
  EXPECT_EQ(headerError(R"({"w": {"dtype":"F32","shape":[2,3],)"
                        R"("data_offsets":[0,20]}})",
                        24),
            "x.safetensors: tensor 'w': 'data_offsets' [0, 20] span 20 bytes, "
            "but F32 of shape [2, 3] needs 24");
}

TEST(SafeTensorsTest, RefusesRangePastTheEnd) {
  EXPECT_EQ(headerError(R"({"w": {"dtype":"BF16","shape":[2],)"
                        R"("data_offsets":[2,6]}})",
                        5),
            "x.safetensors: tensor 'w': 'data_offsets' [2, 6] run past the "
            "end of the data region (5 bytes)");
  // Offsets near 2^64 do not wrap around.
  EXPECT_EQ(headerError(R"({"w": {"dtype":"U8","shape":[0],"data_offsets":)"
                        R"([18446744073709551615,18446744073709551615]}})",
                        5),
            "x.safetensors: tensor 'w': 'data_offsets' [18446744073709551615, "
            "18446744073709551615] run past the end of the data region (5 "
            "bytes)");
}

TEST(SafeTensorsTest, RefusesOverlaps) {
  EXPECT_EQ(headerError(R"({"a": {"dtype":"F32","shape":[2],)"
                        R"("data_offsets":[0,8]},)"
                        R"("b": {"dtype":"F32","shape":[2],)"
                        R"("data_offsets":[4,12]}})",
                        12),
            "x.safetensors: tensors 'a' (bytes [0, 8)) and 'b' (bytes [4, "
            "12)) overlap");
  // One tensor inside another, with an unrelated one between them by begin.
  EXPECT_EQ(headerError(R"({"big": {"dtype":"U8","shape":[16],)"
                        R"("data_offsets":[0,16]},)"
                        R"("e": {"dtype":"U8","shape":[0],)"
                        R"("data_offsets":[1,1]},)"
                        R"("in": {"dtype":"U8","shape":[2],)"
                        R"("data_offsets":[10,12]}})",
                        16),
            "x.safetensors: tensors 'big' (bytes [0, 16)) and 'in' (bytes "
            "[10, 12)) overlap");
}

TEST(SafeTensorsTest, RefusesBadMetadata) {
  EXPECT_EQ(headerError(R"({"__metadata__": ["a"]})"),
            "x.safetensors: '__metadata__' is not a JSON object");
  EXPECT_EQ(headerError(R"({"__metadata__": {"a": "1", "c": 2, "b": null}})"),
            "x.safetensors: '__metadata__' is not an object of strings: the "
            "value of 'b' is not a string");
}

/// Every truncation and many single-byte corruptions of a valid file either
/// parse or fail with a message that names the file; none crashes.
TEST(SafeTensorsTest, SurvivesCorruptedFiles) {
  std::vector<float> values = {1, 2, 3, 4, 5, 6};
  std::string bytes;
  llvm::raw_string_ostream os(bytes);
  ASSERT_FALSE(static_cast<bool>(
      writeSafeTensors(os,
                       {{"a", "F32", {2, 3}, bytesOf(values)},
                        {"b", "F32", {2}, bytesOf(values).take_front(8)}},
                       {{"k", "v"}})));
  auto check = [](StringRef corrupt) {
    FileOrError file = parse(corrupt);
    if (!file) {
      std::string text = llvm::toString(file.takeError());
      EXPECT_EQ(text.rfind("x.safetensors: ", 0), 0u) << text;
    }
  };
  for (size_t n = 0; n <= bytes.size(); ++n)
    check(StringRef(bytes).take_front(n));
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (char c : {'\0', '"', '{', '[', ']', '-', '9', '\xff'}) {
      std::string corrupt = bytes;
      corrupt[i] = c;
      check(corrupt);
    }
  }
}

//===----------------------------------------------------------------------===//
// Writer refusals
//===----------------------------------------------------------------------===//

std::string
writeError(ArrayRef<SafeTensorsEntry> entries,
           const std::map<std::string, std::string> &metadata = {}) {
  std::string bytes;
  llvm::raw_string_ostream os(bytes);
  llvm::Error err = writeSafeTensors(os, entries, metadata);
  EXPECT_TRUE(static_cast<bool>(err));
  EXPECT_EQ(bytes, "") << "nothing is written on error";
  return err ? llvm::toString(std::move(err)) : "";
}

TEST(SafeTensorsTest, WriterRefusesBadEntries) {
  std::vector<float> values = {1, 2, 3, 4};
  ArrayRef<char> data = bytesOf(values);
  EXPECT_EQ(writeError({{"w", "F32", {3}, data}}),
            "tensor 'w': 16 bytes of data, but F32 of shape [3] needs 12");
  EXPECT_EQ(writeError({{"w", "F32", {4}, data}, {"w", "I32", {4}, data}}),
            "tensor 'w': duplicate name");
  EXPECT_EQ(writeError({{"w", "F33", {4}, data}}),
            "tensor 'w': unknown dtype 'F33'");
  EXPECT_EQ(writeError({{"w", "F32", {-1, 4}, data}}),
            "tensor 'w': negative dimension -1 in shape [-1, 4]");
  EXPECT_EQ(writeError({{"", "F32", {4}, data}}), "tensor '': empty name");
  EXPECT_EQ(writeError({{"__metadata__", "F32", {4}, data}}),
            "tensor '__metadata__': the name is reserved for the metadata");
  EXPECT_EQ(writeError({{"w\xff", "F32", {4}, data}}),
            "tensor 'w\xff': the name is not valid UTF-8");
  EXPECT_EQ(writeError({{"w", "F32", {4}, data}}, {{"k", "\xc3"}}),
            "metadata 'k': not valid UTF-8");
}

TEST(SafeTensorsTest, FileWriterNamesThePath) {
  std::vector<float> values = {1, 2};
  TempDir dir;
  std::string path = dir.file("out.safetensors");
  llvm::Error err =
      writeSafeTensorsFile(path, {{"w", "F16", {2}, bytesOf(values)}});
  ASSERT_TRUE(static_cast<bool>(err));
  EXPECT_EQ(llvm::toString(std::move(err)),
            path +
                ": tensor 'w': 8 bytes of data, but F16 of shape [2] needs 4");
  EXPECT_EQ(dir.list(), std::vector<std::string>{});

  std::string missing = dir.file("no/such/dir/out.safetensors");
  err = writeSafeTensorsFile(missing, {{"w", "F32", {2}, bytesOf(values)}});
  ASSERT_TRUE(static_cast<bool>(err));
  std::string text = llvm::toString(std::move(err));
  EXPECT_EQ(text.rfind(missing + ": cannot create a temporary file", 0), 0u)
      << text;

  // Overwriting an existing file replaces it whole.
  ASSERT_FALSE(static_cast<bool>(writeSafeTensorsFile(
      path, {{"w", "F32", {2}, bytesOf(values)}}, {{"a", "b"}})));
  ASSERT_FALSE(static_cast<bool>(writeSafeTensorsFile(
      path, {{"v", "F32", {1}, bytesOf(values).take_front(4)}})));
  FileOrError file = SafeTensorsFile::open(path);
  ASSERT_TRUE(static_cast<bool>(file)) << llvm::toString(file.takeError());
  EXPECT_EQ((*file)->getTensors().size(), 1u);
  EXPECT_NE((*file)->lookup("v"), nullptr);
  EXPECT_TRUE((*file)->getMetadata().empty());
}

TEST(SafeTensorsTest, MapsDTypes) {
  EXPECT_EQ(getSafeTensorsDTypeSize("F64"), 8u);
  EXPECT_EQ(getSafeTensorsDTypeSize("BF16"), 2u);
  EXPECT_EQ(getSafeTensorsDTypeSize("BOOL"), 1u);
  EXPECT_EQ(getSafeTensorsDTypeSize("U32"), 4u);
  EXPECT_EQ(getSafeTensorsDTypeSize("F8_E5M2"), 1u);
  EXPECT_EQ(getSafeTensorsDTypeSize("f32"), 0u);
  EXPECT_EQ(getSafeTensorsDTypeSize(""), 0u);

  MLIRContext context;
  Builder b(&context);
  EXPECT_EQ(getSafeTensorsDTypeName(b.getF32Type()), "F32");
  EXPECT_EQ(getSafeTensorsDTypeName(b.getBF16Type()), "BF16");
  EXPECT_EQ(getSafeTensorsDTypeName(b.getF16Type()), "F16");
  EXPECT_EQ(getSafeTensorsDTypeName(b.getF64Type()), "F64");
  EXPECT_EQ(getSafeTensorsDTypeName(b.getI1Type()), "BOOL");
  EXPECT_EQ(getSafeTensorsDTypeName(b.getI64Type()), "I64");
  EXPECT_EQ(getSafeTensorsDTypeName(b.getIntegerType(64, /*isSigned=*/true)),
            "I64");
  EXPECT_EQ(getSafeTensorsDTypeName(b.getIntegerType(8, /*isSigned=*/false)),
            "U8");
  EXPECT_EQ(getSafeTensorsDTypeName(b.getI8Type()), "I8");
  EXPECT_EQ(getSafeTensorsDTypeName(b.getIntegerType(3)), "");
  EXPECT_EQ(getSafeTensorsDTypeName(b.getIndexType()), "");
  EXPECT_EQ(getSafeTensorsDTypeName(Float8E4M3FNType::get(&context)),
            "F8_E4M3");
}

} // namespace
