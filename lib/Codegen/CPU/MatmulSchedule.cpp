//===- MatmulSchedule.cpp - the CPU matmul schedule and its tiles -*- C++ -*-=//
//
// The transform-dialect schedule nnx-apply-cpu-schedule applies: tile,
// peel and vectorize `linalg.matmul`, then lower the vectors to FMAs; and
// the table of tile sizes per vector width. Measured on this machine kind at
// ~50-100 GFLOP/s on one core, against ~1.2 for plain loops.
//
//===----------------------------------------------------------------------===//
#include "MatmulSchedule.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/StringRef.h"

#include <iterator>

using namespace mlir;
using namespace mlir::nnx;

namespace {
/// The schedule. Its entry sequences take the tile sizes of `MatmulTiles`
/// (below) as `!transform.param<i64>` arguments after the payload root
/// (`scheduleParams`). `tile-matmul` runs on tensors: the N dimension is
/// split into cache tiles by an `scf.forall` when `parallel` (each
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
  // reg_m rows, or a static remainder): N and K loops, peeled.
  transform.named_sequence @tile_registers(%mm: !transform.any_op {transform.consumed},
      %reg_n: !transform.param<i64> {transform.readonly}, %reg_k: !transform.param<i64> {transform.readonly}) {
    %t, %ln, %lk = transform.structured.tile_using_for %mm tile_sizes [0, %reg_n, %reg_k]
        : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.op<"scf.for">, !transform.op<"scf.for">)
    transform.include @try_peel failures(suppress) (%lk) : (!transform.op<"scf.for">) -> ()
    transform.include @try_peel failures(suppress) (%ln) : (!transform.op<"scf.for">) -> ()
    transform.yield
  }

  // Register tiles of a matmul whose M is still dynamic (splitRowRemainders
  // left it: more rows than a remainder can have): one row at a time, so
  // that every tile is static.
  transform.named_sequence @tile_registers_by_row(%mm: !transform.any_op {transform.consumed},
      %reg_n: !transform.param<i64> {transform.readonly}, %reg_k: !transform.param<i64> {transform.readonly}) {
    %t, %lm, %ln, %lk = transform.structured.tile_using_for %mm tile_sizes [1, %reg_n, %reg_k]
        : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op, !transform.op<"scf.for">, !transform.op<"scf.for">)
    transform.include @try_peel failures(suppress) (%lk) : (!transform.op<"scf.for">) -> ()
    transform.include @try_peel failures(suppress) (%ln) : (!transform.op<"scf.for">) -> ()
    transform.yield
  }

  // The matchers pass the register tile sizes on to their actions.
  transform.named_sequence @match_matmul(%op: !transform.any_op {transform.readonly},
      %reg_n: !transform.param<i64> {transform.readonly}, %reg_k: !transform.param<i64> {transform.readonly})
      -> (!transform.any_op, !transform.param<i64>, !transform.param<i64>) {
    transform.match.operation_name %op ["linalg.matmul"] : !transform.any_op
    transform.yield %op, %reg_n, %reg_k : !transform.any_op, !transform.param<i64>, !transform.param<i64>
  }

  transform.named_sequence @match_dynamic_m_matmul(%op: !transform.any_op {transform.readonly},
      %reg_n: !transform.param<i64> {transform.readonly}, %reg_k: !transform.param<i64> {transform.readonly})
      -> (!transform.any_op, !transform.param<i64>, !transform.param<i64>) {
    transform.match.operation_name %op ["linalg.matmul"] : !transform.any_op
    %m = transform.match.structured failures(propagate) %op : (!transform.any_op) -> !transform.any_op {
    ^bb0(%s: !transform.any_op):
      %d = transform.match.structured.dim %s[0] : (!transform.any_op) -> !transform.param<i64>
      %static = transform.param.constant 0 : i64 -> !transform.param<i64>
      transform.match.param.cmpi lt %d, %static : !transform.param<i64>
      transform.match.structured.yield %s : !transform.any_op
    }
    transform.yield %m, %reg_n, %reg_k : !transform.any_op, !transform.param<i64>, !transform.param<i64>
  }

  transform.named_sequence @tile_matmul(%root: !transform.any_op {transform.readonly},
      %cache_m: !transform.param<i64> {transform.readonly}, %cache_n: !transform.param<i64> {transform.readonly},
      %cache_k: !transform.param<i64> {transform.readonly}, %reg_m: !transform.param<i64> {transform.readonly},
      %reg_n: !transform.param<i64> {transform.readonly}) {
    // Cache tiles, then the N and M register loops, peeled: M innermost, so
    // that one register tile's K x reg_n panel of B stays in L1 while the
    // cache tile's rows stream by (the BLIS loop order).
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %mm : !transform.any_op {
    ^bb0(%m: !transform.any_op):
      %t0 = transform.include @split_n failures(propagate) (%m, %cache_n) : (!transform.any_op, !transform.param<i64>) -> !transform.any_op
      %t1, %l1:2 = transform.structured.tile_using_for %t0 tile_sizes [%cache_m, 0, %cache_k] interchange = [2, 0, 1]
          : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op, !transform.any_op)
      %t2, %ln = transform.structured.tile_using_for %t1 tile_sizes [0, %reg_n]
          : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.op<"scf.for">)
      %t3, %lm = transform.structured.tile_using_for %t2 tile_sizes [%reg_m]
          : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.op<"scf.for">)
      transform.include @try_peel failures(suppress) (%lm) : (!transform.op<"scf.for">) -> ()
      transform.include @try_peel failures(suppress) (%ln) : (!transform.op<"scf.for">) -> ()
    }
    // Static shapes for the peeled main tiles (and for splitRowRemainders).
    %f = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %f {
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.yield
  }

  transform.named_sequence @tile_registers_all(%root: !transform.any_op {transform.readonly},
      %reg_n: !transform.param<i64> {transform.readonly}, %reg_k: !transform.param<i64> {transform.readonly}) {
    // N and K register loops.
    %f0 = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach_match in %f0, %reg_n, %reg_k
        @match_dynamic_m_matmul -> @tile_registers_by_row,
        @match_matmul -> @tile_registers
        : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> !transform.any_op
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
    // sink_ops first: a bf16 / f16 matmul's operands are extended after the
    // vectorizer's broadcasts; moved before them, the broadcasts fold into
    // the contraction's maps (else it is lowered element by element).
    transform.apply_patterns to %f {
      transform.apply_patterns.vector.sink_ops
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

  // N cache tiles, as parallel (forall) or sequential (for) loops: without
  // threads the pass replaces @split_n by @split_n_serial.
  transform.named_sequence @split_n(%m: !transform.any_op {transform.consumed},
      %cache_n: !transform.param<i64> {transform.readonly}) -> !transform.any_op {
    %t, %l = transform.structured.tile_using_forall %m tile_sizes [0, %cache_n]
        : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    transform.yield %t : !transform.any_op
  }
  transform.named_sequence @split_n_serial(%m: !transform.any_op {transform.consumed},
      %cache_n: !transform.param<i64> {transform.readonly}) -> !transform.any_op {
    %t, %l = transform.structured.tile_using_for %m tile_sizes [0, %cache_n]
        : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
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
} // namespace

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
const MatmulTiles &nnx::matmulTilesFor(unsigned vectorBits) {
  for (const MatmulTiles &tiles : kMatmulTiles)
    if (tiles.vectorBits <= vectorBits)
      return tiles;
  return kMatmulTiles[std::size(kMatmulTiles) - 1];
}

OwningOpRef<ModuleOp> nnx::parseMatmulSchedule(MLIRContext *context,
                                               bool parallel) {
  ParserConfig config(context);
  OwningOpRef<ModuleOp> schedule =
      parseSourceString<ModuleOp>(kSchedule, config, "nnx-cpu-schedule");
  if (!schedule)
    return schedule;
  // @split_n is the parallel N split; without threads, the sequential one.
  if (parallel)
    return schedule;
  SymbolTable symbols(*schedule);
  Operation *forall = symbols.lookup("split_n");
  Operation *serial = symbols.lookup("split_n_serial");
  if (!forall || !serial) {
    emitError(UnknownLoc::get(context))
        << "nnx-apply-cpu-schedule: the schedule has no @split_n and "
           "@split_n_serial";
    return nullptr;
  }
  symbols.erase(forall);
  if (failed(symbols.rename(serial, "split_n")))
    return nullptr;
  return schedule;
}

SmallVector<int64_t> nnx::scheduleParams(StringRef entry,
                                         const MatmulTiles &tiles) {
  if (entry == "tile_matmul")
    return {tiles.cacheM, tiles.cacheN, tiles.cacheK, tiles.regM, tiles.regN};
  if (entry == "tile_registers_all")
    return {tiles.regN, tiles.regK};
  return {};
}
