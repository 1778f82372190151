//===- BF16Matmul.cpp - bf16 matmuls as vdpbf16ps register tiles -*- C++ -*-=//
//
// On AVX512_BF16 hosts, a bf16 x bf16 -> f32 matmul A * B^T (a Linear's
// weight, N x K) runs on `vdpbf16ps` (`x86vector.avx512.dot`): each
// instruction multiplies 16 pairs of bf16 (two consecutive K of a row of A,
// broadcast, against two consecutive K of 16 columns of B) and adds the
// pair sums to 16 f32 accumulators. B is wanted as K/2 x N x 2: the pairs
// of one column side by side, 16 columns per 64-byte row.
//
// Two steps, one per schedule stage:
//  * on tensors (tile-matmul), the matmul becomes a 4-D contraction over
//    (m, n, k/2, pair) of A viewed as M x K/2 x 2 and B packed as
//    K/2 x N x 2 (tensor.expand_shape + linalg.transpose, which
//    foldParameterPermutations turns into a bind-time layout of the
//    parameter); the f32 schedule does not touch it;
//  * on buffers (lower-vectors), that contraction becomes the loop nest:
//    N in cache blocks (threads own whole columns, as in the f32 schedule),
//    K/2 in cache blocks, N in register tiles of 64 columns (then 16, the
//    last one masked), M in register tiles of 6 rows inside them (a
//    remainder in tiles of 4, 2 and 1), and the K/2 loop carrying 6 x 4
//    accumulators in registers.
//
//===----------------------------------------------------------------------===//
#include "MatmulSchedule.h"

#include "nnx/Codegen/CPU/Layouts.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::nnx;
using IT = utils::IteratorType;

namespace {

/// Register and cache tiles of the kernel: 6 rows x 4 vectors of 16 f32
/// accumulators (24 of the 32 zmm; 4 B rows and the broadcast A pair
/// beside them); a 512-pair x 128-column block of B (256 KiB) stays in L2
/// (K up to 1024 in one block: the f32 accumulators are read and written
/// once per block, which costs most with a wide N, an LM head).
constexpr int64_t kRows = 6, kVectors = 4, kLanes = 16;
constexpr int64_t kCacheN = 128, kCachePairs = 512;

/// The maps of the 4-D pair contraction: A (m, k2, p), B (k2, n, p),
/// C (m, n), over (m, n, k2, p).
SmallVector<AffineMap> pairMaps(MLIRContext *ctx) {
  AffineExpr m, n, k, p;
  bindDims(ctx, m, n, k, p);
  return {AffineMap::get(4, 0, {m, k, p}, ctx),
          AffineMap::get(4, 0, {k, n, p}, ctx),
          AffineMap::get(4, 0, {m, n}, ctx)};
}

bool hasElementType(Value v, bool (Type::*is)() const) {
  return (getElementTypeOrSelf(v.getType()).*is)();
}

/// A bf16 A * B^T (a Linear's) or A * B (a convolution's taps and patches,
/// B a K x N slice of the kh x kw x C x F weight) matmul with f32
/// accumulators, K static and even, B of static shape: the pair contraction
/// of it.
struct MatmulToBF16Pairs : public OpRewritePattern<linalg::MatmulOp> {
  MatmulToBF16Pairs(MLIRContext *ctx) : OpRewritePattern(ctx, /*benefit=*/2) {}

