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

    With `slices`, the attribute names a slice of the stored tensor (a
    tensor-parallel rank's shard): one `array<i64>` per dim of the type,
    each a flat list of runs `start0, len0, start1, len1, ...` over that
    dim of the *stored* tensor, gathered in order; an empty array takes the
    whole dim (the stored dim then equals the type's). Rows 0-15, 32-47 and
    64-79 of a stored 96x32 tensor:

    ```mlir
    #nnx.external<"h.0.attn.c_attn.weight",
                  slices = [array<i64: 0, 16, 32, 16, 64, 16>, array<i64>]>
        : tensor<48x32xf32>
    ```

    Starts are >= 0, lengths > 0, and a non-empty entry's lengths sum to
    the type's dim; that the runs lie inside the stored dims is checked
    when the file is read.
  }];
  let parameters = (ins AttributeSelfTypeParameter<"", "::mlir::ShapedType">:$type,
                        StringRefParameter<"the tensor's key in the file">:$key,
                        OptionalParameter<"::mlir::ArrayAttr",
                          "per dim, the runs of the stored tensor">:$slices);
  let builders = [
    AttrBuilder<(ins "::mlir::ShapedType":$type, "::llvm::StringRef":$key), [{
      return $_get($_ctxt, type, key, ::mlir::ArrayAttr());
    }]>
  ];
  let assemblyFormat = "`<` $key (`,` `slices` `=` $slices^)? `>`";
  let genVerifyDecl = 1;
}

//===----------------------------------------------------------------------===//
// Recipes
//===----------------------------------------------------------------------===//

def NNX_Materialization : I32EnumAttr<"Materialization",
    "what a recipe transforms", [
      I32EnumAttrCase<"in_place", 0>, I32EnumAttrCase<"fresh", 1>]> {
  let cppNamespace = "::mlir::nnx";
  let genSpecializedAttr = 0;
}

