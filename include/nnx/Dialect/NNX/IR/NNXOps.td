//===- NNXOps.td - nnx operations ---------------------------*- tablegen -*-===//
#ifndef NNX_OPS_TD
#define NNX_OPS_TD

include "nnx/Dialect/NNX/IR/NNXDialect.td"
include "nnx/Dialect/NNX/IR/NNXAttrs.td"
include "nnx/Dialect/NNX/IR/NNXInterfaces.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/RegionKindInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/CallInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/FunctionInterfaces.td"

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def NNX_Keying : I32EnumAttr<"Keying", "how a sequential names its children", [
    I32EnumAttrCase<"positional", 0>, I32EnumAttrCase<"named", 1>]> {
  let cppNamespace = "::mlir::nnx";
}

//===----------------------------------------------------------------------===//
// Base classes
//===----------------------------------------------------------------------===//

// Every nnx op stores its attributes in bytecode as one dictionary
// (NNXBytecode.cpp, docs/Dialect.md "Compatibility"): a file keeps loading
// when an op gains, loses or retypes an attribute, where upstream's
// positional encoding would misread it.
class NNX_Op<string mnemonic, list<Trait> traits = []>
    : Op<NNX_Dialect, mnemonic, traits> {
  let useCustomPropertiesEncoding = 1;
}

// Attributes every registered module carries. `train` is the module's mode
// (absent: eval). The rest record what a rebuilt plain module would drop.
defvar NNX_ModuleAttrs = (ins
  SymbolNameAttr:$sym_name,
  UnitAttr:$train,
  OptionalAttr<StrArrayAttr>:$hooks,
  OptionalAttr<DictionaryAttr>:$requires_grad,
  OptionalAttr<DictionaryAttr>:$parametrizations,
  OptionalAttr<StrArrayAttr>:$pruned,
  OptionalAttr<StrAttr>:$subclass
);

class NNX_ModuleBaseOp<string mnemonic, list<Trait> traits = []>
    : NNX_Op<mnemonic, !listconcat(traits, [
        Symbol, NNX_ModuleOpInterface])>;

class NNX_StringList<list<string> names> {
  string cpp = "{" # !interleave(!foreach(n, names, "\"" # n # "\""), ", ") # "}";
}

class NNX_TensorNames<list<string> params, list<string> buffers> {
  string decl = [{
    ::llvm::SmallVector<::llvm::StringRef> getParameterNames() {
      return }] # NNX_StringList<params>.cpp # [{;
    }
    ::llvm::SmallVector<::llvm::StringRef> getBufferNames() {
      return }] # NNX_StringList<buffers>.cpp # [{;
    }
  }];
}

// A leaf layer with the given parameter and buffer names. `layerMethods` are
// the LayerOpInterface methods the op defines itself (in NNXOps.cpp); the
// others keep the interface's defaults (an elementwise float activation).
defvar NNX_AllLayerMethods = ["inferOutputType", "getFeatureSignature",
                              "getFeatureDependence"];

class NNX_LeafOp<string mnemonic, list<string> params = [],
                 list<string> buffers = [], list<string> layerMethods = [],
                 list<Trait> traits = []>
    : NNX_ModuleBaseOp<mnemonic, !listconcat(traits, [
        DeclareOpInterfaceMethods<NNX_LayerOpInterface, layerMethods>])> {
  let assemblyFormat = "$sym_name attr-dict";
  let extraClassDeclaration = NNX_TensorNames<params, buffers>.decl;
}

// A container's tensors live in its `state` dictionary; the entries its
// `nnx.buffers` list names are buffers (PyTorch's `register_buffer`), the
// others parameters. (A discardable attribute: bytecode written before it
// existed keeps its layout.)
defvar NNX_ContainerDecl = [{
    ::llvm::SmallVector<::llvm::StringRef> getParameterNames();
    ::llvm::SmallVector<::llvm::StringRef> getBufferNames();
    /// The `state` entry `name`, if it is a tensor.
    ::mlir::ElementsAttr getTensor(::llvm::StringRef name);
}];

// A container: a symbol table of modules, with tensors of its own in `state`.
class NNX_ContainerOp<string mnemonic, list<Trait> traits = []>
    : NNX_ModuleBaseOp<mnemonic, !listconcat(traits, [
        SymbolTable, NoTerminator, SingleBlock, NoRegionArguments])> {
  let regions = (region SizedRegion<1>:$body);
  let extraClassDeclaration = NNX_ContainerDecl;
}

//===----------------------------------------------------------------------===//
// Root
//===----------------------------------------------------------------------===//

