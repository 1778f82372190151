//===- ConvToMatmuls.cpp - convolutions as matmuls ---------------*- C++ -*-=//
//
// A `linalg.conv_2d_nchw_fchw` becomes matmuls, which the CPU matmul
// schedule then tiles for registers like a Linear's, in one of two ways:
//
// Phases (windows that overlap, strides of at most 2 x 2): one
// `linalg.matmul` per kernel tap. There is no im2col: the input is copied
// once, channels-last and split into its stride phases, and each tap's
// matmul reads a window of rows of that copy, shifted by the tap's offset.
// With stride s and dilation d, input row `oh * s + kh * d` is row
// `oh + (kh * d) / s` of phase `(kh * d) % s`. So a phase image P (Hq x Wq
// pixels, flattened, C channels each) holds every input pixel a tap reads,
// and output pixel (oh, ow) of tap (kh, kw) reads pixel
// `oh * Wq + ow + off` of its phase, off = (kh*d/s) * Wq + (kw*d/s). Over
// the `OH * Wq` pixels p of a "wide" output (Wq >= OW columns, the extra
// ones discarded), that is `wide[p, f] += P[p + off, c] * W[kh, kw, c, f]`:
// a matmul of an M = OH * Wq by C window of rows of P with a C x F slice of
// the weight, permuted once to kh x kw x C x F. The phases get one extra
// row of zeros, so the last tap's window stays inside its phase; at unit
// column stride, a row's right padding is the next row's left padding
// (phaseGeometry). The phases are written one by one: s_h * s_w copies, which
// is why larger strides do not take this way (one-shot bufferization's analysis
// grows faster than the number of copies into one buffer). A
// channels-last result is computed in blocks of whole image rows, each
// block's wide rows a temporary narrowed into its box of the result
// (convByTapsInBlocks); an NCHW one as a whole wide result, narrowed and
// transposed after the loop.
//
// Patches (every other conv: windows that do not overlap, such as a ViT's
// patch embedding with stride = kernel, or strides above 2): the input's
// windows gathered channels-last by one `linalg.generic` with a strided
// input map, N x OH x OW x (kh x kw x C), then one matmul with the weight
// as (kh x kw x C) x F. With stride = kernel that gather is a permutation
// of the input (space to depth); with windows apart it reads only the
// pixels the conv reads. Its IR has the same few ops at any stride.
//
// A depthwise conv takes the same two ways, each tap a multiply-add per
// channel instead of a matmul.
//
// A grouped conv (`linalg.conv_2d_ngchw_gfchw`) too, on its channels merged
// back: the phases are all C channels', and group g's taps are matmuls of
// its Cg channels of a phase's rows with its Cg x Fg slice of the weight
// into its Fg columns of the result (the forall runs over images and
// groups); the patches are gathered by group and multiplied by one matmul
// per group. A groups-1 conv is the case G = 1.
//
//===----------------------------------------------------------------------===//
#include "nnx/Codegen/CPU/Layouts.h"
#include "nnx/Conversion/NNXToLinalg/NNXToLinalg.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/CheckedArithmetic.h"

using namespace mlir;

namespace {

/// The body of a multiply-accumulate generic: acc + lhs * rhs, narrow
/// operands (bf16 into an f32 accumulator) extended first.
void yieldMulAdd(OpBuilder &b, Location l, ValueRange a) {
  Type acc = a[2].getType();
  auto widen = [&](Value v) -> Value {
    return v.getType() == acc ? v : arith::ExtFOp::create(b, l, acc, v);
  };
  Value product = arith::MulFOp::create(b, l, widen(a[0]), widen(a[1]));
  linalg::YieldOp::create(
      b, l, ValueRange{arith::AddFOp::create(b, l, a[2], product)});
}

/// The sizes of the rewrite, as values or constants.
struct TapGeometry {
  /// Depthwise: F = C, each output channel reads its own input channel.
  bool depthwise;
  /// The input and the result are N x H x W x C (linalg's NHWC convs,
  /// nnx-channels-last) rather than N x C x H x W.
  bool channelsLast;
  /// F output and C input channels in `groups` groups (1 when depthwise):
  /// group g's Fg = F / groups outputs read its Cg = C / groups inputs.
  int64_t f, c, groups, kh, kw, strides[2], dilations[2];
  /// The phases are Hq x Wq pixels; the result is computed "wide", as M
  /// rows of Wq pixels (Wq = OW for the patches).
  OpFoldResult n, hq, wq, oh, ow, rows;

