//===- ErrorKind.h - what kind of error a diagnostic reports ----*- C++ -*-===//
//
// A diagnostic's kind, as data: the Python bindings pick an exception class
// from it (TypeError for a type error, MemoryError for a resource, ...) and
// the C API passes it on, instead of reading the message text. The kind
// travels as the diagnostic's metadata (`{nnx.error_kind = "<kind>"}`), so
// it leaves the message and the printed diagnostic unchanged. An error
// without a kind is a refusal: the pass or the verifier declines the input.
//
//===----------------------------------------------------------------------===//
#ifndef NNX_SUPPORT_ERRORKIND_H
#define NNX_SUPPORT_ERRORKIND_H

#include "mlir/IR/Diagnostics.h"

#include <optional>

namespace mlir::nnx {

enum class ErrorKind {
  /// The input is valid but the transform declines it (the default).
  Refusal,
  /// An operand or a target is of the wrong kind or type (Python's
  /// TypeError): deepen a site that is not a ReLU, say.
  TypeError,
  /// The input itself is malformed: a corrupt file, a wrong array.
  BadInput,
  /// Out of a resource: memory, a size limit, a time limit.
  Resource,
};

/// "refusal", "type_error", "bad_input" or "resource".
StringRef stringifyErrorKind(ErrorKind kind);

/// Marks `diag` as an error of `kind`.
void setErrorKind(Diagnostic &diag, ErrorKind kind);
InFlightDiagnostic &setErrorKind(InFlightDiagnostic &diag, ErrorKind kind);

/// The kind `diag` is marked with, if any.
std::optional<ErrorKind> getErrorKind(Diagnostic &diag);

} // namespace mlir::nnx

#endif // NNX_SUPPORT_ERRORKIND_H
