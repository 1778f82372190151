//===- nnx-opt.cpp - the nnx optimizer driver -------------------*- C++ -*-===//
//
// MlirOptMain with the dialects nnx IR uses at its three levels and the
// passes and named pipelines nnx offers (not every upstream dialect).
//
//===----------------------------------------------------------------------===//
#include "nnx/InitNNX.h"

#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  nnx::registerNNXDialects(registry);
  nnx::registerNNXPasses();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv,
      "nnx optimizer driver: structure-level surgery, forward "
      "lowering and the CPU / CUDA pipelines\n",
      registry));
}
