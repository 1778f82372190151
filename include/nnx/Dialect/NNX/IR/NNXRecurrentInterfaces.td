//===- NNXRecurrentInterfaces.td - multi-value layers -------*- tablegen -*-===//
#ifndef NNX_RECURRENT_INTERFACES_TD
#define NNX_RECURRENT_INTERFACES_TD

include "mlir/IR/OpBase.td"

def NNX_RecurrentLayerOpInterface : OpInterface<"RecurrentLayerOpInterface"> {
  let cppNamespace = "::mlir::nnx";
  let description = [{
    Implemented by the recurrent layers (`nnx.lstm`, `nnx.gru`, `nnx.rnn`
    and their cells): leaves that take several inputs and return several
    results (`nnx.call @lstm(%x, %h0, %c0)` gives the output, h_n and c_n).
    `LayerOpInterface::inferOutputType` gives their first result for x
    alone; the forward type function (`inferForwardTypes`), the probe paths
    (`output` with `select`) and `nnx-build-forward` ask this interface.
  }];
  let methods = [
    InterfaceMethod<"The recurrence's shape and flags.",
      "::mlir::nnx::RecurrentSpec", "getSpec">,
    InterfaceMethod<[{
        The types of the results for `inputs` (x, then the optional
        states); reports what is wrong through `error`.
      }],
      "::mlir::FailureOr<::llvm::SmallVector<::mlir::Type>>",
      "inferOutputTypes",
      (ins "::mlir::TypeRange":$inputs,
           "const ::mlir::nnx::ModuleTypeError &":$error)>,
    InterfaceMethod<"How many results the forward returns.",
      "unsigned", "getNumOutputs">,
  ];
}

#endif // NNX_RECURRENT_INTERFACES_TD