  int64_t cg() const { return c / groups; }
  /// The input's and the result's dim of spatial dim `i` (0: rows, 1:
  /// columns).
  int64_t spatialDim(unsigned i) const { return (channelsLast ? 1 : 2) + i; }
  int64_t fg() const { return f / groups; }
};

/// `v * k` (an index: a group times its channel count).
OpFoldResult scaled(OpBuilder &b, Location loc, OpFoldResult v, int64_t k) {
  AffineExpr d0;
  bindDims(b.getContext(), d0);
  return affine::makeComposedFoldedAffineApply(b, loc, d0 * k, {v});
}

RankedTensorType typeOf(ArrayRef<OpFoldResult> sizes, Type elt) {
  SmallVector<int64_t> shape;
  for (OpFoldResult s : sizes) {
    std::optional<int64_t> c = getConstantIntValue(s);
    shape.push_back(c ? *c : ShapedType::kDynamic);
  }
  return RankedTensorType::get(shape, elt);
}

/// The conv's input before its zero padding: `x`'s source when `x` is a
/// `tensor.pad` with zeros of the spatial dims only (dims 2 and 3, or 1 and
/// 2 channels-last) (the padding is then
/// written as the phases' zero border, and the padded tensor is never
/// built), else `x` unpadded.
struct UnpaddedInput {
  Value source;
  OpFoldResult low[2], high[2];
  /// Zero channels after the source's (a bf16 conv's odd C made even:
  /// BF16Matmul.cpp's pairs of channels); channels-last only.
  int64_t channelsAfter = 0;
};

UnpaddedInput unpad(OpBuilder &b, Value x, bool channelsLast) {
  OpFoldResult zero = b.getIndexAttr(0);
  UnpaddedInput in{x, {zero, zero}, {zero, zero}};
  auto pad = x.getDefiningOp<tensor::PadOp>();
  Value value = pad ? pad.getConstantPaddingValue() : Value();
  if (!value || !matchPattern(value, m_AnyZeroFloat()))
    return in;
  SmallVector<OpFoldResult> low = pad.getMixedLowPad(),
                            high = pad.getMixedHighPad();
  unsigned first = channelsLast ? 1 : 2;
  std::optional<int64_t> after = getConstantIntValue(high[3]);
  for (unsigned d = 0; d < 4; ++d) {
    bool padded = !isZeroInteger(low[d]) || !isZeroInteger(high[d]);
    bool trailingChannels =
        channelsLast && d == 3 && isZeroInteger(low[d]) && after && *after > 0;
    if ((d < first || d > first + 1) && padded && !trailingChannels)
      return in;
  }
  in.source = pad.getSource();
  if (channelsLast)
    in.channelsAfter = *after;
  for (unsigned i = 0; i < 2; ++i) {
    in.low[i] = low[first + i];
    in.high[i] = high[first + i];
  }
  return in;
}

/// The first row (or column) of phase `a` that holds an input pixel, and
/// the input's first row there: padded row i * s + a is input row
/// i * s + a - low.
std::pair<OpFoldResult, OpFoldResult>
phaseStart(OpBuilder &b, Location loc, int64_t s, int64_t a, OpFoldResult low) {
  AffineExpr l;
  bindSymbols(b.getContext(), l);
  AffineExpr first = (l - a).ceilDiv(s);
  return {
      affine::makeComposedFoldedAffineApply(b, loc, first, {low}),
      affine::makeComposedFoldedAffineApply(b, loc, first * s + a - l, {low})};
}

/// How many input rows phase `a` holds: those of h0, h0 + s, ... below
/// `size` (none when the image ends before h0).
OpFoldResult phaseCount(OpBuilder &b, Location loc, int64_t s, OpFoldResult h0,
                        OpFoldResult size) {
  AffineExpr start, end;
  bindSymbols(b.getContext(), start, end);
  AffineMap map = AffineMap::get(
      0, 2, {(end - start).ceilDiv(s), b.getAffineConstantExpr(0)},
      b.getContext());
  return affine::makeComposedFoldedAffineMax(b, loc, map, {h0, size});
}

/// The input as its stride phases, channels-last, the padding as zeros:
/// N x (s_h * s_w) x (Hq * Wq) x C. Each phase's pixels are one strided
/// slice of the input, copied (transposed, unless the input is
/// channels-last) into a box of a zero-filled buffer.
Value phaseImages(OpBuilder &b, Location loc, const TapGeometry &g,
                  const UnpaddedInput &in) {
  Type elt = getElementTypeOrSelf(in.source.getType());
  int64_t sh = g.strides[0], sw = g.strides[1];
  // A channels-last input with one phase (stride 1), no padding and no
  // extra row (one kernel column) is its own phase image: read in place.
  if (g.channelsLast && sh == 1 && sw == 1 && g.kw == 1 &&
      in.channelsAfter == 0 &&
      llvm::all_of(llvm::concat<const OpFoldResult>(in.low, in.high),
                   isZeroInteger)) {
    using RI = ReassociationIndices;
    OpFoldResult pixels = affine::makeComposedFoldedAffineApply(
                     b, loc,
                     b.getAffineSymbolExpr(0) * b.getAffineSymbolExpr(1),
                     {g.hq, g.wq}),
                 c = b.getIndexAttr(g.c);
    Value flat =
        nnx::reshapeTensor(b, loc, in.source, typeOf({g.n, pixels, c}, elt),
                           ArrayRef<RI>{{0}, {1, 2}, {3}}, {g.n, pixels, c});
    SmallVector<OpFoldResult> one{g.n, b.getIndexAttr(1), pixels, c};
    return nnx::reshapeTensor(b, loc, flat, typeOf(one, elt),
                              ArrayRef<RI>{{0}, {1, 2}, {3}}, one);
  }
  // The phases hold g.c channels, the input's first g.c - channelsAfter
  // of them (the rest stay zero).
  OpFoldResult zero = b.getIndexAttr(0), unit = b.getIndexAttr(1),
               c = b.getIndexAttr(g.c),
               sourceC = b.getIndexAttr(g.c - in.channelsAfter);
  SmallVector<OpFoldResult> shape{
      g.n, b.getIndexAttr(sh), b.getIndexAttr(sw), g.hq, g.wq, c};
  Value padValue = arith::ConstantOp::create(b, loc, b.getZeroAttr(elt));
  Value phases = tensor::EmptyOp::create(b, loc, shape, elt);
  phases =
      linalg::FillOp::create(b, loc, ValueRange{padValue}, ValueRange{phases})
          .getResult(0);
  OpFoldResult size[2] = {
      tensor::getMixedSize(b, loc, in.source, g.spatialDim(0)),
      tensor::getMixedSize(b, loc, in.source, g.spatialDim(1))};
  for (int64_t a = 0; a < sh; ++a)
    for (int64_t bb = 0; bb < sw; ++bb) {
      auto [i0, h0] = phaseStart(b, loc, sh, a, in.low[0]);
      auto [j0, w0] = phaseStart(b, loc, sw, bb, in.low[1]);
      OpFoldResult rows = phaseCount(b, loc, sh, h0, size[0]),
                   cols = phaseCount(b, loc, sw, w0, size[1]);
      SmallVector<OpFoldResult> at{zero, zero, h0, w0},
          extent{g.n, sourceC, rows, cols},
          step{unit, unit, b.getIndexAttr(sh), b.getIndexAttr(sw)};
      if (g.channelsLast)
        for (SmallVector<OpFoldResult> *v : {&at, &extent, &step})
          std::rotate(v->begin() + 1, v->begin() + 2, v->end());
      Value pixels = tensor::ExtractSliceOp::create(
          b, loc, typeOf(extent, elt), in.source, at, extent, step);
      SmallVector<OpFoldResult> offsets{
          zero, b.getIndexAttr(a), b.getIndexAttr(bb), i0, j0, zero},
          sizes{g.n, unit, unit, rows, cols, sourceC}, strides(6, unit);
      Value moved = pixels;
      if (!g.channelsLast) {
        Value box = tensor::ExtractSliceOp::create(
            b, loc, typeOf({g.n, rows, cols, sourceC}, elt), phases, offsets,
            sizes, strides);
        moved = linalg::TransposeOp::create(b, loc, pixels, box,
                                            ArrayRef<int64_t>{0, 2, 3, 1})
                    .getResult()[0];
      }
      phases = tensor::InsertSliceOp::create(b, loc, moved, phases, offsets,
                                             sizes, strides);
    }
  AffineExpr s0, s1;
  bindSymbols(b.getContext(), s0, s1);
  SmallVector<OpFoldResult> flat{
      g.n, b.getIndexAttr(sh * sw),
      affine::makeComposedFoldedAffineApply(b, loc, s0 * s1, {g.hq, g.wq}), c};
  return nnx::reshapeTensor(
      b, loc, phases, typeOf(flat, elt),
      ArrayRef<ReassociationIndices>{{0}, {1, 2}, {3, 4}, {5}}, flat);
}

/// Tap (i, j)'s contribution to `acc` (M x Fg) of group `group`: the M x Cg
/// rows `lhs` of its phase times the weight's Cg x Fg slice (`kh x kw x C x
/// Fg`, group g's rows at g * Cg); for a depthwise conv (`kh x kw x 1 x C`,
/// F = C), times the weight's C-vector, channel by channel.
Value tapProduct(OpBuilder &b, Location loc, const TapGeometry &g, Value lhs,
                 Value weight, OpFoldResult i, OpFoldResult j,
                 OpFoldResult group, Value acc) {
  Type elt = getElementTypeOrSelf(weight.getType());
  OpFoldResult zero = b.getIndexAttr(0), unit = b.getIndexAttr(1),
               c = b.getIndexAttr(g.c);
  SmallVector<OpFoldResult> strides(4, unit);
  if (!g.depthwise) {
    OpFoldResult cg = b.getIndexAttr(g.cg()), fg = b.getIndexAttr(g.fg());
    Value rhs = tensor::ExtractSliceOp::create(
        b, loc, typeOf({cg, fg}, elt), weight,
        ArrayRef<OpFoldResult>{i, j, scaled(b, loc, group, g.cg()), zero},
        ArrayRef<OpFoldResult>{unit, unit, cg, fg}, strides);
    return linalg::MatmulOp::create(b, loc, TypeRange{acc.getType()},
                                    ValueRange{lhs, rhs}, ValueRange{acc})
        .getResult(0);
  }
  Value rhs = tensor::ExtractSliceOp::create(
      b, loc, typeOf({c}, elt), weight,
      ArrayRef<OpFoldResult>{i, j, zero, zero},
      ArrayRef<OpFoldResult>{unit, unit, unit, c}, strides);
  MLIRContext *ctx = b.getContext();
  AffineExpr p, ch;
  bindDims(ctx, p, ch);
  AffineMap rows = AffineMap::getMultiDimIdentityMap(2, ctx);
  SmallVector<AffineMap> maps{rows, AffineMap::get(2, 0, {ch}, ctx), rows};
  return linalg::GenericOp::create(
             b, loc, TypeRange{acc.getType()}, ValueRange{lhs, rhs},
             ValueRange{acc}, maps,
             SmallVector<utils::IteratorType>(2, utils::IteratorType::parallel),
             yieldMulAdd)
      .getResult(0);
}

/// `acc` (`rows` x Fg) plus the products of every tap of image `n`, group
/// `group`, for the wide result's rows from `first`.
Value accumulateTaps(OpBuilder &b, Location loc, const TapGeometry &g,
                     Value phases, Value weight, Value n, Value group,
                     OpFoldResult first, OpFoldResult rows, Value acc) {
  Type elt = getElementTypeOrSelf(phases.getType());
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
        AffineExpr s1;
        bindSymbols(bb.getContext(), s0, s1);
        OpFoldResult offset =
            apply(reachH.floorDiv(sh) * s0 + reachW.floorDiv(sw) + s1,
                  {t, g.wq, first});
        OpFoldResult unit = bb.getIndexAttr(1);
        OpFoldResult c = bb.getIndexAttr(g.cg());
        Value lhs = tensor::ExtractSliceOp::create(
            bb, l, typeOf({rows, c}, elt), phases,
            ArrayRef<OpFoldResult>{n, phase, offset,
                                   scaled(bb, l, group, g.cg())},
            ArrayRef<OpFoldResult>{unit, unit, rows, c},
            SmallVector<OpFoldResult>(4, unit));
        Value sum =
            tapProduct(bb, l, g, lhs, weight, apply(i, {OpFoldResult(t)}),
                       apply(j, {OpFoldResult(t)}), group, iter[0]);
        scf::YieldOp::create(bb, l, sum);
      });
  return loop.getResult(0);
}

