//===- Diagnostics.cpp - C API: diagnostics as text for a callback --------===//
#include "Diagnostics.h"

#include "nnx/Support/DiagnosticText.h"

#include "mlir/IR/MLIRContext.h"

using namespace mlir;

mlir::nnx::capi::CapturedDiagnostics::CapturedDiagnostics(MLIRContext *ctx)
    : handler(ctx, [this](Diagnostic &diag) {
        appendDiagnosticText(text, diag);
        return success();
      }) {}

void mlir::nnx::capi::report(MlirStringCallback onError, void *userData,
                             llvm::StringRef message) {
  if (onError)
    onError(mlirStringRefCreate(message.data(), message.size()), userData);
}

MlirLogicalResult mlir::nnx::capi::fail(MlirStringCallback onError,
                                        void *userData, llvm::StringRef what,
                                        const std::string &diagnostics) {
  if (diagnostics.empty())
    report(onError, userData, what);
  else if (what.empty())
    report(onError, userData, diagnostics);
  else
    report(onError, userData, (what + ":\n" + diagnostics).str());
  return mlirLogicalResultFailure();
}
