//===- Passes.h - nnx structure-level passes --------------------*- C++ -*-===//
#ifndef NNX_DIALECT_NNX_TRANSFORMS_PASSES_H
#define NNX_DIALECT_NNX_TRANSFORMS_PASSES_H

#include "mlir/Pass/Pass.h"
#include "nnx/Dialect/NNX/IR/NNXOps.h"
#include "nnx/Support/PassOptions.h"

namespace mlir::nnx {

#define GEN_PASS_DECL
#include "nnx/Dialect/NNX/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "nnx/Dialect/NNX/Transforms/Passes.h.inc"

} // namespace mlir::nnx

#endif // NNX_DIALECT_NNX_TRANSFORMS_PASSES_H