/// Whether `g`'s products are summed straight into the conv's `init`: a
/// channels-last result whose rows are as wide as the wide result's (Wq =
/// OW: the patches, and phases without column padding) is that result's N x
/// (OH * OW) x F, reshaped.
bool accumulatesInPlace(const TapGeometry &g) {
  return g.channelsLast && isEqualConstantIntOrValue(g.wq, g.ow);
}

/// The wide result (N x M x F, M = OH * Wq) the products are summed into:
/// `init` reshaped where accumulatesInPlace, else zeros (narrowInto adds
/// the sums to `init`).
Value wideAccumulator(OpBuilder &b, Location loc, const TapGeometry &g,
                      Value init) {
  Type elt = getElementTypeOrSelf(init.getType());
  SmallVector<OpFoldResult> wide{g.n, g.rows, b.getIndexAttr(g.f)};
  if (accumulatesInPlace(g))
    return nnx::reshapeTensor(b, loc, init, typeOf(wide, elt),
                              ArrayRef<ReassociationIndices>{{0}, {1, 2}, {3}},
                              wide);
  Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(elt));
  Value empty = tensor::EmptyOp::create(b, loc, wide, elt);
  return linalg::FillOp::create(b, loc, ValueRange{zero}, ValueRange{empty})
      .getResult(0);
}

/// `init`'s fill where `init` is a fill of zeros (a conv without bias),
/// else null.
linalg::FillOp zeroFill(Value init) {
  auto fill = init.getDefiningOp<linalg::FillOp>();
  return fill && matchPattern(fill.getInputs()[0], m_AnyZeroFloat())
             ? fill
             : linalg::FillOp();
}

/// `sums` (read through `map`) added to `dest` by one elementwise generic
/// over `dest`'s dims; copied into it where `copy` (dest stands for zeros
/// that are never read).
Value addInto(OpBuilder &b, Location loc, Value sums, AffineMap map, Value dest,
              bool copy) {
  auto type = cast<RankedTensorType>(dest.getType());
  SmallVector<AffineMap> maps{
      map, AffineMap::getMultiDimIdentityMap(type.getRank(), b.getContext())};
  return linalg::GenericOp::create(
             b, loc, TypeRange{type}, ValueRange{sums}, ValueRange{dest}, maps,
             SmallVector<utils::IteratorType>(type.getRank(),
                                              utils::IteratorType::parallel),
             [&](OpBuilder &bb, Location l, ValueRange a) {
               linalg::YieldOp::create(
                   bb, l,
                   copy ? a[0]
                        : Value(arith::AddFOp::create(bb, l, a[1], a[0])));
             })
      .getResult(0);
}

/// The wide results (N x M x F, M = OH * Wq, from wideAccumulator) as the
/// conv's: the first OW of each row of Wq pixels, added to `init` (in the
/// result's layout), or reshaped where they were summed into it.
Value narrowInto(OpBuilder &b, Location loc, const TapGeometry &g, Value wide,
                 Value init) {
  Type elt = getElementTypeOrSelf(init.getType());
  OpFoldResult f = b.getIndexAttr(g.f), zero = b.getIndexAttr(0),
               unit = b.getIndexAttr(1);
  SmallVector<OpFoldResult> rows{g.n, g.oh, g.wq, f};
  Value expanded = nnx::reshapeTensor(
      b, loc, wide, typeOf(rows, elt),
      ArrayRef<ReassociationIndices>{{0}, {1, 2}, {3}}, rows);
  if (accumulatesInPlace(g))
    return expanded;
  Value kept = tensor::ExtractSliceOp::create(
      b, loc, typeOf({g.n, g.oh, g.ow, f}, elt), expanded,
      SmallVector<OpFoldResult>(4, zero),
      ArrayRef<OpFoldResult>{g.n, g.oh, g.ow, f},
      SmallVector<OpFoldResult>(4, unit));
  MLIRContext *ctx = b.getContext();
  AffineExpr n, c, h, w;
  bindDims(ctx, n, c, h, w);
  // Into zeros (a conv without bias), the sums are copied: the fill's
  // destination is written once.
  linalg::FillOp zeros = zeroFill(init);
  return addInto(b, loc, kept,
                 g.channelsLast ? AffineMap::getMultiDimIdentityMap(4, ctx)
                                : AffineMap::get(4, 0, {n, h, w, c}, ctx),
                 zeros ? zeros.getOutputs()[0] : init, bool(zeros));
}

/// The geometry of a conv into `init` (N x F x OH x OW, or N x OH x OW x F
/// when `channelsLast`) with a kh x kw window of C channels and F filters;
/// the phases' sizes are left to phaseGeometry.
TapGeometry tapGeometry(OpBuilder &b, Location loc, Value init,
                        bool channelsLast, int64_t c, int64_t f,
                        ArrayRef<int64_t> window, DenseIntElementsAttr strides,
                        DenseIntElementsAttr dilations) {
  TapGeometry g;
  g.depthwise = false;
  g.channelsLast = channelsLast;
  g.groups = 1;
  g.c = c;
  g.f = f;
  g.kh = window[0];
  g.kw = window[1];
  for (auto [i, v] : llvm::enumerate(strides.getValues<int64_t>()))
    g.strides[i] = v;
  for (auto [i, v] : llvm::enumerate(dilations.getValues<int64_t>()))
    g.dilations[i] = v;
  g.n = tensor::getMixedSize(b, loc, init, 0);
  g.oh = tensor::getMixedSize(b, loc, init, g.spatialDim(0));
  g.ow = tensor::getMixedSize(b, loc, init, g.spatialDim(1));
  // The patches' rows (phaseGeometry widens them).
  AffineExpr s0, s1;
  bindSymbols(b.getContext(), s0, s1);
  g.wq = g.ow;
  g.rows = affine::makeComposedFoldedAffineApply(b, loc, s0 * s1, {g.oh, g.ow});
  return g;
}

/// The phases' sizes of `g`'s conv of `in` (N x C x Hp x Wp, or N x Hp x
/// Wp x C, once padded as `in` says), taken from `in` so that the padded tensor
/// itself is left unused: Hq x Wq pixels each, and the M = OH * Wq rows of the
/// wide result.
void phaseGeometry(OpBuilder &b, Location loc, const UnpaddedInput &in,
                   TapGeometry &g) {
  AffineExpr s0, s1, s2;
  bindSymbols(b.getContext(), s0, s1, s2);
  auto apply = [&](AffineExpr e, ArrayRef<OpFoldResult> v) {
    return affine::makeComposedFoldedAffineApply(b, loc, e, v);
  };
  OpFoldResult padded[2];
  for (unsigned i = 0; i < 2; ++i)
    padded[i] = apply(s0 + s1 + s2,
                      {tensor::getMixedSize(b, loc, in.source, g.spatialDim(i)),
                       in.low[i], in.high[i]});
  // Whole phases, plus one row when the last tap reaches past the end of
  // the last row.
  int64_t extra = (g.kw - 1) * g.dilations[1] / g.strides[1] > 0 ? 1 : 0;
  g.hq = apply(s0.ceilDiv(g.strides[0]) + extra, {padded[0]});
  g.wq = apply(s0.ceilDiv(g.strides[1]), {padded[1]});
  // Unit column stride: one row's right padding is the next row's left
  // padding. A tap reading left of a row's pixels (at most `low` columns)
  // reads the zeros after the previous row's, one reading right of them (at
  // most `high`) the zeros after its own or, wrapping, those before the next
  // row's (the extra row below the last): max(low, high) zero columns
  // between rows suffice, not low + high. Each wide row is then that much
  // shorter (a 3 x 3 conv at 14 x 14: 15 columns computed for 14 kept, not
  // 16), as long as it still holds the OW columns kept, and the last tap's
  // window, which reaches (kw - 1) d columns past the last row, stays in
  // the extra row.
  if (g.strides[1] == 1) {
    AffineExpr s3;
    bindSymbols(b.getContext(), s0, s1, s2, s3);
    AffineMap widths =
        AffineMap::get(0, 4,
                       {s0 + s1, s0 + s2, s3,
                        b.getAffineConstantExpr((g.kw - 1) * g.dilations[1])},
                       b.getContext());
    g.wq = affine::makeComposedFoldedAffineMax(
        b, loc, widths,
        {tensor::getMixedSize(b, loc, in.source, g.spatialDim(1)), in.low[1],
         in.high[1], g.ow});
  }
  g.rows = apply(s0 * s1, {g.oh, g.wq});
}

