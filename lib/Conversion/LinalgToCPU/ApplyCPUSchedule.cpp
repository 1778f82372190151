//===- ApplyCPUSchedule.cpp - the CPU pipeline's matmul schedule -*- C++ -*-=//
//
// `nnx-apply-cpu-schedule`: applies one stage of a transform-dialect schedule
// (embedded below) that tiles, peels and vectorizes `linalg.matmul` for the
// CPU, then lowers the vectors to FMAs. Measured on this machine kind at
// ~50-100 GFLOP/s on one core, against ~1.2 for plain loops.
//
//===----------------------------------------------------------------------===//
#include "nnx/Conversion/LinalgToCPU/Layouts.h"
#include "nnx/Conversion/LinalgToCPU/MulAdd.h"
#include "nnx/Conversion/Passes.h"
#include "nnx/Dialect/NNX/IR/NNXOps.h"
#include "nnx/Support/TargetISA.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/TransformOps/DialectExtension.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/TransformOps/SCFTransformOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/SubsetInsertionOpInterfaceImpl.h"
#include "mlir/Dialect/Transform/IR/TransformOps.h"
#include "mlir/Dialect/Transform/LoopExtension/LoopExtension.h"
#include "mlir/Dialect/Transform/Transforms/TransformInterpreterUtils.h"
#include "mlir/Dialect/Vector/TransformOps/VectorTransformOps.h"
#include "mlir/Dialect/Vector/Transforms/SubsetOpInterfaceImpl.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cstring>
#include <memory>

namespace mlir::nnx {
#define GEN_PASS_DEF_NNXAPPLYCPUSCHEDULEPASS
#include "nnx/Conversion/Passes.h.inc"
} // namespace mlir::nnx

using namespace mlir;

namespace {
/// The schedule, a template whose `@NAME@` placeholders are the tile sizes
/// of `MatmulTiles` (below). `tile-matmul` runs on tensors: the N dimension
/// is split into cache tiles by an `scf.forall` when `@PARALLEL@` (each
/// thread owns whole columns of the result: no reduction is shared, so the
/// result does not depend on the thread count), then K and M are tiled for
/// the caches (loops ordered K, M: an N x K block of the weight stays in L2
/// while the batch streams by), then for registers; the register loops are
/// peeled (innermost first, so the handles of the outer loops stay valid; a
/// loop that divides evenly is left alone). That is `tile_matmul`; then
/// a dynamic M remainder (a batch that is not a multiple of the register
/// tile) is split into static row blocks in C++ (splitRowRemainders), and
/// `tile_registers_all` tiles every matmul for registers. Every matmul whose
/// shapes are static is then vectorized. Last, loop-invariant subsets are
/// hoisted: the accumulator tile is read before the K loop, carried in
/// registers as an iter_arg, and written after it (on tensors there is no
/// aliasing to fear; on buffers the subviews block upstream's transfer
/// hoisting). `lower-vectors` runs on buffers: it lowers the contractions to
/// vector FMAs and the transfers to rank-1 loads/stores.
constexpr llvm::StringLiteral kSchedule = R"mlir(
module attributes {transform.with_named_sequence} {
  transform.named_sequence @try_peel(%loops: !transform.op<"scf.for"> {transform.consumed}) {
    transform.foreach %loops : !transform.op<"scf.for"> {
    ^bb0(%l: !transform.op<"scf.for">):
      transform.sequence %l : !transform.op<"scf.for"> failures(suppress) {
      ^bb1(%l2: !transform.op<"scf.for">):
        %main, %rem = transform.loop.peel %l2 : (!transform.op<"scf.for">) -> (!transform.any_op, !transform.any_op)
      }
    }
    transform.yield
  }

