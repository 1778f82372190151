//===- LowerConv.cpp - convolutions, pooling, flatten ---------------------===//
//
// The convolutional layers through upstream linalg. The input is padded
// with `tensor.pad`, then:
//   - nnx.conv2d: `linalg.conv_2d_nchw_fchw` (groups = 1),
//     `linalg.depthwise_conv_2d_nchw_chw` (groups = channels) or
//     `linalg.conv_2d_ngchw_gfchw` (other groups, on the channels split into
//     groups by `tensor.expand_shape`), into an accumulator that holds the
//     bias; nnx.conv1d as a conv2d of height 1;
//   - nnx.max_pool2d: `linalg.pooling_nchw_max` from -inf;
//   - nnx.avg_pool2d: `linalg.pooling_nchw_sum`, then a division by the
//     window's count (torch's rule for padding and ceil mode);
//   - nnx.adaptive_avg_pool2d: each spatial dim split into (output, window)
//     by `tensor.expand_shape`, the windows summed and divided;
//   - nnx.flatten: `tensor.collapse_shape`.
// Output sizes of dynamic dims are index arithmetic (Window), with a
// run-time check that the window fits the padded input.
//
//===----------------------------------------------------------------------===//
#include "nnx/Conversion/NNXToLinalg/ConvLowering.h"
#include "nnx/Conversion/NNXToLinalg/LayerLowering.h"
#include "nnx/Conversion/NNXToLinalg/RuntimeChecks.h"
#include "nnx/Dialect/NNX/IR/ModuleTree.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace mlir::nnx;
using IT = utils::IteratorType;

std::string mlir::nnx::describeLayer(Operation *layer) {
  if (!getParentModel(layer))
    return describeCheckedOp(layer);
  std::string path = getModulePath(layer);
  std::string text = "'" + layer->getName().getStringRef().str() + "' at '" +
                     (path.empty() ? std::string("<root>") : path) + "'";
  if (auto file = layer->getLoc()->findInstanceOf<FileLineColLoc>())
    text += " (" + file.getFilename().str() + ":" +
            std::to_string(file.getLine()) + ")";
  return text;
}

