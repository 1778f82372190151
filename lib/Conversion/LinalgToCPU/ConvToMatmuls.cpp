//===- ConvToMatmuls.cpp - convolutions as shifted matmuls -------*- C++ -*-=//
//
// A `linalg.conv_2d_nchw_fchw` becomes one `linalg.matmul` per kernel tap,
// which the CPU matmul schedule then tiles for registers like a Linear's.
// There is no im2col: the input is copied once, channels-last and split into
// its stride phases, and each tap's matmul reads a window of rows of that
// copy, shifted by the tap's offset.
//
// With stride s and dilation d, input row `oh * s + kh * d` is row
// `oh + (kh * d) / s` of phase `(kh * d) % s`. So a phase image P (Hq x Wq
// pixels, flattened, C channels each) holds every input pixel a tap reads,
// and output pixel (oh, ow) of tap (kh, kw) reads pixel
// `oh * Wq + ow + off` of its phase, off = (kh*d/s) * Wq + (kw*d/s). Over
// the `OH * Wq` pixels p of a "wide" output (Wq >= OW columns, the extra
// ones discarded), that is `wide[p, f] += P[p + off, c] * W[kh, kw, c, f]`:
// a matmul of an M = OH * Wq by C window of rows of P with a C x F slice of
// the weight, permuted once to kh x kw x C x F. The phases get one extra
// row of zeros, so the last tap's window stays inside its phase.
//
//===----------------------------------------------------------------------===//
#include "nnx/Conversion/LinalgToCPU/Layouts.h"
#include "nnx/Conversion/NNXToLinalg/NNXToLinalg.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;

namespace {

/// The sizes of the rewrite, as values or constants.
struct TapGeometry {
  int64_t f, c, kh, kw, strides[2], dilations[2];
  OpFoldResult n, hq, wq, oh, ow, rows;
};

/// `t` permuted by `perm` (result dim i is dim perm[i] of `t`): folded when
/// `t` is a constant, else a `linalg.transpose`.
Value permute(OpBuilder &b, Location loc, Value t, ArrayRef<int64_t> perm) {
  DenseElementsAttr dense;
  if (matchPattern(t, m_Constant(&dense)))
    return arith::ConstantOp::create(b, loc, nnx::permuteDense(dense, perm));
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, t), out;
  for (int64_t d : perm)
    out.push_back(sizes[d]);
  Value init =
      tensor::EmptyOp::create(b, loc, out, getElementTypeOrSelf(t.getType()));
  return linalg::TransposeOp::create(b, loc, t, init, perm).getResult()[0];
}

RankedTensorType typeOf(ArrayRef<OpFoldResult> sizes, Type elt) {
  SmallVector<int64_t> shape;
  for (OpFoldResult s : sizes) {
    std::optional<int64_t> c = getConstantIntValue(s);
    shape.push_back(c ? *c : ShapedType::kDynamic);
  }
  return RankedTensorType::get(shape, elt);
}

/// The input (N x C x Hp x Wp, padded) as its phases, channels-last:
/// N x (s_h * s_w) x (Hq * Wq) x C.
Value phaseImages(OpBuilder &b, Location loc, const TapGeometry &g, Value x) {
  Type elt = getElementTypeOrSelf(x.getType());
  AffineExpr s0, s1;
  bindSymbols(b.getContext(), s0, s1);
  int64_t sh = g.strides[0], sw = g.strides[1];
  auto apply = [&](AffineExpr e, ArrayRef<OpFoldResult> v) {
    return affine::makeComposedFoldedAffineApply(b, loc, e, v);
  };
  // Zero rows and columns up to whole phases (and the extra row).
  OpFoldResult zero = b.getIndexAttr(0);
  SmallVector<OpFoldResult> low(4, zero), high(4, zero);
  high[2] = apply(s0 * sh - s1, {g.hq, tensor::getMixedSize(b, loc, x, 2)});
  high[3] = apply(s0 * sw - s1, {g.wq, tensor::getMixedSize(b, loc, x, 3)});
  OpFoldResult hp = apply(s0 * sh, {g.hq}), wp = apply(s0 * sw, {g.wq});
  Value padValue = arith::ConstantOp::create(b, loc, b.getZeroAttr(elt));
  Value padded = tensor::PadOp::create(
      b, loc, typeOf({g.n, b.getIndexAttr(g.c), hp, wp}, elt), x, low, high,
      padValue);
  SmallVector<OpFoldResult> split{g.n,  b.getIndexAttr(g.c),
                                  g.hq, b.getIndexAttr(sh),
                                  g.wq, b.getIndexAttr(sw)};
  Value expanded = tensor::ExpandShapeOp::create(
      b, loc, typeOf(split, elt), padded,
      ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}, {4, 5}}, split);
  Value channelsLast = permute(b, loc, expanded, {0, 3, 5, 2, 4, 1});
  SmallVector<OpFoldResult> flat{g.n, b.getIndexAttr(sh * sw),
                                 apply(s0 * s1, {g.hq, g.wq}),
                                 b.getIndexAttr(g.c)};
  return nnx::reshapeTensor(
      b, loc, channelsLast, typeOf(flat, elt),
      ArrayRef<ReassociationIndices>{{0}, {1, 2}, {3, 4}, {5}}, flat);
}