/// At most this many stride phases (s_h x s_w) are written one by one.
constexpr int64_t kMaxPhases = 4;

/// Whether `g`'s conv takes the phases: its windows overlap in a dim
/// (stride <= d (k - 1)), where the phases copy each input pixel once and
/// patches would copy it up to (span / stride)^2 times, and it has at most
/// kMaxPhases phases. Else the patches: no larger than the input (windows
/// apart), or a constant number of ops where the phases would be s_h x s_w.
bool takesPhases(const TapGeometry &g) {
  if (g.strides[0] > kMaxPhases || g.strides[1] > kMaxPhases ||
      g.strides[0] * g.strides[1] > kMaxPhases)
    return false;
  int64_t kernel[2] = {g.kh, g.kw};
  bool overlap = false;
  for (unsigned i = 0; i < 2; ++i) {
    std::optional<int64_t> reach =
        llvm::checkedMul(g.dilations[i], kernel[i] - 1);
    // A reach past int64 is refused by the nnx verifiers; a linalg conv
    // written so takes the patches, which never compute it.
    if (!reach)
      return false;
    overlap |= g.strides[i] <= *reach;
  }
  return overlap;
}

/// The FMAs a core could do in the time it moves 8 bytes through memory:
/// ~200 GFLOP/s of FMA peak over a ~20 GB/s share of the bandwidth on the
/// AVX-512 machines measured (bench/results), ~100 over ~10 on AVX2: ~40.
/// 30, as measured: ResNet-50's 3 x 3 convs at 14 x 14 with 256 filters
/// (37 FMAs more per element by the phases with rows of 16 pixels) were ~1%
/// of the model's time faster by the patches (batch 16, one thread, Zen 5);
/// with rows of 15 (18 FMAs more) they take the phases, the model's time
/// the same within the machine's noise (bench/results, 2026-12-07).
constexpr int64_t kGatherCost = 30;

/// Whether a conv that could take the phases (phaseGeometry's sizes in `g`)
/// is cheaper by the patches. Per output pixel and element of its window
/// (tap and channel), the phases' wide rows compute Fg FMAs on each of Wq
/// columns where OW are kept: Fg (Wq - OW) / OW more than the patches,
/// which instead gather the element once (written, then read back by the
/// matmul: kGatherCost). So the patches win on small maps of many channels
/// (ResNet-50's 3 x 3 convs at 7 x 7 with 512 filters compute 8 columns for
/// 7), never on the large maps of a network's first stages, where the
/// patches would also be large. Measured on ResNet-50 (b16, Zen 5): its 7 x
/// 7 convs by the patches 10% faster (when their rows were 9 pixels). An RGB
/// stem, whose taps sum only 3 channels each into their accumulators, was not
/// faster by the patches gathered whole ahead of the matmul (118 MB at batch
/// 16): it keeps the phases. A depthwise conv gathers as much as its taps
/// multiply: it keeps the phases too.
bool wideRowsCostMore(const TapGeometry &g) {
  std::optional<int64_t> wq = getConstantIntValue(g.wq),
                         ow = getConstantIntValue(g.ow);
  if (g.depthwise || !wq || !ow || *ow <= 0)
    return false;
  return g.fg() * (*wq - *ow) > kGatherCost * *ow;
}

/// The windows of `x` (N x C x Hp x Wp or N x Hp x Wp x C, padded),
/// channels-last and by
/// group: N x OH x OW x G x kh x kw x Cg, window (oh, ow) of group g at tap
/// (i, j) being x[n, g * Cg : (g + 1) * Cg, oh * s_h + i * d_h,
/// ow * s_w + j * d_w]. One gather whose input map is strided, whatever the
/// stride.
Value gatherPatches(OpBuilder &b, Location loc, const TapGeometry &g, Value x) {
  Type elt = getElementTypeOrSelf(x.getType());
  OpFoldResult kh = b.getIndexAttr(g.kh), kw = b.getIndexAttr(g.kw),
               groups = b.getIndexAttr(g.groups), c = b.getIndexAttr(g.cg());
  SmallVector<OpFoldResult> shape{g.n, g.oh, g.ow, groups, kh, kw, c};
  // A 1 x 1 window at stride 1 channels-last: the patches are the input.
  if (g.channelsLast && g.kh == 1 && g.kw == 1 && g.strides[0] == 1 &&
      g.strides[1] == 1)
    return nnx::reshapeTensor(
        b, loc, x, typeOf(shape, elt),
        ArrayRef<ReassociationIndices>{{0}, {1}, {2}, {3, 4, 5, 6}}, shape);
  Value init = tensor::EmptyOp::create(b, loc, shape, elt);
  MLIRContext *ctx = b.getContext();
  AffineExpr n, oh, ow, grp, i, j, ch;
  bindDims(ctx, n, oh, ow, grp, i, j, ch);
  SmallVector<AffineExpr> read{n, grp * g.cg() + ch,
                               oh * g.strides[0] + i * g.dilations[0],
                               ow * g.strides[1] + j * g.dilations[1]};
  if (g.channelsLast)
    std::rotate(read.begin() + 1, read.begin() + 2, read.end());
  SmallVector<AffineMap> maps{AffineMap::get(7, 0, read, ctx),
                              AffineMap::getMultiDimIdentityMap(7, ctx)};
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()}, ValueRange{x}, ValueRange{init},
             maps,
             SmallVector<utils::IteratorType>(7, utils::IteratorType::parallel),
             [](OpBuilder &bb, Location l, ValueRange a) {
               linalg::YieldOp::create(bb, l, a[0]);
             })
      .getResult(0);
}

/// The depthwise products of `patches` (N x OH x OW x 1 x kh x kw x C) and
/// `weight` (kh x kw x 1 x C), summed over the taps into `acc`: N x (OH *
/// OW) x C.
Value depthwisePatchSums(OpBuilder &b, Location loc, const TapGeometry &g,
                         Value patches, Value weight, Value acc) {
  patches = tensor::CollapseShapeOp::create(
      b, loc, patches,
      ArrayRef<ReassociationIndices>{{0}, {1, 2}, {3, 4}, {5}, {6}});
  Value taps = tensor::CollapseShapeOp::create(
      b, loc, weight, ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}});
  MLIRContext *ctx = b.getContext();
  AffineExpr n, m, i, j, ch;
  bindDims(ctx, n, m, i, j, ch);
  SmallVector<AffineMap> maps{AffineMap::getMultiDimIdentityMap(5, ctx),
                              AffineMap::get(5, 0, {i, j, ch}, ctx),
                              AffineMap::get(5, 0, {n, m, ch}, ctx)};
  using IT = utils::IteratorType;
  return linalg::GenericOp::create(b, loc, TypeRange{acc.getType()},
                                   ValueRange{patches, taps}, ValueRange{acc},
                                   maps,
                                   {IT::parallel, IT::parallel, IT::reduction,
                                    IT::reduction, IT::parallel},
                                   yieldMulAdd)
      .getResult(0);
}

/// A `tensor.extract_slice` of `t` at `offsets` of `sizes`, rank-reduced to
/// the sizes in `kept` (unit strides).
Value sliceOf(OpBuilder &b, Location loc, Value t,
              ArrayRef<OpFoldResult> offsets, ArrayRef<OpFoldResult> sizes,
              ArrayRef<OpFoldResult> kept) {
  return tensor::ExtractSliceOp::create(
      b, loc, typeOf(kept, getElementTypeOrSelf(t.getType())), t, offsets,
      sizes, SmallVector<OpFoldResult>(sizes.size(), b.getIndexAttr(1)));
}

