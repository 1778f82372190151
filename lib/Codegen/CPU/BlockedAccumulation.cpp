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
// which replaces %r: one vector add per accumulator per K block.
//
//===----------------------------------------------------------------------===//
#include "MatmulSchedule.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"

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
    b.setInsertionPointAfter(loop);
    Value sum = arith::AddFOp::create(b, loop.getLoc(), read, result);
    result.replaceAllUsesExcept(sum, sum.getDefiningOp());
  }
}
