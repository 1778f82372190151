//===- Passes.h - tensor parallelism's collectives to MPI -------*- C++ -*-===//
#ifndef NNX_CONVERSION_SHARDTOMPI_PASSES_H
#define NNX_CONVERSION_SHARDTOMPI_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/DLTI/DLTI.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MPI/IR/MPI.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "nnx/Support/PassOptions.h"

namespace mlir::nnx {

#define GEN_PASS_DECL
#include "nnx/Conversion/ShardToMPI/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "nnx/Conversion/ShardToMPI/Passes.h.inc"

/// Declares the memory effects of `mpi.allreduce` (reads its send buffer,
/// writes its receive buffer), which upstream leaves unknown and buffer
/// deallocation then refuses.
void registerMPIMemoryEffects(DialectRegistry &registry);

} // namespace mlir::nnx

#endif // NNX_CONVERSION_SHARDTOMPI_PASSES_H
