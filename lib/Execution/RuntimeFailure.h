//===- RuntimeFailure.h - failures inside compiled code ---------*- C++ -*-===//
//
// One failure channel for code the JIT compiled: a failed run-time check
// (RuntimeChecks.h: `nnxRuntimeFail`), a temporary the system cannot give
// (TemporaryAllocator.h) or a size that overflows records a message and
// unwinds (longjmp) to runGuarded, the call site of the compiled function on
// the calling thread; runGuarded then frees the temporaries the call still
// held and returns the message as an error. The compiled code never
// continues past a failure, and the compiled model stays usable.
//
// The frames unwound are the compiled code's (no destructors) and those of
// the functions below, which hold no object with a destructor when they
// unwind. A failure on a thread with no runGuarded active (an OpenMP worker;
// the compiled code calls the channel from the calling thread only) prints
// the message and aborts.
//
//===----------------------------------------------------------------------===//
#ifndef NNX_LIB_EXECUTION_RUNTIMEFAILURE_H
#define NNX_LIB_EXECUTION_RUNTIMEFAILURE_H

#include "llvm/ExecutionEngine/Orc/Core.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace mlir::nnx {

/// Calls `fn(args)` (a packed `_mlir_ciface_` function); a failure reported
/// through failRuntime on this thread during the call becomes the returned
/// error, after the temporaries the call allocated and did not free are
/// freed.
llvm::Error runGuarded(void (*fn)(void **), void **args);

/// Whether this thread is inside runGuarded.
bool isRuntimeGuarded();

/// Unwinds to this thread's runGuarded, which returns `message` with "{0}"
/// replaced by `a` and "{1}" by `b` as its error; without one, prints
/// "nnx: error: <that>" and aborts. `message` is a C string that outlives
/// the call (a literal): a caller's std::string would not be destroyed.
[[noreturn]] void failRuntime(const char *message, int64_t a = 0,
                              int64_t b = 0);

/// The compiled code's failed check (kRuntimeFailFuncName): failRuntime.
extern "C" [[noreturn]] void nnxRuntimeFail(const char *message, int64_t a,
                                            int64_t b);

/// `nnxRuntimeFail` for the JIT.
llvm::orc::SymbolMap
runtimeFailureSymbols(llvm::orc::MangleAndInterner interner);

} // namespace mlir::nnx

#endif // NNX_LIB_EXECUTION_RUNTIMEFAILURE_H
