//===- RuntimeFailure.cpp - failures inside compiled code -----------------===//
#include "RuntimeFailure.h"
#include "ExecutionError.h"
#include "TemporaryAllocator.h"

#include "nnx/Conversion/NNXToLinalg/RuntimeChecks.h"

#include "llvm/Support/raw_ostream.h"

#include <csetjmp>
#include <cstdlib>

using namespace mlir::nnx;

namespace {
/// A runGuarded in progress on this thread.
struct Guard {
  std::jmp_buf env;
  std::string message;
  Guard *outer;
};

thread_local Guard *currentGuard = nullptr;

/// `message` with "{0}" and "{1}" replaced by `a` and `b`.
std::string formatMessage(const char *message, int64_t a, int64_t b) {
  std::string text = message ? message : "a run-time check failed";
  for (auto [placeholder, value] : {std::pair{"{0}", a}, std::pair{"{1}", b}})
    for (size_t at = text.find(placeholder); at != std::string::npos;
         at = text.find(placeholder, at))
      text.replace(at, 3, std::to_string(value));
  return text;
}
} // namespace

// The frame of the setjmp: what it holds lives across the longjmp (the
// guard is reached through `currentGuard`, so it is in memory).
llvm::Error mlir::nnx::runGuarded(void (*fn)(void **), void **args) {
  Guard guard;
  guard.outer = currentGuard;
  OutstandingTemporaries temporaries;
  currentGuard = &guard;
  if (setjmp(guard.env) == 0) {
    fn(args);
    currentGuard = guard.outer;
    return llvm::Error::success();
  }
  currentGuard = guard.outer;
  temporaries.freeAll();
  return makeError(guard.message);
}

bool mlir::nnx::isRuntimeGuarded() { return currentGuard != nullptr; }

// `text` is destroyed before the unwind.
static void recordFailure(const char *message, int64_t a, int64_t b) {
  std::string text = formatMessage(message, a, b);
  if (Guard *guard = currentGuard) {
    guard->message = std::move(text);
    return;
  }
  llvm::errs() << "nnx: error: " << text << "\n";
  llvm::errs().flush();
  std::abort();
}

void mlir::nnx::failRuntime(const char *message, int64_t a, int64_t b) {
  recordFailure(message, a, b);
  std::longjmp(currentGuard->env, 1);
}

extern "C" void mlir::nnx::nnxRuntimeFail(const char *message, int64_t a,
                                          int64_t b) {
  failRuntime(message, a, b);
}

llvm::orc::SymbolMap
mlir::nnx::runtimeFailureSymbols(llvm::orc::MangleAndInterner interner) {
  llvm::orc::SymbolMap symbols;
  symbols[interner(kRuntimeFailFuncName)] = {
      llvm::orc::ExecutorAddr::fromPtr(&nnxRuntimeFail),
      llvm::JITSymbolFlags::Exported};
  return symbols;
}
