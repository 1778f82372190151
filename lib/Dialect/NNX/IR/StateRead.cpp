//===- StateRead.cpp - module tensors read by a forward --------*- C++ -*-===//
#include "nnx/Dialect/NNX/IR/StateRead.h"
#include "nnx/Dialect/NNX/IR/ModuleTree.h"

using namespace mlir;
using namespace mlir::nnx;

Operation *mlir::nnx::getStateOwner(StateOp state) {
  auto module = state->getParentOfType<CustomModuleOp>();
  if (!module)
    return nullptr;
  auto of = state->getAttrOfType<SymbolRefAttr>(kStateOfAttrName);
  if (!of)
    return module;
  return resolveAlias(resolveReference(module, of)).getOperation();
}

ElementsAttr mlir::nnx::getModuleTensor(Operation *module, StringRef name) {
  if (!module)
    return ElementsAttr();
  if (auto tensor = module->getAttrOfType<ElementsAttr>(name))
    return tensor;
  auto state = module->getAttrOfType<DictionaryAttr>("state");
  return state ? state.getAs<ElementsAttr>(name) : ElementsAttr();
}

SmallVector<StateOp> mlir::nnx::getOutsideStateReads(Operation *module) {
  SmallVector<StateOp> reads;
  ModelOp model = getParentModel(module);
  if (!model)
    return reads;
  model.walk([&](StateOp state) {
    if (!state->hasAttr(kStateOfAttrName) || module->isAncestor(state))
      return;
    Operation *owner = getStateOwner(state);
    if (owner && module->isAncestor(owner))
      reads.push_back(state);
  });
  return reads;
}

bool mlir::nnx::isUncalledModule(Operation *op) {
  return isa_and_nonnull<CustomModuleOp>(op) && op->hasAttr(kUncalledAttrName);
}
