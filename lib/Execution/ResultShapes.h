//===- ResultShapes.h - the result-shape function of a forward --*- C++ -*-===//
//
// The compiled forward writes its results into buffers the caller allocates
// (buffer-results-to-out-params), so the caller must know every result's
// shape before the call. For a forward with dynamically shaped results,
// buildResultShapesFunction adds a function that computes them:
//
//   func.func @forward(%x: tensor<?x2xf32>)
//       -> (tensor<?x3xf32>, tensor<4xf32>)
//   // gets
//   func.func @forward_result_shapes(
//       %x: tensor<?x2xf32> {bufferization.writable = false})
//       -> tensor<1xi64> {
//     %c0 = arith.constant 0 : index
//     %n = tensor.dim %x, %c0 : tensor<?x2xf32>
//     %i = arith.index_cast %n : index to i64
//     %s = tensor.from_elements %i : tensor<1xi64>
//     return %s : tensor<1xi64>
//   }
//
//===----------------------------------------------------------------------===//
#ifndef NNX_LIB_EXECUTION_RESULTSHAPES_H
#define NNX_LIB_EXECUTION_RESULTSHAPES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::nnx {

/// Adds `@<name>` after `forward`: the same arguments (read-only:
/// `bufferization.writable = false`), one result `tensor<Nxi64>` holding the
/// N dynamic dimensions of `forward`'s ranked tensor results, result by
/// result, outermost first. It is a clone of `forward` that returns the
/// dimensions of what `forward` returns; `tensor.dim` of an op's result is
/// then resolved through the op's reified shape and dead code is removed, so
/// only arithmetic on the argument shapes remains when the shapes depend on
/// nothing else (the whole computation stays when a dimension depends on
/// values: the shapes are exact in every case).
///
/// Returns a null function when every result is static (nothing is added),
/// and fails with a diagnostic when `@<name>` already exists.
FailureOr<func::FuncOp> buildResultShapesFunction(func::FuncOp forward,
                                                  StringRef name);

} // namespace mlir::nnx

#endif // NNX_LIB_EXECUTION_RESULTSHAPES_H
