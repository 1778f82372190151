//===- BlockedAccumulation.cpp - K blocks summed from zero -------*- C++ -*-=//
//
// After the register stage of the matmul schedule: each register tile's K
// loop (one cache block of K) carries its accumulators from the tile of C
// it read before the loop. Summed that way, an output element is one
// sequential sum over the whole K (a conv: over every tap's K too), and
// float32's rounding error grows with K. BLAS kernels instead sum each K
// block from zero and add the block's sum to C: the longest chain of
// roundings is a block plus the number of blocks. Here the loop starts
// from zeros and C's tile is added after it:
//
//   %c = vector.transfer_read %tile ...
//   %r = scf.for ... iter_args(%acc = %c) {
//     %n = vector.contract ... %a, %b, %acc
//     scf.yield %n }
//
// becomes `iter_args(%acc = dense<0.0>)` and `%sum = arith.addf %c, %r`,
// which replaces %r: one vector add per accumulator per K block. The read
// of C moves after the loop, next to the add.
//
// Before the vectors are lowered, such a loop's n-D accumulator (6 x 64
// f32 at 512 bits) is carried as one vector per row (splitAccumulatorRows).
// The contraction lowering computes each row apart and reassembles the n-D
// value from them; carried whole, that value turns into a from_elements of
// every lane (384 of them per K step) which LLVM must take apart again.
//
//===----------------------------------------------------------------------===//
#include "MatmulSchedule.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;

/// Whether iter_arg `i` of `loop` is a float accumulator read from C:
/// initialized by a transfer_read, used only as the accumulator of one
/// additive vector.contract whose result is only yielded back as `i`.
static bool isReadAccumulator(scf::ForOp loop, unsigned i) {
  Value init = loop.getInitArgs()[i];
  auto type = dyn_cast<VectorType>(init.getType());
  if (!type || !isa<FloatType>(type.getElementType()) ||
      !init.getDefiningOp<vector::TransferReadOp>())
    return false;
  BlockArgument acc = loop.getRegionIterArgs()[i];
  if (!acc.hasOneUse())
    return false;
  auto contract = dyn_cast<vector::ContractionOp>(*acc.getUsers().begin());
  if (!contract || contract.getAcc() != acc ||
      contract.getKind() != vector::CombiningKind::ADD ||
      !contract.getResult().hasOneUse())
    return false;
  auto yield = dyn_cast<scf::YieldOp>(*contract.getResult().getUsers().begin());
  return yield && yield->getParentOp() == loop &&
         yield.getOperand(i) == contract.getResult();
}

void mlir::nnx::sumKBlocksFromZero(Operation *root) {
  SmallVector<std::pair<scf::ForOp, unsigned>> accumulators;
  root->walk([&](scf::ForOp loop) {
    for (unsigned i = 0, e = loop.getNumRegionIterArgs(); i < e; ++i)
      if (isReadAccumulator(loop, i))
        accumulators.push_back({loop, i});
  });
  for (auto [loop, i] : accumulators) {
    Value read = loop.getInitArgs()[i];
    auto type = cast<VectorType>(read.getType());
    OpBuilder b(loop);
    Value zeros = arith::ConstantOp::create(
        b, loop.getLoc(), type,
        DenseElementsAttr::get(type, b.getFloatAttr(type.getElementType(), 0)));
    loop.getInitArgsMutable()[i].set(zeros);
    Value result = loop.getResult(i);
    // C's tile is read where it is added: kept in registers through the
    // loop, it would take as many as the accumulators.
    Operation *readOp = read.getDefiningOp();
    Operation *addAfter = loop;
    if (read.use_empty() && readOp->getBlock() == loop->getBlock()) {
      readOp->moveAfter(loop);
      addAfter = readOp;
    }
    b.setInsertionPointAfter(addAfter);
    Value sum = arith::AddFOp::create(b, loop.getLoc(), read, result);
    result.replaceAllUsesExcept(sum, sum.getDefiningOp());
  }
}

/// The rows a loop-carried value of `type` is split into: the leading dim
/// of a static n-D vector, else 0 (kept whole).
static int64_t accumulatorRows(Type type) {
  auto vector = dyn_cast<VectorType>(type);
  if (!vector || vector.getRank() < 2 || vector.isScalable())
    return 0;
  return vector.getDimSize(0);
}

/// `rows` reassembled into one vector of `type` (an insert chain, which
/// the extracts of single rows fold through).
static Value assembleRows(OpBuilder &b, Location loc, VectorType type,
                          ValueRange rows) {
  Value whole = ub::PoisonOp::create(b, loc, type);
  for (auto [r, row] : llvm::enumerate(rows))
    whole = vector::InsertOp::create(b, loc, row, whole, int64_t(r));
  return whole;
}