def NNX_ModelOp : NNX_Op<"model", [
    Symbol, SymbolTable, IsolatedFromAbove, NoTerminator, SingleBlock,
    NoRegionArguments]> {
  let summary = "A model: one root module and its input signature";
  let description = [{
    The root of a network. Its body holds exactly one module, the root module
    (what PyTorch calls `model.net`); dotted paths are resolved from it, so the
    root's own key is not part of any path. `inputs` gives the types of the
    forward's arguments; the batch dimension is dynamic.

    `descriptor` optionally records the built-in net the model was built from.

    The dialect's discardable `nnx.base` (`#nnx.base`, recorded by
    `nnx-record-base`) is the structure before any recipe (module tree,
    tensor types, flags; no weights), and `nnx.recipe` (`#nnx.recipe`) the
    recorded transform operations (docs/Recipes.md). They are discardable
    attributes, not properties, so bytecode written before recipes existed
    still reads.

    `weights` names the safetensors file the model's `#nnx.external` tensors
    are read from. A relative path is relative to the directory of the file
    the model was parsed from (its location), else to the current directory.

    ```mlir
    nnx.model @mlp inputs(tensor<?x4xf32>) {
      nnx.sequential @net keying = positional {
        nnx.linear @"0" {weight = dense<0.5> : tensor<8x4xf32>,
                         bias = dense<0.0> : tensor<8xf32>}
        nnx.relu @"1"
        nnx.linear @"2" {weight = dense<0.25> : tensor<2x8xf32>}
      }
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeArrayAttr:$inputs,
                       OptionalAttr<DictionaryAttr>:$descriptor,
                       OptionalAttr<StrAttr>:$weights);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $sym_name `inputs` `(` custom<TypeList>($inputs) `)` attr-dict-with-keyword $body
  }];
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// The root module of the tree.
    ModuleOpInterface getRootModule();
    /// The input types as a vector.
    ::llvm::SmallVector<::mlir::Type> getInputTypes();
    /// The discardable `nnx.base` / `nnx.recipe` (docs/Recipes.md), or null.
    BaseDescriptorAttr getBaseAttr();
    void setBaseAttr(BaseDescriptorAttr base);
    RecipeAttr getRecipeAttr();
    void setRecipeAttr(RecipeAttr recipe);
  }];
}

//===----------------------------------------------------------------------===//
// Containers
//===----------------------------------------------------------------------===//

def NNX_SequentialOp : NNX_ContainerOp<"sequential"> {
  let summary = "Children applied in registration order";
  let description = [{
    `keying = positional` keeps PyTorch's positional contract: keys are
    `"0"`, `"1"`, ... in order and a rebuild renumbers them. `keying = named`
    never renumbers a retained key. The verifier checks that feature sizes
    chain through the children.

    ```mlir
    nnx.sequential @body keying = named {
      nnx.linear @fc {weight = dense<1.0> : tensor<8x4xf32>}
      nnx.relu @relu
    }
    ```
  }];
  let arguments = !con(NNX_ModuleAttrs, (ins NNX_Keying:$keying,
                                             OptionalAttr<DictionaryAttr>:$state));
  let assemblyFormat = "$sym_name `keying` `=` $keying attr-dict-with-keyword $body";
  let hasRegionVerifier = 1;
}

def NNX_FeedFwdOp : NNX_ContainerOp<"feed_fwd", [
    DeclareOpInterfaceMethods<NNX_StockNetOpInterface>]> {
  let summary = "The built-in FeedFwdNN: a module_list of Linears plus params";
  let description = [{
    Holds one `nnx.module_list @layers` of `len(hidden_dims) + 1` Linears and
    the net's immutable params. For hidden layer `i` the forward applies
    `layers.i`, then `activation_for(i)` (the `activations` override if given,
    else `activation`), then `dropout_for(i)` (`dropout_probs` if given, else
    `dropout`); the last Linear has neither. The verifier checks that the
    Linears agree with the params.

    ```mlir
    nnx.feed_fwd @net attributes {input_dim = 4, hidden_dims = array<i64: 8>,
                       output_dim = 2, activation = #nnx.activation<relu>} {
      nnx.module_list @layers {
        nnx.linear @"0" {weight = dense<1.0> : tensor<8x4xf32>}
        nnx.linear @"1" {weight = dense<1.0> : tensor<2x8xf32>}
      }
    }
    ```
  }];
  let arguments = !con(NNX_ModuleAttrs, (ins
      I64Attr:$input_dim, DenseI64ArrayAttr:$hidden_dims, I64Attr:$output_dim,
      DefaultValuedAttr<NNX_ActivationKindAttr, "ActivationKind::relu">:$activation,
      OptionalAttr<NNX_ActivationKindArrayAttr>:$activations,
      DefaultValuedAttr<F64Attr, "0.0">:$dropout,
      OptionalAttr<F64ArrayAttr>:$dropout_probs,
      OptionalAttr<DictionaryAttr>:$state));
  // `$sym_name attr-dict-with-keyword $body`, with the legacy spellings
  // (`activation = "relu"`, `activations = ["relu", ...]`) upgraded.
  let hasCustomAssemblyFormat = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = NNX_ContainerDecl # [{
    /// The `layers` list, or null if missing.
    ModuleListOp getLayers();
  }];
}

def NNX_ConvNNOp : NNX_ContainerOp<"conv_nn", [
    DeclareOpInterfaceMethods<NNX_StockNetOpInterface>]> {
  let summary = "The built-in ConvNN: conv blocks, then Linears, plus params";
  let description = [{
    Holds `nnx.module_list @layers` of `len(channels)` Conv2d blocks and
    `nnx.module_list @fcs` of `len(hidden_dims) + 1` Linears, and the net's
    immutable params. With `c = [in_channels] + channels`, `layers.i` is a
    `c[i] -> c[i+1]` convolution with a square `kernel_for(i)` window
    (`kernel_sizes` if given, else `kernel_size`; odd), "same" padding,
    stride 1 and groups 1. The forward applies, for block `i`, `layers.i`,
    `activation_for(i)`, `dropout_for(i)` and, when `pool_for(i)` (`pools`
    if given, else `pool`) is above 1, a max pool of that kernel and stride;
    then a global average pool and a flatten to `N x channels[-1]`; then
    `fcs.j`, followed for a hidden `j` by `activation_for(L + j)` and
    `dropout_for(L + j)` (L = `len(channels)`): the sites are numbered across
    both lists, so `activations` and `dropout_probs` hold `L + len(hidden_dims)`
    entries. The verifier checks that the layers agree with the params.

    ```mlir
    nnx.conv_nn @net attributes {in_channels = 3, channels = array<i64: 8>,
                      hidden_dims = array<i64: 16>, output_dim = 10, pool = 2} {
      nnx.module_list @layers {
        nnx.conv2d @"0" {in_channels = 3 : i64, out_channels = 8 : i64,
                         kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>,
                         padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>,
                         weight = dense<0.1> : tensor<8x3x3x3xf32>}
      }
      nnx.module_list @fcs {
        nnx.linear @"0" {weight = dense<0.1> : tensor<16x8xf32>}
        nnx.linear @"1" {weight = dense<0.1> : tensor<10x16xf32>}
      }
    }
    ```
  }];
  let arguments = !con(NNX_ModuleAttrs, (ins
      I64Attr:$in_channels, DenseI64ArrayAttr:$channels,
      DenseI64ArrayAttr:$hidden_dims, I64Attr:$output_dim,
      DefaultValuedAttr<I64Attr, "3">:$kernel_size,
      OptionalAttr<DenseI64ArrayAttr>:$kernel_sizes,
      DefaultValuedAttr<I64Attr, "0">:$pool,
      OptionalAttr<DenseI64ArrayAttr>:$pools,
      DefaultValuedAttr<NNX_ActivationKindAttr, "ActivationKind::relu">:$activation,
      OptionalAttr<NNX_ActivationKindArrayAttr>:$activations,
      DefaultValuedAttr<F64Attr, "0.0">:$dropout,
      OptionalAttr<F64ArrayAttr>:$dropout_probs,
      OptionalAttr<DictionaryAttr>:$state));
  let assemblyFormat = "$sym_name attr-dict-with-keyword $body";
  let hasRegionVerifier = 1;
  let extraClassDeclaration = NNX_ContainerDecl # [{
    /// The `layers` (conv blocks) and `fcs` lists, or null if missing.
    ModuleListOp getLayers();
    ModuleListOp getFcs();
    /// The window of conv block `i` (override first).
    int64_t kernelFor(unsigned i);
    /// The max-pool kernel after conv block `i` (override first); 0 or 1:
    /// none.
    int64_t poolFor(unsigned i);
  }];
}

def NNX_ModuleListOp : NNX_ContainerOp<"module_list"> {
  let summary = "A list of modules with no forward of its own";
  let description = [{
    Keys are positional (`"0"`, `"1"`, ...). A module_list has no forward:
    its owner decides the data flow (e.g. `nnx.feed_fwd`'s `layers`, or a
    transformer's `h` that an `nnx.module` forward calls layer by layer).
  }];
  let arguments = !con(NNX_ModuleAttrs, (ins OptionalAttr<DictionaryAttr>:$state));
  let assemblyFormat = "$sym_name attr-dict-with-keyword $body";
  let hasRegionVerifier = 1;
}

def NNX_ModuleDictOp : NNX_ContainerOp<"module_dict"> {
  let summary = "A dict of modules with no forward of its own";
  let description = [{
    PyTorch's `nn.ModuleDict`: like `nnx.module_list`, but its keys are any
    names, kept in insertion (block) order. A module_dict has no forward:
    its owner's forward calls its children by path (nanoGPT's
    `self.transformer.wte(idx)` is `nnx.call @transformer::@wte(%idx)`), and
    calling the module_dict itself is an error. Dotted paths step through it
    by key (`transformer.wte.weight`).

    ```mlir
    nnx.module_dict @transformer {
      nnx.embedding @wte {weight = dense<0.5> : tensor<16x8xf32>}
      nnx.module_list @h {
        nnx.linear @"0" {weight = dense<1.0> : tensor<8x8xf32>}
      }
      nnx.layer_norm @ln_f {normalized_shape = array<i64: 8>}
    }
    ```
  }];
  let arguments = !con(NNX_ModuleAttrs, (ins OptionalAttr<DictionaryAttr>:$state));
  let assemblyFormat = "$sym_name attr-dict-with-keyword $body";
  let hasRegionVerifier = 1;
}

def NNX_CustomModuleOp : NNX_ContainerOp<"module"> {
  let summary = "A custom module with an explicit forward region";
  let description = [{
    Any `nn.Module` class: child modules plus one `nnx.forward` whose SSA ops
    (upstream tensor ops and `nnx.call @child`) define the data flow.
    Registration order is not data flow here, so surgery that needs proven
    execution order refuses children of an `nnx.module`.

    ```mlir
    nnx.module @block class = "ResidualBlock" {
      nnx.layer_norm @norm {normalized_shape = array<i64: 8>}
      nnx.linear @proj {weight = dense<1.0> : tensor<8x8xf32>}
      nnx.forward @forward(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
        %h = nnx.call @norm(%x) : (tensor<?x8xf32>) -> tensor<?x8xf32>
        %p = nnx.call @proj(%h) : (tensor<?x8xf32>) -> tensor<?x8xf32>
        %y = arith.addf %x, %p {nnx.source = "add_0"} : tensor<?x8xf32>
        nnx.return %y : tensor<?x8xf32>
      }
    }
    ```
  }];
  let arguments = !con(NNX_ModuleAttrs, (ins StrAttr:$class_name,
                                             OptionalAttr<DictionaryAttr>:$config,
                                             OptionalAttr<DictionaryAttr>:$state));
  let assemblyFormat = "$sym_name `class` `=` $class_name attr-dict-with-keyword $body";
  let hasRegionVerifier = 1;
  let extraClassDeclaration = NNX_ContainerDecl # [{
    /// The forward region's op, or null if missing.
    ForwardOp getForward();
  }];
}

def NNX_ForwardOp : NNX_Op<"forward", [
    HasParent<"CustomModuleOp">, FunctionOpInterface, IsolatedFromAbove,
    AutomaticAllocationScope, SingleBlockImplicitTerminator<"ReturnOp">]> {
  let summary = "The forward computation of a custom module";
  let description = [{
    A function (`FunctionOpInterface`, printed and parsed like `func.func`):
    block arguments are the forward's inputs, `nnx.return` yields its outputs.
    Ops may carry an `nnx.source` label (unique within the forward), which
    tracing paths (`source.<label>.output`) address.

    Its symbol name is always `@forward`: each `nnx.module` has exactly one,
    registered in the module's symbol table beside the children. The key
    `forward` is therefore reserved inside an `nnx.module` (PyTorch reserves it
    too: `add_module` refuses a name that is an attribute, and every
    `nn.Module` has `forward`); the module-tree lookups (`lookupChild`, dotted
    paths, `nnx.call` callees) only ever see modules and aliases, never the
    forward. It has no visibility.

    ```mlir
    nnx.forward @forward(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
      %h = nnx.call @norm(%x) : (tensor<?x8xf32>) -> tensor<?x8xf32>
      nnx.return %h : tensor<?x8xf32>
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<FunctionType>:$function_type,
                       OptionalAttr<DictArrayAttr>:$arg_attrs,
                       OptionalAttr<DictArrayAttr>:$res_attrs);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [OpBuilder<(ins "::mlir::FunctionType":$type)>];
  let extraClassDeclaration = [{
    /// The symbol name of every forward.
    static ::llvm::StringRef getForwardSymbolName() { return "forward"; }

    ::mlir::Block &getBodyBlock() { return getBody().front(); }

    //===------------------------------------------------------------------===//
    // CallableOpInterface / FunctionOpInterface
    //===------------------------------------------------------------------===//
    ::mlir::Region *getCallableRegion() { return &getBody(); }
    ::llvm::ArrayRef<::mlir::Type> getArgumentTypes() {
      return getFunctionType().getInputs();
    }
    ::llvm::ArrayRef<::mlir::Type> getResultTypes() {
      return getFunctionType().getResults();
    }
  }];
}

def NNX_ReturnOp : NNX_Op<"return", [Pure, HasParent<"ForwardOp">, Terminator,
                                      ReturnLike]> {
  let summary = "Returns the outputs of a forward region";
  let arguments = (ins Variadic<AnyType>:$operands);
  let builders = [OpBuilder<(ins), [{ build($_builder, $_state, {}); }]>];
  let assemblyFormat = "attr-dict ($operands^ `:` type($operands))?";
  let hasVerifier = 1;
}

def NNX_StateOp : NNX_Op<"state", [Pure, HasParent<"ForwardOp">]> {
  let summary = "Reads a tensor the enclosing module registers on itself";
  let description = [{
    The value of entry `name` of the enclosing `nnx.module`'s `state`
    dictionary: a parameter or buffer registered on the custom module itself,
    as a forward reads `self.inv_freq` or `self.weight` in PyTorch. The result
    type is the tensor's type. `nnx-build-forward` materializes it like a
    layer's tensor (a runtime parameter named `<module path>.<name>`, or a
    constant).

    ```mlir
    %f = nnx.state "inv_freq" : tensor<4xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The module whose `state` holds the tensor.
    CustomModuleOp getModule();
    /// The tensor it reads, or null if `state` has no such entry.
    ::mlir::ElementsAttr getTensor();
  }];
}

def NNX_CallOp : NNX_Op<"call", [
    DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    DeclareOpInterfaceMethods<CallOpInterface,
                              ["resolveCallable", "resolveCallableInTable"]>]> {
  let summary = "Runs a child module's forward inside a forward region";
  let description = [{
    `callee` is resolved in the enclosing `nnx.module` (nested references such
    as `@h::@"0"` step into child containers; aliases resolve to their target).
    Operand and result types must match what the callee computes. A forward
    cannot call itself: `@forward` is not a callee, and a callee that
    contains the call would need an alias cycle, which `nnx.alias` rejects.

    As a `CallOpInterface`, the callable it resolves to is the callee's
    `nnx.forward` when the callee is an `nnx.module`; other modules have no
    callable region (their computation is implied by their kind).

    ```mlir
    %h = nnx.call @norm(%x) : (tensor<?x8xf32>) -> tensor<?x8xf32>
    ```
  }];
  let arguments = (ins SymbolRefAttr:$callee, Variadic<AnyType>:$operands,
                       OptionalAttr<DictArrayAttr>:$arg_attrs,
                       OptionalAttr<DictArrayAttr>:$res_attrs);
  let results = (outs Variadic<AnyType>:$results);
  let assemblyFormat = [{
    $callee `(` $operands `)` attr-dict `:` functional-type($operands, $results)
  }];
  let extraClassDeclaration = [{
    /// The op the callee names among the enclosing `nnx.module`'s children
    /// (aliases on the way are followed, a final alias is returned as is),
    /// or null.
    ::mlir::Operation *lookupCalleeSlot();
    /// The module this call runs (aliases followed), or null if the callee
    /// names nothing.
    ModuleOpInterface resolveCalleeModule();
  }];
}

def NNX_AliasOp : NNX_Op<"alias", [Symbol,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    HasParent<"SequentialOp, CustomModuleOp, ModuleListOp, ModuleDictOp">]> {
  let summary = "One module registered under a second key";
  let description = [{
    Records that the module at path `target` (resolved from the root module,
    e.g. `@body::@fc`) is also registered here under `sym_name`: one object,
    several paths. Surgery that would have to duplicate or retarget the
    object refuses aliased modules.

    The target must be a module, not another alias, and the module graph
    (children plus aliases) must stay acyclic: a target path that runs
    through the alias itself (`@a = @a::@r`), a target that is an ancestor of
    the alias (`@up = @sub` inside `@sub`), or a target whose subtree leads
    back to the alias's container through other aliases is an error.

    ```mlir
    nnx.alias @tied = @embed
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, SymbolRefAttr:$target);
  let assemblyFormat = "$sym_name `=` $target attr-dict";
  let hasVerifier = 1; // the key `forward` is reserved in an nnx.module
}

//===----------------------------------------------------------------------===//
// Leaves
//===----------------------------------------------------------------------===//

def NNX_LinearOp : NNX_LeafOp<"linear", ["weight", "bias"], [],
    !listconcat(NNX_AllLayerMethods, ["isUninitialized"])> {
  let summary = "y = x W^T + b over the last dimension";
  let description = [{
    `weight` is `out_features x in_features`, `bias` (optional) is
    `out_features`. An uninitialized lazy layer (`nn.LazyLinear`) is recorded
    with `lazy` and `out_features` and no tensors; it cannot be lowered.

    ```mlir
    nnx.linear @fc {weight = dense<1.0> : tensor<8x4xf32>,
                    bias = dense<0.0> : tensor<8xf32>,
                    requires_grad = {bias = false}}
    ```
  }];
  let arguments = !con(NNX_ModuleAttrs, (ins OptionalAttr<ElementsAttr>:$weight,
                                             OptionalAttr<ElementsAttr>:$bias,
                                             UnitAttr:$lazy,
                                             OptionalAttr<I64Attr>:$out_features));
  let hasVerifier = 1;
  let extraClassDeclaration = NNX_TensorNames<["weight", "bias"], []>.decl # [{
    int64_t getInFeatures();
    int64_t getOutFeaturesCount();
  }];
}

