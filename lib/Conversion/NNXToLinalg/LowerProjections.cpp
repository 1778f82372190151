//===- LowerProjections.cpp - linear, lora, embedding -----------*- C++ -*-===//
//
// The layers that map their input to a new feature space: Linear as a
// `linalg.matmul` of x (M x K) by the weight as stored (N x K: the matmul's
// indexing maps read it transposed; the CPU schedule picks the layout it
// wants) with the bias as the accumulator's initial value,
// LoRA as three such projections and a scaled sum, Embedding as a gather
// from its table. A Linear with `nnx.partial_sum` (tensor parallelism) sums
// its matmul over the ranks (`shard.all_reduce`) before adding the bias.
//
//===----------------------------------------------------------------------===//
#include "nnx/Conversion/NNXToLinalg/LayerLowering.h"
#include "nnx/Conversion/NNXToLinalg/NNXToLinalg.h"
#include "nnx/Conversion/NNXToLinalg/RecurrentLowering.h"
#include "nnx/Dialect/NNX/IR/ModuleTree.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace mlir::nnx;
using IT = utils::IteratorType;

/// The grid `nnx.partial_sum` Linears sum over.
static constexpr llvm::StringLiteral kTensorParallelGridName =
    "tensor_parallel";

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

/// The accumulator of sizes `outSizes` (features last): `bias` broadcast
/// over the leading dims, or zeros when it is null.
Value emitProjectionInit(LayerEmitter &e, Value bias, Type elt,
                         ArrayRef<OpFoldResult> outSizes) {
  if (!bias)
    return e.filled(outSizes, elt, 0.0);
  unsigned rank = outSizes.size();
  SmallVector<bool> featuresOnly(rank, false);
  featuresOnly.back() = true;
  return e.generic(bias, {e.keptDims(rank, featuresOnly)},
                   e.empty(outSizes, elt),
                   e.getBuilder().getMultiDimIdentityMap(rank),
                   SmallVector<IT>(rank, IT::parallel),
                   [](OpBuilder &, Location, ValueRange a) { return a[0]; });
}

/// The 1-D grid of `ranks` devices tensor parallelism sums over
/// (`shard.grid @tensor_parallel(shape = N)`), created once beside the
/// function being built; fails if that symbol is something else.
FailureOr<shard::GridOp>
getTensorParallelGrid(LayerEmitter &e, Operation *layer, int64_t ranks) {
  OpBuilder &b = e.getBuilder();
  Operation *fn = b.getInsertionBlock()->getParentOp();
  if (!isa<func::FuncOp>(fn))
    fn = fn->getParentOfType<func::FuncOp>();
  Operation *table = SymbolTable::getNearestSymbolTable(fn->getParentOp());
  Operation *existing = SymbolTable::lookupSymbolIn(
      table, b.getStringAttr(kTensorParallelGridName));
  auto grid = dyn_cast_or_null<shard::GridOp>(existing);
  if (grid && grid.getShape() == ArrayRef<int64_t>{ranks})
    return grid;
  if (existing) {
    InFlightDiagnostic diag = emitModuleError(layer)
                              << "sums over " << ranks << " ranks ('"
                              << kPartialSumAttrName << "'), but '@"
                              << kTensorParallelGridName
                              << "' is already defined otherwise";
    diag.attachNote(existing->getLoc()) << "defined here";
    return diag;
  }
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&table->getRegion(0).front());
  return shard::GridOp::create(b, layer->getLoc(), kTensorParallelGridName,
                               ArrayRef<int64_t>{ranks});
}

/// `y` (a partial matmul) summed over the ranks of the tensor-parallel grid
/// of `ranks` devices, then `bias` (null for none) added once.
FailureOr<Value> emitPartialSum(LayerEmitter &e, Operation *layer, Value y,
                                Value bias, int64_t ranks) {
  FailureOr<shard::GridOp> grid = getTensorParallelGrid(e, layer, ranks);
  if (failed(grid))
    return failure();
  OpBuilder &b = e.getBuilder();
  Value sum = shard::AllReduceOp::create(b, e.getLoc(), y, grid->getSymName(),
                                         ArrayRef<shard::GridAxis>{0},
                                         shard::ReductionKind::Sum)
                  .getResult();
  if (!bias)
    return sum;
  AffineMap id = b.getMultiDimIdentityMap(2);
  return e.generic({sum, bias}, {id, e.keptDims(2, {false, true})},
                   e.empty(e.sizesOf(sum), getElementTypeOrSelf(y.getType())),
                   id, {IT::parallel, IT::parallel},
                   [](OpBuilder &b, Location l, ValueRange a) -> Value {
                     return arith::AddFOp::create(b, l, a[0], a[1]);
                   });
}

