//===- Npy.cpp - NumPy .npy arrays: read, write, describe -----------------===//
#include "nnx/Support/Npy.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SwapByteOrder.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::nnx;

static constexpr llvm::StringLiteral kMagic("\x93NUMPY");

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

StringRef mlir::nnx::getDTypeName(DType dtype) {
  switch (dtype) {
  case DType::F16:
    return "float16";
  case DType::BF16:
    return "bfloat16";
  case DType::F32:
    return "float32";
  case DType::F64:
    return "float64";
  case DType::I32:
    return "int32";
  case DType::I64:
    return "int64";
  case DType::Bool:
    return "bool";
  }
  llvm_unreachable("unknown dtype");
}

StringRef mlir::nnx::getDTypeDescr(DType dtype) {
  switch (dtype) {
  case DType::F16:
    return "<f2";
  case DType::BF16: // No NumPy dtype: its bits, as ml_dtypes-less code uses.
    return "<u2";
  case DType::F32:
    return "<f4";
  case DType::F64:
    return "<f8";
  case DType::I32:
    return "<i4";
  case DType::I64:
    return "<i8";
  case DType::Bool:
    return "|b1";
  }
  llvm_unreachable("unknown dtype");
}

size_t mlir::nnx::getDTypeSize(DType dtype) {
  switch (dtype) {
  case DType::F16:
  case DType::BF16:
    return 2;
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::F64:
  case DType::I64:
    return 8;
  case DType::Bool:
    return 1;
  }
  llvm_unreachable("unknown dtype");
}

std::optional<DType> mlir::nnx::getDTypeForElementType(Type type) {
  if (type.isF16())
    return DType::F16;
  if (type.isBF16())
    return DType::BF16;
  if (type.isF32())
    return DType::F32;
  if (type.isF64())
    return DType::F64;
  if (auto intType = dyn_cast<IntegerType>(type)) {
    if (intType.isUnsigned())
      return std::nullopt;
    switch (intType.getWidth()) {
    case 1:
      return DType::Bool;
    case 32:
      return DType::I32;
    case 64:
      return DType::I64;
    default:
      return std::nullopt;
    }
  }
  return std::nullopt;
}

Type mlir::nnx::getElementType(DType dtype, MLIRContext *context) {
  switch (dtype) {
  case DType::F16:
    return Float16Type::get(context);
  case DType::BF16:
    return BFloat16Type::get(context);
  case DType::F32:
    return Float32Type::get(context);
  case DType::F64:
    return Float64Type::get(context);
  case DType::I32:
    return IntegerType::get(context, 32);
  case DType::I64:
    return IntegerType::get(context, 64);
  case DType::Bool:
    return IntegerType::get(context, 1);
  }
  llvm_unreachable("unknown dtype");
}

/// The dtype of an .npy `descr`; nullopt when unsupported. Sets `bigEndian`
/// for a supported kind stored big-endian.
static std::optional<DType> parseDescr(StringRef descr, bool &bigEndian) {
  bigEndian = false;
  if (descr.size() < 3)
    return std::nullopt;
  char order = descr[0];
  StringRef kind = descr.drop_front();
  std::optional<DType> dtype = llvm::StringSwitch<std::optional<DType>>(kind)
                                   .Case("f2", DType::F16)
                                   .Case("f4", DType::F32)
                                   .Case("f8", DType::F64)
                                   .Case("i4", DType::I32)
                                   .Case("i8", DType::I64)
                                   .Case("b1", DType::Bool)
                                   .Default(std::nullopt);
  if (!dtype)
    return std::nullopt;
  if (getDTypeSize(*dtype) == 1)
    return (order == '|' || order == '<' || order == '>' || order == '=')
               ? dtype
               : std::nullopt;
  if (order == '<' || (order == '=' && llvm::sys::IsLittleEndianHost))
    return dtype;
  if (order == '>' || order == '=') {
    bigEndian = true;
    return dtype;
  }
  return std::nullopt;
}

std::string mlir::nnx::formatShape(ArrayRef<int64_t> shape) {
  std::string result = "(";
  llvm::raw_string_ostream os(result);
  llvm::interleave(shape, os, ", ");
  if (shape.size() == 1)
    os << ",";
  os << ")";
  return result;
}

