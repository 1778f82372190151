//===- ResultShapes.h - the shape functions of a forward --------*- C++ -*-===//
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
// Likewise a write probe's argument must have the shape of the value it
// replaces, which the inputs decide through the graph (a value of type
// tensor<?x?x8xf32> whose dims are the batch and the sequence):
// buildWriteShapesFunction adds `@forward_write_shapes`, computed from the
// inputs before the call, so that a patch of another size is refused rather
// than read past its end.
//
//===----------------------------------------------------------------------===//
#ifndef NNX_PIPELINES_RESULTSHAPES_H
#define NNX_PIPELINES_RESULTSHAPES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <string>
#include <vector>

namespace mlir::nnx {

/// The functions nnx-prepare-forward adds next to `@forward`: its dynamic
/// result dimensions, the shapes its write probes must have, and the sizes
/// it assumes equal.
inline constexpr llvm::StringLiteral kResultShapesFuncName =
    "forward_result_shapes";
inline constexpr llvm::StringLiteral kWriteShapesFuncName =
    "forward_write_shapes";
/// On an input argument of @forward (decode's KV caches): the function
/// updates it in place and does not return it; the runtime binds the
/// caller's buffer without a copy (docs/Generation.md).
inline constexpr llvm::StringLiteral kUpdatedInPlaceArgAttrName =
    "nnx.updated_in_place";
inline constexpr llvm::StringLiteral kShapeChecksFuncName =
    "forward_shape_checks";

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

/// Adds `@<name>` after `forward`, which still holds its `nnx.probe` ops
/// (before nnx-lower-probes): the same arguments (read only), one result
/// `tensor<Nxi64>` holding the N dynamic dimensions of the values the write
/// probes replace, probe by probe in op order (the order of the arguments
/// nnx-lower-probes adds), outermost first; `probeNames` gets the write
/// probes' names in that order. The clone has no probes (every value is the
/// model's own), so the dimensions are those each write must have for every
/// later value to have the shape the compiled code assumes; resolved as in
/// buildResultShapesFunction.
///
/// The function lists the probe names in `nnx.write_probes`.
///
/// Returns a null function when no written value has a dynamic dimension,
/// and fails with a diagnostic when `@<name>` exists or a probe is nested in
/// a region.
FailureOr<func::FuncOp>
buildWriteShapesFunction(func::FuncOp forward, StringRef name,
                         SmallVectorImpl<std::string> &probeNames);

/// Where the compiled code assumes two sizes agree: in `op`, a linalg op of
/// the forward, dimension `dim` of operand `operand` and dimension
/// `sourceDim` of operand `sourceOperand` index one loop (the loop runs over
/// the source's size, the first operand dimension that indexes it).
struct ShapeCheck {
  /// "'linalg.generic' (add_0) at model.mlir:5:8".
  std::string op;
  unsigned operand, dim, sourceOperand, sourceDim;
  /// The argument of the forward each operand is, or -1.
  int64_t argument, sourceArgument;
};

/// Adds `@<name>` after `forward` (probes lowered): the same arguments (read
/// only), one result `tensor<2Kxi64>` holding, for each of the K `checks`,
/// the source's size and the operand's. It is a clone of `forward` whose
/// linalg ops (elementwise ops on tensors become linalg ops) are replaced
/// by the sizes of their operands' dimensions that index a loop, resolved
/// as in buildResultShapesFunction; the checks that hold in every run (one
/// value twice, equal constants) are dropped. A call whose arrays disagree
/// where these checks do (two inputs of different batch added) would read
/// past a buffer.
///
/// The function lists the checks in `nnx.shape_checks`
/// (getShapeChecksAttr).
///
/// Returns a null function when no check is left (or the forward has more
/// than one block), and fails with a diagnostic when `@<name>` exists.
FailureOr<func::FuncOp>
buildShapeChecksFunction(func::FuncOp forward, StringRef name,
                         std::vector<ShapeCheck> &checks);

/// `checks` as the `nnx.shape_checks` attribute: one dictionary each.
ArrayAttr getShapeChecksAttr(MLIRContext *context, ArrayRef<ShapeCheck> checks);

/// The checks `nnx.shape_checks` of `fn` describes (none when `fn` is null
/// or has none); the dialect's verifier has checked the entries.
std::vector<ShapeCheck> readShapeChecks(func::FuncOp fn);

/// Adds to `forward`, before each op that makes a tensor with dynamic dims
/// from index values (tensor.empty, tensor.splat, nnx.fn.arange /
/// expand / reshape: the temporaries the compiled code allocates), a
/// run-time check (emitRuntimeCheck) that the tensor's size in bytes fits
/// in int64: a dim past that, or a negative one, would make the allocation
/// of a wrapped size that the op then writes past.
void addTemporarySizeChecks(func::FuncOp forward);

} // namespace mlir::nnx

#endif // NNX_PIPELINES_RESULTSHAPES_H
