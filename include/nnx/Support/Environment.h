//===- Environment.h - what drivers read from the environment ---*- C++ -*-===//
//
// Passes read only their options and the IR; the environment variables that
// configure nnx are read by drivers (the execution library, the tools, the
// Python module), which pass what they find on as options. The
// instruction-set cap, NNX_JIT_MAX_ISA, is in TargetISA.h.
//
//===----------------------------------------------------------------------===//
#ifndef NNX_SUPPORT_ENVIRONMENT_H
#define NNX_SUPPORT_ENVIRONMENT_H

#include "llvm/ADT/StringRef.h"

#include <string>

namespace mlir::nnx {

/// The variable naming the tracing families' directory.
inline constexpr const char *kFamiliesDirEnv = "NNX_FAMILIES_DIR";

/// The families directory a driver passes to the tracing passes
/// (`families-dir`): `given` if non-empty, else $NNX_FAMILIES_DIR, else
/// empty (the passes' compiled-in default).
std::string driverFamiliesDir(llvm::StringRef given);

} // namespace mlir::nnx

#endif // NNX_SUPPORT_ENVIRONMENT_H
