//===- HashStream.h - a raw_ostream that hashes what it is given -*- C++
//-*-===//
//
// What is printed to a HashStream goes to its hasher (llvm::SHA1,
// llvm::SHA256) instead of memory: the hash of a large module's text
// without the text.
//
//===----------------------------------------------------------------------===//
#ifndef NNX_LIB_EXECUTION_HASHSTREAM_H
#define NNX_LIB_EXECUTION_HASHSTREAM_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>

namespace mlir::nnx {

template <typename Hasher> class HashStream : public llvm::raw_ostream {
public:
  HashStream() { SetUnbuffered(); }
  /// The hash of everything written so far.
  auto result() {
    flush();
    return hasher.result();
  }

private:
  void write_impl(const char *ptr, size_t size) override {
    hasher.update(
        llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(ptr), size));
    position += size;
  }
  uint64_t current_pos() const override { return position; }

  Hasher hasher;
  uint64_t position = 0;
};

} // namespace mlir::nnx

#endif // NNX_LIB_EXECUTION_HASHSTREAM_H
