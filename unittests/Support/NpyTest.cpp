//===- NpyTest.cpp - .npy read/write round trips and refusals -------------===//
#include "nnx/Support/Npy.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::nnx;

namespace {

/// An .npy file assembled by hand: magic, version, header dict, payload.
std::string makeNpy(StringRef dict, StringRef payload, uint8_t major = 1) {
  std::string out("\x93NUMPY", 6);
  out.push_back(static_cast<char>(major));
  out.push_back(0);
  std::string header = dict.str() + "\n";
  if (major == 1) {
    out.push_back(static_cast<char>(header.size() & 0xff));
    out.push_back(static_cast<char>(header.size() >> 8));
  } else {
    for (int i = 0; i < 4; ++i)
      out.push_back(static_cast<char>((header.size() >> (8 * i)) & 0xff));
  }
  return out + header + payload.str();
}

std::string errorText(llvm::Expected<NpyArray> result) {
  EXPECT_FALSE(static_cast<bool>(result));
  if (result)
    return "";
  return llvm::toString(result.takeError());
}

TEST(NpyTest, RoundTripEveryDType) {
  std::vector<float> f32 = {1.5f, -2.0f, 3.25f, 0.0f, 7.0f, -1e-3f};
  std::vector<double> f64 = {1.0 / 3.0, -2.5};
  std::vector<uint16_t> f16 = {0x3c00, 0xc000, 0x3800}; // 1, -2, 0.5
  std::vector<int32_t> i32 = {-7, 0, 2147483647};
  std::vector<int64_t> i64 = {int64_t(1) << 40, -3};
  std::vector<uint8_t> b = {1, 0, 1, 1};

  std::vector<NpyArray> arrays = {
      NpyArray::fromValues<float>(DType::F32, {2, 3}, f32),
      NpyArray::fromValues<double>(DType::F64, {2}, f64),
      NpyArray::fromValues<uint16_t>(DType::F16, {3, 1}, f16),
      NpyArray::fromValues<int32_t>(DType::I32, {3}, i32),
      NpyArray::fromValues<int64_t>(DType::I64, {1, 2}, i64),
      NpyArray::fromValues<uint8_t>(DType::Bool, {2, 2}, b),
      NpyArray(DType::F32, {0, 4}),
      NpyArray::fromValues<float>(DType::F32, {}, ArrayRef<float>{42.0f}),
  };
  for (const NpyArray &array : arrays) {
    std::string bytes = serializeNpy(array);
    // NumPy aligns the payload to 64 bytes.
    EXPECT_EQ((bytes.size() - array.numBytes()) % 64, 0u);
    llvm::Expected<NpyArray> back = parseNpy(bytes, "mem.npy");
    ASSERT_TRUE(static_cast<bool>(back)) << llvm::toString(back.takeError());
    EXPECT_EQ(back->dtype, array.dtype);
    EXPECT_EQ(back->shape, array.shape);
    EXPECT_EQ(back->data, array.data);
  }
  NpyArray half = NpyArray::fromValues<uint16_t>(DType::F16, {3}, f16);
  EXPECT_EQ(half.getAsDouble(0), 1.0);
  EXPECT_EQ(half.getAsDouble(1), -2.0);
  EXPECT_EQ(half.getAsDouble(2), 0.5);
}

// f32 -> bf16 / f16 rounds to nearest, ties to even; NaN stays NaN;
// overflow becomes infinity; widening back is exact.
TEST(NpyTest, ConvertFloatsRoundsToNearestEven) {
  float nan = std::numeric_limits<float>::quiet_NaN();
  // 1 + 2^-8 is halfway between bf16 1 and 1 + 2^-7: ties to even (1);
  // 1 + 3 * 2^-8 ties up to the even 1 + 2^-6; 1 + 2^-8 + 2^-20 rounds up.
  std::vector<float> f32 = {1.0f + 0x1p-8f,
                            1.0f + 3 * 0x1p-8f,
                            1.0f + 0x1p-8f + 0x1p-20f,
                            -2.5f,
                            nan,
                            3.4e38f,
                            1e-40f};
  NpyArray from = NpyArray::fromValues<float>(DType::F32, {7}, f32);
  NpyArray bf16 = convertFloats(from, DType::BF16);
  ASSERT_EQ(bf16.dtype, DType::BF16);
  ArrayRef<uint16_t> bits = bf16.getValues<uint16_t>();
  EXPECT_EQ(bits[0], 0x3f80);
  EXPECT_EQ(bits[1], 0x3f82);
  EXPECT_EQ(bits[2], 0x3f81);
  EXPECT_EQ(bits[3], 0xc020);
  EXPECT_EQ(bits[4] & 0x7fc0, 0x7fc0);
  EXPECT_EQ(bits[5], 0x7f80); // above the largest bf16 (3.39e38): infinity
  EXPECT_EQ(bf16.getAsDouble(3), -2.5);
  NpyArray back = convertFloats(bf16, DType::F32);
  EXPECT_EQ(back.getValues<float>()[1], 1.0f + 0x1p-6f);
  EXPECT_TRUE(std::isnan(back.getValues<float>()[4]));
  // f16: 1 + 2^-11 ties to 1; 65520 overflows to infinity.
  std::vector<double> f64 = {1.0 + 0x1p-11, 65520.0, -0.0};
  NpyArray half = convertFloats(
      NpyArray::fromValues<double>(DType::F64, {3}, f64), DType::F16);
  EXPECT_EQ(half.getValues<uint16_t>()[0], 0x3c00);
  EXPECT_EQ(half.getValues<uint16_t>()[1], 0x7c00);
  EXPECT_EQ(half.getValues<uint16_t>()[2], 0x8000);
  EXPECT_EQ(getDTypeName(DType::BF16), "bfloat16");
  EXPECT_EQ(getDTypeSize(DType::BF16), 2u);
}

TEST(NpyTest, RoundTripThroughFile) {
  llvm::SmallString<128> path;
  ASSERT_FALSE(llvm::sys::fs::createTemporaryFile("npytest", "npy", path));
  std::vector<float> values = {1, 2, 3, 4, 5, 6};
  NpyArray array = NpyArray::fromValues<float>(DType::F32, {3, 2}, values);
  ASSERT_FALSE(static_cast<bool>(writeNpy(path, array)));
  llvm::Expected<NpyArray> back = readNpy(path);
  ASSERT_TRUE(static_cast<bool>(back)) << llvm::toString(back.takeError());
  EXPECT_EQ(back->describe(), "float32 array of shape (3, 2)");
  EXPECT_EQ(back->getValues<float>()[5], 6.0f);
  llvm::sys::fs::remove(path);
}

TEST(NpyTest, ReadsHeaderVariants) {
  float value = 2.5f;
  StringRef payload(reinterpret_cast<const char *>(&value), 4);
  // Version 2.0, keys in another order, double quotes, no trailing comma.
  llvm::Expected<NpyArray> v2 = parseNpy(
      makeNpy("{\"shape\": (1,), \"fortran_order\": False, \"descr\": \"<f4\"}",
              payload, 2),
      "v2.npy");
  ASSERT_TRUE(static_cast<bool>(v2)) << llvm::toString(v2.takeError());
  EXPECT_EQ(v2->shape, SmallVector<int64_t>({1}));
  EXPECT_EQ(v2->getValues<float>()[0], 2.5f);
  // A scalar.
  llvm::Expected<NpyArray> scalar = parseNpy(
      makeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (), }",
              payload),
      "s.npy");
  ASSERT_TRUE(static_cast<bool>(scalar)) << llvm::toString(scalar.takeError());
  EXPECT_EQ(scalar->rank(), 0);
  EXPECT_EQ(scalar->numElements(), 1);
}

