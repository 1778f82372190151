//===- Diagnostics.cpp - C API: diagnostics as text for a callback --------===//
#include "Diagnostics.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

/// The first file:line:col inside `loc` (a name or call-site location wraps
/// one), else the location as MLIR prints it.
static std::string where(Location loc) {
  std::string text;
  loc->walk([&](Location inner) {
    if (auto file = dyn_cast<FileLineColLoc>(inner)) {
      text = llvm::formatv("{0}:{1}:{2}", file.getFilename().getValue(),
                           file.getLine(), file.getColumn());
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (text.empty())
    llvm::raw_string_ostream(text) << loc;
  return text;
}

static llvm::StringRef severity(DiagnosticSeverity kind) {
  switch (kind) {
  case DiagnosticSeverity::Error:
    return "error";
  case DiagnosticSeverity::Warning:
    return "warning";
  case DiagnosticSeverity::Note:
    return "note";
  case DiagnosticSeverity::Remark:
    return "remark";
  }
  llvm_unreachable("unknown diagnostic severity");
}

mlir::nnx::capi::CapturedDiagnostics::CapturedDiagnostics(MLIRContext *ctx)
    : handler(ctx, [this](Diagnostic &diag) {
        llvm::raw_string_ostream os(text);
        os << where(diag.getLocation()) << ": " << severity(diag.getSeverity())
           << ": " << diag << "\n";
        for (Diagnostic &note : diag.getNotes()) {
          // A context that prints the op on a diagnostic (the default of
          // mlirContextCreate) adds it as a note: the whole op in generic
          // form, a model's weights included. nnx-opt's users never see
          // it (docs trim it); the caller has the module anyway.
          if (llvm::StringRef(note.str()).starts_with("see current operation"))
            continue;
          os << where(note.getLocation()) << ": note: " << note << "\n";
        }
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