/// `x W^T + bias` over the last dim of `x` (rank >= 2), `w` stored out x in
/// as a Linear's weight, `bias` null for none. Rank > 2: the leading dims are
/// folded into one and back, so every projection is one 2-D
/// `linalg.matmul` (the contraction the CPU schedule tiles). With
/// `partialRanks` (`nnx.partial_sum`), x W^T is summed over that many ranks
/// before the bias is added.
FailureOr<Value> emitProjection(LayerEmitter &e, Operation *layer, Value x,
                                Value w, Value bias, int64_t partialRanks = 0) {
  OpBuilder &b = e.getBuilder();
  Location loc = e.getLoc();
  auto xt = cast<RankedTensorType>(x.getType());
  int64_t rank = xt.getRank();
  int64_t out = cast<RankedTensorType>(w.getType()).getDimSize(0);
  if (rank < 2)
    return emitModuleError(layer)
           << "needs an input of rank >= 2 (batch, ..., features), got "
           << x.getType();
  SmallVector<ReassociationIndices> reassoc;
  SmallVector<OpFoldResult> inSizes = e.sizesOf(x);
  Value x2 = x;
  if (rank > 2) {
    ReassociationIndices lead;
    for (int64_t d = 0; d + 1 < rank; ++d)
      lead.push_back(d);
    reassoc = {lead, {rank - 1}};
    int64_t rows = 1;
    for (int64_t d : xt.getShape().drop_back())
      rows = ShapedType::isDynamic(d) || ShapedType::isDynamic(rows)
                 ? ShapedType::kDynamic
                 : rows * d;
    auto flat = RankedTensorType::get({rows, xt.getShape().back()},
                                      xt.getElementType());
    OpFoldResult rowSize = b.getIndexAttr(rows);
    if (ShapedType::isDynamic(rows)) {
      Value n = getValueOrCreateConstantIndexOp(b, loc, inSizes[0]);
      for (int64_t d = 1; d + 1 < rank; ++d)
        n = arith::MulIOp::create(
            b, loc, n, getValueOrCreateConstantIndexOp(b, loc, inSizes[d]));
      rowSize = n;
    }
    x2 = reshapeTensor(b, loc, x, flat, reassoc, {rowSize, inSizes.back()});
  }
  SmallVector<OpFoldResult> outSizes{tensor::getMixedSize(b, loc, x2, 0),
                                     b.getIndexAttr(out)};
  // bf16 / f16: the matmul reads the narrow operands and accumulates (from
  // the bias) in f32; the result is rounded once.
  Type acc = e.accumulatorFor(xt.getElementType());
  Value init =
      emitProjectionInit(e, partialRanks ? Value() : bias, acc, outSizes);
  Value y = linalg::MatmulOp::create(b, loc, TypeRange{init.getType()},
                                     ValueRange{x2, w}, ValueRange{init},
                                     linalgMatmulTransposedB(b))
                .getResult(0);
  if (partialRanks) {
    FailureOr<Value> sum = emitPartialSum(e, layer, y, bias, partialRanks);
    if (failed(sum))
      return failure();
    y = *sum;
  }
  y = convertElements(b, loc, y, xt.getElementType());
  if (rank == 2)
    return y;
  inSizes.back() = b.getIndexAttr(out);
  SmallVector<int64_t> staticShape(xt.getShape());
  staticShape.back() = out;
  return reshapeTensor(b, loc, y, xt.clone(staticShape), reassoc, inSizes);
}

struct LinearLowering
    : public LayerLoweringOpInterface::ExternalModel<LinearLowering, LinearOp> {
  FailureOr<Value> emitForward(Operation *layer, LayerEmitter &e,
                               Value x) const {
    FailureOr<Value> w = e.getTensor(layer, "weight");
    if (failed(w))
      return failure();
    FailureOr<Value> bias = e.getOptionalTensor(layer, "bias");
    if (failed(bias))
      return failure();
    FailureOr<int64_t> ranks = getPartialSumRanks(layer, layer->getLoc());
    if (failed(ranks))
      return failure();
    return emitProjection(e, layer, x, *w, *bias, *ranks);
  }
};

