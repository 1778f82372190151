//===- NNXRecurrentOps.td - recurrent layers ----------------*- tablegen -*-===//
//
// `torch.nn.LSTM` / `GRU` / `RNN` and their cells, generated apart from
// NNXOps.td (`-op-include-regex`) and registered by the same dialect
// (RecurrentOps.cpp); include NNXRecurrentOps.h.
// The tensors carry PyTorch's names (`weight_ih_l0`, `bias_hh_l1_reverse`,
// `weight_ih`), so state_dict keys round-trip. The layers take several
// inputs and return several results (`nnx.call @lstm(%x, %h0, %c0)` gives
// the output, h_n and c_n):
// `RecurrentLayerOpInterface::inferOutputTypes` is their type function,
// LowerRecurrent.cpp their lowering (an `scf.for` over the run-time
// sequence length).
//
//===----------------------------------------------------------------------===//
#ifndef NNX_RECURRENT_OPS_TD
#define NNX_RECURRENT_OPS_TD

include "nnx/Dialect/NNX/IR/NNXOps.td"
include "nnx/Dialect/NNX/IR/NNXRecurrentInterfaces.td"

defvar NNX_RecurrentLayerMethods = ["inferOutputType", "getFeatureSignature",
                                    "getFeatureDependence"];

defvar NNX_RecurrentDecl = [{
    ::llvm::SmallVector<::llvm::StringRef> getParameterNames();
    ::llvm::SmallVector<::llvm::StringRef> getBufferNames() { return {}; }
}];

// nn.LSTM / nn.GRU / nn.RNN: `num_layers` stacked layers, each with one
// (or, bidirectional, two) directions. Layer l's tensors are
// `weight_ih_l<l>` (gates*hidden x in, in = input_size for l = 0, else
// hidden_size times the directions), `weight_hh_l<l>` (gates*hidden x
// hidden), with `bias`: `bias_ih_l<l>` and `bias_hh_l<l>` (gates*hidden);
// the reverse direction's names end in `_reverse`.
class NNX_RecurrentOp<string mnemonic, dag extra = (ins)>
    : NNX_LeafOp<mnemonic, [], [], NNX_RecurrentLayerMethods,
                 [DeclareOpInterfaceMethods<NNX_RecurrentLayerOpInterface>]> {
  let arguments = !con(NNX_ModuleAttrs,
      (ins ConfinedAttr<I64Attr, [IntPositive]>:$input_size,
           ConfinedAttr<I64Attr, [IntPositive]>:$hidden_size,
           DefaultValuedAttr<ConfinedAttr<I64Attr, [IntPositive]>, "1">:$num_layers,
           DefaultValuedAttr<BoolAttr, "true">:$bias,
           UnitAttr:$batch_first,
           UnitAttr:$bidirectional,
           DefaultValuedAttr<F64Attr, "0.0">:$dropout), extra);
  let hasVerifier = 1;
  let extraClassDeclaration = NNX_RecurrentDecl;
}