namespace {

/// The (H, W) `strides` and `dilations` of a linalg convolution or pooling.
std::pair<DenseIntElementsAttr, DenseIntElementsAttr>
windowAttrs(OpBuilder &b, const Window (&w)[2]) {
  return {b.getI64TensorAttr({w[0].stride, w[1].stride}),
          b.getI64TensorAttr({w[0].dilation, w[1].dilation})};
}

Value indexConst(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

/// The output size of spatial dim `d` of `x` under window `w`: a constant
/// for a static dim, else index arithmetic after a run-time check that the
/// window fits the padded input. Either way a run-time check that the dim
/// is not empty: PyTorch refuses a pool or convolution of an image with no
/// rows or no columns (padding would make windows of nothing: NaN, -inf,
/// the bias). `what` names the op in the message.
OpFoldResult outputSize(OpBuilder &b, Location loc, Value x, unsigned d,
                        const Window &w, StringRef what) {
  int64_t size = cast<RankedTensorType>(x.getType()).getDimSize(d);
  bool dynamic = ShapedType::isDynamic(size);
  Value in;
  if (dynamic || size == 0) {
    in = dynamic ? tensor::DimOp::create(b, loc, x, d).getResult()
                 : indexConst(b, loc, size);
    emitRuntimeCheck(
        b, loc, arith::CmpIPredicate::sgt, in, indexConst(b, loc, 0),
        (what + ": the input is empty in spatial dim " + std::to_string(d) +
         " (size {0}); as in PyTorch, a pool or convolution "
         "needs at least one row and one column")
            .str());
  }
  if (!dynamic)
    return b.getIndexAttr(w.outputSize(size));
  Value padded =
      arith::AddIOp::create(b, loc, in, indexConst(b, loc, 2 * w.padding));
  emitRuntimeCheck(b, loc, arith::CmpIPredicate::sle,
                   indexConst(b, loc, w.span()), padded,
                   (what + ": the window spans {0} in dim " +
                    std::to_string(d) + ", more than the padded input's {1}")
                       .str());
  return w.outputSize(b, loc, in);
}

/// `x` (N x C x spatial...) padded with `value` by `w[i].padding` before
/// and after spatial dim i, plus what the last window of a ceil-mode pool
/// needs after it (`out` holds the output sizes).
Value padSpatial(OpBuilder &b, Location loc, Value x, ArrayRef<Window> w,
                 ArrayRef<OpFoldResult> out, Value value) {
  auto t = cast<RankedTensorType>(x.getType());
  SmallVector<OpFoldResult> low(t.getRank(), b.getIndexAttr(0)), high = low;
  bool any = false;
  SmallVector<int64_t> shape(t.getShape());
  for (auto [i, win] : llvm::enumerate(w)) {
    unsigned d = 2 + i;
    low[d] = b.getIndexAttr(win.padding);
    high[d] = b.getIndexAttr(win.padding);
    any |= win.padding != 0 || win.ceilMode;
    if (!win.ceilMode) {
      if (!ShapedType::isDynamic(shape[d]))
        shape[d] += 2 * win.padding;
      continue;
    }
    std::optional<int64_t> o = getConstantIntValue(out[i]);
    if (!ShapedType::isDynamic(shape[d]) && o) {
      int64_t padded = shape[d] + 2 * win.padding;
      int64_t extra =
          std::max<int64_t>(0, (*o - 1) * win.stride + win.span() - padded);
      high[d] = b.getIndexAttr(win.padding + extra);
      shape[d] = padded + extra;
      continue;
    }
    Value in = tensor::DimOp::create(b, loc, x, d);
    Value extra = win.extraPadding(
        b, loc, in, getValueOrCreateConstantIndexOp(b, loc, out[i]));
    high[d] =
        arith::AddIOp::create(b, loc, extra, indexConst(b, loc, win.padding))
            .getResult();
    shape[d] = ShapedType::kDynamic;
  }
  if (!any)
    return x;
  return tensor::PadOp::create(b, loc, t.clone(shape), x, low, high, value);
}

/// The accumulator of `sizes` (N x C x Ho x Wo): `bias` on dim 1, or zeros.
Value convInit(LayerEmitter &e, Value bias, Type elt,
               ArrayRef<OpFoldResult> sizes) {
  if (!bias)
    return e.filled(sizes, elt, 0.0);
  SmallVector<bool> channel{false, true, false, false};
  return e.generic(bias, {e.keptDims(4, channel)}, e.empty(sizes, elt),
                   e.getBuilder().getMultiDimIdentityMap(4),
                   SmallVector<IT>(4, IT::parallel),
                   [](OpBuilder &, Location, ValueRange a) { return a[0]; });
}

/// `t` with dim `d` split into (`parts`, size / `parts`); `size` is the
/// dim's size.
Value splitDim(OpBuilder &b, Location loc, Value t, unsigned d, int64_t parts) {
  auto type = cast<RankedTensorType>(t.getType());
  SmallVector<int64_t> shape;
  SmallVector<OpFoldResult> sizes;
  SmallVector<ReassociationIndices> groups;
  for (int64_t i = 0; i < type.getRank(); ++i) {
    OpFoldResult size = tensor::getMixedSize(b, loc, t, i);
    if ((unsigned)i != d) {
      groups.push_back({(int64_t)shape.size()});
      shape.push_back(type.getDimSize(i));
      sizes.push_back(size);
      continue;
    }
    groups.push_back({(int64_t)shape.size(), (int64_t)shape.size() + 1});
    int64_t whole = type.getDimSize(i);
    shape.push_back(parts);
    shape.push_back(ShapedType::isDynamic(whole) ? whole : whole / parts);
    sizes.push_back(b.getIndexAttr(parts));
    if (ShapedType::isDynamic(whole))
      sizes.push_back(arith::DivUIOp::create(
                          b, loc, getValueOrCreateConstantIndexOp(b, loc, size),
                          indexConst(b, loc, parts))
                          .getResult());
    else
      sizes.push_back(b.getIndexAttr(whole / parts));
  }
  return tensor::ExpandShapeOp::create(b, loc, type.clone(shape), t, groups,
                                       sizes);
}

/// `t` with dims `d` and `d + 1` merged.
Value mergeDims(OpBuilder &b, Location loc, Value t, unsigned d) {
  auto type = cast<RankedTensorType>(t.getType());
  SmallVector<ReassociationIndices> groups;
  for (int64_t i = 0; i < type.getRank(); ++i) {
    if ((unsigned)i == d + 1)
      continue;
    if ((unsigned)i == d)
      groups.push_back({i, i + 1});
    else
      groups.push_back({i});
  }
  return tensor::CollapseShapeOp::create(b, loc, t, groups);
}

/// A grouped convolution (1 < groups < channels, or groups = in_channels
/// with out_channels a multiple): input, filter and accumulator split into
/// groups on the channel dim, `linalg.conv_2d_ngchw_gfchw`, then merged.
Value groupedConv(OpBuilder &b, Location loc, const Conv2dSpec &spec, Value xp,
                  Value w, Value init) {
  int64_t g = spec.groups;
  Value xg = splitDim(b, loc, xp, 1, g), wg = splitDim(b, loc, w, 0, g),
        ig = splitDim(b, loc, init, 1, g);
  auto [strides, dilations] = windowAttrs(b, spec.window);
  Value out = linalg::Conv2DNgchwGfchwOp::create(
                  b, loc, TypeRange{ig.getType()}, ValueRange{xg, wg}, ig,
                  strides, dilations)
                  .getResult(0);
  return mergeDims(b, loc, out, 1);
}

} // namespace

/// The convolution of emitConv2d, accumulating in `acc`.
static Value emitConv2dIn(LayerEmitter &e, const Conv2dSpec &spec, Value x,
                          Value w, Value bias, Type acc) {
  OpBuilder &b = e.getBuilder();
  Location loc = e.getLoc();
  Type elt = cast<RankedTensorType>(x.getType()).getElementType();
  SmallVector<OpFoldResult> sizes{tensor::getMixedSize(b, loc, x, 0),
                                  b.getIndexAttr(spec.outChannels)};
  for (unsigned i = 0; i < 2; ++i)
    sizes.push_back(outputSize(b, loc, x, 2 + i, spec.window[i], spec.what));
  Value xp = padSpatial(b, loc, x, spec.window, ArrayRef(sizes).drop_front(2),
                        LayerEmitter::scalar(b, loc, elt, 0.0));
  Value init = convInit(e, bias, acc, sizes);
  auto [strides, dilations] = windowAttrs(b, spec.window);
  if (spec.groups == 1)
    return linalg::Conv2DNchwFchwOp::create(b, loc, TypeRange{init.getType()},
                                            ValueRange{xp, w}, init, strides,
                                            dilations)
        .getResult(0);
  if (spec.groups != spec.inChannels || spec.groups != spec.outChannels)
    return groupedConv(b, loc, spec, xp, w, init);
  // The depthwise filter is C x kh x kw: the weight's unit dim 1 dropped.
  SmallVector<ReassociationIndices> drop{{0, 1}, {2}, {3}};
  Value filter = tensor::CollapseShapeOp::create(b, loc, w, drop);
  return linalg::DepthwiseConv2DNchwChwOp::create(
             b, loc, TypeRange{init.getType()}, ValueRange{xp, filter}, init,
             strides, dilations)
      .getResult(0);
}

FailureOr<Value> mlir::nnx::emitConv2d(LayerEmitter &e, const Conv2dSpec &spec,
                                       Value x, Value w, Value bias) {
  // bf16 / f16: accumulated (from the bias) in f32, rounded once.
  Type elt = cast<RankedTensorType>(x.getType()).getElementType();
  Value y = emitConv2dIn(e, spec, x, w, bias, e.accumulatorFor(elt));
  return convertElements(e.getBuilder(), e.getLoc(), y, elt);
}

namespace {

/// The divisor of each avg-pool window of output dim `d` at output index
/// `o`, as ATen computes it: the window clipped to the padded input, then
/// (without count_include_pad) to the input.
Value windowCount(OpBuilder &b, Location loc, const Window &w, Value o,
                  Value in, bool countPad) {
  Value start = arith::SubIOp::create(
      b, loc, arith::MulIOp::create(b, loc, o, indexConst(b, loc, w.stride)),
      indexConst(b, loc, w.padding));
  Value end = arith::MinSIOp::create(
      b, loc,
      arith::AddIOp::create(b, loc, start, indexConst(b, loc, w.kernel)),
      arith::AddIOp::create(b, loc, in, indexConst(b, loc, w.padding)));
  if (!countPad) {
    start = arith::MaxSIOp::create(b, loc, start, indexConst(b, loc, 0));
    end = arith::MinSIOp::create(b, loc, end, in);
  }
  return arith::SubIOp::create(b, loc, end, start);
}

} // namespace

FailureOr<Value> mlir::nnx::emitPool2d(LayerEmitter &e, const Pool2dSpec &spec,
                                       Value x) {
  OpBuilder &b = e.getBuilder();
  Location loc = e.getLoc();
  auto type = cast<RankedTensorType>(x.getType());
  auto elt = cast<FloatType>(type.getElementType());
  SmallVector<OpFoldResult> sizes{tensor::getMixedSize(b, loc, x, 0),
                                  tensor::getMixedSize(b, loc, x, 1)};
  for (unsigned i = 0; i < 2; ++i)
    sizes.push_back(outputSize(b, loc, x, 2 + i, spec.window[i], spec.what));
  bool max = spec.kind == Pool2dSpec::Max;
  double identity = max ? -std::numeric_limits<double>::infinity() : 0.0;
  Value pad = LayerEmitter::scalar(b, loc, elt, identity);
  Value xp =
      padSpatial(b, loc, x, spec.window, ArrayRef(sizes).drop_front(2), pad);
  Value acc = e.filled(sizes, elt, identity);
  Value kernel = tensor::EmptyOp::create(
      b, loc, ArrayRef<int64_t>{spec.window[0].kernel, spec.window[1].kernel},
      elt);
  auto [strides, dilations] = windowAttrs(b, spec.window);
  if (max)
    return linalg::PoolingNchwMaxOp::create(b, loc, TypeRange{acc.getType()},
                                            ValueRange{xp, kernel}, acc,
                                            strides, dilations)
        .getResult(0);
  Value sum = linalg::PoolingNchwSumOp::create(b, loc, TypeRange{acc.getType()},
                                               ValueRange{xp, kernel}, acc,
                                               strides, dilations)
                  .getResult(0);
  AffineMap id = b.getMultiDimIdentityMap(4);
  const Window(&w)[2] = spec.window;
  if (!w[0].padding && !w[1].padding && !w[0].ceilMode && !w[1].ceilMode) {
    Value n = LayerEmitter::scalar(b, loc, elt, w[0].kernel * w[1].kernel);
    return e.map(sum, [&](OpBuilder &nb, Location l, Value v) -> Value {
      return arith::DivFOp::create(nb, l, v, n);
    });
  }
  // The divisor depends only on the output position: (count in H) x
  // (count in W), from the input's sizes.
  Value in[2] = {tensor::DimOp::create(b, loc, x, 2),
                 tensor::DimOp::create(b, loc, x, 3)};
  return e.generic(
      sum, {id}, e.empty(sizes, elt), id, SmallVector<IT>(4, IT::parallel),
      [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        Value count[2];
        for (unsigned i = 0; i < 2; ++i)
          count[i] = windowCount(nb, l, spec.window[i],
                                 linalg::IndexOp::create(nb, l, 2 + i), in[i],
                                 spec.countIncludePad);
        Value n = arith::MulIOp::create(nb, l, count[0], count[1]);
        Value n64 = arith::IndexCastOp::create(nb, l, nb.getI64Type(), n);
        Value f = arith::SIToFPOp::create(nb, l, elt, n64);
        return arith::DivFOp::create(nb, l, a[0], f);
      });
}

/// The adaptive pooling of one dim as an `out` x `in` matrix: row i
/// averages PyTorch's window [floor(i * in / out), ceil((i + 1) * in /
/// out)), which overlap or repeat where `in` is not a multiple of `out`.
static Value poolingMatrix(OpBuilder &b, Location loc, FloatType elt,
                           int64_t in, int64_t out) {
  SmallVector<APFloat> values;
  for (int64_t i = 0; i < out; ++i) {
    int64_t start = i * in / out, end = ((i + 1) * in + out - 1) / out;
    for (int64_t h = 0; h < in; ++h) {
      APFloat v(h >= start && h < end ? 1.0 / double(end - start) : 0.0);
      bool lost;
      v.convert(elt.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
      values.push_back(v);
    }
  }
  auto type = RankedTensorType::get({out, in}, elt);
  return arith::ConstantOp::create(b, loc, type,
                                   DenseElementsAttr::get(type, values));
}

/// Adaptive pooling of static sizes that are not multiples of the output:
/// out[n, c, i, j] = sum over h, w of Ph[i, h] x[n, c, h, w] Pw[j, w], one
/// contraction per spatial dim with the constant pooling matrices.
static Value emitAdaptiveByMatrices(LayerEmitter &e, ArrayRef<int64_t> out,
                                    Value x) {
  OpBuilder &b = e.getBuilder();
  Location loc = e.getLoc();
  auto xt = cast<RankedTensorType>(x.getType());
  auto elt = cast<FloatType>(xt.getElementType());
  Value ph = poolingMatrix(b, loc, elt, xt.getDimSize(2), out[0]);
  Value pw = poolingMatrix(b, loc, elt, xt.getDimSize(3), out[1]);
  using IT = utils::IteratorType;
  SmallVector<IT> iters(4, IT::parallel);
  iters.push_back(IT::reduction);
  auto d = [&](unsigned i) { return b.getAffineDimExpr(i); };
  auto map = [&](ArrayRef<AffineExpr> r) {
    return AffineMap::get(5, 0, r, b.getContext());
  };
  auto fma = [](OpBuilder &nb, Location l, ValueRange a) -> Value {
    Value p = arith::MulFOp::create(nb, l, a[0], a[1]);
    return arith::AddFOp::create(nb, l, a[2], p);
  };
  // (n, c, i, w, h): rows pooled, then (n, c, i, j, w): columns.
  SmallVector<OpFoldResult> sizes = e.sizesOf(x);
  sizes[2] = b.getIndexAttr(out[0]);
  Value rows = e.generic(
      {ph, x}, {map({d(2), d(4)}), map({d(0), d(1), d(4), d(3)})},
      e.filled(sizes, elt, 0.0), map({d(0), d(1), d(2), d(3)}), iters, fma);
  sizes[3] = b.getIndexAttr(out[1]);
  return e.generic(
      {rows, pw}, {map({d(0), d(1), d(2), d(4)}), map({d(3), d(4)})},
      e.filled(sizes, elt, 0.0), map({d(0), d(1), d(2), d(3)}), iters, fma);
}

FailureOr<Value> mlir::nnx::emitAdaptiveAvgPool2d(LayerEmitter &e,
                                                  ArrayRef<int64_t> out,
                                                  Value x, StringRef what) {
  OpBuilder &b = e.getBuilder();
  Location loc = e.getLoc();
  auto xt = cast<RankedTensorType>(x.getType());
  auto elt = xt.getElementType();
  if (!xt.isDynamicDim(2) && !xt.isDynamicDim(3) &&
      (xt.getDimSize(2) % out[0] || xt.getDimSize(3) % out[1]))
    return emitAdaptiveByMatrices(e, out, x);
  for (unsigned i = 0; i < 2; ++i) {
    if (!cast<RankedTensorType>(x.getType()).isDynamicDim(2 + i))
      continue;
    Value in = tensor::DimOp::create(b, loc, x, 2 + i);
    Value rem = arith::RemUIOp::create(b, loc, in, indexConst(b, loc, out[i]));
    emitRuntimeCheck(
        b, loc, arith::CmpIPredicate::eq, rem, indexConst(b, loc, 0),
        (what + ": the input's size in dim " + std::to_string(2 + i) +
         " is not a multiple of " + std::to_string(out[i]) + " (remainder {0})")
            .str());
  }
  // N x C x oh x kh x ow x kw, summed over kh and kw.
  Value split = splitDim(b, loc, splitDim(b, loc, x, 3, out[1]), 2, out[0]);
  SmallVector<bool> keep{true, true, true, false, true, false};
  Value sum = e.reduce(split, keep, 0.0, {},
                       [](OpBuilder &nb, Location l, ValueRange a, Value acc) {
                         return arith::AddFOp::create(nb, l, a[0], acc);
                       });
  Value window =
      arith::MulIOp::create(b, loc, tensor::DimOp::create(b, loc, split, 3),
                            tensor::DimOp::create(b, loc, split, 5));
  Value count = arith::SIToFPOp::create(
      b, loc, elt, arith::IndexCastOp::create(b, loc, b.getI64Type(), window));
  return e.map(sum, [&](OpBuilder &nb, Location l, Value v) -> Value {
    return arith::DivFOp::create(nb, l, v, count);
  });
}

namespace {

Conv2dSpec conv2dSpec(Conv2dOp op) {
  return {{op.getWindow(0), op.getWindow(1)},
          (int64_t)op.getGroups(),
          (int64_t)op.getInChannels(),
          (int64_t)op.getOutChannels(),
          describeLayer(op)};
}

/// The layer's weight and optional bias.
FailureOr<std::pair<Value, Value>> convTensors(LayerEmitter &e, Operation *op) {
  FailureOr<Value> w = e.getTensor(op, "weight");
  FailureOr<Value> bias = e.getOptionalTensor(op, "bias");
  if (failed(w) || failed(bias))
    return failure();
  return std::make_pair(*w, *bias);
}

struct Conv2dLowering
    : public LayerLoweringOpInterface::ExternalModel<Conv2dLowering, Conv2dOp> {
  FailureOr<Value> emitForward(Operation *layer, LayerEmitter &e,
                               Value x) const {
    FailureOr<std::pair<Value, Value>> t = convTensors(e, layer);
    if (failed(t))
      return failure();
    return emitConv2d(e, conv2dSpec(cast<Conv2dOp>(layer)), x, t->first,
                      t->second);
  }
};

/// A conv1d is a conv2d on N x C x 1 x L with a 1 x k kernel.
struct Conv1dLowering
    : public LayerLoweringOpInterface::ExternalModel<Conv1dLowering, Conv1dOp> {
  FailureOr<Value> emitForward(Operation *layer, LayerEmitter &e,
                               Value x) const {
    auto op = cast<Conv1dOp>(layer);
    FailureOr<std::pair<Value, Value>> t = convTensors(e, layer);
    if (failed(t))
      return failure();
    OpBuilder &b = e.getBuilder();
    Location loc = e.getLoc();
    Value x4 = splitDim(b, loc, x, 2, 1), w4 = splitDim(b, loc, t->first, 2, 1);
    Conv2dSpec spec{{Window(), op.getWindow(0)},
                    (int64_t)op.getGroups(),
                    (int64_t)op.getInChannels(),
                    (int64_t)op.getOutChannels(),
                    describeLayer(op)};
    FailureOr<Value> y = emitConv2d(e, spec, x4, w4, t->second);
    if (failed(y))
      return failure();
    return mergeDims(b, loc, *y, 2);
  }
};

template <typename PoolOp>
Pool2dSpec poolSpec(PoolOp op, Pool2dSpec::Kind kind, bool countPad) {
  return {
      {op.getWindow(0), op.getWindow(1)}, kind, countPad, describeLayer(op)};
}

struct MaxPool2dLowering
    : public LayerLoweringOpInterface::ExternalModel<MaxPool2dLowering,
                                                     MaxPool2dOp> {
  FailureOr<Value> emitForward(Operation *layer, LayerEmitter &e,
                               Value x) const {
    return emitPool2d(
        e, poolSpec(cast<MaxPool2dOp>(layer), Pool2dSpec::Max, false), x);
  }
};

struct AvgPool2dLowering
    : public LayerLoweringOpInterface::ExternalModel<AvgPool2dLowering,
                                                     AvgPool2dOp> {
  FailureOr<Value> emitForward(Operation *layer, LayerEmitter &e,
                               Value x) const {
    auto op = cast<AvgPool2dOp>(layer);
    return emitPool2d(e, poolSpec(op, Pool2dSpec::Avg, op.getCountIncludePad()),
                      x);
  }
};

struct AdaptiveAvgPool2dLowering
    : public LayerLoweringOpInterface::ExternalModel<AdaptiveAvgPool2dLowering,
                                                     AdaptiveAvgPool2dOp> {
  FailureOr<Value> emitForward(Operation *layer, LayerEmitter &e,
                               Value x) const {
    auto op = cast<AdaptiveAvgPool2dOp>(layer);
    return emitAdaptiveAvgPool2d(e, op.getOutputSize(), x, describeLayer(op));
  }
};

struct FlattenLowering
    : public LayerLoweringOpInterface::ExternalModel<FlattenLowering,
                                                     FlattenOp> {
  FailureOr<Value> emitForward(Operation *layer, LayerEmitter &e,
                               Value x) const {
    auto type = cast<RankedTensorType>(x.getType());
    OpBuilder &b = e.getBuilder();
    if (type.getRank() == 0)
      return tensor::ExpandShapeOp::create(b, e.getLoc(), type.clone({1}), x,
                                           ArrayRef<ReassociationIndices>{})
          .getResult();
    auto dims = getFlattenedDims(cast<FlattenOp>(layer), type.getRank());
    if (failed(dims))
      return emitModuleError(layer) << "flattens dims out of range of a rank-"
                                    << type.getRank() << " input";
    SmallVector<ReassociationIndices> groups;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      if (d > dims->first && d <= dims->second)
        groups.back().push_back(d);
      else
        groups.push_back({d});
    }
    return tensor::CollapseShapeOp::create(b, e.getLoc(), x, groups)
        .getResult();
  }
};

} // namespace

void mlir::nnx::registerConvLowerings(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, NNXDialect *) {
    Conv2dOp::attachInterface<Conv2dLowering>(*ctx);
    Conv1dOp::attachInterface<Conv1dLowering>(*ctx);
    MaxPool2dOp::attachInterface<MaxPool2dLowering>(*ctx);
    AvgPool2dOp::attachInterface<AvgPool2dLowering>(*ctx);
    AdaptiveAvgPool2dOp::attachInterface<AdaptiveAvgPool2dLowering>(*ctx);
    FlattenOp::attachInterface<FlattenLowering>(*ctx);
  });
}
