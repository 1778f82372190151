//===- fuzz-npy.cpp - the .npy reader -------------------------------------===//
//
// parseNpy on the input, as nnx-run reads its input and probe files; an array
// it accepts is described, printed, read element by element and written back,
// and what is written must read back to the same array.
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"

#include "nnx/Support/Npy.h"

#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <cstdint>

using namespace mlir::nnx;

static bool sameArray(const NpyArray &a, const NpyArray &b) {
  return a.dtype == b.dtype && a.shape == b.shape && a.data == b.data;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  llvm::Expected<NpyArray> array = parseNpy(bytes, "fuzz.npy");
  if (!array) {
    llvm::consumeError(array.takeError());
    return 0;
  }
  (void)array->describe();
  double sum = 0;
  for (int64_t i = 0, e = array->numElements(); i < e; ++i)
    sum += array->getAsDouble(i);
  llvm::raw_null_ostream null;
  null << sum;
  printNpyArray(null, *array);
  std::string written = serializeNpy(*array);
  llvm::Expected<NpyArray> reread = parseNpy(written, "written.npy");
  if (!reread)
    nnxfuzz::fail("npy", "serializeNpy wrote what parseNpy refuses: " +
                             llvm::toString(reread.takeError()));
  if (!sameArray(*array, *reread))
    nnxfuzz::fail("npy", "serializeNpy then parseNpy changed the array");
  return 0;
}
