//===- Passes.h - nnx lowerings ---------------------------------*- C++ -*-===//
#ifndef NNX_CONVERSION_PASSES_H
#define NNX_CONVERSION_PASSES_H

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Transform/IR/TransformDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "nnx/Conversion/NNXToLinalg/NNXToLinalg.h"
#include "nnx/Support/PassOptions.h"

namespace mlir::nnx {

#define GEN_PASS_DECL
#include "nnx/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "nnx/Conversion/Passes.h.inc"

} // namespace mlir::nnx

#endif // NNX_CONVERSION_PASSES_H
