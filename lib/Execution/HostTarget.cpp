//===- HostTarget.cpp - what the host runs, for the drivers ---------------===//
#include "HostTarget.h"

#include "nnx/Support/TargetISA.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

#include <cstdlib>

using namespace mlir;

llvm::Expected<unsigned> nnx::maxISABits(llvm::StringRef name) {
  std::string source = "max-isa";
  std::string value = name.str();
  if (value.empty()) {
    if (const char *env = std::getenv(kMaxISAEnv))
      value = env;
    source = kMaxISAEnv;
  }
  std::optional<unsigned> bits = isaVectorBits(value);
  if (!bits)
    return llvm::createStringError(unknownISAMessage(source, value));
  if (*bits != 0 && !llvm::Triple(llvm::sys::getProcessTriple()).isX86())
    return llvm::createStringError(source + "=" + value +
                                   ": the instruction-set cap is for x86-64 "
                                   "hosts; this one is " +
                                   llvm::sys::getProcessTriple());
  return *bits;
}

unsigned nnx::hostVectorBits(unsigned capBits) {
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  unsigned bits = 128;
  if (features.lookup("avx512f"))
    bits = 512;
  else if (features.lookup("avx2") && features.lookup("fma"))
    bits = 256;
  return capBits != 0 && capBits < bits ? capBits : bits;
}

bool nnx::hostHasAVX512BF16(unsigned capBits) {
  if (capBits != 0 && capBits < 512)
    return false;
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  return features.lookup("avx512f") && features.lookup("avx512bf16");
}
