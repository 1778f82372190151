//===- ConvLowering.h - convolutions and pooling to linalg ------*- C++ -*-===//
//
// The lowerings of the convolution and pooling layers as functions of their
// geometry, so that a leaf layer (`nnx.max_pool2d`) and its functional form
// (`nnx.fn.max_pool2d`) share one implementation
// (lib/Conversion/NNXToLinalg/LowerConv.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef NNX_CONVERSION_NNXTOLINALG_CONVLOWERING_H
#define NNX_CONVERSION_NNXTOLINALG_CONVLOWERING_H

#include "nnx/Conversion/NNXToLinalg/LayerLowering.h"
#include "nnx/Dialect/NNX/IR/Window.h"

#include <string>

namespace mlir::nnx {

/// "'nnx.conv2d' (label) at file:line:col at 'layer1.0.conv1'": what a
/// run-time check of a layer names.
std::string describeLayer(Operation *layer);

struct Conv2dSpec {
  Window window[2];
  int64_t groups, inChannels, outChannels;
  /// Names the op in run-time check messages.
  std::string what;
};

/// A 2-D convolution of `x` (N x C x H x W) with weight `w` (F x C/g x kh x
/// kw) and optional `bias` (F).
FailureOr<Value> emitConv2d(LayerEmitter &e, const Conv2dSpec &spec, Value x,
                            Value w, Value bias);

struct Pool2dSpec {
  enum Kind { Max, Avg };
  Window window[2];
  Kind kind;
  /// Avg: the divisor counts the padding inside the window.
  bool countIncludePad;
  std::string what;
};

/// Max or average pooling of `x` (N x C x H x W).
FailureOr<Value> emitPool2d(LayerEmitter &e, const Pool2dSpec &spec, Value x);

/// Adaptive average pooling of `x` (N x C x H x W) to `out` (H, W), whose
/// sizes must divide the input's (checked at run time when dynamic).
FailureOr<Value> emitAdaptiveAvgPool2d(LayerEmitter &e, ArrayRef<int64_t> out,
                                       Value x, StringRef what);

} // namespace mlir::nnx

#endif // NNX_CONVERSION_NNXTOLINALG_CONVLOWERING_H