//===----------------------------------------------------------------------===//
// NpyArray
//===----------------------------------------------------------------------===//

/// The element count of `shape`; nullopt for a negative dimension, or when
/// the product of the nonzero dimensions overflows, even if another is zero:
/// the strides would overflow (NumPy refuses such a shape as "too big").
static std::optional<int64_t> checkedNumElements(ArrayRef<int64_t> shape) {
  int64_t nonZero = 1;
  bool empty = false;
  for (int64_t d : shape) {
    if (d < 0)
      return std::nullopt;
    if (d == 0) {
      empty = true;
      continue;
    }
    if (nonZero > std::numeric_limits<int64_t>::max() / d)
      return std::nullopt;
    nonZero *= d;
  }
  return empty ? 0 : nonZero;
}

std::optional<uint64_t> mlir::nnx::getArrayByteSize(DType dtype,
                                                    ArrayRef<int64_t> shape) {
  std::optional<int64_t> numElements = checkedNumElements(shape);
  int64_t bytes;
  if (!numElements ||
      llvm::MulOverflow(*numElements, static_cast<int64_t>(getDTypeSize(dtype)),
                        bytes))
    return std::nullopt;
  return static_cast<uint64_t>(bytes);
}

NpyArray::NpyArray(DType dtype, ArrayRef<int64_t> shape)
    : dtype(dtype), shape(shape.begin(), shape.end()) {
  data.assign(static_cast<size_t>(numElements()) * getDTypeSize(dtype), 0);
}

bool mlir::nnx::isFloatDType(DType dtype) {
  return dtype == DType::F16 || dtype == DType::BF16 || dtype == DType::F32 ||
         dtype == DType::F64;
}

int64_t NpyArray::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

static double halfToDouble(uint16_t bits, const llvm::fltSemantics &sem) {
  llvm::APFloat value(sem, llvm::APInt(16, bits));
  bool losesInfo = false;
  value.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven,
                &losesInfo);
  return value.convertToDouble();
}

double NpyArray::getAsDouble(int64_t i) const {
  const uint8_t *p = data.data() + i * getDTypeSize(dtype);
  switch (dtype) {
  case DType::F16: {
    uint16_t v;
    std::memcpy(&v, p, 2);
    return halfToDouble(v, llvm::APFloat::IEEEhalf());
  }
  case DType::BF16: {
    uint16_t v;
    std::memcpy(&v, p, 2);
    return halfToDouble(v, llvm::APFloat::BFloat());
  }
  case DType::F32: {
    float v;
    std::memcpy(&v, p, 4);
    return v;
  }
  case DType::F64: {
    double v;
    std::memcpy(&v, p, 8);
    return v;
  }
  case DType::I32: {
    int32_t v;
    std::memcpy(&v, p, 4);
    return v;
  }
  case DType::I64: {
    int64_t v;
    std::memcpy(&v, p, 8);
    return static_cast<double>(v);
  }
  case DType::Bool:
    return *p ? 1.0 : 0.0;
  }
  llvm_unreachable("unknown dtype");
}

std::string NpyArray::describe() const {
  return (getDTypeName(dtype) + " array of shape " + formatShape(shape)).str();
}

//===----------------------------------------------------------------------===//
// Header parsing
//===----------------------------------------------------------------------===//

namespace {
/// A parser for the Python dict literal of an .npy header:
/// `{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }`.
class HeaderParser {
public:
  HeaderParser(StringRef text, StringRef name) : text(text), name(name) {}

