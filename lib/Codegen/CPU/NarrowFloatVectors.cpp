//===- NarrowFloatVectors.cpp - bf16 elementwise loops as vectors -*- C++ -*-=//
//
// Elementwise generics are left to LLVM's loop vectorizer, which does well
// on f32. On bf16 (and f16) it does not: no x86 instruction computes on
// bf16, so nnx-expand-bf16-casts writes each op in f32 between conversions,
// and LLVM's instcombine narrows what it can prove exact back to bf16 (a
// max of extended values is the max of the values); its cost model then
// keeps that loop scalar or two lanes wide. A bf16 max pool ran one element
// at a time: 10% of ResNet-50's bf16 forward for its stem pool alone.
//
// Here an elementwise generic on buffers that computes on a float type
// narrower than f32 becomes that loop already vectorized: scf.for loops
// over its outer dims and over its innermost dim (static, a multiple of the
// lanes) in steps of `lanes`, each operand read with `vector.load` along the
// innermost dim (or one element broadcast, for an operand that does not
// vary along it), the body's ops on vectors, and the results stored. The
// ops are the generic's own, elementwise: every element is computed as
// before.
//
//===----------------------------------------------------------------------===//
#include "MatmulSchedule.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;

namespace {

bool isNarrowFloat(Type t) {
  auto f = dyn_cast<FloatType>(t);
  return f && f.getWidth() < 32;
}

/// Whether `operand` varies along the innermost loop `last`, as the last
/// result of its map (a contiguous vector); false (one element per
/// iteration) if its map does not read `last` at all; nullopt if it reads
/// it elsewhere.
std::optional<bool> readsAlongInner(linalg::GenericOp op, OpOperand &operand,
                                    unsigned last) {
  AffineMap map = op.getMatchingIndexingMap(&operand);
  AffineExpr inner = getAffineDimExpr(last, op.getContext());
  ArrayRef<AffineExpr> results = map.getResults();
  if (!results.empty() && results.back() == inner)
    return true;
  if (llvm::is_contained(results, inner))
    return std::nullopt;
  return false;
}

/// Whether `op` is an elementwise generic on buffers computing on a narrow
/// float whose loop the vector loop can run with `lanes` lanes.
bool isNarrowFloatElementwise(linalg::GenericOp op, int64_t lanes) {
  if (!op.hasPureBufferSemantics() || op.getNumLoops() == 0 ||
      op.getNumParallelLoops() != op.getNumLoops() || op.getNumDpsInits() == 0)
    return false;
  int64_t inner = op.getStaticLoopRanges().back();
  unsigned last = op.getNumLoops() - 1;
  if (ShapedType::isDynamic(inner) || inner % lanes != 0)
    return false;
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type || !op.getMatchingIndexingMap(&operand).isProjectedPermutation())
      return false;
    std::optional<bool> along = readsAlongInner(op, operand, last);
    if (!along || (*along && !type.isLastDimUnitStride()) ||
        (!*along && op.isDpsInit(&operand)))
      return false;
  }
  bool narrow = llvm::any_of(op.getBlock()->getArgumentTypes(), isNarrowFloat);
  for (Operation &inner : op.getBlock()->without_terminator()) {
    if (inner.hasTrait<OpTrait::ConstantLike>())
      continue;
    if (!inner.hasTrait<OpTrait::Elementwise>() || inner.getNumRegions() ||
        !isMemoryEffectFree(&inner))
      return false;
    for (Type t : inner.getResultTypes()) {
      if (!t.isIntOrIndexOrFloat())
        return false;
      narrow |= isNarrowFloat(t);
    }
  }
  return narrow;
}

/// The indices of `operand` at the loops' `ivs`.
SmallVector<Value> indicesAt(linalg::GenericOp op, OpOperand &operand,
                             ValueRange ivs) {
  SmallVector<Value> at;
  for (AffineExpr e : op.getMatchingIndexingMap(&operand).getResults())
    at.push_back(ivs[cast<AffineDimExpr>(e).getPosition()]);
  return at;
}

/// The body of the innermost loop: the operands read at `ivs`, the body's
/// ops on vectors of `lanes`, the results stored.
void buildVectorBody(OpBuilder &b, Location loc, linalg::GenericOp op,
                     ValueRange ivs, int64_t lanes) {
  unsigned last = op.getNumLoops() - 1;
  Block *body = op.getBlock();
  IRMapping mapping;
  for (OpOperand &operand : op->getOpOperands()) {
    BlockArgument arg = body->getArgument(operand.getOperandNumber());
    if (arg.use_empty())
      continue;
    auto type = VectorType::get({lanes}, arg.getType());
    SmallVector<Value> at = indicesAt(op, operand, ivs);
    Value v = *readsAlongInner(op, operand, last)
                  ? vector::LoadOp::create(b, loc, type, operand.get(), at)
                        .getResult()
                  : vector::BroadcastOp::create(
                        b, loc, type,
                        memref::LoadOp::create(b, loc, operand.get(), at))
                        .getResult();
    mapping.map(arg, v);
  }
  for (Operation &inner : body->without_terminator()) {
    // A constant stays scalar (broadcast where an op reads it).
    if (inner.hasTrait<OpTrait::ConstantLike>())
      continue;
    OperationState state(loc, inner.getName());
    for (Value v : inner.getOperands()) {
      // A value from outside the body, or a constant, is broadcast.
      if (!mapping.contains(v)) {
        Value scalar = v;
        if (Operation *def = v.getDefiningOp(); def && def->getBlock() == body)
          scalar = b.clone(*def)->getResult(0);
        mapping.map(v,
                    vector::BroadcastOp::create(
                        b, loc, VectorType::get({lanes}, v.getType()), scalar));
      }
      state.addOperands(mapping.lookup(v));
    }
    state.addAttributes(inner.getAttrs());
    for (Type t : inner.getResultTypes())
      state.addTypes(VectorType::get({lanes}, t));
    Operation *vectorOp = b.create(state);
    mapping.map(inner.getResults(), vectorOp->getResults());
  }
  for (auto [value, init] : llvm::zip_equal(
           body->getTerminator()->getOperands(), op.getDpsInitsMutable()))
    vector::StoreOp::create(b, loc, mapping.lookupOrDefault(value), init.get(),
                            indicesAt(op, init, ivs));
}

/// `op` as its vector loop nest.
void vectorize(linalg::GenericOp op, int64_t lanes) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  SmallVector<Range, 4> ranges =
      cast<linalg::LinalgOp>(op.getOperation()).createLoopRanges(b, loc);
  SmallVector<Value> ivs;
  for (auto [d, range] : llvm::enumerate(ranges)) {
    bool inner = d + 1 == ranges.size();
    Value lb = getValueOrCreateConstantIndexOp(b, loc, range.offset);
    Value ub = getValueOrCreateConstantIndexOp(b, loc, range.size);
    Value step = arith::ConstantIndexOp::create(b, loc, inner ? lanes : 1);
    auto loop = scf::ForOp::create(b, loc, lb, ub, step);
    ivs.push_back(loop.getInductionVar());
    b.setInsertionPoint(loop.getBody()->getTerminator());
  }
  buildVectorBody(b, loc, op, ivs, lanes);
  op.erase();
}

} // namespace

void mlir::nnx::vectorizeNarrowFloatElementwise(Operation *root,
                                                int64_t lanes) {
  SmallVector<linalg::GenericOp> generics;
  root->walk([&](linalg::GenericOp op) {
    if (isNarrowFloatElementwise(op, lanes))
      generics.push_back(op);
  });
  for (linalg::GenericOp op : generics)
    vectorize(op, lanes);
}