  LogicalResult matchAndRewrite(linalg::MatmulOp op,
                                PatternRewriter &rewriter) const override {
    MLIRContext *ctx = op.getContext();
    if (!op.hasPureTensorSemantics())
      return rewriter.notifyMatchFailure(op, "not on tensors");
    bool transposedB = op.getIndexingMapsArray() == transposedBMatmulMaps(ctx);
    if (!transposedB && op.hasUserDefinedMaps())
      return rewriter.notifyMatchFailure(op, "not A * B^T or A * B");
    Value a = op.getDpsInputOperand(0)->get();
    Value b = op.getDpsInputOperand(1)->get();
    Value c = op.getDpsInits()[0];
    if (!hasElementType(a, &Type::isBF16) ||
        !hasElementType(b, &Type::isBF16) || !hasElementType(c, &Type::isF32))
      return rewriter.notifyMatchFailure(op, "not bf16 x bf16 -> f32");
    auto bt = cast<RankedTensorType>(b.getType());
    auto at = cast<RankedTensorType>(a.getType());
    unsigned kDim = transposedB ? 1 : 0;
    if (!bt.hasStaticShape() || bt.getDimSize(kDim) % 2 != 0 ||
        at.isDynamicDim(1))
      return rewriter.notifyMatchFailure(op, "K dynamic or odd");
    int64_t n = bt.getDimSize(1 - kDim), pairs = bt.getDimSize(kDim) / 2;
    Location loc = op.getLoc();
    Type bf16 = rewriter.getBF16Type();
    SmallVector<ReassociationIndices> split{{0}, {1, 2}};
    auto a3Type = RankedTensorType::get({at.getDimSize(0), pairs, 2}, bf16);
    SmallVector<OpFoldResult> a3Sizes{tensor::getMixedSize(rewriter, loc, a, 0),
                                      rewriter.getIndexAttr(pairs),
                                      rewriter.getIndexAttr(2)};
    Value a3 =
        tensor::ExpandShapeOp::create(rewriter, loc, a3Type, a, split, a3Sizes);
    Value packed = packPairs(rewriter, loc, b, n, pairs, transposedB);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{c.getType()}, ValueRange{a3, packed},
        ValueRange{c}, pairMaps(ctx),
        SmallVector<IT>{IT::parallel, IT::parallel, IT::reduction,
                        IT::reduction},
        [](OpBuilder &nb, Location l, ValueRange args) {
          Type f32 = nb.getF32Type();
          Value x = arith::ExtFOp::create(nb, l, f32, args[0]);
          Value y = arith::ExtFOp::create(nb, l, f32, args[1]);
          Value p = arith::MulFOp::create(nb, l, x, y);
          linalg::YieldOp::create(
              nb, l, ValueRange{arith::AddFOp::create(nb, l, args[2], p)});
        });
    rewriter.replaceOp(op, generic.getResults());
    return success();
  }

  /// B (N x K, or K x N unless `transposedB`) as K/2 x N x 2: a new
  /// constant when B is one, else a transpose of its N x K/2 x 2 (K/2 x 2 x
  /// N) view; a bind-time layout for a parameter B^T. A K x N tap of a
  /// larger weight (a convolution's) is a slice of the whole weight packed
  /// so (packWholeWeight).
  static Value packPairs(PatternRewriter &rewriter, Location loc, Value b,
                         int64_t n, int64_t pairs, bool transposedB) {
    if (!transposedB)
      if (Value tap = packWholeWeight(rewriter, loc, b, pairs))
        return tap;
    Type bf16 = rewriter.getBF16Type();
    SmallVector<int64_t> shape = transposedB
                                     ? SmallVector<int64_t>{n, pairs, 2}
                                     : SmallVector<int64_t>{pairs, 2, n};
    SmallVector<int64_t> perm = transposedB ? SmallVector<int64_t>{1, 0, 2}
                                            : SmallVector<int64_t>{0, 2, 1};
    auto viewType = RankedTensorType::get(shape, bf16);
    DenseElementsAttr dense;
    if (matchPattern(b, m_Constant(&dense)))
      return arith::ConstantOp::create(
          rewriter, loc, permuteDense(dense.reshape(viewType), perm));
    Value view = tensor::ExpandShapeOp::create(
        rewriter, loc, viewType, b,
        transposedB ? SmallVector<ReassociationIndices>{{0}, {1, 2}}
                    : SmallVector<ReassociationIndices>{{0, 1}, {2}});
    Value init = tensor::EmptyOp::create(rewriter, loc,
                                         ArrayRef<int64_t>{pairs, n, 2}, bf16);
    return linalg::TransposeOp::create(rewriter, loc, view, init, perm)
        .getResult()[0];
  }

