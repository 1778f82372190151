//===- OutlineKernels.cpp - loop nests into shared kernels ------*- C++ -*-===//
//
// `nnx-outline-kernels`: every top-level op with regions of a function on
// buffers becomes a call of a private kernel function; equal kernels are
// kept once (see the pass description in Passes.td).
//
//===----------------------------------------------------------------------===//
#include "KernelOutliner.h"
#include "nnx/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir::nnx {
#define GEN_PASS_DEF_NNXOUTLINEKERNELSPASS
#include "nnx/Codegen/CPU/Passes.h.inc"
} // namespace mlir::nnx

using namespace mlir;

namespace {
/// Outlines every top-level op with regions of `fn`.
void outlineLoopNests(nnx::KernelOutliner &outliner, func::FuncOp fn) {
  SmallVector<Operation *> ops;
  for (Operation &op : fn.getBody().front())
    if (op.getNumRegions() > 0)
      ops.push_back(&op);
  for (Operation *op : ops)
    outliner.outline(fn, op);
  if (!ops.empty())
    nnx::markAsGlue(fn);
}

struct NNXOutlineKernelsPass
    : public mlir::nnx::impl::NNXOutlineKernelsPassBase<NNXOutlineKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> functions(module.getOps<func::FuncOp>());
    nnx::KernelOutliner outliner(module, "_kernel_");
    for (func::FuncOp fn : functions)
      if (!fn.isExternal())
        outlineLoopNests(outliner, fn);
  }
};
} // namespace
