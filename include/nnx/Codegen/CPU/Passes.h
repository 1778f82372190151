//===- Passes.h - nnx CPU code generation -----------------------*- C++ -*-===//
#ifndef NNX_CODEGEN_CPU_PASSES_H
#define NNX_CODEGEN_CPU_PASSES_H

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Transform/IR/TransformDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "nnx/Dialect/NNX/IR/NNXDialect.h"
#include "nnx/Support/PassOptions.h"

namespace mlir::nnx {

/// The stages of `nnx-apply-cpu-schedule` (its `stage` option).
enum class CPUScheduleStage { TileMatmul, LowerVectors };

#define GEN_PASS_DECL
#include "nnx/Codegen/CPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "nnx/Codegen/CPU/Passes.h.inc"

} // namespace mlir::nnx

#endif // NNX_CODEGEN_CPU_PASSES_H