  llvm::Error parse(std::string &descr, bool &fortranOrder,
                    SmallVectorImpl<int64_t> &shape) {
    bool haveDescr = false, haveOrder = false, haveShape = false;
    skipSpace();
    if (!consume('{'))
      return error("expected '{'");
    while (true) {
      skipSpace();
      if (consume('}'))
        break;
      std::string key;
      if (llvm::Error err = parseString(key))
        return err;
      skipSpace();
      if (!consume(':'))
        return error("expected ':' after key '" + key + "'");
      skipSpace();
      if (key == "descr") {
        if (llvm::Error err = parseString(descr))
          return err;
        haveDescr = true;
      } else if (key == "fortran_order") {
        if (text.consume_front("True"))
          fortranOrder = true;
        else if (text.consume_front("False"))
          fortranOrder = false;
        else
          return error("expected True or False for 'fortran_order'");
        haveOrder = true;
      } else if (key == "shape") {
        if (llvm::Error err = parseShape(shape))
          return err;
        haveShape = true;
      } else {
        return error("unexpected key '" + key + "'");
      }
      skipSpace();
      if (consume(','))
        continue;
      skipSpace();
      if (consume('}'))
        break;
      return error("expected ',' or '}'");
    }
    skipSpace();
    if (!text.empty())
      return error("unexpected text after the header dictionary");
    if (!haveDescr)
      return error("missing key 'descr'");
    if (!haveOrder)
      return error("missing key 'fortran_order'");
    if (!haveShape)
      return error("missing key 'shape'");
    return llvm::Error::success();
  }

private:
  llvm::Error error(const Twine &msg) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   name + ": malformed .npy header: " + msg);
  }
  void skipSpace() { text = text.ltrim(" \t\n\r"); }
  bool consume(char c) { return text.consume_front(StringRef(&c, 1)); }

  llvm::Error parseString(std::string &out) {
    if (text.empty() || (text[0] != '\'' && text[0] != '"'))
      return error("expected a quoted string");
    char quote = text[0];
    size_t end = text.find(quote, 1);
    if (end == StringRef::npos)
      return error("unterminated string");
    out = text.slice(1, end).str();
    text = text.drop_front(end + 1);
    return llvm::Error::success();
  }

  llvm::Error parseShape(SmallVectorImpl<int64_t> &shape) {
    if (!consume('('))
      return error("expected '(' for 'shape'");
    while (true) {
      skipSpace();
      if (consume(')'))
        return llvm::Error::success();
      size_t len = text.find_first_not_of("0123456789");
      if (len == 0 || len == StringRef::npos)
        return error("expected a non-negative integer in 'shape'");
      int64_t dim;
      if (text.take_front(len).getAsInteger(10, dim))
        return error("dimension out of range in 'shape'");
      shape.push_back(dim);
      text = text.drop_front(len);
      text.consume_front("L"); // Python 2 longs.
      skipSpace();
      if (consume(','))
        continue;
      skipSpace();
      if (consume(')'))
        return llvm::Error::success();
      return error("expected ',' or ')' in 'shape'");
    }
  }

  StringRef text;
  StringRef name;
};
} // namespace

static llvm::Error makeError(StringRef name, const Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 name + ": " + msg);
}

llvm::Expected<NpyArray> mlir::nnx::parseNpy(StringRef bytes, StringRef name) {
  if (!bytes.starts_with(kMagic))
    return makeError(name, "not an .npy file (bad magic string)");
  if (bytes.size() < kMagic.size() + 2)
    return makeError(name, "truncated .npy header");
  uint8_t major = bytes[6], minor = bytes[7];
  size_t lenBytes;
  if (major == 1)
    lenBytes = 2;
  else if (major == 2 || major == 3)
    lenBytes = 4;
  else
    return makeError(
        name, "unsupported .npy format version " + Twine(unsigned(major)) +
                  "." + Twine(unsigned(minor)) + " (supported: 1.0, 2.0, 3.0)");
  size_t prefix = kMagic.size() + 2 + lenBytes;
  if (bytes.size() < prefix)
    return makeError(name, "truncated .npy header");
  uint64_t headerLen = lenBytes == 2
                           ? llvm::support::endian::read16le(bytes.data() + 8)
                           : llvm::support::endian::read32le(bytes.data() + 8);
  if (bytes.size() - prefix < headerLen)
    return makeError(name, "truncated .npy header (declares " +
                               Twine(headerLen) + " bytes, the file holds " +
                               Twine(bytes.size() - prefix) + ")");
  StringRef header = bytes.substr(prefix, headerLen);

  std::string descr;
  bool fortranOrder = false;
  NpyArray array;
  if (llvm::Error err =
          HeaderParser(header, name).parse(descr, fortranOrder, array.shape))
    return std::move(err);

  bool bigEndian = false;
  std::optional<DType> dtype = parseDescr(descr, bigEndian);
  if (!dtype)
    return makeError(name, "unsupported dtype '" + descr +
                               "' (supported: float16, float32, float64, "
                               "int32, int64, bool)");
  if (bigEndian)
    return makeError(name, "big-endian data ('" + descr +
                               "') is not supported; save it as '<" +
                               descr.substr(1) + "'");
  if (fortranOrder)
    return makeError(name, "Fortran-order arrays are not supported; save it "
                           "in C order (np.ascontiguousarray)");
  array.dtype = *dtype;

  std::optional<int64_t> numElements = checkedNumElements(array.shape);
  if (!numElements ||
      static_cast<uint64_t>(*numElements) >
          std::numeric_limits<uint64_t>::max() / getDTypeSize(*dtype))
    return makeError(name,
                     "shape " + formatShape(array.shape) + " is too large");
  uint64_t needed = static_cast<uint64_t>(*numElements) * getDTypeSize(*dtype);
  StringRef payload = bytes.drop_front(prefix + headerLen);
  if (payload.size() < needed)
    return makeError(name, "truncated data: a " + array.describe() + " needs " +
                               Twine(needed) + " bytes, the file holds " +
                               Twine(payload.size()));
  if (payload.size() > needed)
    return makeError(name, Twine(payload.size() - needed) +
                               " bytes of unexpected data after the " +
                               array.describe());
  array.data.assign(payload.bytes_begin(), payload.bytes_end());
  if (llvm::sys::IsBigEndianHost) {
    size_t size = getDTypeSize(array.dtype);
    for (size_t i = 0; i + size <= array.data.size(); i += size)
      std::reverse(array.data.begin() + i, array.data.begin() + i + size);
  }
  return array;
}

