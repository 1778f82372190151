//===- RuntimeSymbols.cpp - what compiled code calls, from the runtime ----===//

#include "RuntimeSymbols.h"

#include "AOTRuntime.h"
#include "ExecutionError.h"

using namespace mlir::nnx;

llvm::orc::SymbolMap
mlir::nnx::runtimeSymbols(llvm::orc::MangleAndInterner interner) {
  llvm::orc::SymbolMap symbols;
  auto add = [&](llvm::StringRef name, auto *fn) {
    symbols[interner(name)] = {llvm::orc::ExecutorAddr::fromPtr(fn),
                               llvm::JITSymbolFlags::Exported};
  };
  add("_mlir_memref_to_llvm_alloc", &_mlir_memref_to_llvm_alloc);
  add("_mlir_memref_to_llvm_aligned_alloc",
      &_mlir_memref_to_llvm_aligned_alloc);
  add("_mlir_memref_to_llvm_free", &_mlir_memref_to_llvm_free);
  add("nnxRuntimeFail", &nnxRuntimeFail);
  add("memrefCopy", &memrefCopy);
  return symbols;
}
