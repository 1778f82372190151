//===- Window.h - sliding windows of convolutions and pooling ---*- C++ -*-===//
//
// One spatial dim of a convolution's or a pooling's sliding window, and
// torch's rule for the output size (`pooling_output_shape` in ATen), shared
// by the verifiers, the shape functions and the lowerings.
//
//===----------------------------------------------------------------------===//
#ifndef NNX_DIALECT_NNX_IR_WINDOW_H
#define NNX_DIALECT_NNX_IR_WINDOW_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpDefinition.h"

namespace mlir::nnx {

struct Window {
  int64_t kernel = 1, stride = 1, padding = 0, dilation = 1;
  /// Rounds the output size up (pooling's `ceil_mode`): a last, partial
  /// window, provided it starts inside the input or its left padding.
  bool ceilMode = false;

  /// The extent of the window on the input: d (k - 1) + 1.
  int64_t span() const { return dilation * (kernel - 1) + 1; }
  /// Whether the output size equals the input size for every input size:
  /// stride 1 and "same" padding (2 p = d (k - 1)).
  bool keepsSize() const { return stride == 1 && 2 * padding == span() - 1; }
  /// The output size for input size `size`: dynamic stays dynamic, and a
  /// window larger than the padded input gives 0.
  int64_t outputSize(int64_t size) const;
  /// The same on a run-time `size` (index arithmetic), for a padded input of
  /// at least `span()` (the lowerings check that first).
  Value outputSize(OpBuilder &b, Location loc, Value size) const;
  /// The zeros to add after the right padding so that the last window
  /// (ceil mode) lies within the tensor: 0 without ceil mode.
  Value extraPadding(OpBuilder &b, Location loc, Value size,
                     Value outputSize) const;
};

} // namespace mlir::nnx

#endif // NNX_DIALECT_NNX_IR_WINDOW_H
