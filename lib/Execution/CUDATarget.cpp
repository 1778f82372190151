//===- CUDATarget.cpp - the CUDA target of the execution library ----------===//
//
// The seam for `--target=cuda`: fill `config` with the GPU pipeline
// (forward level -> gpu -> nvvm -> cubin, host side to the LLVM dialect,
// same `_mlir_ciface_forward` calling convention on host memrefs) and the
// mgpu* runtime the lowered code calls (`symbolMap` for a runtime linked into
// the tool, or `sharedLibPaths`), plus the GPU LLVM IR translations
// (`registerExtensions`). Report a missing driver or device as an error
// here, before anything is compiled.
//
//===----------------------------------------------------------------------===//
#include "nnx/Execution/Target.h"

using namespace mlir;
using namespace mlir::nnx;

llvm::Error mlir::nnx::configureCUDATarget(TargetConfig &config) {
  (void)config;
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      "target 'cuda' is not available in this build (nnx was built without "
      "the CUDA target); use --target=cpu");
}
