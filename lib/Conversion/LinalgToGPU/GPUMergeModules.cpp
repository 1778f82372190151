//===- GPUMergeModules.cpp - one gpu.module for all kernels -----*- C++ -*-===//
#include "nnx/Conversion/LinalgToGPU/Passes.h"

#include "mlir/IR/SymbolTable.h"

namespace mlir::nnx {
#define GEN_PASS_DEF_NNXGPUMERGEMODULESPASS
#include "nnx/Conversion/LinalgToGPU/Passes.h.inc"
} // namespace mlir::nnx

using namespace mlir;

namespace {

struct NNXGPUMergeModulesPass
    : public mlir::nnx::impl::NNXGPUMergeModulesPassBase<
          NNXGPUMergeModulesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Only plain outlined modules: no targets, no offloading handler.
    SmallVector<gpu::GPUModuleOp> modules;
    for (auto m : module.getOps<gpu::GPUModuleOp>())
      if (!m.getTargetsAttr() && !m.getOffloadingHandlerAttr())
        modules.push_back(m);
    if (modules.size() < 2)
      return;
    gpu::GPUModuleOp into = modules.front();
    SymbolTable intoTable(into);
    auto intoRef = FlatSymbolRefAttr::get(into.getSymNameAttr());
    // Renames: (module, old kernel) -> new kernel name in `into`.
    DenseMap<std::pair<StringAttr, StringAttr>, StringAttr> renamed;
    for (gpu::GPUModuleOp from : llvm::drop_begin(modules)) {
      SmallVector<Operation *> ops;
      for (Operation &op : from.getBody()->without_terminator())
        ops.push_back(&op);
      for (Operation *op : ops) {
        auto sym = dyn_cast<SymbolOpInterface>(op);
        if (!sym) {
          op->emitOpError("nnx-gpu-merge-modules: expected only symbols in "
                          "an outlined gpu.module");
          return signalPassFailure();
        }
        StringAttr oldName = sym.getNameAttr();
        op->remove();
        // Kernels are named after their module (unique in the parent);
        // SymbolTable::insert uniquifies anything else. Order is kept.
        if (isa<gpu::GPUFuncOp>(op))
          sym.setName(from.getSymNameAttr());
        Block *body = into.getBody();
        StringAttr newName =
            intoTable.insert(op, body->mightHaveTerminator()
                                     ? Block::iterator(body->getTerminator())
                                     : body->end());
        renamed[{from.getSymNameAttr(), oldName}] = newName;
      }
    }
    module.walk([&](gpu::LaunchFuncOp launch) {
      auto it =
          renamed.find({launch.getKernelModuleName(), launch.getKernelName()});
      if (it == renamed.end())
        return;
      launch.setKernelAttr(SymbolRefAttr::get(
          intoRef.getAttr(), {FlatSymbolRefAttr::get(it->second)}));
    });
    for (gpu::GPUModuleOp from : llvm::drop_begin(modules))
      from.erase();
  }
};

} // namespace
