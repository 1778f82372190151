//===- LowerProjections.cpp - nnx.linear, nnx.embedding ---------*- C++ -*-===//
//
// The layers that map their input to a new feature space: Linear as a
// `linalg.matmul` of x (M x K) by the weight as stored (N x K: the matmul's
// indexing maps read it transposed; the CPU schedule picks the layout it
// wants) with the bias as the accumulator's initial value,
// Embedding as a gather from its table.
//
//===----------------------------------------------------------------------===//
#include "nnx/Conversion/NNXToLinalg/LayerLowering.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace mlir::nnx;
using IT = utils::IteratorType;

namespace {

/// `indexing_maps` of a `linalg.matmul` computing A * B^T: (m, k), (n, k),
/// (m, n).
NamedAttribute linalgMatmulTransposedB(OpBuilder &b) {
  AffineExpr m, n, k;
  bindDims(b.getContext(), m, n, k);
  auto map = [&](AffineExpr r, AffineExpr c) {
    return AffineMapAttr::get(AffineMap::get(3, 0, {r, c}, b.getContext()));
  };
  return b.getNamedAttr("indexing_maps",
                        b.getArrayAttr({map(m, k), map(n, k), map(m, n)}));
}

/// The accumulator of sizes `outSizes` (features last): the bias broadcast
/// over the leading dims, or zeros.
FailureOr<Value> emitLinearInit(LayerEmitter &e, LinearOp op, Type elt,
                                ArrayRef<OpFoldResult> outSizes) {
  FailureOr<Value> bias = e.getOptionalTensor(op, "bias");
  if (failed(bias))
    return failure();
  if (!*bias)
    return e.filled(outSizes, elt, 0.0);
  unsigned rank = outSizes.size();
  SmallVector<bool> featuresOnly(rank, false);
  featuresOnly.back() = true;
  return e.generic(*bias, {e.keptDims(rank, featuresOnly)},
                   e.empty(outSizes, elt),
                   e.getBuilder().getMultiDimIdentityMap(rank),
                   SmallVector<IT>(rank, IT::parallel),
                   [](OpBuilder &, Location, ValueRange a) { return a[0]; });
}

/// x (..., K) times W^T (W is N x K) accumulated into `init` (..., N), as one
/// `linalg.generic` contraction over the input's own shape. Used where more
/// than one leading dim is dynamic: collapsing them into one and expanding
/// back runs into an MLIR 22.1 bug in `expand-strided-metadata`
/// (llvm-project #186830, SIGSEGV), so no reshape is emitted.
Value emitContraction(LayerEmitter &e, Value x, Value w, Value init) {
  OpBuilder &b = e.getBuilder();
  unsigned r = cast<RankedTensorType>(x.getType()).getRank();
  // Iteration space: the leading dims, n, k.
  unsigned n = r - 1, k = r;
  SmallVector<AffineExpr> lead;
  for (unsigned d = 0; d + 1 < r; ++d)
    lead.push_back(b.getAffineDimExpr(d));
  auto map = [&](ArrayRef<AffineExpr> tail) {
    SmallVector<AffineExpr> exprs(lead);
    exprs.append(tail.begin(), tail.end());
    return AffineMap::get(r + 1, 0, exprs, b.getContext());
  };
  AffineMap xMap = map({b.getAffineDimExpr(k)});
  AffineMap wMap = AffineMap::get(
      r + 1, 0, {b.getAffineDimExpr(n), b.getAffineDimExpr(k)}, b.getContext());
  SmallVector<IT> iters(r, IT::parallel);
  iters.push_back(IT::reduction);
  return e.generic({x, w}, {xMap, wMap}, init, map({b.getAffineDimExpr(n)}),
                   iters, [](OpBuilder &nb, Location l, ValueRange a) -> Value {
                     Value p = arith::MulFOp::create(nb, l, a[0], a[1]);
                     return arith::AddFOp::create(nb, l, a[2], p);
                   });
}

struct LinearLowering
    : public LayerLoweringOpInterface::ExternalModel<LinearLowering, LinearOp> {
  FailureOr<Value> emitForward(Operation *layer, LayerEmitter &e,
                               Value x) const {
    auto op = cast<LinearOp>(layer);
    OpBuilder &b = e.getBuilder();
    Location loc = e.getLoc();
    auto xt = cast<RankedTensorType>(x.getType());
    int64_t rank = xt.getRank(), out = op.getOutFeaturesCount();
    if (rank < 2)
      return LayerEmitter::emitModuleError(op)
             << "needs an input of rank >= 2 (batch, ..., features), got "
             << x.getType();
    FailureOr<Value> w = e.getTensor(op, "weight");
    if (failed(w))
      return failure();

    if (llvm::count_if(xt.getShape().drop_back(), ShapedType::isDynamic) > 1) {
      SmallVector<OpFoldResult> outSizes = e.sizesOf(x);
      outSizes.back() = b.getIndexAttr(out);
      FailureOr<Value> init =
          emitLinearInit(e, op, xt.getElementType(), outSizes);
      if (failed(init))
        return failure();
      return emitContraction(e, x, *w, *init);
    }

    // Rank > 2: fold the leading dims into one and back.
    SmallVector<ReassociationIndices> reassoc;
    SmallVector<OpFoldResult> outShape;
    Value x2 = x;
    if (rank > 2) {
      outShape = e.sizesOf(x);
      ReassociationIndices lead;
      for (int64_t d = 0; d + 1 < rank; ++d)
        lead.push_back(d);
      reassoc = {lead, {rank - 1}};
      x2 = tensor::CollapseShapeOp::create(b, loc, x, reassoc);
    }
    SmallVector<OpFoldResult> outSizes{tensor::getMixedSize(b, loc, x2, 0),
                                       b.getIndexAttr(out)};
    FailureOr<Value> init =
        emitLinearInit(e, op, xt.getElementType(), outSizes);
    if (failed(init))
      return failure();
    Value y = linalg::MatmulOp::create(b, loc, TypeRange{init->getType()},
                                       ValueRange{x2, *w}, ValueRange{*init},
                                       linalgMatmulTransposedB(b))
                  .getResult(0);
    if (rank == 2)
      return y;
    outShape.back() = b.getIndexAttr(out);
    SmallVector<int64_t> staticShape(xt.getShape());
    staticShape.back() = out;
    return tensor::ExpandShapeOp::create(b, loc, xt.clone(staticShape), y,
                                         reassoc, outShape)
        .getResult();
  }
};

struct EmbeddingLowering
    : public LayerLoweringOpInterface::ExternalModel<EmbeddingLowering,
                                                     EmbeddingOp> {
  FailureOr<Value> emitForward(Operation *layer, LayerEmitter &e,
                               Value ids) const {
    OpBuilder &b = e.getBuilder();
    auto it = cast<RankedTensorType>(ids.getType());
    FailureOr<Value> table = e.getTensor(layer, "weight");
    if (failed(table))
      return failure();
    auto wt = cast<RankedTensorType>(table->getType());
    int64_t rank = it.getRank(), rows = wt.getDimSize(0);
    SmallVector<OpFoldResult> sizes = e.sizesOf(ids);
    sizes.push_back(b.getIndexAttr(wt.getDimSize(1)));
    SmallVector<bool> keep(rank + 1, true);
    keep.back() = false;
    Value tbl = *table;
    // Out-of-range ids are clamped into [0, rows) so a bad id cannot read
    // outside the table (PyTorch raises an error instead).
    return e.generic(
        ids, {e.keptDims(rank + 1, keep)}, e.empty(sizes, wt.getElementType()),
        b.getMultiDimIdentityMap(rank + 1),
        SmallVector<IT>(rank + 1, IT::parallel),
        [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
          Value id = arith::IndexCastOp::create(nb, l, nb.getIndexType(), a[0]);
          Value zero = arith::ConstantIndexOp::create(nb, l, 0);
          Value last = arith::ConstantIndexOp::create(nb, l, rows - 1);
          id = arith::MaxSIOp::create(nb, l, id, zero);
          id = arith::MinSIOp::create(nb, l, id, last);
          Value col = linalg::IndexOp::create(nb, l, rank);
          return tensor::ExtractOp::create(nb, l, tbl, ValueRange{id, col});
        });
  }
};

} // namespace

void mlir::nnx::registerProjectionLowerings(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, NNXDialect *) {
    LinearOp::attachInterface<LinearLowering>(*ctx);
    EmbeddingOp::attachInterface<EmbeddingLowering>(*ctx);
  });
}