llvm::Expected<NpyArray> mlir::nnx::readNpy(StringRef path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false);
  if (std::error_code ec = buffer.getError())
    return makeError(path, "cannot open file: " + ec.message());
  return parseNpy((*buffer)->getBuffer(), path);
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

/// f32 to bf16, rounded to nearest even; a NaN stays a (quiet) NaN.
static uint16_t floatToBFloat16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  if ((bits & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((bits >> 16) | 0x40u);
  return static_cast<uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

static const llvm::fltSemantics &getFloatSemantics(DType dtype) {
  switch (dtype) {
  case DType::F16:
    return llvm::APFloat::IEEEhalf();
  case DType::BF16:
    return llvm::APFloat::BFloat();
  case DType::F32:
    return llvm::APFloat::IEEEsingle();
  default:
    return llvm::APFloat::IEEEdouble();
  }
}

NpyArray mlir::nnx::convertFloats(const NpyArray &array, DType to) {
  assert(isFloatDType(array.dtype) && isFloatDType(to) && "float dtypes only");
  NpyArray result(to, array.shape);
  int64_t n = array.numElements();
  if (array.dtype == DType::BF16 && to == DType::F32) {
    ArrayRef<uint16_t> from = array.getValues<uint16_t>();
    MutableArrayRef<float> into = result.getMutableValues<float>();
    for (int64_t i = 0; i < n; ++i) {
      uint32_t bits = static_cast<uint32_t>(from[i]) << 16;
      std::memcpy(&into[i], &bits, 4);
    }
    return result;
  }
  if (array.dtype == DType::F32 && to == DType::BF16) {
    ArrayRef<float> from = array.getValues<float>();
    MutableArrayRef<uint16_t> into = result.getMutableValues<uint16_t>();
    for (int64_t i = 0; i < n; ++i)
      into[i] = floatToBFloat16(from[i]);
    return result;
  }
  const llvm::fltSemantics &sem = getFloatSemantics(to);
  size_t size = getDTypeSize(to);
  for (int64_t i = 0; i < n; ++i) {
    llvm::APFloat value(array.getAsDouble(i));
    bool losesInfo = false;
    value.convert(sem, llvm::APFloat::rmNearestTiesToEven, &losesInfo);
    uint64_t bits = value.bitcastToAPInt().getZExtValue();
    std::memcpy(result.data.data() + i * size, &bits, size);
  }
  return result;
}

std::string mlir::nnx::serializeNpy(const NpyArray &array) {
  std::string dict =
      ("{'descr': '" + getDTypeDescr(array.dtype) +
       "', 'fortran_order': False, 'shape': " + formatShape(array.shape) +
       ", }")
          .str();
  // NumPy pads magic + version + length + dict + '\n' to a multiple of 64.
  auto padded = [&](size_t lenBytes) {
    size_t total = kMagic.size() + 2 + lenBytes + dict.size() + 1;
    return dict + std::string((64 - total % 64) % 64, ' ') + "\n";
  };
  std::string header = padded(2);
  bool v2 = header.size() > 0xffff;
  if (v2)
    header = padded(4);

  std::string out(kMagic);
  out.push_back(v2 ? 2 : 1);
  out.push_back(0);
  for (size_t i = 0, e = v2 ? 4 : 2; i < e; ++i)
    out.push_back(static_cast<char>((header.size() >> (8 * i)) & 0xff));
  out += header;
  size_t start = out.size();
  out.append(reinterpret_cast<const char *>(array.data.data()),
             array.data.size());
  if (llvm::sys::IsBigEndianHost) {
    size_t size = getDTypeSize(array.dtype);
    for (size_t i = start; i + size <= out.size(); i += size)
      std::reverse(out.begin() + i, out.begin() + i + size);
  }
  return out;
}

llvm::Error mlir::nnx::writeNpy(StringRef path, const NpyArray &array) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_None);
  if (ec)
    return makeError(path, "cannot write file: " + ec.message());
  os << serializeNpy(array);
  os.close();
  if (os.has_error()) {
    ec = os.error();
    os.clear_error();
    return makeError(path, "cannot write file: " + ec.message());
  }
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// Printing
//===----------------------------------------------------------------------===//

namespace {
/// Prints like NumPy: nested brackets, rows on their own lines, and the
/// middle of long dimensions elided when the array is large.
class ArrayPrinter {
public:
  ArrayPrinter(llvm::raw_ostream &os, const NpyArray &array)
      : os(os), array(array), summarize(array.numElements() > 1000) {
    strides.resize(array.shape.size());
    int64_t stride = 1;
    for (int64_t d = array.rank() - 1; d >= 0; --d) {
      strides[d] = stride;
      stride *= array.shape[d];
    }
  }

  void print() {
    if (array.rank() == 0)
      printElement(0);
    else if (array.numElements() == 0)
      // As NumPy prints any empty array: its dimensions before the zero may
      // hold billions of empty rows (was: printed one by one, fuzz-npy).
      os << "[]";
    else
      printDim(0, 0);
    os << "\n";
  }

private:
  void printElement(int64_t i) {
    const uint8_t *p = array.data.data() + i * getDTypeSize(array.dtype);
    switch (array.dtype) {
    case DType::Bool:
      os << (*p ? "True" : "False");
      return;
    case DType::I32: {
      int32_t v;
      std::memcpy(&v, p, sizeof(v));
      os << v;
      return;
    }
    case DType::I64: {
      int64_t v;
      std::memcpy(&v, p, sizeof(v));
      os << v;
      return;
    }
    case DType::F16:
    case DType::BF16:
      os << llvm::format("%.4g", array.getAsDouble(i));
      return;
    case DType::F32:
      os << llvm::format("%.7g", array.getAsDouble(i));
      return;
    case DType::F64:
      os << llvm::format("%.16g", array.getAsDouble(i));
      return;
    }
  }

  void printSeparator(int64_t dim) {
    int64_t rank = array.rank();
    os << ",";
    if (dim == rank - 1) {
      os << " ";
      return;
    }
    for (int64_t i = 0; i < rank - 1 - dim; ++i)
      os << "\n";
    os.indent(dim + 1);
  }

  void printDim(int64_t dim, int64_t offset) {
    os << "[";
    int64_t size = array.shape[dim];
    bool elide = summarize && size > 6;
    for (int64_t i = 0; i < size; ++i) {
      if (elide && i == 3) {
        os << "...";
        printSeparator(dim);
        i = size - 3;
      }
      int64_t at = offset + i * strides[dim];
      if (dim + 1 == array.rank())
        printElement(at);
      else
        printDim(dim + 1, at);
      if (i + 1 < size)
        printSeparator(dim);
    }
    os << "]";
  }

  llvm::raw_ostream &os;
  const NpyArray &array;
  bool summarize;
  SmallVector<int64_t> strides;
};
} // namespace

void mlir::nnx::printNpyArray(llvm::raw_ostream &os, const NpyArray &array) {
  ArrayPrinter(os, array).print();
}
