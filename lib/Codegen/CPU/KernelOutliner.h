//===- KernelOutliner.h - ops into shared kernel functions ------*- C++ -*-===//
//
// What nnx-outline-kernels (loop nests on buffers) and nnx-outline-layers
// (linalg ops on tensors) share: a group of ops of a function body becomes
// a call of a private function, and equal functions are kept once.
//
//===----------------------------------------------------------------------===//
#ifndef NNX_LIB_CODEGEN_CPU_KERNELOUTLINER_H
#define NNX_LIB_CODEGEN_CPU_KERNELOUTLINER_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringMap.h"

#include <string>

namespace mlir::nnx {

/// Moves groups of ops into private kernel functions named
/// `@<function><infix><n>`, one per distinct kernel: a kernel whose printed
/// form (types, attributes, body) equals a kept one is not kept, and the
/// call goes to the kept one.
class KernelOutliner {
public:
  KernelOutliner(ModuleOp module, StringRef infix)
      : module(module), symbols(module), infix(infix.str()) {}

  /// Replaces `ops` (ops of `fn`'s body, in block order, whose results are
  /// used outside the group only where they are the last op's) by a call
  /// of a kernel computing them. What the group uses from outside becomes
  /// the kernel's arguments, in order of first use, except constants
  /// (cloned into the kernel, so that its loop bounds and shapes stay
  /// static); the last op's results are the kernel's results.
  func::CallOp outline(func::FuncOp fn, ArrayRef<Operation *> ops);

  /// Whether `fn` is a kernel this outliner created.
  bool isKernel(func::FuncOp fn) const { return created.contains(fn); }

private:
  ModuleOp module;
  SymbolTable symbols;
  std::string infix;
  /// The kernels kept, by their printed form under a placeholder name.
  llvm::StringMap<func::FuncOp> kernels;
  llvm::DenseSet<Operation *> created;
  unsigned counter = 0;

  func::FuncOp buildKernel(ArrayRef<Operation *> ops, ArrayRef<Value> args,
                           ArrayRef<Value> constants);
  func::FuncOp keepOrReuse(func::FuncOp candidate, StringRef prefix);
};

/// Marks `fn`, whose work moved into kernels, as glue: LLVM's instruction
/// selection merges the stores of a block pairwise (quadratic in a block
/// holding the stack arguments of hundreds of calls), and allocations,
/// views and calls need no optimization, so it gets none.
void markAsGlue(func::FuncOp fn);

} // namespace mlir::nnx

#endif // NNX_LIB_CODEGEN_CPU_KERNELOUTLINER_H