/// Rows of a conv's result one thread computes at a time: the matmuls are
/// split among threads by images, blocks of rows and groups, so that one
/// image alone (batch 1) keeps every thread busy. A multiple of the
/// register and cache tiles' rows (6 and 48).
constexpr int64_t kRowBlock = 192;

/// A slice of an `scf.forall`'s shared output: where, how big, and the
/// sizes it is rank-reduced to.
struct Box {
  SmallVector<OpFoldResult> offsets, sizes, kept;
};

/// The rows of a block of `rows`: a static count that divides static
/// `rows` (from kRowBlock / 2 to kRowBlock; all of them when at most 2
/// kRowBlock), so that each block's matmul has a static M and its
/// register tiles no dynamic remainder (one conv's code then stays the
/// size it was unsplit); else kRowBlock, the last block what is left.
int64_t blockRows(OpFoldResult rows) {
  std::optional<int64_t> total = getConstantIntValue(rows);
  if (!total)
    return kRowBlock;
  for (int64_t d = kRowBlock; d >= kRowBlock / 2; --d)
    if (*total % d == 0)
      return d;
  return *total <= 2 * kRowBlock ? std::max<int64_t>(*total, 1) : kRowBlock;
}

/// The rows of block `block` of `rows` in blocks of `size`: its first row
/// and its row count (`size`, or what is left).
std::pair<OpFoldResult, OpFoldResult> rowBlock(OpBuilder &b, Location loc,
                                               Value block, OpFoldResult rows,
                                               int64_t size) {
  AffineExpr d0, s0;
  bindDims(b.getContext(), d0);
  bindSymbols(b.getContext(), s0);
  OpFoldResult first =
      affine::makeComposedFoldedAffineApply(b, loc, d0 * size, {block});
  std::optional<int64_t> total = getConstantIntValue(rows);
  if (total && *total % size == 0)
    return {first, b.getIndexAttr(size)};
  MLIRContext *ctx = b.getContext();
  AffineMap count = AffineMap::get(
      1, 1, {getAffineConstantExpr(size, ctx), s0 - d0 * size}, ctx);
  return {first, affine::makeComposedFoldedAffineMin(
                     b, loc, count, {OpFoldResult(block), rows})};
}

/// How many blocks of `size` rows `rows` rows make.
OpFoldResult rowBlocks(OpBuilder &b, Location loc, OpFoldResult rows,
                       int64_t size) {
  return affine::makeComposedFoldedAffineApply(
      b, loc, b.getAffineSymbolExpr(0).ceilDiv(size), {rows});
}

/// A fill seen through reshapes: when `v` is `reshape(fill(x, dest))`
/// (any chain of collapse_shape and expand_shape), x and `reshape(dest)`,
/// the reshapes rebuilt on dest; else {}.
std::pair<Value, Value> splitFill(OpBuilder &b, Location loc, Value v) {
  if (auto fill = v.getDefiningOp<linalg::FillOp>())
    return {fill.getInputs()[0], fill.getOutputs()[0]};
  if (auto collapse = v.getDefiningOp<tensor::CollapseShapeOp>()) {
    auto [x, dest] = splitFill(b, loc, collapse.getSrc());
    if (!x)
      return {};
    return {x, tensor::CollapseShapeOp::create(
                   b, loc, collapse.getResultType(), dest,
                   collapse.getReassociationIndices())};
  }
  if (auto expand = v.getDefiningOp<tensor::ExpandShapeOp>()) {
    auto [x, dest] = splitFill(b, loc, expand.getSrc());
    if (!x)
      return {};
    return {x,
            tensor::ExpandShapeOp::create(b, loc, expand.getResultType(), dest,
                                          expand.getReassociationIndices(),
                                          expand.getMixedOutputShape())};
  }
  return {};
}

/// An `scf.forall` over `bounds` (split among threads) whose iteration
/// `ivs` replaces the slice `box(ivs)` of `out` by `body(ivs, slice)`; its
/// result. The boxes cover `out`, so where `out` is a fill (splitFill),
/// each iteration fills its own box instead, just before the body reads
/// it: a box of a few hundred rows is still in the core's cache then, where
/// the whole fill ahead of the loop wrote the result out to memory once
/// more and the body read it back.
Value forallSlices(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> bounds,
                   Value out, function_ref<Box(OpBuilder &, ValueRange)> box,
                   function_ref<Value(OpBuilder &, ValueRange, Value)> body) {
  auto [fillValue, unfilled] = splitFill(b, loc, out);
  auto forall = scf::ForallOp::create(b, loc, bounds,
                                      ValueRange{fillValue ? unfilled : out},
                                      /*mapping=*/std::nullopt);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(forall.getBody());
  SmallVector<Value> ivs(forall.getInductionVars());
  Value shared = forall.getRegionIterArgs()[0];
  Box at = box(b, ivs);
  Value acc = sliceOf(b, loc, shared, at.offsets, at.sizes, at.kept);
  if (fillValue)
    acc = linalg::FillOp::create(b, loc, ValueRange{fillValue}, ValueRange{acc})
              .getResult(0);
  Value sum = body(b, ivs, acc);
  b.setInsertionPointToStart(forall.getTerminator().getBody());
  tensor::ParallelInsertSliceOp::create(
      b, loc, sum, shared, at.offsets, at.sizes,
      SmallVector<OpFoldResult>(at.sizes.size(), b.getIndexAttr(1)));
  return forall.getResult(0);
}

/// `patches` (N x OH x OW x G x kh x kw x Cg) times `weight`, summed into
/// `acc`, (N OH OW) x F. Ungrouped, one matmul with the weight (kh x kw x
/// C x F) as K x F; grouped, one per group (an `scf.forall`), group g's
/// (N OH OW) x (kh kw Cg) patches times its (kh kw Cg) x Fg weight (G x kh
/// x kw x Cg x Fg) into its Fg columns.
Value patchProduct(OpBuilder &b, Location loc, const TapGeometry &g,
                   Value patches, Value weight, Value acc) {
  using RI = ReassociationIndices;
  // (N OH OW) x (kh kw C) ungrouped, else (N OH OW) x G x (kh kw Cg).
  Value lhs = tensor::CollapseShapeOp::create(
      b, loc, patches,
      g.groups == 1 ? ArrayRef<RI>{{0, 1, 2}, {3, 4, 5, 6}}
                    : ArrayRef<RI>{{0, 1, 2}, {3}, {4, 5, 6}});
  OpFoldResult m = tensor::getMixedSize(b, loc, lhs, 0);
  auto matmul = [&](OpBuilder &bb, Value a, Value w, Value c) {
    return linalg::MatmulOp::create(bb, loc, TypeRange{c.getType()},
                                    ValueRange{a, w}, ValueRange{c})
        .getResult(0);
  };
  bool grouped = g.groups > 1;
  Value rhs = tensor::CollapseShapeOp::create(
      b, loc, weight,
      grouped ? ArrayRef<RI>{{0}, {1, 2, 3}, {4}}
              : ArrayRef<RI>{{0, 1, 2}, {3}});
  OpFoldResult zeroIndex = b.getIndexAttr(0), unit = b.getIndexAttr(1),
               k = b.getIndexAttr(g.kh * g.kw * g.cg()),
               fg = b.getIndexAttr(g.fg());
  // Blocks of rows and groups among threads.
  int64_t size = blockRows(m);
  return forallSlices(
      b, loc, {rowBlocks(b, loc, m, size), b.getIndexAttr(g.groups)}, acc,
      [&](OpBuilder &bb, ValueRange ivs) -> Box {
        auto [first, rows] = rowBlock(bb, loc, ivs[0], m, size);
        return {
            {first, scaled(bb, loc, ivs[1], g.fg())}, {rows, fg}, {rows, fg}};
      },
      [&](OpBuilder &bb, ValueRange ivs, Value out) {
        auto [first, rows] = rowBlock(bb, loc, ivs[0], m, size);
        OpFoldResult grp = ivs[1];
        Value a = grouped ? sliceOf(bb, loc, lhs, {first, grp, zeroIndex},
                                    {rows, unit, k}, {rows, k})
                          : sliceOf(bb, loc, lhs, {first, zeroIndex}, {rows, k},
                                    {rows, k});
        Value w = grouped ? sliceOf(bb, loc, rhs, {grp, zeroIndex, zeroIndex},
                                    {unit, k, fg}, {k, fg})
                          : rhs;
        return matmul(bb, a, w, out);
      });
}

