//===- DiagnosticText.cpp - MLIR diagnostics as the tools print them ------===//
#include "nnx/Support/DiagnosticText.h"

#include "mlir/IR/BuiltinAttributes.h"

#include "llvm/Support/raw_ostream.h"

using namespace mlir;

std::string mlir::nnx::formatFileLocation(Location loc) {
  std::string text;
  loc->walk([&](Location inner) {
    if (auto file = dyn_cast<FileLineColLoc>(inner)) {
      text = file.getLine() == 0
                 ? file.getFilename().str()
                 : (file.getFilename().getValue() + ":" +
                    Twine(file.getLine()) + ":" + Twine(file.getColumn()))
                       .str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return text;
}

static StringRef getSeverityName(DiagnosticSeverity severity) {
  switch (severity) {
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

/// One line: "where: severity: message".
static void appendLine(llvm::raw_ostream &os, Diagnostic &diag) {
  std::string where = mlir::nnx::formatFileLocation(diag.getLocation());
  if (where.empty())
    llvm::raw_string_ostream(where) << diag.getLocation();
  os << where << ": " << getSeverityName(diag.getSeverity()) << ": " << diag
     << "\n";
}

void mlir::nnx::appendDiagnosticText(std::string &text, Diagnostic &diag) {
  llvm::raw_string_ostream os(text);
  appendLine(os, diag);
  for (Diagnostic &note : diag.getNotes())
    if (!StringRef(note.str()).starts_with("see current operation"))
      appendLine(os, note);
}
