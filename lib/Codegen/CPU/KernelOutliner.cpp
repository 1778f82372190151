//===- KernelOutliner.cpp - ops into shared kernel functions ----*- C++ -*-===//
#include "KernelOutliner.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/RegionUtils.h"

using namespace mlir;
using namespace mlir::nnx;

/// Whether `v` is the result of an op that is cloned into a kernel rather
/// than passed to it: a constant (loop bounds and vector shapes stay
/// static). The address of a global is passed: it shapes no code, and the
/// run-time checks of a deep model, equal but for the message global each
/// names, then share one kernel instead of one each (ResNet-152: 145
/// kernels, from 442).
static bool isClonedIntoKernel(Value v) {
  Operation *def = v.getDefiningOp();
  return def && def->getNumOperands() == 0 &&
         def->hasTrait<OpTrait::ConstantLike>() && !isa<LLVM::AddressOfOp>(def);
}

/// The values `ops` use from outside the group, in order of first use.
static SetVector<Value> getCapturedValues(ArrayRef<Operation *> ops) {
  llvm::SmallPtrSet<Operation *, 8> inGroup(ops.begin(), ops.end());
  SetVector<Value> used;
  for (Operation *op : ops) {
    used.insert(op->getOperands().begin(), op->getOperands().end());
    for (Region &region : op->getRegions())
      getUsedValuesDefinedAbove(region, used);
  }
  SetVector<Value> captured;
  for (Value v : used)
    if (!inGroup.contains(v.getDefiningOp()))
      captured.insert(v);
  return captured;
}

func::FuncOp KernelOutliner::buildKernel(ArrayRef<Operation *> ops,
                                         ArrayRef<Value> args,
                                         ArrayRef<Value> constants) {
  OpBuilder b(module.getContext());
  Operation *last = ops.back();
  auto type =
      b.getFunctionType(ValueRange(args).getTypes(), last->getResultTypes());
  auto kernel = func::FuncOp::create(b, last->getLoc(), "nnx_kernel", type);
  kernel.setPrivate();
  Block *entry = kernel.addEntryBlock();
  b.setInsertionPointToStart(entry);
  IRMapping mapping;
  for (Value c : constants)
    mapping.map(c, b.clone(*c.getDefiningOp())->getResult(0));
  for (auto [arg, value] : llvm::zip_equal(entry->getArguments(), args))
    mapping.map(value, arg);
  Operation *clone = nullptr;
  for (Operation *op : ops)
    clone = b.clone(*op, mapping);
  func::ReturnOp::create(b, last->getLoc(), clone->getResults());
  return kernel;
}

func::FuncOp KernelOutliner::keepOrReuse(func::FuncOp candidate,
                                         StringRef prefix) {
  std::string key;
  llvm::raw_string_ostream os(key);
  candidate->print(os, OpPrintingFlags().printGenericOpForm().useLocalScope());
  auto [it, inserted] = kernels.try_emplace(key, candidate);
  if (!inserted) {
    candidate.erase();
    return it->second;
  }
  candidate.setSymName((prefix + infix + Twine(counter++)).str());
  symbols.insert(candidate);
  created.insert(candidate);
  return candidate;
}

func::CallOp KernelOutliner::outline(func::FuncOp fn,
                                     ArrayRef<Operation *> ops) {
  SmallVector<Value> args, constants;
  for (Value v : getCapturedValues(ops))
    (isClonedIntoKernel(v) ? constants : args).push_back(v);
  func::FuncOp kernel =
      keepOrReuse(buildKernel(ops, args, constants), fn.getSymName());
  Operation *last = ops.back();
  OpBuilder b(last);
  auto call = func::CallOp::create(b, last->getLoc(), kernel, args);
  last->replaceAllUsesWith(call.getResults());
  for (Operation *op : llvm::reverse(ops))
    op->erase();
  return call;
}

void mlir::nnx::markAsGlue(func::FuncOp fn) {
  Builder b(fn.getContext());
  fn->setAttr("passthrough", b.getStrArrayAttr({"noinline", "optnone"}));
}