/// The conv of `x` (padded) by its patches times `weight` (kh x kw x C x F;
/// G x kh x kw x Cg x Fg when grouped; kh x kw x 1 x C when depthwise),
/// added to `init`.
Value convByPatches(OpBuilder &b, Location loc, const TapGeometry &g, Value x,
                    Value weight, Value init) {
  Type elt = getElementTypeOrSelf(init.getType());
  Value patches = gatherPatches(b, loc, g, x);
  Value acc = wideAccumulator(b, loc, g, init);
  if (g.depthwise)
    return narrowInto(
        b, loc, g, depthwisePatchSums(b, loc, g, patches, weight, acc), init);
  // The matmuls see (N OH OW) x F.
  using RI = ReassociationIndices;
  OpFoldResult f = b.getIndexAttr(g.f);
  OpFoldResult m = affine::makeComposedFoldedAffineApply(
      b, loc, b.getAffineSymbolExpr(0) * b.getAffineSymbolExpr(1),
      {g.n, g.rows});
  Value flat = nnx::reshapeTensor(b, loc, acc, typeOf({m, f}, elt),
                                  ArrayRef<RI>{{0, 1}, {2}}, {m, f});
  Value product = patchProduct(b, loc, g, patches, weight, flat);
  SmallVector<OpFoldResult> wide{g.n, g.rows, f};
  Value sums = nnx::reshapeTensor(b, loc, product, typeOf(wide, elt),
                                  ArrayRef<RI>{{0, 1}, {2}}, wide);
  return narrowInto(b, loc, g, sums, init);
}

/// Image rows per block when the phases' wide rows are narrowed inside
/// the blocks, so that every block is whole image rows of the result,
/// static: the largest divisor r of OH with r Wq wide rows at most 2
/// kRowBlock that leaves an image at least 2 blocks of at least kRowBlock
/// / 2 wide rows (one image alone, batch 1, keeps two threads busy: a 14 x
/// 14 map is 2 blocks of 7 rows, not 1 of 14); without one, the largest
/// divisor with r Wq at most 2 kRowBlock (a 7 x 7 map is one block). 0
/// (the wide result is narrowed after the forall) for an NCHW result (its
/// blocks are not boxes of it), a result summed in place, or sizes that
/// are not static.
int64_t imageRowsPerBlock(const TapGeometry &g) {
  std::optional<int64_t> oh = getConstantIntValue(g.oh),
                         wq = getConstantIntValue(g.wq),
                         ow = getConstantIntValue(g.ow);
  if (!g.channelsLast || accumulatesInPlace(g) || !oh || !wq || !ow ||
      *oh < 1 || *wq < 1)
    return 0;
  int64_t shared = 0, any = 1;
  for (int64_t r = 1; r <= *oh; ++r) {
    if (*oh % r != 0 || r * *wq > 2 * kRowBlock)
      continue;
    any = r;
    if (*oh / r >= 2 && r * *wq >= kRowBlock / 2)
      shared = r;
  }
  return shared ? shared : any;
}

/// The conv by the phases, each block narrowing its own wide rows
/// (imageRowsPerBlock `r` > 0): one image, `r` rows of the result and a
/// group per `scf.forall` iteration, whose taps sum into a temporary of
/// its r x Wq wide rows; the first OW of each are copied into the
/// result's box (added to `init`'s where `init` is not zeros). The wide
/// result is never a whole tensor, and the result's blocks are full-rank
/// boxes, which its epilogue (ConvEpilogues.cpp) is then fused into.
Value convByTapsInBlocks(OpBuilder &b, Location loc, const TapGeometry &g,
                         const UnpaddedInput &in, Value weight, Value init,
                         int64_t r) {
  Type elt = getElementTypeOrSelf(init.getType());
  Value phases = phaseImages(b, loc, g, in);
  int64_t oh = *getConstantIntValue(g.oh), wq = *getConstantIntValue(g.wq),
          ow = *getConstantIntValue(g.ow), fg = g.fg();
  linalg::FillOp zeros = zeroFill(init);
  SmallVector<OpFoldResult> bounds{g.n, b.getIndexAttr(oh / r),
                                   b.getIndexAttr(g.groups)};
  auto forall = scf::ForallOp::create(
      b, loc, bounds, ValueRange{zeros ? zeros.getOutputs()[0] : init},
      /*mapping=*/std::nullopt);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(forall.getBody());
  Value n = forall.getInductionVar(0), block = forall.getInductionVar(1),
        group = forall.getInductionVar(2);
  Value shared = forall.getRegionIterArgs()[0];
  // The block's wide rows, summed from zeros.
  Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(elt));
  Value box =
      linalg::FillOp::create(b, loc, ValueRange{zero},
                             ValueRange{tensor::EmptyOp::create(
                                 b, loc, ArrayRef<int64_t>{r * wq, fg}, elt)})
          .getResult(0);
  Value sums = accumulateTaps(b, loc, g, phases, weight, n, group,
                              scaled(b, loc, block, r * wq),
                              b.getIndexAttr(r * wq), box);
  // Their first OW columns of each of the r rows, into the result's box.
  OpFoldResult zeroIndex = b.getIndexAttr(0), unit = b.getIndexAttr(1);
  Value rows = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get({r, wq, fg}, elt), sums,
      ArrayRef<ReassociationIndices>{{0, 1}, {2}});
  Value kept = tensor::ExtractSliceOp::create(
      b, loc, RankedTensorType::get({r, ow, fg}, elt), rows,
      ArrayRef<OpFoldResult>{zeroIndex, zeroIndex, zeroIndex},
      ArrayRef<OpFoldResult>{b.getIndexAttr(r), b.getIndexAttr(ow),
                             b.getIndexAttr(fg)},
      SmallVector<OpFoldResult>(3, unit));
  SmallVector<OpFoldResult> offsets{n, scaled(b, loc, block, r), zeroIndex,
                                    scaled(b, loc, group, fg)};
  SmallVector<OpFoldResult> sizes{unit, b.getIndexAttr(r), b.getIndexAttr(ow),
                                  b.getIndexAttr(fg)};
  SmallVector<OpFoldResult> strides(4, unit);
  auto boxType = RankedTensorType::get({1, r, ow, fg}, elt);
  Value dest =
      zeros ? Value(tensor::EmptyOp::create(b, loc, boxType.getShape(), elt))
            : Value(tensor::ExtractSliceOp::create(b, loc, boxType, shared,
                                                   offsets, sizes, strides));
  MLIRContext *ctx = b.getContext();
  AffineExpr d0, d1, d2, d3;
  bindDims(ctx, d0, d1, d2, d3);
  Value narrowed = addInto(
      b, loc, kept, AffineMap::get(4, 0, {d1, d2, d3}, ctx), dest, bool(zeros));
  b.setInsertionPointToStart(forall.getTerminator().getBody());
  tensor::ParallelInsertSliceOp::create(b, loc, narrowed, shared, offsets,
                                        sizes, strides);
  return forall.getResult(0);
}

/// The conv as the sum over its taps (`weight`: kh x kw x C x Fg, group g's
/// rows at g * Cg; kh x kw x 1 x C when depthwise), added to `init`; one
/// image, block of rows and group per `scf.forall` iteration, each group's
/// taps summed into its Fg columns of the wide result.
Value convByTaps(OpBuilder &b, Location loc, const TapGeometry &g,
                 const UnpaddedInput &in, Value weight, Value init) {
  if (int64_t r = imageRowsPerBlock(g))
    return convByTapsInBlocks(b, loc, g, in, weight, init, r);
  Value phases = phaseImages(b, loc, g, in);
  OpFoldResult unit = b.getIndexAttr(1), fg = b.getIndexAttr(g.fg());
  Value wide = wideAccumulator(b, loc, g, init);
  // Images, blocks of rows and groups among threads.
  int64_t size = blockRows(g.rows);
  Value sums = forallSlices(
      b, loc, {g.n, rowBlocks(b, loc, g.rows, size), b.getIndexAttr(g.groups)},
      wide,
      [&](OpBuilder &bb, ValueRange ivs) -> Box {
        auto [first, rows] = rowBlock(bb, loc, ivs[1], g.rows, size);
        return {{ivs[0], first, scaled(bb, loc, ivs[2], g.fg())},
                {unit, rows, fg},
                {rows, fg}};
      },
      [&](OpBuilder &bb, ValueRange ivs, Value acc) {
        auto [first, rows] = rowBlock(bb, loc, ivs[1], g.rows, size);
        return accumulateTaps(bb, loc, g, phases, weight, ivs[0], ivs[2], first,
                              rows, acc);
      });
  return narrowInto(b, loc, g, sums, init);
}

