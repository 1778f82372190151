//===- Npy.h - NumPy .npy arrays: read, write, describe ---------*- C++ -*-===//
//
// Reads and writes NumPy's `.npy` format (versions 1.0, 2.0 and 3.0 of the
// header), C order, little-endian, for the element types nnx models use:
// float16/32/64, int32/64 and bool. Everything else is refused with a message
// that names the file and the problem.
//
//===----------------------------------------------------------------------===//
#ifndef NNX_SUPPORT_NPY_H
#define NNX_SUPPORT_NPY_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cassert>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace mlir {
class Type;
class MLIRContext;
} // namespace mlir

namespace mlir::nnx {

/// The element types an .npy array may hold.
/// BF16 has no NumPy dtype: an .npy never holds one (parseNpy refuses
/// nothing new); in memory and in Python its elements are their 16 bits.
enum class DType { F16, BF16, F32, F64, I32, I64, Bool };

/// NumPy's name of the type: "float32", "int64", "bool", ...
llvm::StringRef getDTypeName(DType dtype);
/// The `descr` an .npy header carries for it: "<f4", "|b1", ...
llvm::StringRef getDTypeDescr(DType dtype);
/// Bytes per element.
size_t getDTypeSize(DType dtype);
/// The dtype that holds elements of MLIR type `type` (f16/f32/f64, i32/i64
/// signless or signed, i1), or nullopt.
std::optional<DType> getDTypeForElementType(mlir::Type type);
/// The MLIR element type of `dtype`.
mlir::Type getElementType(DType dtype, mlir::MLIRContext *context);

/// Whether `dtype` is a floating-point type (f16, bf16, f32, f64).
bool isFloatDType(DType dtype);
/// A shape the way NumPy prints it: "(3, 5)", "(4,)", "()".
std::string formatShape(llvm::ArrayRef<int64_t> shape);

/// The bytes a C-order array of `dtype` and `shape` takes; nullopt for a
/// negative dimension, or when the element count (of the nonzero
/// dimensions: NumPy's strides) or the bytes do not fit in int64.
std::optional<uint64_t> getArrayByteSize(DType dtype,
                                         llvm::ArrayRef<int64_t> shape);

/// A dense C-order array of little-endian elements.
struct NpyArray {
  DType dtype = DType::F32;
  llvm::SmallVector<int64_t, 4> shape;
  /// numElements() * getDTypeSize(dtype) bytes.
  std::vector<uint8_t> data;

  NpyArray() = default;
  /// A zero-filled array.
  NpyArray(DType dtype, llvm::ArrayRef<int64_t> shape);

  /// An array of `values` (sizeof(T) must match the dtype).
  template <typename T>
  static NpyArray fromValues(DType dtype, llvm::ArrayRef<int64_t> shape,
                             llvm::ArrayRef<T> values) {
    NpyArray array(dtype, shape);
    assert(sizeof(T) == getDTypeSize(dtype) && "element size mismatch");
    assert(values.size() == static_cast<size_t>(array.numElements()) &&
           "element count mismatch");
    // memcpy with a null pointer is undefined even for 0 bytes (UBSan).
    if (!values.empty())
      std::memcpy(array.data.data(), values.data(), array.data.size());
    return array;
  }

  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  int64_t numElements() const;
  size_t numBytes() const { return data.size(); }

  /// The elements viewed as T (sizeof(T) must match the dtype).
  template <typename T> llvm::ArrayRef<T> getValues() const {
    assert(sizeof(T) == getDTypeSize(dtype) && "element size mismatch");
    return llvm::ArrayRef<T>(reinterpret_cast<const T *>(data.data()),
                             data.size() / sizeof(T));
  }
  template <typename T> llvm::MutableArrayRef<T> getMutableValues() {
    assert(sizeof(T) == getDTypeSize(dtype) && "element size mismatch");
    return llvm::MutableArrayRef<T>(reinterpret_cast<T *>(data.data()),
                                    data.size() / sizeof(T));
  }
  /// Element `i` (flat, C order) converted to double, whatever the dtype.
  double getAsDouble(int64_t i) const;

  /// "float32 array of shape (3, 5)".
  std::string describe() const;
};

/// `array` (of a float dtype) converted to float dtype `to`, each element
/// rounded to nearest, ties to even (NaNs stay NaNs, overflow becomes
/// infinity); exact when `to` is wider.
NpyArray convertFloats(const NpyArray &array, DType to);

/// Parses the bytes of an .npy file; `name` (the file name) prefixes every
/// error message.
llvm::Expected<NpyArray> parseNpy(llvm::StringRef bytes, llvm::StringRef name);
/// Reads an .npy file.
llvm::Expected<NpyArray> readNpy(llvm::StringRef path);
/// The bytes of `array` as an .npy file (header 1.0, or 2.0 when the header
/// needs more than 65535 bytes).
std::string serializeNpy(const NpyArray &array);
/// Writes `array` to `path`.
llvm::Error writeNpy(llvm::StringRef path, const NpyArray &array);

/// Prints `array` readably: a line with shape and dtype, then the values as
/// nested brackets in C order (floats with up to 7 significant digits).
void printNpyArray(llvm::raw_ostream &os, const NpyArray &array);

} // namespace mlir::nnx

#endif // NNX_SUPPORT_NPY_H