def NNX_LoraOp : NNX_LeafOp<"lora", ["weight", "bias", "lora_A", "lora_B"], [],
                            NNX_AllLayerMethods> {
  let summary = "A Linear with a low-rank adapter: base(x) + scaling * B(A(x))";
  let description = [{
    The LoRA wrapper a `lora` recipe operation puts around a Linear
    (PEFT's `LoraLayer`). `weight` (out x in) and `bias` are the base
    layer's, frozen by the recipe (`requires_grad = false`); `lora_A` is
    r x in, `lora_B` out x r (zero at initialisation, so the function is
    unchanged); `scaling = alpha / r`. The forward is
    `x W^T + b + scaling * (x A^T) B^T`. With `merged`, `weight` holds
    `W + scaling * B A` (`nnx-lora-merge`) and the forward is the plain
    Linear's; `nnx-lora-unmerge` subtracts the product again.

    ```mlir
    nnx.lora @q_proj {alpha = 8.0 : f64, weight = dense<1.0> : tensor<8x4xf32>,
                      lora_A = dense<0.5> : tensor<2x4xf32>,
                      lora_B = dense<0.0> : tensor<8x2xf32>,
                      requires_grad = {weight = false}}
    ```
  }];
  let arguments = !con(NNX_ModuleAttrs, (ins ElementsAttr:$weight,
                                             OptionalAttr<ElementsAttr>:$bias,
                                             ElementsAttr:$lora_A,
                                             ElementsAttr:$lora_B,
                                             F64Attr:$alpha,
                                             UnitAttr:$merged));
  let hasVerifier = 1;
  let extraClassDeclaration = NNX_TensorNames<["weight", "bias", "lora_A", "lora_B"], []>.decl # [{
    int64_t getInFeatures();
    int64_t getOutFeaturesCount();
    int64_t getRank();
    /// alpha / r.
    double getScaling();
    /// Whether the scaling alpha / `rank` is finite once rounded to
    /// `elementType`, the float type the lowering computes it in (the
    /// weights'): alpha = 1e300 is a finite f64, but its f32 scaling is inf
    /// and a zero lora_B then gives NaN. The verifier and
    /// nnx-validate-recipe both check it.
    static bool isScalingFinite(double alpha, int64_t rank,
                                ::mlir::Type elementType);
  }];
}