/// Whether `op` is on tensors whose inputs are of one float type, and whose
/// destination is of that type or f32 (a bf16 or f16 conv accumulating in
/// f32, as nnx-build-forward's `accumulate=f32` writes it).
bool isFloatOnTensors(linalg::LinalgOp op) {
  if (!op.hasPureTensorSemantics())
    return false;
  Type elt = getElementTypeOrSelf(op.getDpsInputs()[0].getType());
  Type acc = getElementTypeOrSelf(op->getResult(0).getType());
  auto narrow = dyn_cast<FloatType>(elt);
  return narrow && (acc == elt || (acc.isF32() && narrow.getWidth() < 32)) &&
         llvm::all_of(op.getDpsInputs(), [&](Value v) {
           return getElementTypeOrSelf(v.getType()) == elt;
         });
}

/// `op`'s filter type, if `op` is on tensors of one float type and its
/// filter is static; else null.
RankedTensorType staticFilterType(linalg::LinalgOp op) {
  if (!isFloatOnTensors(op))
    return {};
  auto type = dyn_cast<RankedTensorType>(op.getDpsInputs()[1].getType());
  return type && type.hasStaticShape() ? type : RankedTensorType();
}

/// The conv of `x` (padded, N x C x Hp x Wp; N x Hp x Wp x C
/// channels-last) added to `init` (N x F x OH x OW; N x OH x OW x F), by the
/// phases or the patches (takesPhases); `weight(phases)` is the weight in the
/// layout that way reads.
Value convAsMatmuls(OpBuilder &b, Location loc, TapGeometry &g, Value x,
                    function_ref<Value(bool)> weight, Value init) {
  if (!takesPhases(g))
    return convByPatches(b, loc, g, x, weight(false), init);
  UnpaddedInput in = unpad(b, x, g.channelsLast);
  TapGeometry phases = g;
  phaseGeometry(b, loc, in, phases);
  if (wideRowsCostMore(phases))
    return convByPatches(b, loc, g, x, weight(false), init);
  g = phases;
  return convByTaps(b, loc, g, in, weight(true), init);
}

/// Replaces `op`, a groups-1 conv of C channels into F with a `window`
/// (NCHW, or NHWC when `channelsLast`), by convAsMatmuls with `weight`
/// (kh x kw x C x F).
template <typename ConvOp>
void replaceGroupsOneConv(PatternRewriter &rewriter, ConvOp op,
                          bool channelsLast, int64_t c, int64_t f,
                          ArrayRef<int64_t> window, Value weight) {
  TapGeometry g =
      tapGeometry(rewriter, op.getLoc(), op.getOutputs()[0], channelsLast, c, f,
                  window, op.getStrides(), op.getDilations());
  rewriter.replaceOp(op, convAsMatmuls(
                             rewriter, op.getLoc(), g, op.getInputs()[0],
                             [&](bool) { return weight; }, op.getOutputs()[0]));
}

struct ConvToTapMatmuls : public OpRewritePattern<linalg::Conv2DNchwFchwOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::Conv2DNchwFchwOp op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType wType = staticFilterType(op);
    if (!wType)
      return rewriter.notifyMatchFailure(op,
                                         "not one float type, static filter");
    // Both ways read the weight as kh x kw x C x F.
    Value weight = nnx::permuteTensor(rewriter, op.getLoc(), op.getInputs()[1],
                                      {2, 3, 1, 0});
    replaceGroupsOneConv(rewriter, op, /*channelsLast=*/false,
                         wType.getDimSize(1), wType.getDimSize(0),
                         wType.getShape().drop_front(2), weight);
    return success();
  }
};

/// A channels-last conv (`linalg.conv_2d_nhwc_hwcf`, nnx-channels-last's)
/// the same ways: its filter is already kh x kw x C x F; the phases are
/// slices of the input without a transpose (the input itself at stride 1
/// with one kernel column and no padding), and the products are summed
/// straight into `init` where its rows are as wide (accumulatesInPlace).
struct ChannelsLastConvToTapMatmuls
    : public OpRewritePattern<linalg::Conv2DNhwcHwcfOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::Conv2DNhwcHwcfOp op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType wType = staticFilterType(op);
    if (!wType)
      return rewriter.notifyMatchFailure(op,
                                         "not one float type, static filter");
    replaceGroupsOneConv(rewriter, op, /*channelsLast=*/true,
                         wType.getDimSize(2), wType.getDimSize(3),
                         wType.getShape().take_front(2), op.getInputs()[1]);
    return success();
  }
};

/// A channels-last depthwise conv (`linalg.depthwise_conv_2d_nhwc_hwc`)
/// the same ways, its kh x kw x C filter read as kh x kw x 1 x C.
struct ChannelsLastDepthwiseConvToTaps
    : public OpRewritePattern<linalg::DepthwiseConv2DNhwcHwcOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::DepthwiseConv2DNhwcHwcOp op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType fType = staticFilterType(op);
    if (!fType)
      return rewriter.notifyMatchFailure(op,
                                         "not one float type, static filter");
    Location loc = op.getLoc();
    int64_t c = fType.getDimSize(2);
    SmallVector<int64_t> shape{fType.getDimSize(0), fType.getDimSize(1), 1, c};
    Value weight = tensor::ExpandShapeOp::create(
        rewriter, loc, RankedTensorType::get(shape, fType.getElementType()),
        op.getInputs()[1], ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}});
    TapGeometry g =
        tapGeometry(rewriter, loc, op.getOutputs()[0],
                    /*channelsLast=*/true, c, c, fType.getShape().take_front(2),
                    op.getStrides(), op.getDilations());
    g.depthwise = true;
    rewriter.replaceOp(op,
                       convAsMatmuls(
                           rewriter, loc, g, op.getInputs()[0],
                           [&](bool) { return weight; }, op.getOutputs()[0]));
    return success();
  }
};

/// A depthwise conv the same way, each tap a multiply-add per channel on the
/// channels-last rows (the loop over channels is the contiguous one, which
/// LLVM vectorizes). The filter is C x kh x kw, the collapse of the layer's
/// C x 1 x kh x kw weight, which is permuted instead (to kh x kw x 1 x C,
/// the layout a parameter argument is then asked for in).
struct DepthwiseConvToTaps
    : public OpRewritePattern<linalg::DepthwiseConv2DNchwChwOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::DepthwiseConv2DNchwChwOp op,
                                PatternRewriter &rewriter) const override {
    Value filter = op.getInputs()[1];
    RankedTensorType fType = staticFilterType(op);
    if (!fType)
      return rewriter.notifyMatchFailure(op,
                                         "not one float type, static filter");
    Location loc = op.getLoc();
    Value weight;
    auto collapse = filter.getDefiningOp<tensor::CollapseShapeOp>();
    auto source = collapse ? cast<RankedTensorType>(collapse.getSrcType())
                           : RankedTensorType();
    if (source && source.getRank() == 4 && source.getDimSize(1) == 1) {
      weight =
          nnx::permuteTensor(rewriter, loc, collapse.getSrc(), {2, 3, 1, 0});
    } else {
      Value khkwc = nnx::permuteTensor(rewriter, loc, filter, {1, 2, 0});
      SmallVector<int64_t> shape{fType.getDimSize(1), fType.getDimSize(2), 1,
                                 fType.getDimSize(0)};
      weight = tensor::ExpandShapeOp::create(
          rewriter, loc, RankedTensorType::get(shape, fType.getElementType()),
          khkwc, ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}});
    }
    int64_t c = fType.getDimSize(0);
    TapGeometry g =
        tapGeometry(rewriter, loc, op.getOutputs()[0],
                    /*channelsLast=*/false, c, c, fType.getShape().drop_front(),
                    op.getStrides(), op.getDilations());
    g.depthwise = true;
    rewriter.replaceOp(op,
                       convAsMatmuls(
                           rewriter, loc, g, op.getInputs()[0],
                           [&](bool) { return weight; }, op.getOutputs()[0]));
    return success();
  }
};