def NNX_LSTMOp : NNX_RecurrentOp<"lstm"> {
  let summary = "`torch.nn.LSTM`: (x, h_0, c_0) -> (output, h_n, c_n)";
  let description = [{
    Four gates (input, forget, cell, output) in PyTorch's row order. Takes
    the input (`seq x batch x input_size`, `batch x seq x input_size` with
    `batch_first`, or unbatched `seq x input_size`) and optionally h_0 and
    c_0 (`layers*directions x batch x hidden_size`; zeros when absent);
    returns the output (`seq x batch x directions*hidden_size`, batch first
    with `batch_first`) and h_n, c_n (h_0's shape). `dropout` applies
    between layers in train mode only. Sequence and batch may be dynamic:
    the forward is a loop over the sequence, not an unrolled trace.

    ```mlir
    nnx.lstm @rnn {input_size = 4 : i64, hidden_size = 8 : i64,
                   weight_ih_l0 = dense<0.1> : tensor<32x4xf32>,
                   weight_hh_l0 = dense<0.1> : tensor<32x8xf32>,
                   bias_ih_l0 = dense<0.0> : tensor<32xf32>,
                   bias_hh_l0 = dense<0.0> : tensor<32xf32>}
    ```
  }];
}

def NNX_GRUOp : NNX_RecurrentOp<"gru"> {
  let summary = "`torch.nn.GRU`: (x, h_0) -> (output, h_n)";
  let description = [{
    Three gates (reset, update, new) in PyTorch's row order; the reset gate
    scales the hidden projection including its bias, as PyTorch computes
    it. Shapes as `nnx.lstm`, without a cell state.

    ```mlir
    nnx.gru @rnn {input_size = 4 : i64, hidden_size = 8 : i64, bias = false,
                  batch_first, weight_ih_l0 = dense<0.1> : tensor<24x4xf32>,
                  weight_hh_l0 = dense<0.1> : tensor<24x8xf32>}
    ```
  }];
}

def NNX_RNNOp : NNX_RecurrentOp<"rnn",
    (ins DefaultValuedAttr<NNX_ActivationKindAttr,
                           "::mlir::nnx::ActivationKind::tanh">:$nonlinearity)> {
  let summary = "`torch.nn.RNN` (Elman): (x, h_0) -> (output, h_n)";
  let description = [{
    `h' = act(x W_ih^T + b_ih + h W_hh^T + b_hh)` with `nonlinearity` tanh
    (the default) or relu. Shapes as `nnx.gru`.

    ```mlir
    nnx.rnn @rnn {input_size = 4 : i64, hidden_size = 8 : i64,
                  nonlinearity = #nnx.activation<relu>,
                  weight_ih_l0 = dense<0.1> : tensor<8x4xf32>,
                  weight_hh_l0 = dense<0.1> : tensor<8x8xf32>,
                  bias_ih_l0 = dense<0.0> : tensor<8xf32>,
                  bias_hh_l0 = dense<0.0> : tensor<8xf32>}
    ```
  }];
}

// nn.LSTMCell / nn.GRUCell / nn.RNNCell: one step, `weight_ih`
// (gates*hidden x input_size), `weight_hh` (gates*hidden x hidden_size),
// optional `bias_ih` and `bias_hh` (both or neither).
class NNX_CellOp<string mnemonic, dag extra = (ins)>
    : NNX_LeafOp<mnemonic, [], [], NNX_RecurrentLayerMethods,
                 [DeclareOpInterfaceMethods<NNX_RecurrentLayerOpInterface>]> {
  let arguments = !con(NNX_ModuleAttrs,
      (ins ConfinedAttr<I64Attr, [IntPositive]>:$input_size,
           ConfinedAttr<I64Attr, [IntPositive]>:$hidden_size,
           ElementsAttr:$weight_ih, ElementsAttr:$weight_hh,
           OptionalAttr<ElementsAttr>:$bias_ih,
           OptionalAttr<ElementsAttr>:$bias_hh), extra);
  let hasVerifier = 1;
  let extraClassDeclaration = NNX_RecurrentDecl;
}

def NNX_LSTMCellOp : NNX_CellOp<"lstm_cell"> {
  let summary = "`torch.nn.LSTMCell`: (x, h, c) -> (h', c')";
  let description = [{
    One LSTM step on `batch x input_size` (or unbatched `input_size`)
    input; h and c (`batch x hidden_size`) are zeros when absent.

    ```mlir
    nnx.lstm_cell @cell {input_size = 4 : i64, hidden_size = 8 : i64,
                         weight_ih = dense<0.1> : tensor<32x4xf32>,
                         weight_hh = dense<0.1> : tensor<32x8xf32>}
    ```
  }];
}

def NNX_GRUCellOp : NNX_CellOp<"gru_cell"> {
  let summary = "`torch.nn.GRUCell`: (x, h) -> h'";
  let description = [{
    One GRU step; shapes as `nnx.lstm_cell`, without a cell state.

    ```mlir
    nnx.gru_cell @cell {input_size = 4 : i64, hidden_size = 8 : i64,
                        weight_ih = dense<0.1> : tensor<24x4xf32>,
                        weight_hh = dense<0.1> : tensor<24x8xf32>}
    ```
  }];
}

def NNX_RNNCellOp : NNX_CellOp<"rnn_cell",
    (ins DefaultValuedAttr<NNX_ActivationKindAttr,
                           "::mlir::nnx::ActivationKind::tanh">:$nonlinearity)> {
  let summary = "`torch.nn.RNNCell`: (x, h) -> h'";
  let description = [{
    One Elman step with `nonlinearity` tanh (the default) or relu.

    ```mlir
    nnx.rnn_cell @cell {input_size = 4 : i64, hidden_size = 8 : i64,
                        weight_ih = dense<0.1> : tensor<8x4xf32>,
                        weight_hh = dense<0.1> : tensor<8x8xf32>}
    ```
  }];
}

#endif // NNX_RECURRENT_OPS_TD