  /// The static weight W (... x C x N, C even) that `tap` (K x N) is a
  /// slice of, with the tap's offsets in W's leading dims and, last, its
  /// offset in C's pairs: `tap` a unit-stride `tensor.extract_slice` taking
  /// one index of each leading dim, K rows of C from an even offset (a
  /// group's: an affine multiple of 2) and the whole of N; or a
  /// `tensor.collapse_shape` of W's unit leading dims into C (a 1 x 1
  /// convolution's weight).
  static Value weightOfTap(OpBuilder &b, Location loc, Value tap,
                           SmallVectorImpl<OpFoldResult> &offsets) {
    if (auto collapse = tap.getDefiningOp<tensor::CollapseShapeOp>()) {
      auto type = collapse.getSrcType();
      ArrayRef<int64_t> shape = type.getShape();
      if (!type.hasStaticShape() || shape.size() < 3 ||
          collapse.getReassociationIndices().back().size() != 1 ||
          llvm::any_of(shape.drop_back(2), [](int64_t d) { return d != 1; }))
        return Value();
      offsets.assign(shape.size() - 1, b.getIndexAttr(0));
      return collapse.getSrc();
    }
    auto slice = tap.getDefiningOp<tensor::ExtractSliceOp>();
    if (!slice || slice.getType().getRank() != 2 || !slice.hasUnitStride() ||
        !slice.getSourceType().hasStaticShape())
      return Value();
    ArrayRef<int64_t> shape = slice.getSourceType().getShape();
    int64_t rank = shape.size();
    ArrayRef<int64_t> sizes = slice.getStaticSizes();
    if (rank < 3 || shape[rank - 2] % 2 != 0 || sizes[rank - 1] != shape.back())
      return Value();
    for (int64_t d = 0; d < rank - 2; ++d)
      if (sizes[d] != 1)
        return Value();
    SmallVector<OpFoldResult> at = slice.getMixedOffsets();
    if (!isZeroInteger(at.back()))
      return Value();
    OpFoldResult row = at[rank - 2];
    std::optional<int64_t> constant = getConstantIntValue(row);
    auto rowValue = dyn_cast_if_present<Value>(row);
    auto apply = rowValue ? rowValue.getDefiningOp<affine::AffineApplyOp>()
                          : affine::AffineApplyOp();
    if (constant ? *constant % 2 != 0
                 : !apply || !apply.getAffineMap().getResult(0).isMultipleOf(2))
      return Value();
    AffineExpr d0;
    bindDims(b.getContext(), d0);
    offsets.assign(at.begin(), at.end() - 2);
    offsets.push_back(
        affine::makeComposedFoldedAffineApply(b, loc, d0.floorDiv(2), {row}));
    return slice.getSource();
  }

  /// When `b` (K x N) is a tap of a static weight W (weightOfTap), W packed
  /// as ... x C/2 x N x 2 where W is defined and the tap's slice of that;
  /// else null. Every tap then reads one packed weight (equal packings are
  /// one after CSE), which a parameter gets at bind time, instead of each
  /// tap packing its slice per call (or per iteration of a loop of taps).
  static Value packWholeWeight(PatternRewriter &rewriter, Location loc, Value b,
                               int64_t pairs) {
    SmallVector<OpFoldResult> at;
    Value w = weightOfTap(rewriter, loc, b, at);
    if (!w)
      return Value();
    auto wType = cast<RankedTensorType>(w.getType());
    int64_t rank = wType.getRank();
    int64_t c = wType.getDimSize(rank - 2), n = wType.getDimSize(rank - 1);
    // W as ... x C/2 x 2 x N, transposed to ... x C/2 x N x 2.
    SmallVector<int64_t> split(wType.getShape().drop_back(2)), perm;
    SmallVector<ReassociationIndices> groups;
    for (int64_t d = 0; d < rank - 2; ++d)
      groups.push_back({d});
    groups.push_back({rank - 2, rank - 1});
    groups.push_back({rank});
    split.append({c / 2, 2, n});
    for (int64_t d = 0; d < rank - 1; ++d)
      perm.push_back(d);
    perm.append({rank, rank - 1});
    auto viewType = RankedTensorType::get(split, wType.getElementType());
    Value packed;
    {
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointAfterValue(w);
      DenseElementsAttr dense;
      if (matchPattern(w, m_Constant(&dense))) {
        packed = arith::ConstantOp::create(
            rewriter, loc, permuteDense(dense.reshape(viewType), perm));
      } else {
        Value view =
            tensor::ExpandShapeOp::create(rewriter, loc, viewType, w, groups);
        packed = permuteTensor(rewriter, loc, view, perm);
      }
    }
    SmallVector<OpFoldResult> sizes(rank - 2, rewriter.getIndexAttr(1)),
        steps(rank + 1, rewriter.getIndexAttr(1));
    for (int64_t size : {pairs, n, int64_t(2)})
      sizes.push_back(rewriter.getIndexAttr(size));
    at.append(2, rewriter.getIndexAttr(0));
    auto tapType = RankedTensorType::get({pairs, n, 2}, wType.getElementType());
    return tensor::ExtractSliceOp::create(rewriter, loc, tapType, packed, at,
                                          sizes, steps);
  }
};

