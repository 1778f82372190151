//===- Environment.cpp - what drivers read from the environment -----------===//
#include "nnx/Support/Environment.h"

#include <cstdlib>

std::string mlir::nnx::driverFamiliesDir(llvm::StringRef given) {
  if (!given.empty())
    return given.str();
  if (const char *env = std::getenv(kFamiliesDirEnv))
    return env;
  return "";
}