/// Narrow groups (fewer than 8 outputs each) at stride 1 that sum fewer
/// than 4 input channels keep upstream's loops: each tap's matmul would
/// have K = Cg. A depthwise conv with a channel multiplier of 2 (Cg = 1,
/// Fg = 2; 64 -> 128 channels at 56 x 56): 1.15 ms as loops, 4.3 ms as
/// matmuls. With Cg = Fg = 4 (ResNeXt-50 32x4d's first stage) the matmuls
/// win: 2.95 ms against 6.1 (quiet Zen 4, one thread, 2026-12-06).
bool keepsLoops(int64_t groupInputs, int64_t groupOutputs,
                DenseIntElementsAttr strides) {
  return groupOutputs < 8 && groupInputs < 4 &&
         llvm::all_of(
             strides.getValues<int64_t>(), [](int64_t s) { return s == 1; });
}

/// A grouped conv (`linalg.conv_2d_ngchw_gfchw`: input N x G x Cg x H x W,
/// filter G x Fg x Cg x kh x kw) the same ways, on the channels merged (N x
/// C x H x W, as nnx-build-forward split them): one matmul per group and tap,
/// group g's Cg input channels of a phase's rows times its Cg x Fg slice of
/// the weight into its Fg columns of the result, images and groups split
/// among threads; or, by the patches, one matmul per group. The phases read
/// the weight as kh x kw x C x Fg (permuted to kh x kw x G x Cg x Fg), the
/// patches as G x kh x kw x Cg x Fg.
struct GroupedConvToTapMatmuls
    : public OpRewritePattern<linalg::Conv2DNgchwGfchwOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::Conv2DNgchwGfchwOp op,
                                PatternRewriter &rewriter) const override {
    Value filter = op.getInputs()[1];
    RankedTensorType fType = staticFilterType(op);
    if (!fType)
      return rewriter.notifyMatchFailure(op,
                                         "not one float type, static filter");
    if (keepsLoops(fType.getDimSize(2), fType.getDimSize(1), op.getStrides()))
      return rewriter.notifyMatchFailure(
          op, "narrow groups of fewer than 4 input channels at stride 1: the "
              "loops are faster");
    Location loc = op.getLoc();
    int64_t groups = fType.getDimSize(0);
    Value x = nnx::mergeGroups(rewriter, loc, op.getInputs()[0]);
    Value init = nnx::mergeGroups(rewriter, loc, op.getOutputs()[0]);
    TapGeometry g = tapGeometry(
        rewriter, loc, init, /*channelsLast=*/false,
        groups * fType.getDimSize(2), groups * fType.getDimSize(1),
        fType.getShape().drop_front(3), op.getStrides(), op.getDilations());
    g.groups = groups;
    auto weight = [&](bool phases) -> Value {
      if (!phases)
        return nnx::permuteTensor(rewriter, loc, filter, {0, 3, 4, 2, 1});
      Value w = nnx::permuteTensor(rewriter, loc, filter, {3, 4, 0, 2, 1});
      return tensor::CollapseShapeOp::create(
                 rewriter, loc, w,
                 ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}, {4}})
          .getResult();
    };
    Value y = convAsMatmuls(rewriter, loc, g, x, weight, init);
    rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(
        op, op.getResultTypes()[0], y,
        ArrayRef<ReassociationIndices>{{0}, {1, 2}, {3}, {4}});
    return success();
  }
};

/// `x` (N x H x W x G x Cg) with its groups merged; a padding of its
/// spatial dims alone stays outermost, of the merged source, so that the
/// phases fold it (unpad).
Value mergeChannelsLastGroups(OpBuilder &b, Location loc, Value x) {
  SmallVector<ReassociationIndices> merged{{0}, {1}, {2}, {3, 4}};
  auto pad = x.getDefiningOp<tensor::PadOp>();
  Value value = pad ? pad.getConstantPaddingValue() : Value();
  if (!value || value.getParentRegion() == &pad.getRegion())
    return b.createOrFold<tensor::CollapseShapeOp>(loc, x, merged);
  SmallVector<OpFoldResult> low = pad.getMixedLowPad(),
                            high = pad.getMixedHighPad();
  if (!isZeroInteger(low[3]) || !isZeroInteger(low[4]) ||
      !isZeroInteger(high[3]) || !isZeroInteger(high[4]))
    return b.createOrFold<tensor::CollapseShapeOp>(loc, x, merged);
  Value source =
      b.createOrFold<tensor::CollapseShapeOp>(loc, pad.getSource(), merged);
  low.pop_back();
  high.pop_back();
  return tensor::PadOp::create(b, loc, /*resultType=*/Type(), source, low, high,
                               value)
      .getResult();
}

/// A channels-last grouped conv (`linalg.conv_2d_nhwgc_gfhwc`: input N x H x
/// W x G x Cg, filter G x Fg x kh x kw x Cg) the same ways as the NCHW one,
/// on its channels merged (N x H x W x C); narrow groups keep upstream's
/// loops as there (keepsLoops).
struct ChannelsLastGroupedConvToTapMatmuls
    : public OpRewritePattern<linalg::Conv2DNhwgcGfhwcOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::Conv2DNhwgcGfhwcOp op,
                                PatternRewriter &rewriter) const override {
    Value filter = op.getInputs()[1];
    RankedTensorType fType = staticFilterType(op);
    if (!fType)
      return rewriter.notifyMatchFailure(op,
                                         "not one float type, static filter");
    if (keepsLoops(fType.getDimSize(4), fType.getDimSize(1), op.getStrides()))
      return rewriter.notifyMatchFailure(
          op, "narrow groups of fewer than 4 input channels at stride 1: the "
              "loops are faster");
    Location loc = op.getLoc();
    using RI = ReassociationIndices;
    SmallVector<RI> merged{{0}, {1}, {2}, {3, 4}};
    int64_t groups = fType.getDimSize(0);
    Value x = mergeChannelsLastGroups(rewriter, loc, op.getInputs()[0]);
    Value init = rewriter.createOrFold<tensor::CollapseShapeOp>(
        loc, op.getOutputs()[0], merged);
    TapGeometry g = tapGeometry(
        rewriter, loc, init, /*channelsLast=*/true,
        groups * fType.getDimSize(4), groups * fType.getDimSize(1),
        fType.getShape().slice(2, 2), op.getStrides(), op.getDilations());
    g.groups = groups;
    auto weight = [&](bool phases) -> Value {
      if (!phases)
        return nnx::permuteTensor(rewriter, loc, filter, {0, 2, 3, 4, 1});
      Value w = nnx::permuteTensor(rewriter, loc, filter, {2, 3, 0, 4, 1});
      return tensor::CollapseShapeOp::create(
                 rewriter, loc, w, ArrayRef<RI>{{0}, {1}, {2, 3}, {4}})
          .getResult();
    };
    Value y = convAsMatmuls(rewriter, loc, g, x, weight, init);
    rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(
        op, op.getResultTypes()[0], y, merged);
    return success();
  }
};

} // namespace

Value mlir::nnx::mergeGroups(OpBuilder &b, Location loc, Value t) {
  int64_t rank = cast<RankedTensorType>(t.getType()).getRank();
  SmallVector<ReassociationIndices> merged{{0}, {1, 2}};
  for (int64_t d = 3; d < rank; ++d)
    merged.push_back({d});
  return b.createOrFold<tensor::CollapseShapeOp>(loc, t, merged);
}

void mlir::nnx::populateConvToMatmulsPatterns(RewritePatternSet &patterns) {
  patterns.add<ConvToTapMatmuls, ChannelsLastConvToTapMatmuls,
               DepthwiseConvToTaps, ChannelsLastDepthwiseConvToTaps,
               GroupedConvToTapMatmuls, ChannelsLastGroupedConvToTapMatmuls>(
      patterns.getContext());
}
