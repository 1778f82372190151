//===- fuzz-ir-bytecode.cpp - bytecode: contained read, verify, print -----===//
//
// What nnx-opt and nnx-run do with a bytecode input: the read and the
// verification in a CrashRecoveryContext (MLIR 22.1's reader trusts the sizes
// it reads, docs/Reliability.md), the dense data check, then the printed
// output, which runs uncontained: a crash there is a finding.
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"

#include <cstddef>
#include <cstdint>

using namespace mlir;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  if (!bytes.starts_with("ML\xEFR"))
    return -1;
  std::unique_ptr<MLIRContext> context = nnxfuzz::makeContext();
  OwningOpRef<ModuleOp> module;
  if (nnxfuzz::parseInput(*context, bytes, module) !=
      nnxfuzz::ParseOutcome::Parsed)
    return 0;
  (void)nnxfuzz::printOp(*module);
  return 0;
}
