//===- LayerLoweringOpInterface.td - how a layer lowers ----*- tablegen -*-===//
#ifndef NNX_CONVERSION_NNXTOLINALG_LAYERLOWERINGOPINTERFACE_TD
#define NNX_CONVERSION_NNXTOLINALG_LAYERLOWERINGOPINTERFACE_TD

include "mlir/IR/OpBase.td"

def NNX_LayerLoweringOpInterface : OpInterface<"LayerLoweringOpInterface"> {
  let cppNamespace = "::mlir::nnx";
  let description = [{
    How a leaf layer's forward is built from upstream linalg / arith / math /
    tensor ops on tensors. Attached to the layer ops as external models by
    the per-family files of `lib/Conversion/NNXToLinalg/` (as upstream
    attaches BufferizableOpInterface), so that the dialect's IR library does
    not depend on the lowering; `nnx-build-forward` registers them.

    `emitForward` is called with the input already checked by the layer's
    `LayerOpInterface::inferOutputType`, and the emitter's builder and
    location set at the layer. It reads the layer's tensors through the
    emitter (`getTensor`), never from the attributes directly, so where the
    parameters come from is the structure walk's business.
  }];
  let methods = [
    InterfaceMethod<[{
        Emits the layer's forward on `input` and returns its output. On
        failure a diagnostic has been emitted on the layer.
      }],
      "::mlir::FailureOr<::mlir::Value>", "emitForward",
      (ins "::mlir::nnx::LayerEmitter &":$emitter, "::mlir::Value":$input)>,
  ];
}

#endif // NNX_CONVERSION_NNXTOLINALG_LAYERLOWERINGOPINTERFACE_TD
