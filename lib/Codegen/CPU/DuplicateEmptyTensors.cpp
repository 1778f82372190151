//===- DuplicateEmptyTensors.cpp - split shared destinations ----*- C++ -*-===//
//
// `nnx-duplicate-empty-tensors`: bounds how many ops share one
// `tensor.empty` (or `linalg.fill` of one) as their destination before
// one-shot bufferization, whose analysis is quadratic in the size of an
// alias set (see the pass description in Passes.td).
//
//===----------------------------------------------------------------------===//
#include "nnx/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::nnx {
#define GEN_PASS_DEF_NNXDUPLICATEEMPTYTENSORSPASS
#include "nnx/Codegen/CPU/Passes.h.inc"
} // namespace mlir::nnx

using namespace mlir;

namespace {
/// A clone of `empty`, just before it.
Value cloneEmpty(RewriterBase &rewriter, tensor::EmptyOp empty) {
  rewriter.setInsertionPoint(empty);
  return rewriter.clone(*empty)->getResult(0);
}

/// A clone of `fill` (of a `tensor.empty`) writing a clone of that empty,
/// just before `fill`.
Value cloneFill(RewriterBase &rewriter, linalg::FillOp fill,
                tensor::EmptyOp empty) {
  IRMapping mapping;
  mapping.map(empty.getResult(), cloneEmpty(rewriter, empty));
  rewriter.setInsertionPoint(fill);
  return rewriter.clone(*fill, mapping)->getResult(0);
}

/// Rewires uses of shared destinations, one at a time in program order.
class Duplicator {
public:
  Duplicator(RewriterBase &rewriter, unsigned usesPerEmpty)
      : rewriter(rewriter), usesPerEmpty(usesPerEmpty) {}

  /// What `use` should read instead of its `tensor.empty` or `linalg.fill`
  /// (of one), or null to keep it. A fill that an op only reads (a DPS
  /// input) is not recomputed for it.
  Value replacement(OpOperand &use) {
    Value value = use.get();
    if (auto empty = value.getDefiningOp<tensor::EmptyOp>())
      return nextInGroup(empty);
    auto fill = value.getDefiningOp<linalg::FillOp>();
    if (!fill || value.hasOneUse() || !fill.hasPureTensorSemantics())
      return {};
    auto reader = dyn_cast<DestinationStyleOpInterface>(use.getOwner());
    if (reader && reader.isDpsInput(&use))
      return {};
    auto empty = fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>();
    return empty ? cloneFill(rewriter, fill, empty) : Value();
  }

private:
  /// The empty tensor for the next use of `empty`: the uses of `empty`
  /// are split, in program order, into groups of at most `usesPerEmpty`
  /// (0: no limit), each with its own `tensor.empty`.
  Value nextInGroup(tensor::EmptyOp empty) {
    auto &[current, uses] =
        groups.try_emplace(empty, empty.getResult(), 0u).first->second;
    if (usesPerEmpty && uses == usesPerEmpty) {
      current = cloneEmpty(rewriter, empty);
      uses = 0;
    }
    ++uses;
    return current == empty.getResult() ? Value() : current;
  }

  RewriterBase &rewriter;
  unsigned usesPerEmpty;
  /// Per original `tensor.empty`: its current group's value and uses.
  DenseMap<Operation *, std::pair<Value, unsigned>> groups;
};

struct NNXDuplicateEmptyTensorsPass
    : public mlir::nnx::impl::NNXDuplicateEmptyTensorsPassBase<
          NNXDuplicateEmptyTensorsPass> {
  using Base::Base;

  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    Duplicator duplicator(rewriter, usesPerEmpty);
    // Clones go before the original, where the walk has already been.
    getOperation()->walk<WalkOrder::PreOrder>([&](Operation *user) {
      for (OpOperand &use : user->getOpOperands())
        if (Value copy = duplicator.replacement(use))
          rewriter.modifyOpInPlace(user, [&] { use.set(copy); });
    });
  }
};
} // namespace