  // Register tiles of a matmul whose M is static (a main M tile of
  // @REG_M@ rows, or a static remainder): N and K loops, peeled.
  transform.named_sequence @tile_registers(%mm: !transform.any_op {transform.consumed}) {
    %t, %ln, %lk = transform.structured.tile_using_for %mm tile_sizes [0, @REG_N@, @REG_K@]
        : (!transform.any_op) -> (!transform.any_op, !transform.op<"scf.for">, !transform.op<"scf.for">)
    transform.include @try_peel failures(suppress) (%lk) : (!transform.op<"scf.for">) -> ()
    transform.include @try_peel failures(suppress) (%ln) : (!transform.op<"scf.for">) -> ()
    transform.yield
  }

  // Register tiles of a matmul whose M is still dynamic (splitRowRemainders
  // left it: more rows than a remainder can have): one row at a time, so
  // that every tile is static.
  transform.named_sequence @tile_registers_by_row(%mm: !transform.any_op {transform.consumed}) {
    %t, %lm, %ln, %lk = transform.structured.tile_using_for %mm tile_sizes [1, @REG_N@, @REG_K@]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.op<"scf.for">, !transform.op<"scf.for">)
    transform.include @try_peel failures(suppress) (%lk) : (!transform.op<"scf.for">) -> ()
    transform.include @try_peel failures(suppress) (%ln) : (!transform.op<"scf.for">) -> ()
    transform.yield
  }

  transform.named_sequence @match_matmul(%op: !transform.any_op {transform.readonly}) -> !transform.any_op {
    transform.match.operation_name %op ["linalg.matmul"] : !transform.any_op
    transform.yield %op : !transform.any_op
  }

  transform.named_sequence @match_dynamic_m_matmul(%op: !transform.any_op {transform.readonly}) -> !transform.any_op {
    transform.match.operation_name %op ["linalg.matmul"] : !transform.any_op
    %m = transform.match.structured failures(propagate) %op : (!transform.any_op) -> !transform.any_op {
    ^bb0(%s: !transform.any_op):
      %d = transform.match.structured.dim %s[0] : (!transform.any_op) -> !transform.param<i64>
      %static = transform.param.constant 0 : i64 -> !transform.param<i64>
      transform.match.param.cmpi lt %d, %static : !transform.param<i64>
      transform.match.structured.yield %s : !transform.any_op
    }
    transform.yield %m : !transform.any_op
  }

