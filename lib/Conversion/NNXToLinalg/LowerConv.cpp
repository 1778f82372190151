//===- LowerConv.cpp - nnx.conv2d -----------------------------------------===//
//
// The convolutional layers through upstream linalg: the input zero-padded
// with `tensor.pad`, then `linalg.conv_2d_nchw_fchw` (groups = 1) or
// `linalg.depthwise_conv_2d_nchw_chw` (groups = channels) into an
// accumulator that holds the bias. Output sizes of dynamic dims are index
// arithmetic, with a run-time check that the kernel fits the padded input.
//
//===----------------------------------------------------------------------===//
#include "nnx/Conversion/NNXToLinalg/LayerLowering.h"
#include "nnx/Conversion/NNXToLinalg/RuntimeChecks.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace mlir::nnx;
using IT = utils::IteratorType;

namespace {

/// `x` (N x C x H x W) with `pad[i]` zeros on both sides of dim 2 + i.
Value padSpatial(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> pad) {
  if (pad[0] == 0 && pad[1] == 0)
    return x;
  auto t = cast<RankedTensorType>(x.getType());
  SmallVector<OpFoldResult> low{b.getIndexAttr(0), b.getIndexAttr(0),
                                b.getIndexAttr(pad[0]), b.getIndexAttr(pad[1])};
  SmallVector<int64_t> shape(t.getShape());
  for (unsigned i = 0; i < 2; ++i)
    if (!ShapedType::isDynamic(shape[2 + i]))
      shape[2 + i] += 2 * pad[i];
  Value zero = LayerEmitter::scalar(b, loc, t.getElementType(), 0.0);
  return tensor::PadOp::create(b, loc, t.clone(shape), x, low, low, zero);
}

/// The output size of spatial dim `i` of `op` on the padded input `xp`:
/// (Hp - span) / s + 1, checked at run time to have Hp >= span.
OpFoldResult outputSize(OpBuilder &b, Location loc, Conv2dOp op, Value xp,
                        unsigned i) {
  auto t = cast<RankedTensorType>(xp.getType());
  int64_t padded = t.getDimSize(2 + i);
  if (!ShapedType::isDynamic(padded))
    return b.getIndexAttr(op.getOutputSize(i, padded - 2 * op.getPadding()[i]));
  int64_t span = op.getDilation()[i] * (op.getKernelSize()[i] - 1) + 1;
  Value hp = tensor::DimOp::create(b, loc, xp, 2 + i);
  Value spanV = arith::ConstantIndexOp::create(b, loc, span);
  emitRuntimeCheck(b, loc, arith::CmpIPredicate::sle, spanV, hp,
                   describeCheckedOp(op) + ": the kernel spans {0} in dim " +
                       std::to_string(2 + i) +
                       ", more than the padded input's {1}");
  Value d = arith::SubIOp::create(b, loc, hp, spanV);
  d = arith::DivUIOp::create(
      b, loc, d, arith::ConstantIndexOp::create(b, loc, op.getStride()[i]));
  return arith::AddIOp::create(b, loc, d,
                               arith::ConstantIndexOp::create(b, loc, 1))
      .getResult();
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

struct Conv2dLowering
    : public LayerLoweringOpInterface::ExternalModel<Conv2dLowering, Conv2dOp> {
  FailureOr<Value> emitForward(Operation *layer, LayerEmitter &e,
                               Value x) const;
};

FailureOr<Value> Conv2dLowering::emitForward(Operation *layer, LayerEmitter &e,
                                             Value x) const {
  auto op = cast<Conv2dOp>(layer);
  OpBuilder &b = e.getBuilder();
  Location loc = e.getLoc();
  int64_t groups = op.getGroups(), in = op.getInChannels(),
          out = op.getOutChannels();
  bool depthwise = groups > 1 && groups == in && groups == out;
  if (groups != 1 && !depthwise)
    return LayerEmitter::emitModuleError(op)
           << "cannot lower groups = " << groups << " with " << in
           << " input and " << out
           << " output channels: only groups = 1 and depthwise (groups = "
              "in_channels = out_channels) are supported";
  FailureOr<Value> w = e.getTensor(op, "weight");
  FailureOr<Value> bias = e.getOptionalTensor(op, "bias");
  if (failed(w) || failed(bias))
    return failure();
  Type elt = cast<RankedTensorType>(x.getType()).getElementType();
  Value xp = padSpatial(b, loc, x, op.getPadding());
  SmallVector<OpFoldResult> sizes{
      tensor::getMixedSize(b, loc, x, 0), b.getIndexAttr(op.getOutChannels()),
      outputSize(b, loc, op, xp, 0), outputSize(b, loc, op, xp, 1)};
  Value init = convInit(e, *bias, elt, sizes);
  auto strides = b.getI64TensorAttr(op.getStride());
  auto dilations = b.getI64TensorAttr(op.getDilation());
  if (!depthwise)
    return linalg::Conv2DNchwFchwOp::create(b, loc, TypeRange{init.getType()},
                                            ValueRange{xp, *w}, init, strides,
                                            dilations)
        .getResult(0);
  // The depthwise filter is C x kh x kw: the weight's unit dim 1 dropped.
  SmallVector<ReassociationIndices> drop{{0, 1}, {2}, {3}};
  Value filter = tensor::CollapseShapeOp::create(b, loc, *w, drop);
  return linalg::DepthwiseConv2DNchwChwOp::create(
             b, loc, TypeRange{init.getType()}, ValueRange{xp, filter}, init,
             strides, dilations)
      .getResult(0);
}

} // namespace

void mlir::nnx::registerConvLowerings(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, NNXDialect *) {
    Conv2dOp::attachInterface<Conv2dLowering>(*ctx);
  });
}