def NNX_EmbeddingOp : NNX_LeafOp<"embedding", ["weight"], [], NNX_AllLayerMethods> {
  let summary = "A lookup table: integer ids -> rows of `weight`";
  let description = [{
    `weight` is `num_embeddings x embedding_dim`. `frozen_rows`, set by
    `nnx-expand-embedding`, is the frozen-row mask (true for rows that came
    from the original table).

    ```mlir
    nnx.embedding @embed {weight = dense<1.0> : tensor<10x4xf32>}
    ```
  }];
  let arguments = !con(NNX_ModuleAttrs, (ins ElementsAttr:$weight,
                                             OptionalAttr<I64Attr>:$padding_idx,
                                             OptionalAttr<DenseBoolArrayAttr>:$frozen_rows));
  let hasVerifier = 1;
}

def NNX_LayerNormOp : NNX_LeafOp<"layer_norm", ["weight", "bias"], [],
    !listconcat(NNX_AllLayerMethods, ["mapsZeroToZero",
                                           "initializesAsNorm"])> {
  let summary = "Layer normalization over the trailing `normalized_shape` dims";
  let description = [{
    ```mlir
    nnx.layer_norm @ln {normalized_shape = array<i64: 8>, eps = 1.0e-05 : f64,
                        weight = dense<1.0> : tensor<8xf32>,
                        bias = dense<0.0> : tensor<8xf32>}
    ```
  }];
  let arguments = !con(NNX_ModuleAttrs, (ins DenseI64ArrayAttr:$normalized_shape,
      DefaultValuedAttr<F64Attr, "1e-5">:$eps,
      OptionalAttr<ElementsAttr>:$weight, OptionalAttr<ElementsAttr>:$bias));
  let hasVerifier = 1;
}

