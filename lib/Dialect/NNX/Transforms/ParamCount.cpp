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

void collectRows(Operation *op, llvm::DenseSet<Operation *> &seen,
                 SmallVectorImpl<Row> &rows) {
  auto m = dyn_cast<ModuleOpInterface>(op);
  if (!m || !seen.insert(op).second)
    return;
  std::string path = getModulePath(op);
  rows.push_back({path.empty() ? "<root>" : path,
                  op->getName().getStringRef().str(),
                  m.getOwnParameterCount()});
  if (op->hasTrait<OpTrait::SymbolTable>())
    for (Operation &child : op->getRegion(0).front())
      collectRows(&child, seen, rows);
}

struct NNXParamCountPass
    : public mlir::nnx::impl::NNXParamCountPassBase<NNXParamCountPass> {
  void runOnOperation() override {
    llvm::raw_ostream &os = llvm::outs();
    getOperation().walk([&](ModelOp model) {
      SmallVector<Row> rows;
      llvm::DenseSet<Operation *> seen;
      collectRows(model.getRootModule(), seen, rows);
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
         << llvm::right_justify(
                std::to_string(getParameterCount(model.getRootModule())), 10)
         << "\n";
    });
    markAllAnalysesPreserved();
  }
};
} // namespace
