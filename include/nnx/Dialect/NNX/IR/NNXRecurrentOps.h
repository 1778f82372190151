//===- NNXRecurrentOps.h - nnx.lstm, nnx.gru, nnx.rnn, cells ----*- C++ -*-===//
//
// The recurrent layers (NNXRecurrentOps.td). Include this header, not the
// generated ones.
//
//===----------------------------------------------------------------------===//
#ifndef NNX_DIALECT_NNX_IR_NNXRECURRENTOPS_H
#define NNX_DIALECT_NNX_IR_NNXRECURRENTOPS_H

#include "nnx/Dialect/NNX/IR/NNXOps.h"
#include "nnx/Dialect/NNX/IR/Recurrent.h"

#include "nnx/Dialect/NNX/IR/NNXRecurrentInterfaces.h.inc"

#define GET_OP_CLASSES
#include "nnx/Dialect/NNX/IR/NNXRecurrentOps.h.inc"

namespace mlir::nnx {
/// Registers the recurrent ops with `dialect` (from NNXDialect::initialize).
void registerRecurrentOps(NNXDialect &dialect);
} // namespace mlir::nnx

#endif // NNX_DIALECT_NNX_IR_NNXRECURRENTOPS_H
