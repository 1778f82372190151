//===- ErrorKind.cpp - what kind of error a diagnostic reports ------------===//
#include "nnx/Support/ErrorKind.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;
using namespace mlir::nnx;

/// The metadata entry's name.
static constexpr StringLiteral kErrorKindName = "nnx.error_kind";

StringRef mlir::nnx::stringifyErrorKind(ErrorKind kind) {
  switch (kind) {
  case ErrorKind::Refusal:
    return "refusal";
  case ErrorKind::TypeError:
    return "type_error";
  case ErrorKind::BadInput:
    return "bad_input";
  case ErrorKind::Resource:
    return "resource";
  }
  llvm_unreachable("unknown error kind");
}

void mlir::nnx::setErrorKind(Diagnostic &diag, ErrorKind kind) {
  MLIRContext *context = diag.getLocation().getContext();
  Builder b(context);
  diag.getMetadata().push_back(
      DiagnosticArgument(b.getDictionaryAttr(b.getNamedAttr(
          kErrorKindName, b.getStringAttr(stringifyErrorKind(kind))))));
}

InFlightDiagnostic &mlir::nnx::setErrorKind(InFlightDiagnostic &diag,
                                            ErrorKind kind) {
  if (Diagnostic *underlying = diag.getUnderlyingDiagnostic())
    setErrorKind(*underlying, kind);
  return diag;
}

std::optional<ErrorKind> mlir::nnx::getErrorKind(Diagnostic &diag) {
  for (DiagnosticArgument &arg : diag.getMetadata()) {
    if (arg.getKind() != DiagnosticArgument::DiagnosticArgumentKind::Attribute)
      continue;
    auto dict = dyn_cast<DictionaryAttr>(arg.getAsAttribute());
    auto name = dict ? dict.getAs<StringAttr>(kErrorKindName) : StringAttr();
    if (!name)
      continue;
    for (ErrorKind kind : {ErrorKind::Refusal, ErrorKind::TypeError,
                           ErrorKind::BadInput, ErrorKind::Resource})
      if (name.getValue() == stringifyErrorKind(kind))
        return kind;
  }
  return std::nullopt;
}
