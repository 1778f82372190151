//===- NNXFnEnums.td - enums of the nnx.fn ops -------------*- tablegen -*-===//
#ifndef NNX_FN_ENUMS_TD
#define NNX_FN_ENUMS_TD

include "mlir/IR/EnumAttr.td"

// The scalar operation of a broadcasting binary op (FnBinaryOpInterface):
// each case is the mnemonic of its `nnx.fn` op. The comparisons (eq .. ge)
// and the logical ops (logical_*) are contiguous: isComparison / isLogical.
def NNX_FnBinaryKind : I32EnumAttr<"FnBinaryKind",
    "the scalar operation of a broadcasting binary nnx.fn op", [
      I32EnumAttrCase<"add", 0>, I32EnumAttrCase<"sub", 1>,
      I32EnumAttrCase<"mul", 2>, I32EnumAttrCase<"div", 3>,
      I32EnumAttrCase<"pow", 4>, I32EnumAttrCase<"maximum", 5>,
      I32EnumAttrCase<"minimum", 6>, I32EnumAttrCase<"eq", 7>,
      I32EnumAttrCase<"ne", 8>, I32EnumAttrCase<"lt", 9>,
      I32EnumAttrCase<"le", 10>, I32EnumAttrCase<"gt", 11>,
      I32EnumAttrCase<"ge", 12>, I32EnumAttrCase<"logical_and", 13>,
      I32EnumAttrCase<"logical_or", 14>, I32EnumAttrCase<"logical_xor", 15>]> {
  let cppNamespace = "::mlir::nnx";
  let genSpecializedAttr = 0;
}

#endif // NNX_FN_ENUMS_TD
