//===- OutlineKernels.cpp - loop nests into shared kernels ------*- C++ -*-===//
//
// `nnx-outline-kernels`: every top-level op with regions of a function on
// buffers becomes a call of a private kernel function; equal kernels are
// kept once (see the pass description in Passes.td).
//
//===----------------------------------------------------------------------===//
#include "nnx/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::nnx {
#define GEN_PASS_DEF_NNXOUTLINEKERNELSPASS
#include "nnx/Codegen/CPU/Passes.h.inc"
} // namespace mlir::nnx

using namespace mlir;

namespace {
/// Whether `v` is the result of an op that is cloned into a kernel rather
/// than passed to it: a constant (loop bounds and vector shapes stay
/// static). The address of a global is passed: it shapes no code, and the
/// run-time checks of a deep model, equal but for the message global each
/// names, then share one kernel instead of one each (ResNet-152: 145
/// kernels, from 442).
bool isClonedIntoKernel(Value v) {
  Operation *def = v.getDefiningOp();
  return def && def->getNumOperands() == 0 &&
         def->hasTrait<OpTrait::ConstantLike>() && !isa<LLVM::AddressOfOp>(def);
}

/// The values `op` uses from outside itself, in order of first use.
SetVector<Value> getCapturedValues(Operation *op) {
  SetVector<Value> captured(op->getOperands().begin(), op->getOperands().end());
  for (Region &region : op->getRegions())
    getUsedValuesDefinedAbove(region, captured);
  return captured;
}

class KernelOutliner {
public:
  KernelOutliner(ModuleOp module) : module(module), symbols(module) {}

  /// Outlines every top-level op with regions of `fn`.
  void outline(func::FuncOp fn) {
    SmallVector<Operation *> ops;
    for (Operation &op : fn.getBody().front())
      if (op.getNumRegions() > 0)
        ops.push_back(&op);
    for (Operation *op : ops)
      outlineOp(fn, op);
    if (ops.empty())
      return;
    // What is left is glue: allocations, views and one call per kernel.
    // LLVM's instruction selection merges the stores of a block pairwise
    // (quadratic in a block holding the stack arguments of hundreds of
    // calls); the glue needs no optimization, so it gets none.
    Builder b(fn.getContext());
    fn->setAttr("passthrough", b.getStrArrayAttr({"noinline", "optnone"}));
  }

private:
  ModuleOp module;
  SymbolTable symbols;
  /// The kernels kept, by their printed form under a placeholder name.
  llvm::StringMap<func::FuncOp> kernels;
  unsigned counter = 0;

  /// The kernel computing `op` (arguments `args`), with its constants.
  func::FuncOp buildKernel(Operation *op, ArrayRef<Value> args,
                           ArrayRef<Value> constants) {
    OpBuilder b(module.getContext());
    auto type =
        b.getFunctionType(ValueRange(args).getTypes(), op->getResultTypes());
    auto kernel = func::FuncOp::create(b, op->getLoc(), "nnx_kernel", type);
    kernel.setPrivate();
    Block *entry = kernel.addEntryBlock();
    b.setInsertionPointToStart(entry);
    IRMapping mapping;
    for (Value c : constants)
      mapping.map(c, b.clone(*c.getDefiningOp())->getResult(0));
    for (auto [arg, value] : llvm::zip_equal(entry->getArguments(), args))
      mapping.map(value, arg);
    Operation *clone = b.clone(*op, mapping);
    func::ReturnOp::create(b, op->getLoc(), clone->getResults());
    return kernel;
  }

  /// The kernel `candidate` stands for: an equal kept one (and `candidate`
  /// is erased), or `candidate` itself, named and inserted into the module.
  func::FuncOp keepOrReuse(func::FuncOp candidate, StringRef prefix) {
    std::string key;
    llvm::raw_string_ostream os(key);
    candidate->print(os,
                     OpPrintingFlags().printGenericOpForm().useLocalScope());
    auto [it, inserted] = kernels.try_emplace(key, candidate);
    if (!inserted) {
      candidate.erase();
      return it->second;
    }
    candidate.setSymName((prefix + "_kernel_" + Twine(counter++)).str());
    symbols.insert(candidate);
    return candidate;
  }

  void outlineOp(func::FuncOp fn, Operation *op) {
    SmallVector<Value> args, constants;
    for (Value v : getCapturedValues(op))
      (isClonedIntoKernel(v) ? constants : args).push_back(v);
    func::FuncOp kernel =
        keepOrReuse(buildKernel(op, args, constants), fn.getSymName());
    OpBuilder b(op);
    auto call = func::CallOp::create(b, op->getLoc(), kernel, args);
    op->replaceAllUsesWith(call.getResults());
    op->erase();
  }
};

struct NNXOutlineKernelsPass
    : public mlir::nnx::impl::NNXOutlineKernelsPassBase<NNXOutlineKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> functions(module.getOps<func::FuncOp>());
    KernelOutliner outliner(module);
    for (func::FuncOp fn : functions)
      if (!fn.isExternal())
        outliner.outline(fn);
  }
};
} // namespace