/// `loop` with each n-D vector iter_arg carried as its rows.
static void splitRows(RewriterBase &rewriter, scf::ForOp loop) {
  Location loc = loop.getLoc();
  SmallVector<int64_t> rows;
  SmallVector<Value> inits;
  rewriter.setInsertionPoint(loop);
  for (Value init : loop.getInitArgs()) {
    rows.push_back(accumulatorRows(init.getType()));
    if (!rows.back())
      inits.push_back(init);
    for (int64_t r = 0; r < rows.back(); ++r)
      inits.push_back(vector::ExtractOp::create(rewriter, loc, init, r));
  }
  auto split = scf::ForOp::create(
      rewriter, loc, loop.getLowerBound(), loop.getUpperBound(), loop.getStep(),
      inits, /*bodyBuilder=*/nullptr, loop.getUnsignedCmp());
  split->setDiscardableAttrs(loop->getDiscardableAttrDictionary());

  // The old body sees each split value reassembled from its rows.
  Block *body = split.getBody();
  rewriter.setInsertionPointToStart(body);
  SmallVector<Value> bodyArgs = {split.getInductionVar()};
  auto assemble = [&](ValueRange parts, SmallVectorImpl<Value> &wholes,
                      ValueRange oldValues) {
    unsigned next = 0;
    for (auto [old, n] : llvm::zip(oldValues, rows)) {
      if (!n) {
        wholes.push_back(parts[next++]);
        continue;
      }
      wholes.push_back(assembleRows(rewriter, loc,
                                    cast<VectorType>(old.getType()),
                                    parts.slice(next, n)));
      next += n;
    }
  };
  assemble(split.getRegionIterArgs(), bodyArgs, loop.getRegionIterArgs());
  rewriter.mergeBlocks(loop.getBody(), body, bodyArgs);

  // It yields each split value's rows.
  auto yield = cast<scf::YieldOp>(body->getTerminator());
  rewriter.setInsertionPoint(yield);
  SmallVector<Value> yielded;
  for (auto [value, n] : llvm::zip(yield.getOperands(), rows)) {
    if (!n)
      yielded.push_back(value);
    for (int64_t r = 0; r < n; ++r)
      yielded.push_back(vector::ExtractOp::create(rewriter, loc, value, r));
  }
  rewriter.modifyOpInPlace(yield,
                           [&] { yield.getResultsMutable().assign(yielded); });

  rewriter.setInsertionPointAfter(split);
  SmallVector<Value> results;
  assemble(split.getResults(), results, loop.getResults());
  rewriter.replaceOp(loop, results);
}

/// Whether `op` is elementwise on n-D vectors of one shape (an accumulator
/// tile added to C's tile, say): then it is computed row by row.
static bool isRowwise(Operation *op) {
  if (!op->hasTrait<OpTrait::Elementwise>() || op->getNumOperands() == 0 ||
      op->getNumResults() != 1 || op->getNumRegions() != 0 ||
      !accumulatorRows(op->getResult(0).getType()))
    return false;
  auto shape = cast<VectorType>(op->getResult(0).getType()).getShape();
  return llvm::all_of(op->getOperandTypes(), [&](Type type) {
    auto vector = dyn_cast<VectorType>(type);
    return vector && vector.getShape() == shape;
  });
}

/// `op` computed on each leading row of its operands apart.
static void computeByRows(RewriterBase &rewriter, Operation *op) {
  Location loc = op->getLoc();
  auto type = cast<VectorType>(op->getResult(0).getType());
  rewriter.setInsertionPoint(op);
  SmallVector<Value> rows;
  for (int64_t r = 0, e = type.getDimSize(0); r < e; ++r) {
    SmallVector<Value> operands;
    for (Value operand : op->getOperands())
      operands.push_back(vector::ExtractOp::create(rewriter, loc, operand, r));
    Operation *row = rewriter.clone(*op);
    row->setOperands(operands);
    row->getResult(0).setType(VectorType::Builder(type).dropDim(0));
    rows.push_back(row->getResult(0));
  }
  rewriter.replaceOp(op, assembleRows(rewriter, loc, type, rows));
}

void mlir::nnx::splitAccumulatorRows(Operation *root) {
  SmallVector<scf::ForOp> loops;
  SmallVector<Operation *> rowwise;
  root->walk([&](Operation *op) {
    auto loop = dyn_cast<scf::ForOp>(op);
    if (loop && llvm::any_of(loop.getInitArgs(), [](Value init) {
          return accumulatorRows(init.getType()) != 0;
        }))
      loops.push_back(loop);
    else if (isRowwise(op))
      rowwise.push_back(op);
  });
  IRRewriter rewriter(root->getContext());
  for (scf::ForOp loop : loops)
    splitRows(rewriter, loop);
  for (Operation *op : rowwise)
    computeByRows(rewriter, op);
}
