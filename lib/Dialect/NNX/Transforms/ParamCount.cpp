//===- ParamCount.cpp - print parameter counts per module -------*- C++ -*-===//
#include "nnx/Dialect/NNX/IR/ModuleTree.h"
#include "nnx/Dialect/NNX/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/Format.h"

namespace mlir::nnx {
#define GEN_PASS_DEF_NNXPARAMCOUNTPASS
#include "nnx/Dialect/NNX/Transforms/Passes.h.inc"
} // namespace mlir::nnx

using namespace mlir;
using namespace mlir::nnx;

namespace {
struct Row {
  std::string path;
  std::string op;
  int64_t params;
};

/// One row per module below `op` (aliases counted once); a module whose own
/// count overflows 64 bits is an error on it.
LogicalResult collectRows(Operation *op, llvm::DenseSet<Operation *> &seen,
                          SmallVectorImpl<Row> &rows) {
  auto m = dyn_cast_or_null<ModuleOpInterface>(op);
  if (!m || !seen.insert(op).second)
    return success();
  std::string path = getModulePath(op);
  if (path.empty())
    path = "<root>";
  std::optional<int64_t> own = m.getOwnParameterCount();
  if (!own)
    return op->emitError() << "nnx-param-count: module '" << path << "' ("
                           << op->getName()
                           << ") has more parameters than 64 bits count";
  rows.push_back({path, op->getName().getStringRef().str(), *own});
  if (op->hasTrait<OpTrait::SymbolTable>())
    for (Operation &child : op->getRegion(0).front())
      if (failed(collectRows(&child, seen, rows)))
        return failure();
  return success();
}

void printRows(llvm::raw_ostream &os, ModelOp model, ArrayRef<Row> rows,
               int64_t total) {
  size_t pathWidth = 5, opWidth = 6;
  for (const Row &r : rows) {
    pathWidth = std::max(pathWidth, r.path.size());
    opWidth = std::max(opWidth, r.op.size());
  }
  os << "model @" << model.getSymName() << "\n";
  os << "  " << llvm::left_justify("path", pathWidth) << "  "
     << llvm::left_justify("module", opWidth) << "  "
     << llvm::right_justify("params", 10) << "\n";
  for (const Row &r : rows)
    os << "  " << llvm::left_justify(r.path, pathWidth) << "  "
       << llvm::left_justify(r.op, opWidth) << "  "
       << llvm::right_justify(std::to_string(r.params), 10) << "\n";
  os << "  " << llvm::left_justify("total", pathWidth + opWidth + 2) << "  "
     << llvm::right_justify(std::to_string(total), 10) << "\n";
}

struct NNXParamCountPass
    : public mlir::nnx::impl::NNXParamCountPassBase<NNXParamCountPass> {
  void runOnOperation() override {
    SmallVector<ModelOp> models;
    getOperation().walk([&](ModelOp model) { models.push_back(model); });
    for (ModelOp model : models) {
      SmallVector<Row> rows;
      llvm::DenseSet<Operation *> seen;
      if (failed(collectRows(model.getRootModule(), seen, rows)))
        return signalPassFailure();
      std::optional<int64_t> total = getParameterCount(model.getRootModule());
      if (!total) {
        model.emitError() << "nnx-param-count: the parameter count of model @"
                          << model.getSymName() << " overflows 64 bits";
        return signalPassFailure();
      }
      printRows(llvm::outs(), model, rows, *total);
    }
    markAllAnalysesPreserved();
  }
};
} // namespace
