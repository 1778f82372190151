//===- Recurrent.h - what the recurrent layers share ------------*- C++ -*-===//
//
// The shape and flags of `nnx.lstm` / `nnx.gru` / `nnx.rnn` and their cells,
// read once from the op (`getSpec()`), so that the verifier, the type
// function, the lowering and the tensor names agree.
//
//===----------------------------------------------------------------------===//
#ifndef NNX_DIALECT_NNX_IR_RECURRENT_H
#define NNX_DIALECT_NNX_IR_RECURRENT_H

#include "llvm/ADT/StringRef.h"
#include <cstdint>
#include <string>

namespace mlir::nnx {

enum class ActivationKind : uint32_t;

/// What a recurrent layer (or cell) computes.
struct RecurrentSpec {
  enum class Kind { LSTM, GRU, RNN };
  Kind kind = Kind::LSTM;
  /// A cell: one step, tensors without the `_l<k>` suffix.
  bool cell = false;
  int64_t inputSize = 0, hiddenSize = 0, numLayers = 1;
  bool bias = true, batchFirst = false, bidirectional = false;
  double dropout = 0.0;
  /// nnx.rnn / nnx.rnn_cell: tanh or relu.
  ActivationKind nonlinearity{};

  /// Gate blocks stacked in the weights' rows: 4 (LSTM), 3 (GRU), 1 (RNN).
  int64_t gates() const {
    return kind == Kind::LSTM ? 4 : kind == Kind::GRU ? 3 : 1;
  }
  int64_t directions() const { return bidirectional ? 2 : 1; }
  /// The state inputs after x (h, and c for an LSTM).
  unsigned numStates() const { return kind == Kind::LSTM ? 2 : 1; }
  /// Layer `layer`'s input features.
  int64_t layerInputSize(int64_t layer) const {
    return layer == 0 ? inputSize : hiddenSize * directions();
  }
  /// PyTorch's name of tensor `base` ("weight_ih", "bias_hh") of `layer`
  /// in direction `direction` (1: reverse); a cell's is `base` itself.
  std::string tensorName(llvm::StringRef base, int64_t layer,
                         int64_t direction) const {
    if (cell)
      return base.str();
    return base.str() + "_l" + std::to_string(layer) +
           (direction ? "_reverse" : "");
  }
};

} // namespace mlir::nnx

#endif // NNX_DIALECT_NNX_IR_RECURRENT_H
