//===- UpstreamOpChecks.h - what nnx checks of upstream ops -----*- C++ -*-===//
//
// Upstream's verifiers accept some tensor ops whose behaviour is undefined
// (MLIR's own words for an out-of-range `tensor.dim` index), and its passes
// then crash on them or the compiled code reads out of bounds. The forwards
// nnx lowers are written by its exporter and by users alike, so nnx refuses
// these before anything lowers them: `nnx.forward`'s verifier checks the ops
// of its body, and nnx-verify-tensor-ops (the first step of the CPU and CUDA
// pipelines) checks every op of a module.
//
//===----------------------------------------------------------------------===//
#ifndef NNX_DIALECT_NNX_IR_UPSTREAMOPCHECKS_H
#define NNX_DIALECT_NNX_IR_UPSTREAMOPCHECKS_H

#include "mlir/IR/Operation.h"

namespace mlir::nnx {

/// Checks `op` when it is one of the upstream ops nnx adds checks to, with
/// an error at it otherwise:
/// - `tensor.dim` / `memref.dim` of a ranked source: a constant index lies
///   in [0, rank);
/// - `tensor.extract_slice`, `tensor.insert_slice`, `memref.subview`: every
///   static stride is at least 1 and every static offset at least 0 (as
///   PyTorch's slicing requires; upstream's in-bounds check reads negative
///   strides as walking backwards).
/// Success for any other op.
LogicalResult verifyUpstreamOp(Operation *op);

} // namespace mlir::nnx

#endif // NNX_DIALECT_NNX_IR_UPSTREAMOPCHECKS_H
