//===- DiagnosticText.h - diagnostics as the tools print them ---*- C++ -*-===//
//
// Where a diagnostic goes to a caller as text instead of to a terminal (the
// C API's error callback, the Python bindings' exceptions, CompiledModel's
// llvm::Error), it reads as nnx-opt prints it, without the source line:
//
//   model.mlir:27:5: error: nnx-widen: target 'head' (nnx.linear) has no
//   consumer model.mlir:5:3: note: container is here
//
//===----------------------------------------------------------------------===//
#ifndef NNX_SUPPORT_DIAGNOSTICTEXT_H
#define NNX_SUPPORT_DIAGNOSTICTEXT_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"

#include <string>

namespace mlir::nnx {

/// "file:line:col" of the first file location `loc` holds (a name, fused or
/// call-site location wraps one; "file" alone for line 0, an implicit
/// module), or "" when it holds none.
std::string formatFileLocation(Location loc);

/// Appends `diag` and its notes, a line each: "where: error: message", then
/// "where: note: message" (where: formatFileLocation, else the location as
/// MLIR prints it). MLIR's "see current operation" note is left out: a
/// context that prints the op on a diagnostic adds the whole op in generic
/// form, a model's weights included, and the caller has the IR anyway.
void appendDiagnosticText(std::string &text, Diagnostic &diag);

} // namespace mlir::nnx

#endif // NNX_SUPPORT_DIAGNOSTICTEXT_H
