//===- IndexChecks.h - run-time index checks of a forward -------*- C++ -*-===//
//
// A forward built by nnx-build-forward checks its indices at run time (an
// embedding's ids within the table): for each check it returns, after its
// outputs, the row-major position p of the first index outside [0, bound)
// as INT64_MAX - p (0 when there is none, so that a zeroed buffer reports
// nothing) and that index, as two 0-d i64 tensors, described by the
// function attribute `nnx.index_checks`:
//
//   func.func @forward(%ids: tensor<?x?xi64>, ...)
//       -> (tensor<?x?x8xf32>, tensor<i64>, tensor<i64>)
//       attributes {nnx.index_checks = [{bound = 16 : i64, input = 0 : i64,
//                                        layer = "wte", op = "nnx.embedding"}]}
//
// The runtime (nnx-aot/Runtime.h) passes a buffer for each and turns a
// reported position into an error, as PyTorch raises on a bad id.
//
//===----------------------------------------------------------------------===//
#ifndef NNX_LIB_EXECUTION_INDEXCHECKS_H
#define NNX_LIB_EXECUTION_INDEXCHECKS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace mlir::nnx {

/// One entry of `nnx.index_checks`.
struct IndexCheckSpec {
  /// The dotted path and the op name of the layer that indexes.
  std::string layer, op;
  /// Indices must lie in [0, bound).
  int64_t bound = 0;
  /// The forward's input the indices are, or -1 (computed indices).
  int64_t input = -1;
};

/// The checks `forward` declares, after checking that it has two `tensor<i64>`
/// results for each, right before its `numReadProbes` trailing read probes.
llvm::Expected<std::vector<IndexCheckSpec>>
readIndexChecks(func::FuncOp forward, size_t numReadProbes);

} // namespace mlir::nnx

#endif // NNX_LIB_EXECUTION_INDEXCHECKS_H
