//===- fuzz-surgery.cpp - the surgery passes with options from the input --===//
//
// The input is one line naming a surgery pass and its options, then the IR:
//
//   widen layer=body.0 width=8 seed=3
//   nnx.model @m { ... }
//
// The pass (nnx-widen, nnx-deepen, nnx-drop-layer, nnx-low-rank,
// nnx-expand-embedding, nnx-prune, nnx-insert-block, nnx-grow-attention or
// nnx-widen-residual) runs the way nnx-opt runs it, with the verifier after
// it. Besides crashes, a finding is a refusal that changed the IR: each pass
// checks everything before it edits (Surgery.h).
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"

#include "nnx/InitNNX.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <cstdint>

using namespace mlir;

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  ::nnx::registerNNXPasses();
  return 0;
}

/// The pipeline of the header line `line`, or "" when it names no surgery
/// pass or holds characters an option value never needs.
static std::string getPipeline(llvm::StringRef line) {
  auto [pass, options] = line.split(' ');
  if (!llvm::is_contained({"widen", "deepen", "drop-layer", "low-rank",
                           "expand-embedding", "prune", "insert-block",
                           "grow-attention", "widen-residual"},
                          pass))
    return "";
  for (char c : options)
    if (!llvm::isAlnum(c) && !llvm::is_contained("_.=- ", c))
      return "";
  return ("builtin.module(nnx.model(nnx-" + pass + "{" + options + "}))").str();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  auto [line, ir] =
      llvm::StringRef(reinterpret_cast<const char *>(data), size).split('\n');
  std::string pipeline = getPipeline(line);
  if (pipeline.empty() || ir.starts_with("ML\xEFR"))
    return -1;
  std::unique_ptr<MLIRContext> context = nnxfuzz::makeContext();
  PassManager pm(context.get());
  if (failed(parsePassPipeline(pipeline, pm, llvm::nulls())))
    return 0;
  OwningOpRef<ModuleOp> module;
  switch (nnxfuzz::parseInput(*context, ir, module)) {
  case nnxfuzz::ParseOutcome::ContainedCrash:
    nnxfuzz::fail("surgery", "MLIR's parser crashed on text that passed "
                             "checkParserInput");
  case nnxfuzz::ParseOutcome::Refused:
    return 0;
  case nnxfuzz::ParseOutcome::Parsed:
    break;
  }
  std::string before = nnxfuzz::printOp(*module);
  if (succeeded(pm.run(*module))) {
    (void)nnxfuzz::printOp(*module);
    return 0;
  }
  if (nnxfuzz::printOp(*module) != before)
    nnxfuzz::fail("surgery", "'" + pipeline + "' failed and changed the IR");
  return 0;
}
