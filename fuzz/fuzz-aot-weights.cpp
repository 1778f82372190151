//===- fuzz-aot-weights.cpp - the AOT runtime's safetensors reader --------===//
//
// nnx_aot_read_image on the input: what a program built with nnx-compile
// does with the weights file it loads (lib/AOTRuntime/SafeTensors.c, plain
// C, apart from nnx's C++ reader). It must never read outside the input;
// where the C++ reader (SafeTensorsFile::fromBuffer) accepts the file too,
// both must see the same tensors: names, dtypes, shapes and offsets.
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"

#include "../lib/AOTRuntime/AOTRuntime.h"
#include "nnx/Support/SafeTensors.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

using namespace mlir::nnx;

/// Compares what the two readers saw of one accepted file.
static void compare(const nnx_aot_file &c, const SafeTensorsFile &cpp) {
  if (c.num_tensors != cpp.getTensors().size())
    nnxfuzz::fail("aot-weights", "the C reader sees " +
                                     std::to_string(c.num_tensors) +
                                     " tensors, the C++ reader " +
                                     std::to_string(cpp.getTensors().size()));
  for (size_t i = 0; i < c.num_tensors; ++i) {
    const nnx_aot_file_tensor &t = c.tensors[i];
    std::string key(t.key, t.key_length);
    const SafeTensorInfo *info = cpp.lookup(key);
    if (!info)
      continue; // an escaped key: the C reader keeps its escapes
    if (info->dtype != t.dtype || info->begin != t.begin ||
        info->end != t.end ||
        llvm::ArrayRef<int64_t>(info->shape) !=
            llvm::ArrayRef<int64_t>(t.shape, t.rank))
      nnxfuzz::fail("aot-weights", "tensor '" + key + "' reads differently");
  }
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // A copy of exactly `size` bytes: a read past it is ASan's to report.
  std::vector<unsigned char> image(data, data + size);
  nnx_aot_file file;
  std::memset(&file, 0, sizeof(file));
  char error[512];
  nnx_aot_status status =
      nnx_aot_read_image("fuzz.safetensors", image.data(), image.size(), &file,
                         error, sizeof(error));
  if (status == NNX_AOT_OK) {
    for (size_t i = 0; i < file.num_tensors; ++i)
      if (file.tensors[i].rank < 0 || file.tensors[i].rank > NNX_AOT_MAX_RANK)
        nnxfuzz::fail("aot-weights", "a tensor of rank out of range");
    auto cpp = SafeTensorsFile::fromBuffer(
        llvm::MemoryBuffer::getMemBufferCopy(
            llvm::StringRef(reinterpret_cast<const char *>(data), size),
            "fuzz.safetensors"),
        "fuzz.safetensors");
    if (cpp)
      compare(file, **cpp);
    else
      llvm::consumeError(cpp.takeError());
  } else if (std::strlen(error) == 0) {
    nnxfuzz::fail("aot-weights", "a refusal without a message");
  }
  nnx_aot_close_file(&file);
  return 0;
}