TEST(NpyTest, RefusesBadMagic) {
  EXPECT_EQ(errorText(parseNpy("PK\x03\x04 not numpy", "x.npy")),
            "x.npy: not an .npy file (bad magic string)");
}

TEST(NpyTest, RefusesUnknownVersion) {
  EXPECT_EQ(errorText(parseNpy(makeNpy("{}", "", 4), "x.npy")),
            "x.npy: unsupported .npy format version 4.0 (supported: 1.0, "
            "2.0, 3.0)");
}

TEST(NpyTest, RefusesTruncatedHeader) {
  std::string bytes =
      makeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", "");
  EXPECT_NE(errorText(parseNpy(StringRef(bytes).take_front(20), "x.npy"))
                .find("x.npy: truncated .npy header"),
            std::string::npos);
  EXPECT_EQ(errorText(parseNpy(StringRef(bytes).take_front(9), "x.npy")),
            "x.npy: truncated .npy header");
}

TEST(NpyTest, RefusesMalformedHeader) {
  EXPECT_EQ(errorText(parseNpy(makeNpy("{'descr': '<f4', 'shape': (2,), }", ""),
                               "x.npy")),
            "x.npy: malformed .npy header: missing key 'fortran_order'");
  EXPECT_EQ(errorText(parseNpy(
                makeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, "
                        "-1), }",
                        ""),
                "x.npy")),
            "x.npy: malformed .npy header: expected a non-negative integer in "
            "'shape'");
}

