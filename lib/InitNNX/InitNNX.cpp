//===- InitNNX.cpp - dialects and passes the nnx tools register -*- C++ -*-===//
#include "nnx/InitNNX.h"

#include "nnx/Codegen/CPU/Passes.h"
#include "nnx/Conversion/LinalgToGPU/Passes.h"
#include "nnx/Conversion/Passes.h"
#include "nnx/Conversion/ShardToMPI/Passes.h"

#include "nnx/Dialect/NNX/IR/NNXDialect.h"
#include "nnx/Dialect/NNX/Tracing/Passes.h"
#include "nnx/Dialect/NNX/Transforms/Passes.h"
#include "nnx/Pipelines/Pipelines.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/Passes.h"

void nnx::registerNNXDialects(mlir::DialectRegistry &registry) {
  registry.insert<mlir::nnx::NNXDialect, mlir::func::FuncDialect,
                  mlir::arith::ArithDialect, mlir::math::MathDialect,
                  mlir::tensor::TensorDialect, mlir::linalg::LinalgDialect,
                  mlir::shard::ShardDialect, mlir::mpi::MPIDialect,
                  mlir::DLTIDialect>();
  mlir::nnx::registerCPUPipelineDialects(registry);
  mlir::nnx::registerNNXCUDAExtensions(registry);
}

void nnx::registerNNXPasses() {
  mlir::registerTransformsPasses();
  mlir::nnx::registerNNXPasses();
  mlir::nnx::registerNNXConversionPasses();
  mlir::nnx::registerNNXCodegenCPUPasses();
  mlir::nnx::registerNNXPipelines();
  mlir::nnx::registerNNXLinalgToGPUPasses();
  mlir::nnx::registerNNXShardToMPIPasses();
  mlir::nnx::registerNNXCUDAPipeline();
  mlir::registerGpuKernelOutliningPass();
  mlir::registerGpuAsyncRegionPass();
  // What nnx-run does to find result shapes, for tests of shape functions.
  mlir::memref::registerResolveShapedTypeResultDimsPass();
  mlir::nnx::registerNNXTracingPasses();
}
