//===- NNXAttrs.td - nnx attributes and enums --------------*- tablegen -*-===//
#ifndef NNX_ATTRS_TD
#define NNX_ATTRS_TD

include "nnx/Dialect/NNX/IR/NNXDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"

// The activations a built-in FeedFwdNN applies between its Linears. Each
// case is named after the leaf op that computes it (`nnx.<case>`, with that
// op's default attributes), so the feed_fwd lowering builds the same forward
// as the leaf.
def NNX_ActivationKind : I32EnumAttr<"ActivationKind",
    "an activation of a built-in FeedFwdNN", [
      I32EnumAttrCase<"relu", 0>, I32EnumAttrCase<"gelu", 1>,
      I32EnumAttrCase<"tanh", 2>, I32EnumAttrCase<"sigmoid", 3>,
      I32EnumAttrCase<"silu", 4>, I32EnumAttrCase<"leaky_relu", 5>,
      I32EnumAttrCase<"softmax", 6>, I32EnumAttrCase<"identity", 7>]> {
  let cppNamespace = "::mlir::nnx";
  let genSpecializedAttr = 0;
}

def NNX_ActivationKindAttr : EnumAttr<NNX_Dialect, NNX_ActivationKind,
                                      "activation"> {
  let assemblyFormat = "`<` $value `>`";
}

def NNX_ActivationKindArrayAttr
    : TypedArrayAttrBase<NNX_ActivationKindAttr, "activation kinds">;

// `torch.nn.GELU(approximate=...)`: the exact erf form or the tanh one.
def NNX_GeluApproximation : I32EnumAttr<"GeluApproximation",
    "the GELU formula", [
      I32EnumAttrCase<"none", 0>, I32EnumAttrCase<"tanh", 1>]> {
  let cppNamespace = "::mlir::nnx";
  let genSpecializedAttr = 0;
}

def NNX_GeluApproximationAttr : EnumAttr<NNX_Dialect, NNX_GeluApproximation,
                                         "gelu_approximation"> {
  let assemblyFormat = "`<` $value `>`";
}

//===----------------------------------------------------------------------===//
// Tracing
//===----------------------------------------------------------------------===//

def NNX_ProbeKind : I32EnumAttr<"ProbeKind", "what a probe does", [
    I32EnumAttrCase<"read", 0>, I32EnumAttrCase<"write", 1>]> {
  let cppNamespace = "::mlir::nnx";
}

def NNX_ProbePoint : I32EnumAttr<"ProbePoint",
    "which side of an op a probe sits on", [
      I32EnumAttrCase<"input", 0>, I32EnumAttrCase<"output", 1>]> {
  let cppNamespace = "::mlir::nnx";
  let genSpecializedAttr = 0;
}

def NNX_ProbeAttr : AttrDef<NNX_Dialect, "Probe"> {
  let mnemonic = "probe";
  let summary = "A tracing request on one input or output of a module or op";
  let description = [{
    One entry of the discardable `nnx.probes` list that `nnx-insert-probes`
    puts on a module (or an op of a forward region) and `nnx-build-forward`
    turns into an `nnx.probe` op: `read` copies input/output `index` out
    under `name`, `write` substitutes the caller's tensor for it.

    ```mlir
    nnx.linear @fc {nnx.probes = [#nnx.probe<name = "mlp_output",
                                              point = output, index = 0,
                                              kind = read>], ...}
    ```
  }];
  let parameters = (ins "::mlir::StringAttr":$name,
                        EnumParameter<NNX_ProbePoint>:$point,
                        "int64_t":$index,
                        EnumParameter<NNX_ProbeKind>:$kind);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

//===----------------------------------------------------------------------===//
// Weights
//===----------------------------------------------------------------------===//

def NNX_ExternalTensorAttr : AttrDef<NNX_Dialect, "ExternalTensor",
                                     [ElementsAttrInterface]> {
  let mnemonic = "external";
  let summary = "A tensor whose data lives in the model's weights file";
  let description = [{
    A parameter or buffer stored outside the IR: `key` names the tensor in
    the safetensors file the enclosing `nnx.model` names in its `weights`
    attribute (or the file a tool is given, e.g. `nnx-run --weights`). The
    attribute carries the type only, so shape checks, parameter counts and
    surgery verifiers work without reading the file; tools that need the
    values (the runner, surgery that computes new tensors) map the file and
    check the tensor's dtype and shape against this type.

    ```mlir
    nnx.model @mlp inputs(tensor<?x4xf32>) attributes {weights = "mlp.safetensors"} {
      nnx.linear @fc {weight = #nnx.external<"fc.weight"> : tensor<8x4xf32>,
                      bias = #nnx.external<"fc.bias"> : tensor<8xf32>}
    }
    ```
  }];
  let parameters = (ins AttributeSelfTypeParameter<"", "::mlir::ShapedType">:$type,
                        StringRefParameter<"the tensor's key in the file">:$key);
  let assemblyFormat = "`<` $key `>`";
  let genVerifyDecl = 1;
}

#endif // NNX_ATTRS_TD
