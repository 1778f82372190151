//===- Passes.h - the compile path's passes ---------------------*- C++ -*-===//
#ifndef NNX_PIPELINES_PASSES_H
#define NNX_PIPELINES_PASSES_H

#include "nnx/Support/PassOptions.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::nnx {

#define GEN_PASS_DECL
#include "nnx/Pipelines/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "nnx/Pipelines/Passes.h.inc"

} // namespace mlir::nnx

#endif // NNX_PIPELINES_PASSES_H