/// A channels-last bf16 conv into f32 whose C is odd (an RGB stem's 3) has
/// taps of odd K, which take the f32 tiles (ResNet-50's stem was 12% of its
/// bf16 forward). The same conv with one zero channel more, in the input
/// (folded into its zero padding, which the taps' phases write anyway) and
/// in the weight, has taps of even K on the vdpbf16ps tiles: each output
/// sums the same products plus exact zeros.
struct PairChannelsOfConv : public OpRewritePattern<linalg::Conv2DNhwcHwcfOp> {
  PairChannelsOfConv(MLIRContext *ctx) : OpRewritePattern(ctx, /*benefit=*/2) {}

  LogicalResult matchAndRewrite(linalg::Conv2DNhwcHwcfOp op,
                                PatternRewriter &rewriter) const override {
    Value x = op.getInputs()[0], w = op.getInputs()[1];
    auto wType = dyn_cast<RankedTensorType>(w.getType());
    if (!op.hasPureTensorSemantics() || !wType || !wType.hasStaticShape() ||
        wType.getDimSize(2) % 2 == 0 || !hasElementType(x, &Type::isBF16) ||
        !hasElementType(w, &Type::isBF16) ||
        !hasElementType(op.getOutputs()[0], &Type::isF32))
      return rewriter.notifyMatchFailure(op, "not bf16 -> f32 of odd C");
    Location loc = op.getLoc();
    Value zero = arith::ConstantOp::create(
        rewriter, loc, rewriter.getZeroAttr(rewriter.getBF16Type()));
    // The input's zero padding, if it has one, with one channel more.
    SmallVector<OpFoldResult> low(4, rewriter.getIndexAttr(0)), high = low;
    auto pad = x.getDefiningOp<tensor::PadOp>();
    Value padValue = pad ? pad.getConstantPaddingValue() : Value();
    if (padValue && matchPattern(padValue, m_AnyZeroFloat()) &&
        isZeroInteger(pad.getMixedHighPad()[3]) &&
        isZeroInteger(pad.getMixedLowPad()[3])) {
      low = pad.getMixedLowPad();
      high = pad.getMixedHighPad();
      x = pad.getSource();
    }
    high[3] = rewriter.getIndexAttr(1);
    Value paddedX =
        tensor::PadOp::create(rewriter, loc, Type(), x, low, high, zero);
    SmallVector<OpFoldResult> none(4, rewriter.getIndexAttr(0)), oneC = none;
    oneC[2] = rewriter.getIndexAttr(1);
    Value paddedW =
        tensor::PadOp::create(rewriter, loc, Type(), w, none, oneC, zero);
    rewriter.replaceOpWithNewOp<linalg::Conv2DNhwcHwcfOp>(
        op, op.getResultTypes(), ValueRange{paddedX, paddedW}, op.getOutputs(),
        op.getStrides(), op.getDilations());
    return success();
  }
};

//===----------------------------------------------------------------------===//
// The loop nest (buffers)
//===----------------------------------------------------------------------===//

/// Builds the kernel of one pair contraction on buffers.
class PairKernelBuilder {
public:
  PairKernelBuilder(OpBuilder &b, Location loc, Value a, Value packed, Value c)
      : b(b), loc(loc), a(a), c(c) {
    // B as K/2 x 2N: 16 columns' pairs are one contiguous 32-element row.
    packed2 = memref::CollapseShapeOp::create(
        b, loc, packed, SmallVector<ReassociationIndices>{{0}, {1, 2}});
    auto type = cast<MemRefType>(packed.getType());
    pairs = type.getDimSize(0);
    columns = type.getDimSize(1);
  }

