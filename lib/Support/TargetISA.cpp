//===- TargetISA.cpp - the instruction set nnx compiles CPU code for ------===//
#include "nnx/Support/TargetISA.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/Twine.h"

using namespace mlir;

std::optional<unsigned> nnx::isaVectorBits(llvm::StringRef name) {
  unsigned bits = llvm::StringSwitch<unsigned>(name.lower())
                      .Case("", 0)
                      .Case("avx512", 512)
                      .Case("avx2", 256)
                      .Case("sse4.2", 128)
                      .Default(~0u);
  if (bits == ~0u)
    return std::nullopt;
  return bits;
}

std::string nnx::unknownISAMessage(llvm::StringRef source,
                                   llvm::StringRef name) {
  return (source + "=" + name +
          ": not an instruction set nnx knows (expected avx512, avx2 or "
          "sse4.2)")
      .str();
}

std::vector<std::string> nnx::capFeatures(unsigned capBits) {
  if (capBits == 256)
    return {"-avx512f"};
  if (capBits == 128)
    return {"-avx"};
  return {};
}