/// `x W^T + b + scaling * (x A^T) B^T`: three projections and one
/// elementwise combination (merged: the Linear's forward with the merged W).
struct LoraLowering
    : public LayerLoweringOpInterface::ExternalModel<LoraLowering, LoraOp> {
  FailureOr<Value> emitForward(Operation *layer, LayerEmitter &e,
                               Value x) const {
    auto op = cast<LoraOp>(layer);
    FailureOr<Value> w = e.getTensor(layer, "weight");
    FailureOr<Value> bias = e.getOptionalTensor(layer, "bias");
    if (failed(w) || failed(bias))
      return failure();
    FailureOr<Value> base = emitProjection(e, layer, x, *w, *bias);
    if (failed(base) || op.getMerged())
      return base;
    FailureOr<Value> a = e.getTensor(layer, "lora_A");
    FailureOr<Value> bt = e.getTensor(layer, "lora_B");
    if (failed(a) || failed(bt))
      return failure();
    FailureOr<Value> down = emitProjection(e, layer, x, *a, Value());
    if (failed(down))
      return failure();
    FailureOr<Value> up = emitProjection(e, layer, *down, *bt, Value());
    if (failed(up))
      return failure();
    unsigned rank = cast<RankedTensorType>(base->getType()).getRank();
    AffineMap id = e.getBuilder().getMultiDimIdentityMap(rank);
    Type elt = getElementTypeOrSelf(base->getType());
    double scaling = op.getScaling();
    return e.generic(ValueRange{*base, *up}, {id, id},
                     e.empty(e.sizesOf(*base), elt), id,
                     SmallVector<IT>(rank, IT::parallel),
                     [&](OpBuilder &nb, Location l, ValueRange v) -> Value {
                       Value s = LayerEmitter::scalar(nb, l, elt, scaling);
                       Value d = arith::MulFOp::create(nb, l, s, v[1]);
                       return arith::AddFOp::create(nb, l, v[0], d);
                     });
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
    if (rows == 0)
      return emitModuleError(layer)
             << "the table " << wt
             << " has no rows: no id can be looked up (PyTorch raises on "
                "every lookup)";
    SmallVector<OpFoldResult> sizes = e.sizesOf(ids);
    sizes.push_back(b.getIndexAttr(wt.getDimSize(1)));
    SmallVector<bool> keep(rank + 1, true);
    keep.back() = false;
    Value tbl = *table;
    // A bad id is reported by the run-time check (PyTorch raises); the
    // lookup clamps it so that the forward never reads outside the table
    // before the runner sees the report.
    e.checkIndices(layer, ids, rows);
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

FailureOr<Value> mlir::nnx::emitLinearProjection(LayerEmitter &e,
                                                 Operation *layer, Value x,
                                                 Value w, Value bias) {
  return emitProjection(e, layer, x, w, bias);
}

void mlir::nnx::registerProjectionLowerings(DialectRegistry &registry) {
  // A Linear with nnx.partial_sum emits shard ops.
  registry.insert<shard::ShardDialect>();
  registry.addExtension(+[](MLIRContext *ctx, NNXDialect *) {
    LinearOp::attachInterface<LinearLowering>(*ctx);
    LoraOp::attachInterface<LoraLowering>(*ctx);
    EmbeddingOp::attachInterface<EmbeddingLowering>(*ctx);
  });
}

Value mlir::nnx::reshapeTensor(OpBuilder &b, Location loc, Value x,
                               RankedTensorType type,
                               ArrayRef<ReassociationIndices> groups,
                               ArrayRef<OpFoldResult> sizes) {
  auto xt = cast<RankedTensorType>(x.getType());
  bool collapse = type.getRank() < xt.getRank();
  ArrayRef<int64_t> wide = collapse ? xt.getShape() : type.getShape();
  bool safe = llvm::all_of(groups, [&](const ReassociationIndices &g) {
    return llvm::count_if(g, [&](int64_t d) {
             return ShapedType::isDynamic(wide[d]);
           }) <= 1;
  });
  if (safe && collapse)
    return tensor::CollapseShapeOp::create(b, loc, type, x, groups);
  if (safe)
    return tensor::ExpandShapeOp::create(b, loc, type, x, groups, sizes);
  SmallVector<Value> dims = llvm::map_to_vector(sizes, [&](OpFoldResult s) {
    return getValueOrCreateConstantIndexOp(b, loc, s);
  });
  Value shape = tensor::FromElementsOp::create(b, loc, dims);
  return tensor::ReshapeOp::create(b, loc, type, x, shape);
}
