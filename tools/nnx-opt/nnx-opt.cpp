//===- nnx-opt.cpp - the nnx optimizer driver -------------------*- C++ -*-===//
//
// MlirOptMain with the dialects nnx IR uses at its three levels and the
// passes and named pipelines nnx offers (not every upstream dialect).
//
// `-o FILE` is written through a temporary beside FILE, renamed over it only
// when everything succeeded: a refused pass never truncates or deletes an
// existing FILE (say, the input the user meant to rewrite in place).
//
//===----------------------------------------------------------------------===//
#include "nnx/InitNNX.h"

#include "mlir/Tools/mlir-opt/MlirOptMain.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/WithColor.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  nnx::registerNNXDialects(registry);
  nnx::registerNNXPasses();
  auto [input, output] = mlir::registerAndParseCLIOptions(
      argc, argv,
      "nnx optimizer driver: structure-level surgery, forward "
      "lowering and the CPU / CUDA pipelines\n",
      registry);
  if (output == "-")
    return mlir::asMainReturnCode(
        mlir::MlirOptMain(argc, argv, input, output, registry));

  llvm::SmallString<256> temp;
  llvm::sys::fs::createUniquePath(output + ".nnx-opt-%%%%%%", temp,
                                  /*MakeAbsolute=*/false);
  bool ok = mlir::succeeded(
      mlir::MlirOptMain(argc, argv, input, temp.str(), registry));
  if (!ok) {
    (void)llvm::sys::fs::remove(temp);
    return 1;
  }
  // --show-dialects, --list-passes and the like write no output.
  if (!llvm::sys::fs::exists(temp))
    return 0;
  if (std::error_code ec = llvm::sys::fs::rename(temp, output)) {
    llvm::WithColor::error(llvm::errs(), "nnx-opt")
        << "cannot write '" << output << "': " << ec.message() << "\n";
    (void)llvm::sys::fs::remove(temp);
    return 1;
  }
  return 0;
}
