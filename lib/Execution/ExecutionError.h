//===- ExecutionError.h - the errors of the execution library --*- C++ -*-===//
#ifndef NNX_LIB_EXECUTION_EXECUTIONERROR_H
#define NNX_LIB_EXECUTION_EXECUTIONERROR_H

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

namespace mlir::nnx {

/// An error carrying `message`, as the execution library reports every
/// failure (the tools print it after "nnx-run: error: ").
inline llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

} // namespace mlir::nnx

#endif // NNX_LIB_EXECUTION_EXECUTIONERROR_H
