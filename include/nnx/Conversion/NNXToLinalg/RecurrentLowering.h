//===- RecurrentLowering.h - LSTM, GRU, RNN to linalg + scf -----*- C++ -*-===//
//
// The lowering of the recurrent layers (LowerRecurrent.cpp), which take and
// return several values, so nnx-build-forward calls it directly rather than
// through LayerLoweringOpInterface's one-input `emitForward`.
//
//===----------------------------------------------------------------------===//
#ifndef NNX_CONVERSION_NNXTOLINALG_RECURRENTLOWERING_H
#define NNX_CONVERSION_NNXTOLINALG_RECURRENTLOWERING_H

#include "nnx/Conversion/NNXToLinalg/LayerLowering.h"

namespace mlir::nnx {

/// The forward of `layer` (a RecurrentLayerOpInterface op) on `inputs` (x,
/// then the optional states, as its `inferOutputTypes` accepts them): its
/// results. On failure a diagnostic has been emitted on the layer.
FailureOr<SmallVector<Value>>
emitRecurrentForward(LayerEmitter &e, Operation *layer, ValueRange inputs);

/// `x W^T + bias` over the last dim of `x` (rank >= 2) as a Linear computes
/// it (one 2-D `linalg.matmul`, LowerProjections.cpp); `w` is out x in,
/// `bias` null for none.
FailureOr<Value> emitLinearProjection(LayerEmitter &e, Operation *layer,
                                      Value x, Value w, Value bias);

} // namespace mlir::nnx

#endif // NNX_CONVERSION_NNXTOLINALG_RECURRENTLOWERING_H