  /// The whole nest; `parallel`: the N cache blocks as an scf.forall.
  void build(bool parallel) {
    Value rows = memref::DimOp::create(b, loc, c, 0);
    auto blockBody = [&](OpBuilder &, Location, Value nb) {
      Value nEnd = minIndex(add(nb, idx(kCacheN)), idx(columns));
      forLoop(idx(0), idx(pairs), kCachePairs, [&](Value kb) {
        Value kEnd = minIndex(add(kb, idx(kCachePairs)), idx(pairs));
        // The column tiles outside the rows (BLIS's order): one tile's
        // pairs block of B stays in cache while the rows stream by.
        int64_t wide = kVectors * kLanes;
        Value span = sub(nEnd, nb);
        Value fullEnd = add(nb, mul(div(span, idx(wide)), idx(wide)));
        forLoop(nb, fullEnd, wide, [&](Value n) {
          columnTile(rows, n, kVectors, Value(), kb, kEnd);
        });
        forLoop(fullEnd, nEnd, kLanes, [&](Value n) {
          Value count = minIndex(sub(nEnd, n), idx(kLanes));
          columnTile(rows, n, 1, count, kb, kEnd);
        });
      });
    };
    if (!parallel) {
      forLoop(idx(0), idx(columns), kCacheN,
              [&](Value nb) { blockBody(b, loc, nb); });
      return;
    }
    auto forall =
        scf::ForallOp::create(b, loc, ArrayRef<OpFoldResult>{b.getIndexAttr(0)},
                              ArrayRef<OpFoldResult>{b.getIndexAttr(columns)},
                              ArrayRef<OpFoldResult>{b.getIndexAttr(kCacheN)},
                              ValueRange{}, std::nullopt);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(forall.getBody());
    blockBody(b, loc, forall.getInductionVars()[0]);
  }

private:
  /// Every row of C, columns [n, n + 16 vectors) (with `count`, its first
  /// `count` columns: one vector): 6-row tiles, then the rows they leave
  /// (0 to 5) in tiles of 4, 2 and 1 rows, each under an scf.if (a
  /// remainder of 4 or 5 rows runs at nearly the full tiles' speed, not one
  /// row at a time).
  void columnTile(Value rows, Value n, int64_t vectors, Value count, Value kb,
                  Value kEnd) {
    Value fullRows = mul(div(rows, idx(kRows)), idx(kRows));
    forLoop(idx(0), fullRows, kRows, [&](Value m) {
      microKernel(m, kRows, n, vectors, count, kb, kEnd);
    });
    Value m = fullRows;
    for (int64_t height : {4, 2, 1}) {
      Value left = sub(rows, m);
      Value fits = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge,
                                         left, idx(height));
      auto branch = scf::IfOp::create(b, loc, fits, /*withElseRegion=*/false);
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(branch.thenBlock()->getTerminator());
        microKernel(m, height, n, vectors, count, kb, kEnd);
      }
      m = arith::SelectOp::create(b, loc, fits, add(m, idx(height)), m);
    }
  }

  /// C[m : m + rows, n : n + 16 * vectors] += the pairs [kb, kEnd); with
  /// `count`, only its first `count` columns (one vector).
  void microKernel(Value m, int64_t rows, Value n, int64_t vectors, Value count,
                   Value kb, Value kEnd) {
    auto f32x16 = VectorType::get({kLanes}, b.getF32Type());
    Value cMask = count ? mask(kLanes, count) : Value();
    Value bMask = count ? mask(2 * kLanes, mul(count, idx(2))) : Value();
    SmallVector<Value> acc;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t v = 0; v < vectors; ++v)
        acc.push_back(loadC(f32x16, add(m, idx(r)), column(n, v), cMask));
    auto loop = scf::ForOp::create(
        b, loc, kb, kEnd, idx(1), acc,
        [&](OpBuilder &lb, Location, Value k, ValueRange sums) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(lb.getInsertionBlock(), lb.getInsertionPoint());
          scf::YieldOp::create(b, loc,
                               pairSteps(m, rows, n, vectors, bMask, k, sums));
        });
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t v = 0; v < vectors; ++v) {
        Value sum = loop.getResult(r * vectors + v);
        SmallVector<Value, 2> at{add(m, idx(r)), column(n, v)};
        if (cMask)
          vector::MaskedStoreOp::create(b, loc, c, at, cMask, sum);
        else
          vector::StoreOp::create(b, loc, sum, c, at);
      }
  }

  /// The accumulators `sums` after pair `k`: B's row k loaded once per
  /// vector, each row's A pair broadcast once.
  SmallVector<Value> pairSteps(Value m, int64_t rows, Value n, int64_t vectors,
                               Value bMask, Value k, ValueRange sums) {
    auto f32x16 = VectorType::get({kLanes}, b.getF32Type());
    auto bf16x32 = VectorType::get({2 * kLanes}, b.getBF16Type());
    SmallVector<Value> bRows, next;
    for (int64_t v = 0; v < vectors; ++v) {
      SmallVector<Value, 2> at{k, mul(column(n, v), idx(2))};
      bRows.push_back(
          bMask ? (Value)vector::MaskedLoadOp::create(b, loc, bf16x32, packed2,
                                                      at, bMask, zeros(bf16x32))
                : (Value)vector::LoadOp::create(b, loc, bf16x32, packed2, at));
    }
    for (int64_t r = 0; r < rows; ++r) {
      Value pair = broadcastPair(add(m, idx(r)), k);
      for (int64_t v = 0; v < vectors; ++v)
        next.push_back(x86vector::DotBF16Op::create(
            b, loc, f32x16, sums[r * vectors + v], pair, bRows[v]));
    }
    return next;
  }

  /// A[row, 2k : 2k + 2] in every 32-bit lane of a vector<32xbf16>.
  Value broadcastPair(Value row, Value k) {
    auto bf16x2 = VectorType::get({2}, b.getBF16Type());
    Value two =
        vector::LoadOp::create(b, loc, bf16x2, a, ValueRange{row, k, idx(0)});
    Value word = vector::BitCastOp::create(
        b, loc, VectorType::get({1}, b.getI32Type()), two);
    Value scalar =
        vector::ExtractOp::create(b, loc, word, ArrayRef<int64_t>{0});
    Value lanes = vector::BroadcastOp::create(
        b, loc, VectorType::get({kLanes}, b.getI32Type()), scalar);
    return vector::BitCastOp::create(
        b, loc, VectorType::get({2 * kLanes}, b.getBF16Type()), lanes);
  }

  Value loadC(VectorType type, Value row, Value col, Value cMask) {
    if (cMask)
      return vector::MaskedLoadOp::create(b, loc, type, c, ValueRange{row, col},
                                          cMask, zeros(type));
    return vector::LoadOp::create(b, loc, type, c, ValueRange{row, col});
  }

  Value column(Value n, int64_t v) { return add(n, idx(v * kLanes)); }
  Value mask(int64_t lanes, Value count) {
    return vector::CreateMaskOp::create(
        b, loc, VectorType::get({lanes}, b.getI1Type()), ValueRange{count});
  }
  Value zeros(VectorType type) {
    return arith::ConstantOp::create(b, loc, type, b.getZeroAttr(type));
  }
  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return arith::DivUIOp::create(b, loc, x, y); }
  Value minIndex(Value x, Value y) {
    return arith::MinUIOp::create(b, loc, x, y);
  }

  /// An scf.for from `lb` to `ub` by `step`, its body built by `body(iv)`.
  void forLoop(Value lb, Value ub, int64_t step,
               function_ref<void(Value)> body) {
    auto loop = scf::ForOp::create(b, loc, lb, ub, idx(step));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(loop.getBody()->getTerminator());
    body(loop.getInductionVar());
  }

  OpBuilder &b;
  Location loc;
  Value a, c, packed2;
  int64_t pairs = 0, columns = 0;
};

