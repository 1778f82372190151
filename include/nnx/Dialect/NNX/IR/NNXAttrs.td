//===- NNXAttrs.td - nnx attributes and enums --------------*- tablegen -*-===//
#ifndef NNX_ATTRS_TD
#define NNX_ATTRS_TD

include "nnx/Dialect/NNX/IR/NNXDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

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

#endif // NNX_ATTRS_TD
