//===- Layouts.h - the CPU schedule's operand layouts -----------*- C++ -*-===//
//
// The rewrites nnx-apply-cpu-schedule makes before it tiles: contractions
// in the layouts the matmul register tiles read (B as K x N, convolutions as
// one matmul per kernel tap), and parameter arguments asked for in those
// layouts, so that the runner permutes the stored weights once at bind time
// instead of the code on every call.
//
//===----------------------------------------------------------------------===//
#ifndef NNX_CONVERSION_LINALGTOCPU_LAYOUTS_H
#define NNX_CONVERSION_LINALGTOCPU_LAYOUTS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::nnx {

/// `w` permuted as `linalg.transpose` permutes: result dim i is dim
/// `perm[i]` of `w`.
DenseElementsAttr permuteDense(DenseElementsAttr w, ArrayRef<int64_t> perm);

/// `t` permuted by `perm` (result dim i is dim `perm[i]` of `t`): folded
/// when `t` is a constant, else a `linalg.transpose` (which
/// foldParameterPermutations turns into a parameter layout).
Value permuteTensor(OpBuilder &b, Location loc, Value t,
                    ArrayRef<int64_t> perm);

/// `linalg.conv_2d_nchw_fchw` and `linalg.conv_2d_nhwc_hwcf` on tensors (one
/// float type, static filter) as
/// one `linalg.matmul` per kernel tap over a channels-last copy of the input
/// split into its stride phases, or one over its gathered patches; a
/// grouped conv (`linalg.conv_2d_ngchw_gfchw`) as one per group and tap, or
/// per group; a depthwise conv (NCHW or NHWC) as multiply-adds
/// (ConvToMatmuls.cpp).
void populateConvToMatmulsPatterns(RewritePatternSet &patterns);

/// `t` (N x G x D x ...) with its group dim merged into the next: the
/// source of the `tensor.expand_shape` that split it (nnx-build-forward's
/// grouped conv), if one did.
Value mergeGroups(OpBuilder &b, Location loc, Value t);

/// The indexing maps of a `linalg.matmul` computing A * B^T.
SmallVector<AffineMap> transposedBMatmulMaps(MLIRContext *ctx);

/// A `linalg.matmul` computing A * B^T as A * B, B transposed once (a
/// constant at compile time, else by a `linalg.transpose`).
void populateMatmulToDefaultLayoutPatterns(RewritePatternSet &patterns);

/// The layout algebra that keeps a weight's reads one split-then-permute of
/// it (which foldParameterPermutations binds): a static
/// `tensor.expand_shape` of a transpose used once as the transpose of the
/// split input, and a transpose of a transpose used once as one transpose.
void populateLayoutAlgebraPatterns(RewritePatternSet &patterns);

/// A parameter argument (`nnx.parameter`) that is only read through
/// `linalg.transpose` ops of one permutation is asked for in that layout:
/// its type becomes the permuted one, the transposes go, and the function's
/// `nnx.parameter_layouts` records the permutation for the runner. One read
/// through a static `tensor.expand_shape` then a `linalg.transpose` is
/// recorded as {shape = the split, permutation}.
void foldParameterPermutations(func::FuncOp func);

/// A private function of `module` called only by `func.call`s (a kernel of
/// nnx-outline-layers) whose argument is only read through the layout
/// foldParameterPermutations folds (transposes of one permutation, or one
/// static `tensor.expand_shape` then transpose) takes the argument in that
/// layout: the layout ops move to every call site, where a parameter
/// argument's layout then folds into the binding.
void hoistKernelArgumentLayouts(ModuleOp module);

} // namespace mlir::nnx

#endif // NNX_CONVERSION_LINALGTOCPU_LAYOUTS_H