/// Whether `op` is a pair contraction on buffers the kernel can run: the
/// maps and element types MatmulToBF16Pairs writes, B static and
/// contiguous, the last dims of A and C contiguous.
bool isPairContraction(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 ||
      op.getIndexingMapsArray() != pairMaps(op.getContext()))
    return false;
  auto a = dyn_cast<MemRefType>(op.getDpsInputOperand(0)->get().getType());
  auto packed = dyn_cast<MemRefType>(op.getDpsInputOperand(1)->get().getType());
  auto c = dyn_cast<MemRefType>(op.getDpsInits()[0].getType());
  if (!a || !packed || !c || !a.getElementType().isBF16() ||
      !packed.getElementType().isBF16() || !c.getElementType().isF32())
    return false;
  // B contiguous (a tap of a packed weight starts where its tap does).
  return memref::isStaticShapeAndContiguousRowMajor(packed) &&
         packed.getDimSize(2) == 2 && a.isLastDimUnitStride() &&
         c.isLastDimUnitStride();
}

} // namespace

void mlir::nnx::populateBF16PairMatmulPatterns(RewritePatternSet &patterns) {
  patterns.add<MatmulToBF16Pairs, PairChannelsOfConv>(patterns.getContext());
}

void mlir::nnx::lowerBF16PairContractions(Operation *root, bool parallel) {
  SmallVector<linalg::GenericOp> ops;
  root->walk([&](linalg::GenericOp op) {
    if (isPairContraction(op))
      ops.push_back(op);
  });
  for (linalg::GenericOp op : ops) {
    OpBuilder b(op);
    PairKernelBuilder(b, op.getLoc(), op.getDpsInputOperand(0)->get(),
                      op.getDpsInputOperand(1)->get(), op.getDpsInits()[0])
        .build(parallel);
    op.erase();
  }
}
