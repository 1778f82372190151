//===- MatmulSchedule.h - the CPU schedule's parts --------------*- C++ -*-===//
//
// What nnx-apply-cpu-schedule (ApplyCPUSchedule.cpp) puts together: the
// transform-dialect schedule and its tile sizes (MatmulSchedule.cpp), the
// batched contractions split into 2-D matmuls (BatchedContractions.cpp) and
// the dynamic row remainders split into static blocks (RowRemainders.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef NNX_LIB_CODEGEN_CPU_MATMULSCHEDULE_H
#define NNX_LIB_CODEGEN_CPU_MATMULSCHEDULE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::nnx {

/// Tile sizes of the matmul schedule, chosen from the target's vector width
/// (see docs/Lowering.md, "Matmul schedule"). Register tiles: `regN` is two
/// vectors of f32 and `regM` rows of them are the accumulators, as many as
/// keep both FMA pipes busy through the FMA latency while leaving registers
/// for the B row and the broadcast A element; one K step per tile (a longer
/// K step only adds shuffles). Cache tiles: an N x K block of the weight
/// (128 x 128 f32: 64 KiB) stays in L2 while `cacheM` rows of A stream by.
struct MatmulTiles {
  unsigned vectorBits;
  int64_t regM, regN, regK;
  int64_t cacheM, cacheN, cacheK;
};

/// The row of the tile table for `vectorBits` (not 0: resolved from the
/// host and the instruction-set cap first).
const MatmulTiles &matmulTilesFor(unsigned vectorBits);

/// The transform-dialect schedule, parsed; `parallel`: its `@split_n`
/// splits N into cache tiles with an `scf.forall` (threads), else with an
/// `scf.for`. Null (with an error) if it does not parse.
OwningOpRef<ModuleOp> parseMatmulSchedule(MLIRContext *context, bool parallel);

/// The tile sizes the schedule's entry sequence `entry` takes as
/// `!transform.param<i64>` arguments after the payload root, in order.
SmallVector<int64_t> scheduleParams(StringRef entry, const MatmulTiles &tiles);

/// A batched contraction (rank > 2) becomes an `scf.forall` over its batch
/// of 2-D `linalg.matmul`s.
void populateBatchedContractionPatterns(RewritePatternSet &patterns);

/// On tensors: bf16 A * B^T matmuls with f32 accumulators (K even, B static)
/// as 4-D contractions over pairs of K, B packed K/2 x N x 2
/// (BF16Matmul.cpp); ahead of the f32 layout pattern (benefit 2).
void populateBF16PairMatmulPatterns(RewritePatternSet &patterns);

/// On buffers: each such contraction as `x86vector.avx512.dot` register
/// tiles (`vdpbf16ps`); `parallel`: N cache blocks in an scf.forall.
void lowerBF16PairContractions(Operation *root, bool parallel);

/// On buffers: each elementwise generic computing on bf16 or f16 whose
/// innermost dim is static, a multiple of `lanes` and contiguous becomes
/// loops of `lanes`-wide vector ops (NarrowFloatVectors.cpp), which LLVM's
/// loop vectorizer does not make of it.
void vectorizeNarrowFloatElementwise(Operation *root, int64_t lanes);

/// The dynamic M remainders below `regM` rows become loops over static row
/// blocks.
void splitRowRemainders(Operation *root, int64_t regM);

/// Before the cache stage: matmuls whose static N would leave a partial
/// cache tile (`cacheN`) or a register tile (`regN`) whose width is not a
/// power of two become one matmul per column block (RowRemainders.cpp).
void splitColumnRemainders(Operation *root, int64_t cacheN, int64_t regN);

/// After the register stage: each register tile's K loop sums its block of
/// K from zero, and C's tile is added after it, so that float32's rounding
/// error grows with the block, not with the whole K (BlockedAccumulation.cpp).
void sumKBlocksFromZero(Operation *root);
/// Before the vectors are lowered: each scf.for iter_arg of an n-D vector
/// type (a register tile's accumulators) becomes one iter_arg per leading
/// row, reassembled where the body and the loop's users read it whole
/// (BlockedAccumulation.cpp); the contraction lowering's per-row results
/// then flow straight to the yield.
void splitAccumulatorRows(Operation *root);

/// With threads: each large elementwise generic at a function's top level
/// becomes an scf.forall over blocks of its outer loops
/// (ParallelElementwise.cpp).
void parallelizeElementwise(Operation *root);

/// On tensors: a channels-last pool with a small static window becomes an
/// elementwise generic reading each window tap through a strided map, the
/// channels innermost (PoolingTaps.cpp).
void populatePoolingTapsPatterns(RewritePatternSet &patterns);

/// On tensors, after ConvToMatmuls: a conv's elementwise epilogue (its
/// kernel's consumer of the conv's forall) applied to each block of the
/// forall, or fused with the phases' narrowing copy (ConvEpilogues.cpp).
void fuseConvEpilogues(Operation *root);

/// Reductions walk their input's contiguous dim innermost: the parallel
/// loop over it moves inside (ReductionLoopOrder.cpp).
void populateReductionLoopOrderPatterns(RewritePatternSet &patterns);

} // namespace mlir::nnx

#endif // NNX_LIB_CODEGEN_CPU_MATMULSCHEDULE_H
