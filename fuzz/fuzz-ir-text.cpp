//===- fuzz-ir-text.cpp - textual IR: guard, parse, verify, print ---------===//
//
// What nnx-opt does with a textual input before and after its passes: the
// input checks, a contained parse and verification, and the printed output.
// The checks refuse every text MLIR 22.1 is known to crash on, so a crash the
// recovery context contains here is a finding too.
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"

#include <cstddef>
#include <cstdint>

using namespace mlir;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  // Bytecode is fuzz-ir-bytecode's.
  if (bytes.starts_with("ML\xEFR"))
    return -1;
  std::unique_ptr<MLIRContext> context = nnxfuzz::makeContext();
  OwningOpRef<ModuleOp> module;
  switch (nnxfuzz::parseInput(*context, bytes, module)) {
  case nnxfuzz::ParseOutcome::ContainedCrash:
    nnxfuzz::fail("ir-text", "MLIR's parser crashed on text that passed "
                             "checkParserInput");
  case nnxfuzz::ParseOutcome::Refused:
    return 0;
  case nnxfuzz::ParseOutcome::Parsed:
    break;
  }
  (void)nnxfuzz::printOp(*module);
  return 0;
}
