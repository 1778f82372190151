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
  switch (nnxfuzz::parseInput(*context, bytes, module)) {
  case nnxfuzz::ParseOutcome::ContainedCrash:
    // The reader was unwound mid-update: the tools exit on the error without
    // destroying anything, and so the context is left alone here (the one
    // SEGV of the first 10-minute run did not reproduce on its own input;
    // state an earlier contained crash left behind is the likely cause).
    (void)context.release();
    return 0;
  case nnxfuzz::ParseOutcome::Refused:
    return 0;
  case nnxfuzz::ParseOutcome::Parsed:
    break;
  }
  (void)nnxfuzz::printOp(*module);
  return 0;
}
