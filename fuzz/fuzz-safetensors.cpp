//===- fuzz-safetensors.cpp - the safetensors reader ----------------------===//
//
// SafeTensorsFile::fromBuffer on the input, the validation every weights file
// nnx opens goes through (nnx-run --weights, nnx-internalize-weights). Of a
// file it accepts, every tensor is looked up and its bytes read; the tensors
// written back with writeSafeTensors must read back the same.
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"

#include "nnx/Support/SafeTensors.h"

#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <cstdint>

using namespace mlir::nnx;

/// Reads every tensor of `file`; its entries for writeSafeTensors.
static std::vector<SafeTensorsEntry> readAll(const SafeTensorsFile &file) {
  std::vector<SafeTensorsEntry> entries;
  for (const SafeTensorInfo &info : file.getTensors()) {
    if (file.lookup(info.name) != &info)
      nnxfuzz::fail("safetensors",
                    "lookup('" + info.name + "') is not the tensor listed");
    llvm::ArrayRef<char> bytes = file.getData(info);
    uint64_t expected = static_cast<uint64_t>(info.numElements()) *
                        getSafeTensorsDTypeSize(info.dtype);
    if (bytes.size() != info.numBytes() || bytes.size() != expected)
      nnxfuzz::fail("safetensors",
                    "tensor '" + info.name + "' holds a wrong number of bytes");
    entries.push_back({info.name, info.dtype, info.shape, bytes});
  }
  return entries;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  auto file = SafeTensorsFile::fromBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(bytes, "fuzz.safetensors"),
      "fuzz.safetensors");
  if (!file) {
    llvm::consumeError(file.takeError());
    return 0;
  }
  std::vector<SafeTensorsEntry> entries = readAll(**file);
  std::string written;
  llvm::raw_string_ostream os(written);
  if (llvm::Error error = writeSafeTensors(os, entries, (*file)->getMetadata()))
    nnxfuzz::fail("safetensors", "cannot write back what was read: " +
                                     llvm::toString(std::move(error)));
  auto reread = SafeTensorsFile::fromBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(written, "written.safetensors"),
      "written.safetensors");
  if (!reread)
    nnxfuzz::fail("safetensors", "writeSafeTensors wrote what fromBuffer "
                                 "refuses: " +
                                     llvm::toString(reread.takeError()));
  std::vector<SafeTensorsEntry> again = readAll(**reread);
  if (again.size() != entries.size())
    nnxfuzz::fail("safetensors", "writing back lost tensors");
  for (const SafeTensorsEntry &entry : again) {
    const SafeTensorInfo *old = (*file)->lookup(entry.name);
    if (!old || old->dtype != entry.dtype || old->shape != entry.shape ||
        (*file)->getData(*old) != entry.data)
      nnxfuzz::fail("safetensors",
                    "tensor '" + entry.name + "' changed when written back");
  }
  return 0;
}
