//===- nnx-opt.cpp - the nnx optimizer driver -------------------*- C++ -*-===//
//
// MlirOptMain with the dialects nnx IR uses at its three levels and the
// passes and named pipelines nnx offers (not every upstream dialect).
//
// The input is checked before MLIR parses it (nnx/Support/InputGuard.h), and
// a crash of MLIR's parser or bytecode reader is contained and reported as an
// error naming the file; a crash in a pass stays a crash.
//
// `-o FILE` is written only when everything succeeded
// (nnx/Support/OutputFile.h): a refused pass never truncates or deletes an
// existing FILE (say, the input the user meant to rewrite in place), a
// regular FILE is replaced atomically, and a device or a symlink is written
// into, never replaced.
//
//===----------------------------------------------------------------------===//
#include "nnx/InitNNX.h"
#include "nnx/Support/InputGuard.h"
#include "nnx/Support/OutputFile.h"

#include "mlir/IR/Verifier.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

#include "llvm/Support/CrashRecoveryContext.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/WithColor.h"

using namespace mlir;

namespace {
/// Refuses a corrupted dense elements attribute that the bytecode reader
/// accepted, before anything reads its elements
/// (mlir::nnx::checkDenseElementsData), then verifies the input when the
/// parse did not: the verifier's diagnostics print the op, which reads them.
struct CheckDenseDataPass
    : public PassWrapper<CheckDenseDataPass, OperationPass<>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(CheckDenseDataPass)
  explicit CheckDenseDataPass(bool verify) : verify(verify) {}
  StringRef getArgument() const final { return "nnx-check-dense-data"; }
  void runOnOperation() final {
    if (failed(mlir::nnx::checkDenseElementsData(getOperation())) ||
        (verify && failed(mlir::verify(getOperation()))))
      signalPassFailure();
  }
  bool verify;
};
} // namespace

/// MlirOptMain on `inputFile`, written to `os`. The parse (and the
/// verification after it) runs in a CrashRecoveryContext that the pass
/// pipeline's setup turns off again.
static LogicalResult runOpt(StringRef inputFile, llvm::raw_ostream &os,
                            DialectRegistry &registry) {
  MlirOptMainConfig config = MlirOptMainConfig::createFromCLOptions();
  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> input =
      openInputFile(inputFile, &errorMessage);
  if (!input) {
    llvm::errs() << errorMessage << "\n";
    return failure();
  }
  if (failed(mlir::nnx::checkParserInput(*input, llvm::errs())))
    return failure();

  MlirOptMainConfig inner = config;
  bool bytecode = mlir::nnx::isBytecodeBuffer(*input);
  // Bytecode is verified after its dense data is checked, not by the parse.
  bool verify = config.shouldVerifyOnParsing();
  if (bytecode)
    config.verifyOnParsing(false);
  // The read of bytecode runs with bounded memory; the passes do not.
  mlir::nnx::BytecodeReadLimits memoryLimit(*input);
  config.setPassPipelineSetupFn(
      [inner, bytecode, verify, &memoryLimit](PassManager &pm) {
        llvm::CrashRecoveryContext::Disable();
        memoryLimit.release();
        if (bytecode)
          pm.addPass(std::make_unique<CheckDenseDataPass>(verify));
        return inner.setupPassPipeline(pm);
      });
  // Kept for the report: MlirOptMain takes the buffer.
  std::unique_ptr<llvm::MemoryBuffer> inputCopy =
      llvm::MemoryBuffer::getMemBuffer(input->getMemBufferRef(),
                                       /*RequiresNullTerminator=*/false);
  LogicalResult result = failure();
  if (failed(mlir::nnx::runParserContained(
          *inputCopy,
          [&] { result = MlirOptMain(os, std::move(input), registry, config); },
          llvm::errs())))
    return failure();
  return result;
}

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  ::nnx::registerNNXDialects(registry);
  ::nnx::registerNNXPasses();
  auto [input, output] = mlir::registerAndParseCLIOptions(
      argc, argv,
      "nnx optimizer driver: structure-level surgery, forward "
      "lowering and the CPU / CUDA pipelines\n",
      registry);
  MlirOptMainConfig config = MlirOptMainConfig::createFromCLOptions();
  // --show-dialects and --list-passes: MlirOptMain prints them.
  if (config.shouldShowDialects() || config.shouldListPasses())
    return mlir::asMainReturnCode(
        mlir::MlirOptMain(argc, argv, input, output, registry));
  llvm::InitLLVM initLLVM(argc, argv);
  if (output == "-")
    return mlir::asMainReturnCode(runOpt(input, llvm::outs(), registry));

  // The passes' diagnostics are printed; only a file error is left to say.
  // (A lambda captures no structured binding before C++20.)
  StringRef inputFile = input;
  bool optFailed = false;
  llvm::Error err = mlir::nnx::writeOutputFile(
      output, [&](llvm::raw_ostream &os) -> llvm::Error {
        if (succeeded(runOpt(inputFile, os, registry)))
          return llvm::Error::success();
        optFailed = true;
        return llvm::make_error<llvm::StringError>(
            "failed", llvm::inconvertibleErrorCode());
      });
  if (!err)
    return 0;
  if (optFailed)
    llvm::consumeError(std::move(err));
  else
    llvm::WithColor::error(llvm::errs(), "nnx-opt")
        << llvm::toString(std::move(err)) << "\n";
  return 1;
}