def NNX_RMSNormOp : NNX_LeafOp<"rms_norm", ["weight"], [],
    !listconcat(NNX_AllLayerMethods, ["mapsZeroToZero",
                                           "initializesAsNorm"])> {
  let summary = "RMS normalization over the trailing `normalized_shape` dims";
  let description = [{
    `y = x / sqrt(mean(x^2) + eps) * weight`.

    ```mlir
    nnx.rms_norm @norm {normalized_shape = array<i64: 8>, eps = 1.0e-06 : f64,
                        weight = dense<1.0> : tensor<8xf32>}
    ```
  }];
  let arguments = !con(NNX_ModuleAttrs, (ins DenseI64ArrayAttr:$normalized_shape,
      DefaultValuedAttr<F64Attr, "1e-6">:$eps,
      OptionalAttr<ElementsAttr>:$weight));
  let hasVerifier = 1;
}

def NNX_BatchNormOp : NNX_LeafOp<"batch_norm", ["weight", "bias"],
    ["running_mean", "running_var"],
    !listconcat(NNX_AllLayerMethods, ["initializesAsNorm"])> {
  let summary = "Batch normalization over dimension 1 (BatchNorm1d)";
  let description = [{
    Eval mode normalizes with the running statistics; train mode with the
    batch's own (biased) statistics. Running statistics are buffers.
    `momentum` is how training would update them (no forward reads it);
    `cumulative_average` records PyTorch's `momentum=None` (a cumulative
    moving average, the usual way to calibrate statistics) instead.

    ```mlir
    nnx.batch_norm @bn {eps = 1.0e-05 : f64,
                        running_mean = dense<0.0> : tensor<8xf32>,
                        running_var = dense<1.0> : tensor<8xf32>}
    ```
  }];
  let arguments = !con(NNX_ModuleAttrs, (ins
      ElementsAttr:$running_mean, ElementsAttr:$running_var,
      DefaultValuedAttr<F64Attr, "1e-5">:$eps,
      DefaultValuedAttr<F64Attr, "0.1">:$momentum,
      UnitAttr:$cumulative_average,
      OptionalAttr<ElementsAttr>:$weight, OptionalAttr<ElementsAttr>:$bias));
  let hasVerifier = 1;
}