TEST(NpyTest, RefusesFortranOrder) {
  EXPECT_EQ(
      errorText(parseNpy(
          makeNpy("{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }",
                  StringRef("\0\0\0\0", 4)),
          "x.npy")),
      "x.npy: Fortran-order arrays are not supported; save it in C order "
      "(np.ascontiguousarray)");
}

TEST(NpyTest, RefusesBigEndian) {
  EXPECT_EQ(
      errorText(parseNpy(
          makeNpy("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }",
                  StringRef("\0\0\0\0", 4)),
          "x.npy")),
      "x.npy: big-endian data ('>f4') is not supported; save it as '<f4'");
}

TEST(NpyTest, RefusesUnsupportedDType) {
  EXPECT_EQ(
      errorText(parseNpy(
          makeNpy("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }",
                  StringRef("\0\0\0\0\0\0\0\0", 8)),
          "x.npy")),
      "x.npy: unsupported dtype '<c8' (supported: float16, float32, float64, "
      "int32, int64, bool)");
}

TEST(NpyTest, RefusesTruncatedData) {
  EXPECT_EQ(
      errorText(parseNpy(
          makeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), "
                  "}",
                  std::string(40, '\0')),
          "x.npy")),
      "x.npy: truncated data: a float32 array of shape (3, 4) needs 48 "
      "bytes, the file holds 40");
}

TEST(NpyTest, RefusesTrailingData) {
  EXPECT_EQ(
      errorText(parseNpy(
          makeNpy("{'descr': '<i8', 'fortran_order': False, 'shape': (1,), }",
                  std::string(12, '\0')),
          "x.npy")),
      "x.npy: 4 bytes of unexpected data after the int64 array of shape (1,)");
}

TEST(NpyTest, RefusesMissingFile) {
  std::string text = errorText(readNpy("/nonexistent/dir/x.npy"));
  EXPECT_EQ(text.rfind("/nonexistent/dir/x.npy: cannot open file: ", 0), 0u)
      << text;
}

TEST(NpyTest, PrintsReadably) {
  std::vector<float> values = {1, 2.5f, -3, 4, 5, 6};
  std::string text;
  llvm::raw_string_ostream os(text);
  printNpyArray(os, NpyArray::fromValues<float>(DType::F32, {2, 3}, values));
  EXPECT_EQ(text, "[[1, 2.5, -3],\n [4, 5, 6]]\n");

  text.clear();
  std::vector<uint8_t> flags = {1, 0};
  printNpyArray(os, NpyArray::fromValues<uint8_t>(DType::Bool, {2}, flags));
  EXPECT_EQ(text, "[True, False]\n");
}

// An empty array prints as NumPy prints it, at once whatever its other
// dimensions (fuzz-npy, issue 46: a (6, 1, 4, 4, 6, 1, 446, 1, 4, 4, 6, 1, 4,
// 4, 0, 4) array printed its 395 million empty rows, over 25 s).
TEST(NpyTest, PrintsAnEmptyArrayAtOnce) {
  std::string text;
  llvm::raw_string_ostream os(text);
  printNpyArray(os, NpyArray(DType::F32, {2, 0, 3}));
  EXPECT_EQ(text, "[]\n");
  text.clear();
  printNpyArray(os, NpyArray(DType::F32, {1 << 20, 1 << 20, 1 << 20, 0}));
  EXPECT_EQ(text, "[]\n");
}

TEST(NpyTest, MapsMLIRElementTypes) {
  MLIRContext context;
  Builder b(&context);
  EXPECT_EQ(getDTypeForElementType(b.getF32Type()), DType::F32);
  EXPECT_EQ(getDTypeForElementType(b.getI1Type()), DType::Bool);
  EXPECT_EQ(getDTypeForElementType(b.getBF16Type()), DType::BF16);
  EXPECT_EQ(getDTypeForElementType(b.getF8E8M0Type()), std::nullopt);
  EXPECT_EQ(getElementType(DType::I64, &context), b.getI64Type());
  EXPECT_EQ(formatShape({4}), "(4,)");
  EXPECT_EQ(formatShape({}), "()");
}

} // namespace
