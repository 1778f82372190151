//===- WindowRange.h - window sizes the verifiers take ---------*- C++ -*-===//
//
// The limits on a window's stride and extent that keep its output-size
// arithmetic within int64, checked by the verifiers of the convolutions and
// the pools (layers and nnx.fn ops).
//
//===----------------------------------------------------------------------===//
#ifndef NNX_DIALECT_NNX_IR_WINDOWRANGE_H
#define NNX_DIALECT_NNX_IR_WINDOWRANGE_H

#include "nnx/Dialect/NNX/IR/Window.h"

#include "mlir/IR/Diagnostics.h"

namespace mlir::nnx {

/// The largest stride the verifiers accept, and the largest extent
/// (2 p + d (k - 1) + 1) and static input size: the output-size arithmetic
/// (size + 2 p - span + stride - 1) then stays within int64.
constexpr int64_t kMaxWindowStride = int64_t(1) << 62;
constexpr int64_t kMaxWindowExtent = int64_t(1) << 60;

/// Refuses, through `emitError`, window `w` of spatial dim `dim` when its
/// stride is above kMaxWindowStride or its extent above kMaxWindowExtent
/// (or past int64). Its sizes must already be positive (padding: not
/// negative).
LogicalResult verifyWindowRange(const Window &w,
                                function_ref<InFlightDiagnostic()> emitError,
                                unsigned dim);

/// Refuses a static input size above kMaxWindowExtent in dim `dim`.
LogicalResult verifyWindowedSize(int64_t size,
                                 function_ref<InFlightDiagnostic()> emitError,
                                 unsigned dim);

} // namespace mlir::nnx

#endif // NNX_DIALECT_NNX_IR_WINDOWRANGE_H