class NNX_ActivationOp<string mnemonic, string torchName>
    : NNX_LeafOp<mnemonic> {
  let summary = "Elementwise `torch.nn." # torchName # "`";
  let description = [{
    ```mlir
    nnx.}] # mnemonic # [{ @act
    ```
  }];
  let arguments = NNX_ModuleAttrs;
}

def NNX_ReLUOp : NNX_ActivationOp<"relu", "ReLU">;
def NNX_TanhOp : NNX_ActivationOp<"tanh", "Tanh">;
def NNX_SigmoidOp : NNX_ActivationOp<"sigmoid", "Sigmoid">;
def NNX_SiLUOp : NNX_ActivationOp<"silu", "SiLU">;
def NNX_IdentityOp : NNX_ActivationOp<"identity", "Identity">;
def NNX_HardswishOp : NNX_ActivationOp<"hardswish", "Hardswish">;

def NNX_GELUOp : NNX_LeafOp<"gelu"> {
  let summary = "Elementwise `torch.nn.GELU` (exact erf or tanh approximation)";
  let description = [{
    ```mlir
    nnx.gelu @act {approximate = #nnx.gelu_approximation<tanh>}
    ```

    The spelling of earlier versions, `approximate = "tanh"`, still parses
    (upgraded on load: docs/Dialect.md, "Compatibility").
  }];
  let arguments = !con(NNX_ModuleAttrs, (ins
      DefaultValuedAttr<NNX_GeluApproximationAttr,
                        "GeluApproximation::none">:$approximate));
  // `$sym_name attr-dict`, with the legacy spellings upgraded.
  let assemblyFormat = ?;
  let hasCustomAssemblyFormat = 1;
}