def NNX_RecipeOpAttr : AttrDef<NNX_Dialect, "RecipeOp"> {
  let mnemonic = "recipe_op";
  let summary = "One recorded operation of a recipe";
  let description = [{
    `id` (`"lora"`, `"low_rank"`) and `version` select the operation;
    `targets` are explicit dotted paths under the root module; `config` holds
    its options (`lora`: `r`, `alpha`; `low_rank`: `rank`). `shapes` are the
    weight types of the targets the operation was materialized on, one per
    target (absent until it is). Targets and config are kept as written, so
    that `nnx-validate-recipe` can name every malformed entry; the verifier
    only checks the structure.

    ```mlir
    #nnx.recipe_op<id = "lora", version = 1, targets = ["h.0.attn.q_proj"],
                   config = {alpha = 8.0 : f64, r = 4 : i64},
                   shapes = [tensor<64x64xf32>]>
    ```
  }];
  let parameters = (ins "::mlir::StringAttr":$id,
                        "int64_t":$version,
                        "::mlir::ArrayAttr":$targets,
                        "::mlir::DictionaryAttr":$config,
                        OptionalParameter<"::mlir::ArrayAttr">:$shapes);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def NNX_RecipeAttr : AttrDef<NNX_Dialect, "Recipe"> {
  let mnemonic = "recipe";
  let summary = "The ordered transform operations recorded on a model";
  let description = [{
    The `nnx.recipe` of an `nnx.model`: ordered `#nnx.recipe_op`s. The first
    `materialized` of them have been applied (by `nnx-materialize-recipe`)
    and are part of the model's topology; the rest are pending.
    `materialization` says what the pending operations transform: the given
    model (`in_place`) or a fresh, seeded, randomly initialised base built
    from the model's base descriptor (`fresh`).

    ```mlir
    nnx.model @m inputs(tensor<?x4xf32>) attributes {
        nnx.recipe = #nnx.recipe<materialization = in_place, materialized = 0,
                             operations = [#nnx.recipe_op<id = "lora", version = 1,
                               targets = ["fc"], config = {alpha = 8.0 : f64, r = 2 : i64}>]>}
    ```
  }];
  let parameters = (ins EnumParameter<NNX_Materialization>:$materialization,
                        "int64_t":$materialized,
                        "::mlir::ArrayAttr":$operations);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def NNX_ModuleDescAttr : AttrDef<NNX_Dialect, "ModuleDesc"> {
  let mnemonic = "module_desc";
  let summary = "One module of a base descriptor: path, kind, attributes";
  let description = [{
    `path` is the dotted path (`""` for the root module), `kind` the op name,
    `attributes` the op's attributes except its key, with every tensor
    replaced by its type (a descriptor holds no weights).

    ```mlir
    #nnx.module_desc<path = "fc", kind = "nnx.linear",
                     attributes = {weight = tensor<8x4xf32>,
                                   requires_grad = {weight = false}}>
    ```
  }];
  let parameters = (ins "::mlir::StringAttr":$path,
                        "::mlir::StringAttr":$kind,
                        "::mlir::DictionaryAttr":$attributes);
  let assemblyFormat = "`<` struct(params) `>`";
}

def NNX_BaseDescriptorAttr : AttrDef<NNX_Dialect, "BaseDescriptor"> {
  let mnemonic = "base";
  let summary = "The structure of a model before any recipe (no weights)";
  let description = [{
    The `nnx.base` of an `nnx.model`, recorded by `nnx-record-base`: the root
    module's key and every module of the tree in pre-order (registration
    order), as `#nnx.module_desc`.
    Aliases are recorded as modules of kind `nnx.alias` with their target.
    Forward regions of custom modules are the registered class's code and
    are not part of the descriptor.

    ```mlir
    #nnx.base<root = "net", modules = [
      #nnx.module_desc<path = "", kind = "nnx.sequential", attributes = {keying = ...}>,
      #nnx.module_desc<path = "fc", kind = "nnx.linear", attributes = {weight = tensor<8x4xf32>}>]>
    ```
  }];
  let parameters = (ins "::mlir::StringAttr":$root,
                        "::mlir::ArrayAttr":$modules);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

//===----------------------------------------------------------------------===//
// Code generation target
//===----------------------------------------------------------------------===//

// A bool written `true` / `false`, `false` by default.
class NNX_BoolParameter<string desc> : AttrOrTypeParameter<"bool", desc> {
  let parser = [{ [&]() -> ::mlir::FailureOr<bool> {
    if (::mlir::succeeded($_parser.parseOptionalKeyword("true")))
      return true;
    if (::mlir::succeeded($_parser.parseOptionalKeyword("false")))
      return false;
    return $_parser.emitError($_parser.getCurrentLocation(),
                              "expected 'true' or 'false'");
  }() }];
  let printer = [{ $_printer << ($_self ? "true" : "false") }];
  let defaultValue = "false";
}

def NNX_TargetAttr : AttrDef<NNX_Dialect, "Target"> {
  let mnemonic = "target";
  let summary = "The CPU the code generation passes compile for";
  let description = [{
    What the CPU passes need to know about the machine, as data: the
    module's `nnx.target` attribute, written by `nnx-set-target` (a driver
    writes the host's there: nnx-run, nnx-compile, the Python and C APIs,
    through the execution library) and only read by the passes. The same
    module and the same target give the same IR on every host.

    * `vector_bits`: the widest vector register the code may use, 128
      (SSE, NEON), 256 (AVX2 with FMA) or 512 (AVX-512). The matmul
      schedule picks its register tiles from it (`nnx-apply-cpu-schedule`).
    * `avx512_bf16`: whether the CPU runs AVX512_BF16 (`vdpbf16ps`,
      `vcvtneps2bf16`): the bf16 matmul tiles and the bf16 conversions
      (`nnx-expand-bf16-casts` keeps them for LLVM). Needs 512 bits.
    * `features`: LLVM target features every function gets
      (`nnx-cap-target-features`: `target_features`), a comma-separated
      list of `+name` / `-name`, relative to the CPU the code generator
      targets: `"-avx512f"` keeps an AVX-512 CPU's code at AVX2.
    * `cpu`: the CPU LLVM compiles for (`target_cpu`, `-mcpu`'s names:
      `znver4`, `skylake-avx512`); empty: the code generator's own.

    ```mlir
    module attributes {nnx.target = #nnx.target<vector_bits = 256,
        features = "-avx512f", cpu = "sapphirerapids">} { ... }
    ```

    A module without `nnx.target` is compiled for the generic default,
    `#nnx.target<vector_bits = 128>` (what every x86-64 and AArch64 CPU
    runs; no host query). `features` that clear an instruction set contradict
    a wider `vector_bits` (`-avx512f` with 512; `-avx`, `-avx2` or `-fma`
    with more than 128) or `avx512_bf16` (`-avx512bf16`), and are refused.
  }];
  let parameters = (ins
    "unsigned":$vector_bits,
    NNX_BoolParameter<"whether the CPU has AVX512_BF16">:$avx512_bf16,
    StringRefParameter<"LLVM target features, +name / -name",
                       [{""}]>:$features,
    StringRefParameter<"the CPU LLVM compiles for", [{""}]>:$cpu);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

#endif // NNX_ATTRS_TD
