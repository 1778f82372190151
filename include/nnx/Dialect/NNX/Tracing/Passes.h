//===- Passes.h - nnx tracing passes ----------------------------*- C++ -*-===//
#ifndef NNX_DIALECT_NNX_TRACING_PASSES_H
#define NNX_DIALECT_NNX_TRACING_PASSES_H

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"
#include "nnx/Dialect/NNX/IR/NNXOps.h"
#include "nnx/Support/PassOptions.h"

namespace mlir::nnx {

#define GEN_PASS_DECL
#include "nnx/Dialect/NNX/Tracing/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "nnx/Dialect/NNX/Tracing/Passes.h.inc"

} // namespace mlir::nnx

#endif // NNX_DIALECT_NNX_TRACING_PASSES_H
