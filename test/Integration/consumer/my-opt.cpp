//===- my-opt.cpp - an out-of-tree mlir-opt with nnx in it ------*- C++ -*-===//
//
// The consumer project of test/Integration (docs/Integration.md), built
// against an installed nnx: MlirOptMain with upstream dialects and passes,
// nnx's dialects, passes and pipelines (nnx/InitNNX.h), and a pass of its own
// that reads nnx ops through nnx's generated C++ API (NNXOps.h.inc).
//
//===----------------------------------------------------------------------===//
#include "nnx/Dialect/NNX/IR/NNXOps.h"
#include "nnx/InitNNX.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

/// "8x4".
static std::string shapeString(ArrayRef<int64_t> shape) {
  SmallVector<std::string> dims;
  for (int64_t dim : shape)
    dims.push_back(std::to_string(dim));
  return llvm::join(dims, "x");
}

namespace {
/// Prints each nnx.linear's name and weight shape, one line each
/// ("my-linear-shapes: fc1 8x4"): what a surgery pass changed.
struct LinearShapesPass
    : public PassWrapper<LinearShapesPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(LinearShapesPass)
  StringRef getArgument() const final { return "my-linear-shapes"; }
  StringRef getDescription() const final {
    return "Print each nnx.linear's name and weight shape";
  }
  void runOnOperation() final {
    getOperation().walk([](mlir::nnx::LinearOp linear) {
      ElementsAttr weight = linear.getWeightAttr();
      llvm::outs() << "my-linear-shapes: " << linear.getSymName() << " "
                   << (weight ? shapeString(weight.getShapedType().getShape())
                              : "uninitialized")
                   << "\n";
    });
  }
};
} // namespace

int main(int argc, char **argv) {
  DialectRegistry registry;
  // Upstream's, then nnx's (the three levels of nnx IR and what the CPU and
  // CUDA pipelines lower to).
  registry.insert<scf::SCFDialect>();
  ::nnx::registerNNXDialects(registry);
  // Upstream's (canonicalize, cse, ...), nnx's passes and named pipelines
  // (nnx-widen, nnx-cpu-pipeline, ...; registering a pass twice is a no-op),
  // and this project's own.
  registerTransformsPasses();
  ::nnx::registerNNXPasses();
  PassRegistration<LinearShapesPass>();
  return asMainReturnCode(MlirOptMain(
      argc, argv, "my-opt: upstream MLIR, nnx, and a pass of its own\n",
      registry));
}
