//===- GPUResultsInPlace.cpp - results straight into out-params -----------===//
#include "nnx/Conversion/LinalgToGPU/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::nnx {
#define GEN_PASS_DEF_NNXGPURESULTSINPLACEPASS
#include "nnx/Conversion/LinalgToGPU/Passes.h.inc"
} // namespace mlir::nnx

using namespace mlir;

namespace {
/// The allocation `copy` moves into an out-param, when it can be the
/// out-param itself: `copy` is the out-param's only use, and the
/// allocation, of the same type and in the same function, is not used
/// after the copy in its block (nor freed, nor returned, which would be
/// such a use).
memref::AllocOp getReplaceableAlloc(memref::CopyOp copy, Block &entry) {
  auto out = dyn_cast<BlockArgument>(copy.getTarget());
  if (!out || out.getOwner() != &entry || !out.hasOneUse())
    return {};
  auto alloc = copy.getSource().getDefiningOp<memref::AllocOp>();
  if (!alloc || alloc.getType() != out.getType() ||
      alloc->getParentRegion() != entry.getParent())
    return {};
  for (Operation *user : alloc->getUsers()) {
    if (user == copy)
      continue;
    if (isa<memref::DeallocOp>(user) || user->getBlock() != copy->getBlock() ||
        copy->isBeforeInBlock(user))
      return {};
  }
  return alloc;
}

struct NNXGPUResultsInPlacePass
    : public mlir::nnx::impl::NNXGPUResultsInPlacePassBase<
          NNXGPUResultsInPlacePass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    Block &entry = func.getBody().front();
    SmallVector<memref::CopyOp> copies;
    func.walk([&](memref::CopyOp copy) { copies.push_back(copy); });
    for (memref::CopyOp copy : copies) {
      memref::AllocOp alloc = getReplaceableAlloc(copy, entry);
      if (!alloc)
        continue;
      Value out = copy.getTarget();
      copy.erase();
      alloc.getMemref().replaceAllUsesWith(out);
      alloc.erase();
    }
  }
};
} // namespace