def NNX_LeakyReLUOp : NNX_LeafOp<"leaky_relu"> {
  let summary = "Elementwise `torch.nn.LeakyReLU`";
  let description = [{
    ```mlir
    nnx.leaky_relu @act {negative_slope = 0.2 : f64}
    ```
  }];
  let arguments = !con(NNX_ModuleAttrs, (ins
      DefaultValuedAttr<F64Attr, "0.01">:$negative_slope));
}

def NNX_SoftmaxOp : NNX_LeafOp<"softmax", [], [],
    ["inferOutputType", "getFeatureDependence"]> {
  let summary = "`torch.nn.Softmax` along `dim` (width-dependent)";
  let description = [{
    ```mlir
    nnx.softmax @sm {dim = -1 : i64}
    ```
  }];
  let arguments = !con(NNX_ModuleAttrs, (ins
      DefaultValuedAttr<I64Attr, "-1">:$dim));
}

def NNX_DropoutOp : NNX_LeafOp<"dropout"> {
  let summary = "`torch.nn.Dropout`: identity in eval mode";
  let description = [{
    In train mode, zeroes each element with probability `p` and scales the
    rest by `1/(1-p)`, with a counter-based hash of the element index and
    `seed` as the random source.

    ```mlir
    nnx.dropout @drop {p = 0.1 : f64}
    ```
  }];
  let arguments = !con(NNX_ModuleAttrs, (ins
      DefaultValuedAttr<F64Attr, "0.5">:$p,
      DefaultValuedAttr<I64Attr, "0">:$seed));
  let hasVerifier = 1;
}


//===----------------------------------------------------------------------===//
// Convolutional layers
//===----------------------------------------------------------------------===//

// The arguments of a convolution over `rank` spatial dims: the sizes are
// lists of one entry per spatial dim.
defvar NNX_ConvArgs = !con(NNX_ModuleAttrs, (ins I64Attr:$in_channels,
    I64Attr:$out_channels, DenseI64ArrayAttr:$kernel_size,
    DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding,
    DenseI64ArrayAttr:$dilation, DefaultValuedAttr<I64Attr, "1">:$groups,
    ElementsAttr:$weight, OptionalAttr<ElementsAttr>:$bias));

defvar NNX_WindowDecl = [{
    /// The sliding window of spatial dim `i` (0: the first after the
    /// channels), whose output size follows torch's rule.
    ::mlir::nnx::Window getWindow(unsigned i);
}];

def NNX_Conv2dOp : NNX_LeafOp<"conv2d", ["weight", "bias"], [],
    NNX_AllLayerMethods, [NNX_ConvLayerOpInterface]> {
  let summary = "`torch.nn.Conv2d` on N x C x H x W input";
  let description = [{
    `weight` is `out_channels x (in_channels / groups) x kh x kw`, `bias`
    (optional) is `out_channels`. `kernel_size`, `stride`, `padding` (zero
    padding on both sides) and `dilation` are (H, W) pairs. The output's
    spatial size is `(H + 2 p - d (k - 1) - 1) / s + 1` (floor). `groups`
    must divide both channel counts: `groups = 1` lowers to
    `linalg.conv_2d_nchw_fchw`, depthwise convolutions (`groups =
    in_channels = out_channels`) to `linalg.depthwise_conv_2d_nchw_chw`, other
    groups to `linalg.conv_2d_ngchw_gfchw`.

    ```mlir
    nnx.conv2d @c {in_channels = 3 : i64, out_channels = 8 : i64,
                   kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>,
                   padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>,
                   groups = 1 : i64, weight = dense<0.1> : tensor<8x3x3x3xf32>,
                   bias = dense<0.0> : tensor<8xf32>}
    ```
  }];
  let arguments = NNX_ConvArgs;
  let hasVerifier = 1;
  let extraClassDeclaration = !strconcat(
      NNX_TensorNames<["weight", "bias"], []>.decl, NNX_WindowDecl);
}

