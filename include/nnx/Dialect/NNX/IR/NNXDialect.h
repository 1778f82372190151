//===- NNXDialect.h - nnx dialect -------------------------------*- C++ -*-===//
#ifndef NNX_DIALECT_NNX_IR_NNXDIALECT_H
#define NNX_DIALECT_NNX_IR_NNXDIALECT_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Dialect.h"

#include <memory>

namespace mlir::nnx {
/// The weights files a context has open (Weights.cpp).
class WeightsFileCache;
} // namespace mlir::nnx

#include "nnx/Dialect/NNX/IR/NNXDialect.h.inc"

#endif // NNX_DIALECT_NNX_IR_NNXDIALECT_H
