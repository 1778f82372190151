//===- SafeTensors.h - safetensors files: map, validate, write --*- C++ -*-===//
//
// Reads and writes the safetensors format: an 8-byte little-endian header
// length N, N bytes of a JSON object (possibly padded with spaces), then the
// data region. Each key of the object other than `__metadata__` maps to
// `{"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}`, offsets
// relative to the data region. Files are memory-mapped, never copied whole,
// and validated on open: every problem is an error that names the file and,
// where there is one, the tensor.
//
//===----------------------------------------------------------------------===//
#ifndef NNX_SUPPORT_SAFETENSORS_H
#define NNX_SUPPORT_SAFETENSORS_H

#include "nnx/Support/Npy.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace mlir {
class Type;
} // namespace mlir

namespace mlir::nnx {

/// One tensor of a safetensors file.
struct SafeTensorInfo {
  std::string name;
  /// "F32", "BF16", ...
  std::string dtype;
  llvm::SmallVector<int64_t, 4> shape;
  /// Byte offsets in the data region.
  uint64_t begin = 0, end = 0;

  /// The product of the dimensions (1 for a scalar).
  int64_t numElements() const;
  uint64_t numBytes() const { return end - begin; }
};

/// Bytes per element of a safetensors dtype name (F64 F32 F16 BF16 I64 I32 I16
/// I8 U64 U32 U16 U8 BOOL F8_E4M3 F8_E5M2), or 0 if the name is unknown.
size_t getSafeTensorsDTypeSize(llvm::StringRef dtype);

/// The safetensors dtype name of an MLIR element type (f64 F64, f32 F32, f16
/// F16, bf16 BF16, i64/si64 I64, i32/si32 I32, i16/si16 I16, i8/si8 I8, ui64
/// U64, ui32 U32, ui16 U16, ui8 U8, i1 BOOL, f8E4M3FN F8_E4M3, f8E5M2
/// F8_E5M2), or "" when there is none.
llvm::StringRef getSafeTensorsDTypeName(mlir::Type elementType);
/// The safetensors dtype name of an nnx array dtype.
llvm::StringRef getSafeTensorsDTypeName(DType dtype);

/// A safetensors file, memory-mapped (never copied whole), validated on open.
class SafeTensorsFile {
public:
  /// Maps and validates `path`. Every problem is an error whose message starts
  /// with the path.
  static llvm::Expected<std::unique_ptr<SafeTensorsFile>>
  open(llvm::StringRef path);
  /// Validates bytes already in memory; `name` prefixes error messages.
  static llvm::Expected<std::unique_ptr<SafeTensorsFile>>
  fromBuffer(std::unique_ptr<llvm::MemoryBuffer> buffer, llvm::StringRef name);

  /// The path or name given to open() or fromBuffer().
  llvm::StringRef getName() const { return name; }
  /// The tensors, sorted by begin offset (then end offset).
  llvm::ArrayRef<SafeTensorInfo> getTensors() const { return tensors; }
  /// The tensor called `tensorName`, or nullptr if absent.
  const SafeTensorInfo *lookup(llvm::StringRef tensorName) const;
  /// The tensor's bytes in the mapping (`info` must come from this file).
  llvm::ArrayRef<char> getData(const SafeTensorInfo &info) const;
  /// The `__metadata__` object (empty when the file has none).
  const std::map<std::string, std::string> &getMetadata() const {
    return metadata;
  }

  /// The whole file as mapped.
  llvm::StringRef getBuffer() const { return buffer->getBuffer(); }
  /// Whether the bytes are a read-only mapping of the file (open() reads a
  /// small file into memory instead, and fromBuffer() takes any buffer):
  /// only then may pages be dropped with madvise(MADV_DONTNEED).
  bool isMapped() const {
    return buffer->getBufferKind() == llvm::MemoryBuffer::MemoryBuffer_MMap;
  }
  /// Where the data region starts, in bytes from the start of the file
  /// (8 + the header length).
  uint64_t getDataOffset() const { return dataOffset; }

private:
  SafeTensorsFile(std::unique_ptr<llvm::MemoryBuffer> buffer,
                  llvm::StringRef name);
  llvm::Error parse();
  llvm::Error parseHeaderObject(llvm::StringRef header);

  std::unique_ptr<llvm::MemoryBuffer> buffer;
  std::string name;
  uint64_t dataOffset = 0;
  std::vector<SafeTensorInfo> tensors;
  llvm::StringMap<size_t> indexByName;
  std::map<std::string, std::string> metadata;
};

/// One tensor to write: its bytes are little-endian, row-major,
/// numElements * dtypeSize long.
struct SafeTensorsEntry {
  std::string name;
  std::string dtype;
  llvm::SmallVector<int64_t, 4> shape;
  llvm::ArrayRef<char> data;
};

/// Serializes to `os`: the header padded with spaces so that the data region
/// starts at a multiple of 64 bytes from the file start; each tensor's data
/// begins at a multiple of 64 in the data region (zero padding between
/// tensors); tensors in the order given. Validates the entries first (unknown
/// dtype, byte count != numElements * size, duplicate or empty name,
/// "__metadata__" as a name, negative dimensions, names or metadata that are
/// not UTF-8) and returns an error naming the tensor; nothing is written then.
llvm::Error
writeSafeTensors(llvm::raw_ostream &os,
                 llvm::ArrayRef<SafeTensorsEntry> entries,
                 const std::map<std::string, std::string> &metadata = {});

/// Writes to `path` as writeOutputFile does (a regular file is replaced
/// atomically, a device or symlink written into); errors name the path.
llvm::Error
writeSafeTensorsFile(llvm::StringRef path,
                     llvm::ArrayRef<SafeTensorsEntry> entries,
                     const std::map<std::string, std::string> &metadata = {});

} // namespace mlir::nnx

#endif // NNX_SUPPORT_SAFETENSORS_H
