//===- FuzzSupport.cpp - what the nnx tools do with an input, for fuzzing -===//
#include "FuzzSupport.h"

#include "nnx/InitNNX.h"
#include "nnx/Support/InputGuard.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

using namespace mlir;

std::unique_ptr<MLIRContext> nnxfuzz::makeContext() {
  static DialectRegistry *registry = [] {
    auto *r = new DialectRegistry;
    ::nnx::registerNNXDialects(*r);
    return r;
  }();
  auto context = std::make_unique<MLIRContext>(
      *registry, MLIRContext::Threading::DISABLED);
  context->getDiagEngine().registerHandler([](Diagnostic &diag) {
    (void)diag.str();
    for (Diagnostic &note : diag.getNotes())
      (void)note.str();
    return success();
  });
  return context;
}

nnxfuzz::ParseOutcome nnxfuzz::parseInput(MLIRContext &context,
                                          llvm::StringRef bytes,
                                          OwningOpRef<ModuleOp> &module) {
  std::unique_ptr<llvm::MemoryBuffer> buffer =
      llvm::MemoryBuffer::getMemBufferCopy(bytes, "fuzz-input");
  if (failed(mlir::nnx::checkParserInput(*buffer, llvm::nulls())))
    return ParseOutcome::Refused;
  const llvm::MemoryBuffer &input = *buffer;
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  OwningOpRef<ModuleOp> parsed;
  // Bytecode is verified once its dense data is checked, as nnx-opt does.
  bool bytecode = mlir::nnx::isBytecodeBuffer(input);
  ParserConfig config(&context, /*verifyAfterParse=*/!bytecode);
  if (failed(mlir::nnx::runParserContained(
          input, [&] { parsed = parseSourceFile<ModuleOp>(sourceMgr, config); },
          llvm::nulls())))
    return ParseOutcome::ContainedCrash;
  if (!parsed)
    return ParseOutcome::Refused;
  if (bytecode && (failed(mlir::nnx::checkDenseElementsData(*parsed)) ||
                   failed(verify(*parsed))))
    return ParseOutcome::Refused;
  module = std::move(parsed);
  return ParseOutcome::Parsed;
}

std::string nnxfuzz::printOp(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  op->print(os);
  return text;
}

void nnxfuzz::fail(llvm::StringRef harness, llvm::StringRef what) {
  llvm::errs() << "nnx fuzz finding (" << harness << "): " << what << "\n";
  llvm::errs().flush();
  std::abort();
}

std::string nnxfuzz::sourcePath(llvm::StringRef relative) {
  return (llvm::Twine(NNX_SOURCE_DIR) + "/" + relative).str();
}