def NNX_Conv1dOp : NNX_LeafOp<"conv1d", ["weight", "bias"], [],
    NNX_AllLayerMethods, [NNX_ConvLayerOpInterface]> {
  let summary = "`torch.nn.Conv1d` on N x C x L input";
  let description = [{
    As `nnx.conv2d` with one spatial dim: `weight` is `out_channels x
    (in_channels / groups) x k`, and `kernel_size`, `stride`, `padding` and
    `dilation` hold one entry each. It lowers as a 2-D convolution of height
    1.

    ```mlir
    nnx.conv1d @c {in_channels = 80 : i64, out_channels = 64 : i64,
                   kernel_size = array<i64: 3>, stride = array<i64: 1>,
                   padding = array<i64: 1>, dilation = array<i64: 1>,
                   weight = dense<0.1> : tensor<64x80x3xf32>}
    ```
  }];
  let arguments = NNX_ConvArgs;
  let hasVerifier = 1;
  let extraClassDeclaration = !strconcat(
      NNX_TensorNames<["weight", "bias"], []>.decl, NNX_WindowDecl);
}

// The pooling layers: no tensors; the output keeps N and C.
class NNX_PoolOp<string mnemonic> : NNX_LeafOp<mnemonic, [], [],
    ["inferOutputType", "getFeatureDependence"]> {
  let hasVerifier = 1;
  let extraClassDeclaration = !strconcat(NNX_TensorNames<[], []>.decl,
                                         NNX_WindowDecl);
}

def NNX_MaxPool2dOp : NNX_PoolOp<"max_pool2d"> {
  let summary = "`torch.nn.MaxPool2d` on N x C x H x W input";
  let description = [{
    The maximum of each window; padding is `-inf` (never chosen: `padding`
    is at most half the kernel, as torch requires). `ceil_mode` rounds the
    output size up, with the last window starting inside the input or its
    left padding (torch's rule). NaN propagates as in torch.

    ```mlir
    nnx.max_pool2d @pool {kernel_size = array<i64: 3, 3>,
                          stride = array<i64: 2, 2>, padding = array<i64: 1, 1>,
                          dilation = array<i64: 1, 1>}
    ```
  }];
  let arguments = !con(NNX_ModuleAttrs, (ins DenseI64ArrayAttr:$kernel_size,
      DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding,
      DenseI64ArrayAttr:$dilation, UnitAttr:$ceil_mode));
}

def NNX_AvgPool2dOp : NNX_PoolOp<"avg_pool2d"> {
  let summary = "`torch.nn.AvgPool2d` on N x C x H x W input";
  let description = [{
    The mean of each window. With `count_include_pad` (torch's default) the
    divisor counts the zero padding inside the window, else only the input's
    elements; a `ceil_mode` window that runs past the padding counts only up
    to its end (torch's rule).

    ```mlir
    nnx.avg_pool2d @pool {kernel_size = array<i64: 2, 2>,
                          stride = array<i64: 2, 2>, padding = array<i64: 0, 0>,
                          count_include_pad}
    ```
  }];
  let arguments = !con(NNX_ModuleAttrs, (ins DenseI64ArrayAttr:$kernel_size,
      DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding,
      UnitAttr:$ceil_mode, UnitAttr:$count_include_pad));
}

def NNX_AdaptiveAvgPool2dOp : NNX_LeafOp<"adaptive_avg_pool2d", [], [],
    ["inferOutputType", "getFeatureDependence"]> {
  let summary = "`torch.nn.AdaptiveAvgPool2d` to an `output_size` (H, W)";
  let description = [{
    Each output element is the mean of its window of the input, PyTorch's
    [floor(i * in / out), ceil((i + 1) * in / out)). Static sizes may be
    anything (windows then overlap or repeat: AlexNet pools a 1x1 image up
    to 6x6); a dynamic H or W must be a multiple of the output's (checked
    at run time), so its windows are equal and disjoint. `(1, 1)` is the
    global average pool.

    ```mlir
    nnx.adaptive_avg_pool2d @avgpool {output_size = array<i64: 1, 1>}
    ```
  }];
  let arguments = !con(NNX_ModuleAttrs, (ins
      DenseI64ArrayAttr:$output_size));
  let hasVerifier = 1;
}

def NNX_FlattenOp : NNX_LeafOp<"flatten", [], [], NNX_AllLayerMethods> {
  let summary = "`torch.nn.Flatten`: dims `start_dim` to `end_dim` into one";
  let description = [{
    Negative dims count from the end of the input's rank.

    ```mlir
    nnx.flatten @flatten {start_dim = 1 : i64, end_dim = -1 : i64}
    ```
  }];
  let arguments = !con(NNX_ModuleAttrs, (ins
      DefaultValuedAttr<I64Attr, "1">:$start_dim,
      DefaultValuedAttr<I64Attr, "-1">:$end_dim));
}


//===----------------------------------------------------------------------===//
// Forward level
//===----------------------------------------------------------------------===//

def NNX_ProbeOp : NNX_Op<"probe", [AllTypesMatch<["value", "result"]>]> {
  let summary = "A tracing point on a value of the forward";
  let description = [{
    `read`: the result is `value`, and `value` is also copied out to the
    caller under `name`. `write`: the result is the tensor the caller provides
    under `name` (same type), substituted for `value` from here on.
    `nnx-lower-probes` turns probes into extra results (reads) and extra
    arguments (writes) of the enclosing function.

    ```mlir
    %r = nnx.probe read "layers.0.attention_output" %a : tensor<?x4x8xf32>
    ```
  }];
  let arguments = (ins NNX_ProbeKind:$kind, StrAttr:$name,
                       AnyRankedTensor:$value);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$kind $name $value attr-dict `:` type($value)";
}

#endif // NNX_OPS_TD
