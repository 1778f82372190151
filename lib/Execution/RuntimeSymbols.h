//===- RuntimeSymbols.h - what compiled code calls, from the runtime -*- C++
//-*-===//
//
// The JIT resolves the symbols the compiled code calls (the generic
// allocation functions of the forward's temporaries, `nnxRuntimeFail`,
// `memrefCopy`) to nnx's one runtime library, lib/AOTRuntime (plain C, no
// MLIR or LLVM), which an object from nnx-compile links too: one allocator
// with its cache of freed temporaries, one failure channel (Guard.c).
//
//===----------------------------------------------------------------------===//
#ifndef NNX_LIB_EXECUTION_RUNTIMESYMBOLS_H
#define NNX_LIB_EXECUTION_RUNTIMESYMBOLS_H

#include "llvm/ExecutionEngine/Orc/Core.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"

namespace mlir::nnx {

/// The runtime's symbols for the JIT: the allocation functions, the failure
/// channel and memrefCopy.
llvm::orc::SymbolMap runtimeSymbols(llvm::orc::MangleAndInterner interner);

} // namespace mlir::nnx

#endif // NNX_LIB_EXECUTION_RUNTIMESYMBOLS_H