  transform.named_sequence @tile_matmul(%root: !transform.any_op {transform.readonly}) {
    // Cache tiles and the M register loop, peeled.
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %mm : !transform.any_op {
    ^bb0(%m: !transform.any_op):
      %t0 = transform.include @@SPLIT_N@ failures(propagate) (%m) : (!transform.any_op) -> !transform.any_op
      %t1, %l1:2 = transform.structured.tile_using_for %t0 tile_sizes [@CACHE_M@, 0, @CACHE_K@] interchange = [2, 0, 1]
          : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
      %t2, %lm = transform.structured.tile_using_for %t1 tile_sizes [@REG_M@]
          : (!transform.any_op) -> (!transform.any_op, !transform.op<"scf.for">)
      transform.include @try_peel failures(suppress) (%lm) : (!transform.op<"scf.for">) -> ()
    }
    // Static shapes for the peeled main tiles (and for splitRowRemainders).
    %f = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %f {
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.yield
  }

  transform.named_sequence @tile_registers_all(%root: !transform.any_op {transform.readonly}) {
    // N and K register loops.
    %f0 = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach_match in %f0
        @match_dynamic_m_matmul -> @tile_registers_by_row,
        @match_matmul -> @tile_registers
        : (!transform.any_op) -> !transform.any_op
    %f = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %f {
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    %tiles = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %tiles : !transform.any_op {
    ^bb0(%m: !transform.any_op):
      transform.sequence %m : !transform.any_op failures(suppress) {
      ^bb1(%m2: !transform.any_op):
        transform.structured.vectorize %m2 : !transform.any_op
      }
    }
    transform.apply_patterns to %f {
      transform.apply_patterns.vector.reduction_to_contract
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    %fors = transform.structured.match ops{["scf.for"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %fors : !transform.any_op {
    ^bb0(%l: !transform.any_op):
      transform.loop.hoist_loop_invariant_subsets %l : !transform.any_op
    }
    transform.yield
  }

  // N cache tiles, as parallel (forall) or sequential (for) loops.
  transform.named_sequence @split_n_forall(%m: !transform.any_op {transform.consumed}) -> !transform.any_op {
    %t, %l = transform.structured.tile_using_forall %m tile_sizes [0, @CACHE_N@]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield %t : !transform.any_op
  }
  transform.named_sequence @split_n_for(%m: !transform.any_op {transform.consumed}) -> !transform.any_op {
    %t, %l = transform.structured.tile_using_for %m tile_sizes [0, @CACHE_N@]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield %t : !transform.any_op
  }

  transform.named_sequence @lower_vectors(%root: !transform.any_op {transform.readonly}) {
    %f = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %f {
      transform.apply_patterns.vector.lower_contraction lowering_strategy = "outerproduct"
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.vector.lower_multi_reduction lowering_strategy = "innerparallel"
      transform.apply_patterns.vector.split_transfer_full_partial split_transfer_strategy = "linalg-copy"
      transform.apply_patterns.vector.transfer_to_scf max_transfer_rank = 1 full_unroll = true
      transform.apply_patterns.vector.lower_transfer max_transfer_rank = 1
      transform.apply_patterns.vector.lower_shape_cast
      transform.apply_patterns.vector.lower_transpose lowering_strategy = "shuffle_1d"
      transform.apply_patterns.vector.lower_outerproduct
      transform.apply_patterns.vector.lower_broadcast
    } : !transform.any_op
    // Apart: together with the lowering patterns, canonicalization undoes
    // the broadcast lowering of a one-row tile forever (MLIR 22.1).
    transform.apply_patterns to %f {
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.yield
  }
}
)mlir";

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

// AVX-512: 6 x 64 measured on the 2-core Xeon at 143 GFLOP/s of a 174
// GFLOP/s peak (85%; 8 x 32, 16 accumulators: 130), the batch-256 MLP on one
// thread; 12 x 32, 4 x 64, 5 x 64 and 7 x 64 were slower, and N tiles that
// are not a power of two (8 x 48) fall off a cliff in LLVM. The AVX2 row is
// the classic 6 x 16 Haswell kernel.
constexpr MatmulTiles kMatmulTiles[] = {
    // bits regM regN regK cacheM cacheN cacheK
    {512, 6, 64, 1, 48, 128, 128}, // AVX-512: 32 zmm, 24 accumulators
    {256, 6, 16, 1, 48, 128, 128}, // AVX2: 16 ymm, 12 accumulators
    {128, 4, 8, 1, 48, 128, 128},  // SSE / NEON: 16 xmm, 8 accumulators
};

/// The row of `kMatmulTiles` for `vectorBits` (not 0: resolved from the
/// host and the instruction-set cap first).
static const MatmulTiles &matmulTilesFor(unsigned vectorBits) {
  for (const MatmulTiles &tiles : kMatmulTiles)
    if (tiles.vectorBits <= vectorBits)
      return tiles;
  return kMatmulTiles[std::size(kMatmulTiles) - 1];
}

/// `kSchedule` with its placeholders replaced.
static std::string instantiateSchedule(const MatmulTiles &tiles,
                                       bool parallel) {
  std::string text = kSchedule.str();
  std::pair<StringRef, std::string> values[] = {
      {"@SPLIT_N@", parallel ? "split_n_forall" : "split_n_for"},
      {"@CACHE_M@", std::to_string(tiles.cacheM)},
      {"@CACHE_N@", std::to_string(tiles.cacheN)},
      {"@CACHE_K@", std::to_string(tiles.cacheK)},
      {"@REG_M@", std::to_string(tiles.regM)},
      {"@REG_N@", std::to_string(tiles.regN)},
      {"@REG_K@", std::to_string(tiles.regK)}};
  for (const auto &[key, value] : values)
    for (size_t pos = text.find(key.str()); pos != std::string::npos;
         pos = text.find(key.str(), pos + value.size()))
      text.replace(pos, key.size(), value);
  return text;
}

/// Where a batched contraction's operand is read for batch loop `i`: a
/// loop dim, or the constant 0 of a broadcast size-1 dim.
static bool isBatchExpr(AffineExpr e, unsigned numBatch) {
  if (auto d = dyn_cast<AffineDimExpr>(e))
    return d.getPosition() < numBatch;
  auto c = dyn_cast<AffineConstantExpr>(e);
  return c && c.getValue() == 0;
}

} // namespace

bool mlir::nnx::isMulAddBody(linalg::GenericOp op) {
  Block &body = op.getRegion().front();
  if (body.getOperations().size() != 3)
    return false;
  auto add = dyn_cast<arith::AddFOp>(
      body.getTerminator()->getOperand(0).getDefiningOp());
  if (!add)
    return false;
  Value out = body.getArgument(2), other;
  if (add.getLhs() == out)
    other = add.getRhs();
  else if (add.getRhs() == out)
    other = add.getLhs();
  auto mul = other ? other.getDefiningOp<arith::MulFOp>() : nullptr;
  if (!mul)
    return false;
  Value a = body.getArgument(0), b = body.getArgument(1);
  return (mul.getLhs() == a && mul.getRhs() == b) ||
         (mul.getLhs() == b && mul.getRhs() == a);
}

namespace {

/// The 2-D slice of `v` for the batch indices `ivs`, read through `map`
/// (batch exprs, then the two matrix dims).
static Value batchSlice(OpBuilder &b, Location loc, Value v, AffineMap map,
                        ValueRange ivs) {
  auto type = cast<RankedTensorType>(v.getType());
  int64_t rank = type.getRank();
  SmallVector<OpFoldResult> offsets, sizes, strides(rank, b.getIndexAttr(1));
  for (AffineExpr e : map.getResults().drop_back(2)) {
    auto d = dyn_cast<AffineDimExpr>(e);
    offsets.push_back(d ? OpFoldResult(ivs[d.getPosition()])
                        : OpFoldResult(b.getIndexAttr(0)));
    sizes.push_back(b.getIndexAttr(1));
  }
  SmallVector<OpFoldResult> all = tensor::getMixedSizes(b, loc, v);
  for (int64_t d = rank - 2; d < rank; ++d) {
    offsets.push_back(b.getIndexAttr(0));
    sizes.push_back(all[d]);
  }
  auto sliceType = RankedTensorType::get(type.getShape().take_back(2),
                                         type.getElementType());
  return tensor::ExtractSliceOp::create(b, loc, sliceType, v, offsets, sizes,
                                        strides);
}

/// A batched contraction (`nnx.fn.matmul` of rank > 2, the attention
/// products: a `linalg.generic` with loops (batch..., m, n, k), operands
/// (batch..., m, k) and (batch..., k, n) or (batch..., n, k), broadcast
/// batch dims read at 0) becomes an `scf.forall` over the batch whose body
/// is one 2-D `linalg.matmul` of slices, which the matmul schedule then
/// tiles and vectorizes like a Linear's. The batch is split among threads.
struct BatchedContractionToMatmuls
    : public OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 ||
        op.getNumDpsInits() != 1 || !nnx::isMulAddBody(op))
      return rewriter.notifyMatchFailure(op, "not a contraction on tensors");
    unsigned loops = op.getNumLoops();
    if (loops < 4)
      return rewriter.notifyMatchFailure(op, "no batch loop");
    unsigned batch = loops - 3;
    SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
    if (iters.back() != utils::IteratorType::reduction ||
        llvm::count(iters, utils::IteratorType::parallel) != loops - 1)
      return rewriter.notifyMatchFailure(op, "not (parallel..., reduction)");
    MLIRContext *ctx = op.getContext();
    AffineExpr m = getAffineDimExpr(batch, ctx),
               n = getAffineDimExpr(batch + 1, ctx),
               k = getAffineDimExpr(batch + 2, ctx);
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    auto tailIs = [](AffineMap map, AffineExpr r, AffineExpr c) {
      return map.getNumResults() >= 2 &&
             map.getResult(map.getNumResults() - 2) == r &&
             map.getResult(map.getNumResults() - 1) == c;
    };
    bool transposedB = tailIs(maps[1], n, k);
    AffineMap outMap =
        AffineMap::getMultiDimIdentityMap(loops, ctx).getMajorSubMap(loops - 1);
    if (maps[2] != outMap || !tailIs(maps[0], m, k) ||
        !(transposedB || tailIs(maps[1], k, n)))
      return rewriter.notifyMatchFailure(op, "not (batch..., m, n, k)");
    for (AffineMap map : {maps[0], maps[1]})
      for (AffineExpr e : map.getResults().drop_back(2))
        if (!isBatchExpr(e, batch))
          return rewriter.notifyMatchFailure(op, "batch dims not plain");

    Location loc = op.getLoc();
    Value init = op.getDpsInits()[0];
    SmallVector<OpFoldResult> initSizes =
        tensor::getMixedSizes(rewriter, loc, init);
    auto forall = scf::ForallOp::create(
        rewriter, loc, ArrayRef(initSizes).take_front(batch), ValueRange{init},
        /*mapping=*/std::nullopt);
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(forall.getBody());
    SmallVector<Value> ivs(forall.getInductionVars());
    Value out = forall.getRegionIterArgs()[0];
    Value lhs = batchSlice(rewriter, loc, op.getDpsInputs()[0], maps[0], ivs);
    Value rhs = batchSlice(rewriter, loc, op.getDpsInputs()[1], maps[1], ivs);
    Value acc = batchSlice(rewriter, loc, out, outMap, ivs);
    auto mm = linalg::MatmulOp::create(rewriter, loc, TypeRange{acc.getType()},
                                       ValueRange{lhs, rhs}, ValueRange{acc});
    if (transposedB)
      mm.setIndexingMapsAttr(
          rewriter.getAffineMapArrayAttr(nnx::transposedBMatmulMaps(ctx)));
    // Written back where it was read.
    auto slice = acc.getDefiningOp<tensor::ExtractSliceOp>();
    rewriter.setInsertionPointToStart(forall.getTerminator().getBody());
    tensor::ParallelInsertSliceOp::create(
        rewriter, loc, mm.getResult(0), out, slice.getMixedOffsets(),
        slice.getMixedSizes(), slice.getMixedStrides());
    rewriter.replaceOp(op, forall.getResults());
    return success();
  }
};

/// Rewrites `mm`, a matmul of `rows` (dynamic, fewer than a register tile)
/// rows, as loops over static row blocks of each size in `blocks`
/// (descending powers of two, the last 1): first as many blocks of the
/// first size as fit, then of the next, so that every matmul left has a
/// static M and gets full register tiles.
static void splitRows(RewriterBase &rewriter, linalg::MatmulOp mm,
                      ArrayRef<int64_t> blocks) {
  Location loc = mm.getLoc();
  rewriter.setInsertionPoint(mm);
  Value a = mm.getDpsInputOperand(0)->get(),
        b = mm.getDpsInputOperand(1)->get();
  Value c = mm.getDpsInits()[0];
  auto cType = cast<RankedTensorType>(c.getType());
  Value rows = tensor::DimOp::create(rewriter, loc, c, 0);
  Value lo = arith::ConstantIndexOp::create(rewriter, loc, 0);
  for (int64_t block : blocks) {
    // [lo, hi): the rows left, rounded down to whole blocks.
    Value step = arith::ConstantIndexOp::create(rewriter, loc, block);
    Value left = arith::SubIOp::create(rewriter, loc, rows, lo);
    Value whole = arith::MulIOp::create(
        rewriter, loc, arith::DivUIOp::create(rewriter, loc, left, step), step);
    Value hi = arith::AddIOp::create(rewriter, loc, lo, whole);
    auto loop = scf::ForOp::create(
        rewriter, loc, lo, hi, step, ValueRange{c},
        [&](OpBuilder &bb, Location l, Value iv, ValueRange acc) {
          auto slice = [&](Value v, int64_t cols) {
            OpFoldResult zero = bb.getIndexAttr(0), one = bb.getIndexAttr(1);
            return tensor::ExtractSliceOp::create(
                bb, l,
                RankedTensorType::get({block, cols}, cType.getElementType()), v,
                ArrayRef<OpFoldResult>{iv, zero},
                ArrayRef<OpFoldResult>{bb.getIndexAttr(block),
                                       bb.getIndexAttr(cols)},
                ArrayRef<OpFoldResult>{one, one});
          };
          int64_t k = cast<RankedTensorType>(a.getType()).getDimSize(1);
          int64_t n = cType.getDimSize(1);
          Value accBlock = slice(acc[0], n);
          auto tile = linalg::MatmulOp::create(
              bb, l, TypeRange{accBlock.getType()}, ValueRange{slice(a, k), b},
              ValueRange{accBlock});
          Value out = tensor::InsertSliceOp::create(
              bb, l, tile.getResult(0), acc[0],
              ArrayRef<OpFoldResult>{iv, bb.getIndexAttr(0)},
              ArrayRef<OpFoldResult>{bb.getIndexAttr(block),
                                     bb.getIndexAttr(n)},
              ArrayRef<OpFoldResult>{bb.getIndexAttr(1), bb.getIndexAttr(1)});
          scf::YieldOp::create(bb, l, out);
        });
    c = loop.getResult(0);
    lo = hi;
  }
  rewriter.replaceOp(mm, c);
}

/// The M remainders phase 1 left (matmuls on tensors whose M is dynamic
/// and provably below `regM`, with static K and N) become loops over
/// static row blocks (splitRows): 4, 2, then 1 rows for a 6-row register
/// tile. Tiling such a remainder again in the transform dialect left
/// dynamic tiles (peeling cannot prove the blocks full), which is why this
/// is C++.
static void splitRowRemainders(Operation *root, int64_t regM) {
  SmallVector<int64_t> blocks;
  for (int64_t block = llvm::PowerOf2Ceil(regM) / 2; block >= 1; block /= 2)
    blocks.push_back(block);
  SmallVector<linalg::MatmulOp> remainders;
  root->walk([&](linalg::MatmulOp mm) {
    if (!mm.hasPureTensorSemantics() || mm.getDpsInits().size() != 1)
      return;
    auto a =
        dyn_cast<RankedTensorType>(mm.getDpsInputOperand(0)->get().getType());
    auto c = dyn_cast<RankedTensorType>(mm.getDpsInits()[0].getType());
    // One element type throughout: the new matmuls need no cast semantics.
    Type b = getElementTypeOrSelf(mm.getDpsInputOperand(1)->get().getType());
    if (!a || !c || a.getElementType() != c.getElementType() ||
        b != c.getElementType() || !c.isDynamicDim(0) || a.isDynamicDim(1) ||
        c.isDynamicDim(1) ||
        mm.getIndexingMapsArray() != mm.getDefaultIndexingMaps(mm.getContext()))
      return;
    FailureOr<int64_t> bound = ValueBoundsConstraintSet::computeConstantBound(
        presburger::BoundType::UB,
        ValueBoundsConstraintSet::Variable(mm.getDpsInits()[0], 0),
        /*stopCondition=*/nullptr, /*closedUB=*/true);
    if (succeeded(bound) && *bound < regM)
      remainders.push_back(mm);
  });
  IRRewriter rewriter(root->getContext());
  for (linalg::MatmulOp mm : remainders)
    splitRows(rewriter, mm, blocks);
}

struct NNXApplyCPUSchedulePass
    : public mlir::nnx::impl::NNXApplyCPUSchedulePassBase<
          NNXApplyCPUSchedulePass> {
  using Base::Base;

  void getDependentDialects(DialectRegistry &registry) const override {
    Base::getDependentDialects(registry);
    linalg::registerTransformDialectExtension(registry);
    scf::registerTransformDialectExtension(registry);
    transform::registerLoopExtension(registry);
    // Subset hoisting sees tensor slices and vector transfers through these.
    tensor::registerSubsetOpInterfaceExternalModels(registry);
    vector::registerSubsetOpInterfaceExternalModels(registry);
    vector::registerTransformDialectExtension(registry);
  }

  LogicalResult initialize(MLIRContext *context) override {
    if (vectorBits != 0 && vectorBits != 128 && vectorBits != 256 &&
        vectorBits != 512)
      return emitError(UnknownLoc::get(context))
             << "nnx-apply-cpu-schedule: vector-bits="
             << static_cast<unsigned>(vectorBits)
             << " is not a vector width the schedule knows (expected 0 for "
                "the host's, 128, 256 or 512)";
    // vector-bits=0: the host's widest, under the instruction-set cap
    // (max-isa, else NNX_JIT_MAX_ISA) that the code will be compiled for.
    tileBits = vectorBits;
    if (tileBits == 0) {
      llvm::Expected<unsigned> cap = nnx::maxISABits(maxISA);
      if (!cap)
        return emitError(UnknownLoc::get(context))
               << "nnx-apply-cpu-schedule: " << llvm::toString(cap.takeError());
      tileBits = nnx::hostVectorBits(*cap);
    }
    ParserConfig config(context);
    OwningOpRef<ModuleOp> parsed = parseSourceString<ModuleOp>(
        instantiateSchedule(matmulTilesFor(tileBits), parallel), config,
        "nnx-cpu-schedule");
    if (!parsed)
      return failure();
    library = std::make_shared<OwningOpRef<ModuleOp>>(std::move(parsed));
    return success();
  }

  void runOnOperation() override {
    bool tiling = stage == nnx::CPUScheduleStage::TileMatmul;
    StringRef entry = tiling ? "tile_matmul" : "lower_vectors";
    if (tiling) {
      RewritePatternSet patterns(&getContext());
      patterns.add<BatchedContractionToMatmuls>(&getContext());
      nnx::populateConvToMatmulsPatterns(patterns);
      nnx::populateMatmulToDefaultLayoutPatterns(patterns);
      if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
        return signalPassFailure();
      for (auto func : getOperation().getOps<func::FuncOp>())
        nnx::foldParameterPermutations(func);
    }
    if (failed(applySequence(entry)))
      return signalPassFailure();
    if (tiling) {
      splitRowRemainders(getOperation(), matmulTilesFor(tileBits).regM);
      if (failed(applySequence("tile_registers_all")))
        return signalPassFailure();
    }
  }

  /// Applies the schedule's sequence `@name` to the module.
  LogicalResult applySequence(StringRef name) {
    ModuleOp lib = library->get();
    auto sequence = lib.lookupSymbol<transform::NamedSequenceOp>(name);
    if (!sequence)
      return getOperation().emitError("nnx-apply-cpu-schedule: no sequence @")
             << name;
    transform::TransformOptions options;
    return transform::applyTransformNamedSequence(getOperation(), sequence, lib,
                                                  options);
  }

private:
  // Shared by clones of the pass (parsed once in initialize()).
  std::shared_ptr<OwningOpRef<ModuleOp>> library;
  /// The width the tiles were chosen for (vector-bits, or the host's).
  unsigned tileBits = 0;
};
} // namespace
