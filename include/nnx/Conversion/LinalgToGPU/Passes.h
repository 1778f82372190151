//===- Passes.h - nnx lowerings from linalg to the gpu dialect --*- C++ -*-===//
#ifndef NNX_CONVERSION_LINALGTOGPU_PASSES_H
#define NNX_CONVERSION_LINALGTOGPU_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Pass/Pass.h"
#include "nnx/Support/PassOptions.h"

namespace mlir::nnx {

#define GEN_PASS_DECL
#include "nnx/Conversion/LinalgToGPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "nnx/Conversion/LinalgToGPU/Passes.h.inc"

} // namespace mlir::nnx

#endif // NNX_CONVERSION_LINALGTOGPU_PASSES_H
