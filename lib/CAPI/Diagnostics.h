//===- Diagnostics.h - C API: diagnostics for a callback --------*- C++ -*-===//
//
// The C API's one error path: the MLIR diagnostics emitted while a
// CapturedDiagnostics is alive are printed as nnx-opt prints them (without
// the source line) and handed to the caller's MlirStringCallback.
//
//===----------------------------------------------------------------------===//
#ifndef NNX_LIB_CAPI_DIAGNOSTICS_H
#define NNX_LIB_CAPI_DIAGNOSTICS_H

#include "mlir-c/Support.h"
#include "mlir/IR/Diagnostics.h"

#include <string>

namespace mlir::nnx::capi {

/// Collects the context's diagnostics while alive, instead of letting them
/// reach the context's other handlers (stderr).
class CapturedDiagnostics {
public:
  explicit CapturedDiagnostics(mlir::MLIRContext *ctx);
  /// The text collected so far: `file:line:col: error: message` lines, each
  /// followed by its notes.
  std::string take() { return std::move(text); }

private:
  std::string text;
  mlir::ScopedDiagnosticHandler handler;
};

/// Hands `message` to `onError` (when not null), in one call.
void report(MlirStringCallback onError, void *userData,
            llvm::StringRef message);

/// Reports `what`, followed by the collected diagnostics, and returns
/// failure.
MlirLogicalResult fail(MlirStringCallback onError, void *userData,
                       llvm::StringRef what, const std::string &diagnostics);

} // namespace mlir::nnx::capi

#endif // NNX_LIB_CAPI_DIAGNOSTICS_H
