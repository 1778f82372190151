//===- InitNNX.h - dialects and passes the nnx tools register ---*- C++ -*-===//
#ifndef NNX_INITNNX_H
#define NNX_INITNNX_H

#include "mlir/IR/DialectRegistry.h"

namespace nnx {
/// The dialects nnx IR uses at its three levels (structure, forward,
/// lowered), with their external interface models.
void registerNNXDialects(mlir::DialectRegistry &registry);
/// nnx's passes and named pipelines, plus the upstream passes its lit tests
/// and pipelines name.
void registerNNXPasses();
} // namespace nnx

#endif // NNX_INITNNX_H