/// `acc` (M x F) plus the matmul of every tap of image `n`.
Value accumulateTaps(OpBuilder &b, Location loc, const TapGeometry &g,
                     Value phases, Value weight, Value n, Value acc) {
  Type elt = getElementTypeOrSelf(acc.getType());
  Value lo = arith::ConstantIndexOp::create(b, loc, 0);
  Value hi = arith::ConstantIndexOp::create(b, loc, g.kh * g.kw);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto loop = scf::ForOp::create(
      b, loc, lo, hi, one, ValueRange{acc},
      [&](OpBuilder &bb, Location l, Value t, ValueRange iter) {
        AffineExpr d0, s0;
        bindDims(bb.getContext(), d0);
        bindSymbols(bb.getContext(), s0);
        auto apply = [&](AffineExpr e, ArrayRef<OpFoldResult> v) {
          return affine::makeComposedFoldedAffineApply(bb, l, e, v);
        };
        // Tap t = (i, j); its reach (i * d) and (j * d) in phases and rows.
        AffineExpr i = d0.floorDiv(g.kw), j = d0 % g.kw;
        AffineExpr reachH = i * g.dilations[0], reachW = j * g.dilations[1];
        int64_t sh = g.strides[0], sw = g.strides[1];
        OpFoldResult phase =
            apply((reachH % sh) * sw + reachW % sw, {OpFoldResult(t)});
        OpFoldResult offset =
            apply(reachH.floorDiv(sh) * s0 + reachW.floorDiv(sw), {t, g.wq});
        OpFoldResult zero = bb.getIndexAttr(0), unit = bb.getIndexAttr(1);
        OpFoldResult c = bb.getIndexAttr(g.c), f = bb.getIndexAttr(g.f);
        Value lhs = tensor::ExtractSliceOp::create(
            bb, l, typeOf({g.rows, c}, elt), phases,
            ArrayRef<OpFoldResult>{n, phase, offset, zero},
            ArrayRef<OpFoldResult>{unit, unit, g.rows, c},
            SmallVector<OpFoldResult>(4, unit));
        Value rhs = tensor::ExtractSliceOp::create(
            bb, l, typeOf({c, f}, elt), weight,
            ArrayRef<OpFoldResult>{apply(i, {OpFoldResult(t)}),
                                   apply(j, {OpFoldResult(t)}), zero, zero},
            ArrayRef<OpFoldResult>{unit, unit, c, f},
            SmallVector<OpFoldResult>(4, unit));
        Value mm = linalg::MatmulOp::create(bb, l, TypeRange{iter[0].getType()},
                                            ValueRange{lhs, rhs}, iter)
                       .getResult(0);
        scf::YieldOp::create(bb, l, mm);
      });
  return loop.getResult(0);
}

/// The wide results (N x M x F, M = OH * Wq) as the conv's: the first OW
/// of each row of Wq pixels, channels first, added to `init`.
Value narrowInto(OpBuilder &b, Location loc, const TapGeometry &g, Value wide,
                 Value init) {
  Type elt = getElementTypeOrSelf(init.getType());
  OpFoldResult f = b.getIndexAttr(g.f), zero = b.getIndexAttr(0),
               unit = b.getIndexAttr(1);
  SmallVector<OpFoldResult> rows{g.n, g.oh, g.wq, f};
  Value expanded = nnx::reshapeTensor(
      b, loc, wide, typeOf(rows, elt),
      ArrayRef<ReassociationIndices>{{0}, {1, 2}, {3}}, rows);
  Value kept = tensor::ExtractSliceOp::create(
      b, loc, typeOf({g.n, g.oh, g.ow, f}, elt), expanded,
      SmallVector<OpFoldResult>(4, zero),
      ArrayRef<OpFoldResult>{g.n, g.oh, g.ow, f},
      SmallVector<OpFoldResult>(4, unit));
  MLIRContext *ctx = b.getContext();
  AffineExpr n, c, h, w;
  bindDims(ctx, n, c, h, w);
  SmallVector<AffineMap> maps{AffineMap::get(4, 0, {n, h, w, c}, ctx),
                              AffineMap::getMultiDimIdentityMap(4, ctx)};
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()}, ValueRange{kept},
             ValueRange{init}, maps,
             SmallVector<utils::IteratorType>(4, utils::IteratorType::parallel),
             [](OpBuilder &bb, Location l, ValueRange a) {
               linalg::YieldOp::create(
                   bb, l, ValueRange{arith::AddFOp::create(bb, l, a[1], a[0])});
             })
      .getResult(0);
}

struct ConvToTapMatmuls : public OpRewritePattern<linalg::Conv2DNchwFchwOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::Conv2DNchwFchwOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics())
      return rewriter.notifyMatchFailure(op, "not on tensors");
    Value x = op.getInputs()[0], w = op.getInputs()[1],
          init = op.getOutputs()[0];
    auto wType = cast<RankedTensorType>(w.getType());
    Type elt = getElementTypeOrSelf(init.getType());
    if (!isa<FloatType>(elt) || getElementTypeOrSelf(x.getType()) != elt ||
        wType.getElementType() != elt)
      return rewriter.notifyMatchFailure(op, "not one float type");
    if (!wType.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic filter");

    Location loc = op.getLoc();
    TapGeometry g;
    g.f = wType.getDimSize(0);
    g.c = wType.getDimSize(1);
    g.kh = wType.getDimSize(2);
    g.kw = wType.getDimSize(3);
    for (auto [i, v] : llvm::enumerate(op.getStrides().getValues<int64_t>()))
      g.strides[i] = v;
    for (auto [i, v] : llvm::enumerate(op.getDilations().getValues<int64_t>()))
      g.dilations[i] = v;
    AffineExpr s0, s1;
    bindSymbols(rewriter.getContext(), s0, s1);
    auto apply = [&](AffineExpr e, ArrayRef<OpFoldResult> v) {
      return affine::makeComposedFoldedAffineApply(rewriter, loc, e, v);
    };
    g.n = tensor::getMixedSize(rewriter, loc, init, 0);
    g.oh = tensor::getMixedSize(rewriter, loc, init, 2);
    g.ow = tensor::getMixedSize(rewriter, loc, init, 3);
    // Whole phases, plus one row when the last tap reaches past the end of
    // the last row.
    int64_t extra = (g.kw - 1) * g.dilations[1] / g.strides[1] > 0 ? 1 : 0;
    g.hq = apply(s0.ceilDiv(g.strides[0]) + extra,
                 {tensor::getMixedSize(rewriter, loc, x, 2)});
    g.wq = apply(s0.ceilDiv(g.strides[1]),
                 {tensor::getMixedSize(rewriter, loc, x, 3)});
    g.rows = apply(s0 * s1, {g.oh, g.wq});

    Value phases = phaseImages(rewriter, loc, g, x);
    Value weight = permute(rewriter, loc, w, {2, 3, 1, 0});
    Value zero =
        arith::ConstantOp::create(rewriter, loc, rewriter.getZeroAttr(elt));
    Value empty = tensor::EmptyOp::create(
        rewriter, loc, {g.n, g.rows, rewriter.getIndexAttr(g.f)}, elt);
    Value wide = linalg::FillOp::create(rewriter, loc, ValueRange{zero},
                                        ValueRange{empty})
                     .getResult(0);
    // One image per iteration, split among threads.
    auto forall =
        scf::ForallOp::create(rewriter, loc, ArrayRef{g.n}, ValueRange{wide},
                              /*mapping=*/std::nullopt);
    {
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(forall.getBody());
      Value n = forall.getInductionVars()[0];
      OpFoldResult unit = rewriter.getIndexAttr(1),
                   zeroIndex = rewriter.getIndexAttr(0);
      SmallVector<OpFoldResult> offsets{n, zeroIndex, zeroIndex},
          sizes{unit, g.rows, rewriter.getIndexAttr(g.f)}, strides(3, unit);
      Value acc = tensor::ExtractSliceOp::create(
          rewriter, loc, typeOf({g.rows, rewriter.getIndexAttr(g.f)}, elt),
          forall.getRegionIterArgs()[0], offsets, sizes, strides);
      Value sum = accumulateTaps(rewriter, loc, g, phases, weight, n, acc);
      rewriter.setInsertionPointToStart(forall.getTerminator().getBody());
      tensor::ParallelInsertSliceOp::create(rewriter, loc, sum,
                                            forall.getRegionIterArgs()[0],
                                            offsets, sizes, strides);
    }
    rewriter.replaceOp(op,
                       narrowInto(rewriter, loc, g, forall.getResult(0), init));
    return success();
  }
};

} // namespace

void mlir::nnx::populateConvToMatmulsPatterns(RewritePatternSet &patterns) {
  patterns.add<ConvToTapMatmuls>(patterns.getContext());
}
