//===- NNXInterfaces.td - nnx op interfaces ----------------*- tablegen -*-===//
#ifndef NNX_INTERFACES_TD
#define NNX_INTERFACES_TD

include "mlir/IR/OpBase.td"

def NNX_ModuleOpInterface : OpInterface<"ModuleOpInterface"> {
  let cppNamespace = "::mlir::nnx";
  let description = [{
    Implemented by every op that is a registered module of the tree (leaves
    and containers, not `nnx.alias`). Gives uniform access to the module's key,
    its tensors (parameters and buffers), its mode and the recorded properties
    that a rebuilt plain module would drop.
  }];
  let methods = [
    InterfaceMethod<"Names of the module's own parameters (trainable tensors).",
      "::llvm::SmallVector<::llvm::StringRef>", "getParameterNames">,
    InterfaceMethod<"Names of the module's own buffers (non-trainable state).",
      "::llvm::SmallVector<::llvm::StringRef>", "getBufferNames">,
    InterfaceMethod<"The registered key of this module.",
      "::llvm::StringRef", "getModuleKey", (ins), [{}], [{
        return ::mlir::SymbolTable::getSymbolName($_op).getValue();
      }]>,
    InterfaceMethod<"True when the module is in training mode.",
      "bool", "getTrain">,
    InterfaceMethod<"Names of forward hooks registered on the module.",
      "::mlir::ArrayAttr", "getHooksAttr">,
    InterfaceMethod<"Tensor name -> `requires_grad` (absent means true).",
      "::mlir::DictionaryAttr", "getRequiresGradAttr">,
    InterfaceMethod<"Tensor name -> parametrization kind (weight_norm, ...).",
      "::mlir::DictionaryAttr", "getParametrizationsAttr">,
    InterfaceMethod<"Tensor names carrying an unbaked prune mask.",
      "::mlir::ArrayAttr", "getPrunedAttr">,
    InterfaceMethod<"Class name of a subclass with its own forward, if any.",
      "::mlir::StringAttr", "getSubclassAttr">,
    InterfaceMethod<"The tensor attribute `name` (parameter or buffer), if set.",
      "::mlir::ElementsAttr", "getTensor", (ins "::llvm::StringRef":$name),
      [{}], [{ return $_op->template getAttrOfType<::mlir::ElementsAttr>(name); }]>,
    InterfaceMethod<"Whether tensor `name` requires grad.",
      "bool", "requiresGrad", (ins "::llvm::StringRef":$name), [{}], [{
        ::mlir::DictionaryAttr d = $_op.getRequiresGradAttr();
        if (!d) return true;
        auto b = d.template getAs<::mlir::BoolAttr>(name);
        return !b || b.getValue();
      }]>,
    InterfaceMethod<"Number of elements in the module's own parameters "
                    "(children not included); nullopt when the sum "
                    "overflows 64 bits.",
      "std::optional<int64_t>", "getOwnParameterCount", (ins), [{}], [{
        int64_t n = 0;
        for (::llvm::StringRef p : $_op.getParameterNames())
          if (auto t = $_op.getTensor(p))
            if (::llvm::AddOverflow(n, t.getNumElements(), n))
              return std::nullopt;
        return n;
      }]>,
  ];
  let verify = [{ return ::mlir::nnx::detail::verifyModuleOpInterface($_op); }];
}

def NNX_LayerOpInterface : OpInterface<"LayerOpInterface"> {
  let cppNamespace = "::mlir::nnx";
  let description = [{
    Implemented by every leaf layer (`nnx.linear`, the norms, the
    activations, ...). Everything the rest of the compiler asks of a layer
    kind is asked here, so that a new layer kind is one description: its ODS
    definition, the methods below where the defaults do not fit (beside the
    op, in `lib/Dialect/NNX/IR/NNXOps.cpp`), and its lowering (the
    `LayerLoweringOpInterface` external model in
    `lib/Conversion/NNXToLinalg/`).

    The defaults describe an elementwise float activation: the output has
    the input's type, no feature size is fixed, and each output element
    depends on the same input element only.
  }];
  let methods = [
    InterfaceMethod<[{
        The type of the layer's output for `input` (a ranked tensor of rank
        at least 1). Reports what is wrong through `error`, which emits a
        diagnostic only when it was given a location.
      }],
      "::mlir::FailureOr<::mlir::Type>", "inferOutputType",
      (ins "::mlir::RankedTensorType":$input,
           "const ::mlir::nnx::ModuleTypeError &":$error), [{}], [{
        if (::mlir::failed(error.requireFloat(input, ::mlir::Type())))
          return ::mlir::failure();
        return ::mlir::Type(input);
      }]>,
    InterfaceMethod<[{
        The feature sizes the layer requires and produces on each feature
        axis (the last dim, the channels), where its parameters fix them;
        what a sequential's verifier chains. By default, what its feature
        dependence implies (an activation keeps the shape, a pool the
        channels).
      }],
      "::mlir::nnx::FeatureSignature", "getFeatureSignature", (ins), [{}],
      [{
        return ::mlir::nnx::getDependenceSignature(
            $_op.getFeatureDependence());
      }]>,
    InterfaceMethod<[{
        How the output features depend on the input features: what
        `nnx-widen` and `nnx-deepen` read to decide whether units can be
        duplicated through the layer or a Linear inserted after it.
      }],
      "::mlir::nnx::FeatureDependence", "getFeatureDependence", (ins), [{}],
      [{ return ::mlir::nnx::FeatureDependence::Elementwise; }]>,
    InterfaceMethod<[{
        Whether a zero input gives a zero output, whatever the layer's
        parameters hold: what the residual proofs of `nnx-insert-block`
        carry through a layer after a zeroed branch. False by default.
      }],
      "bool", "mapsZeroToZero", (ins), [{}], [{ return false; }]>,
    StaticInterfaceMethod<[{
        Whether PyTorch initializes the layer as a norm: weight ones, bias
        zeros (the recipes' random builds); else its projections' uniform
        +-1/sqrt(fan_in). A property of the kind, asked before the layer is
        built.
      }],
      "bool", "initializesAsNorm", (ins), [{}], [{ return false; }]>,
    InterfaceMethod<[{
        Whether the layer is recorded before its shapes are known (an
        uninitialized `nn.LazyLinear`): it holds no tensors, has no forward
        type, cannot be lowered and has no weights to edit.
      }],
      "bool", "isUninitialized", (ins), [{}], [{ return false; }]>,
  ];
}

def NNX_ConvLayerOpInterface : OpInterface<"ConvLayerOpInterface"> {
  let cppNamespace = "::mlir::nnx";
  let description = [{
    Implemented by the convolutions (`nnx.conv1d`, `nnx.conv2d`): the
    arguments they share, so that a pass that edits channels or kernels
    (surgery, lowering) handles every spatial rank with one code path. The
    weight is `out_channels x (in_channels / groups) x kernel...`, the bias
    (optional) `out_channels`; each window list holds one entry per spatial
    dim.
  }];
  let methods = [
    InterfaceMethod<"The number of spatial dims (1 or 2).",
      "unsigned", "getSpatialRank", (ins),
      [{ return $_op.getKernelSize().size(); }]>,
    InterfaceMethod<"`in_channels`.", "int64_t", "getInChannelCount", (ins),
      [{ return $_op.getInChannels(); }]>,
    InterfaceMethod<"`out_channels`.", "int64_t", "getOutChannelCount", (ins),
      [{ return $_op.getOutChannels(); }]>,
    InterfaceMethod<"`groups`.", "int64_t", "getGroupCount", (ins),
      [{ return $_op.getGroups(); }]>,
    InterfaceMethod<"`kernel_size`.", "::llvm::ArrayRef<int64_t>",
      "getKernelSizes", (ins), [{ return $_op.getKernelSize(); }]>,
    InterfaceMethod<"`stride`.", "::llvm::ArrayRef<int64_t>", "getStrides",
      (ins), [{ return $_op.getStride(); }]>,
    InterfaceMethod<"`padding`.", "::llvm::ArrayRef<int64_t>", "getPaddings",
      (ins), [{ return $_op.getPadding(); }]>,
    InterfaceMethod<"`dilation`.", "::llvm::ArrayRef<int64_t>",
      "getDilations", (ins), [{ return $_op.getDilation(); }]>,
    InterfaceMethod<"The sliding window of spatial dim `i`.",
      "::mlir::nnx::Window", "getSpatialWindow", (ins "unsigned":$i),
      [{ return $_op.getWindow(i); }]>,
    InterfaceMethod<"The weight tensor.", "::mlir::ElementsAttr",
      "getWeightTensor", (ins), [{ return $_op.getWeightAttr(); }]>,
    InterfaceMethod<"The bias tensor, or null.", "::mlir::ElementsAttr",
      "getBiasTensor", (ins), [{ return $_op.getBiasAttr(); }]>,
    InterfaceMethod<[{
        Sets `in_channels` and `out_channels` (the caller replaces the
        tensors to match).
      }],
      "void", "setChannelCounts", (ins "int64_t":$in, "int64_t":$out), [{
        $_op.setInChannels(in);
        $_op.setOutChannels(out);
      }]>,
  ];
}

def NNX_StockNetOpInterface : OpInterface<"StockNetOpInterface"> {
  let cppNamespace = "::mlir::nnx";
  let description = [{
    Implemented by the built-in nets described by immutable params
    (`nnx.feed_fwd`, `nnx.conv_nn`): layers held in `nnx.module_list`s whose
    data flow the params fix. The layers are numbered in data-flow order
    across the lists; layer `s` below `getSiteCount()` is hidden site `s`,
    followed by `activation_for(s)` and dropout `dropout_for(s)`; the last
    layer (the output layer) has neither. The surgery passes read and update
    the params through this interface, with one code path for every net.
  }];
  let methods = [
    InterfaceMethod<[{
        The `nnx.module_list`s that hold the layers, in data-flow order (null
        for a missing one).
      }],
      "::llvm::SmallVector<::mlir::Operation *, 2>", "getLayerLists">,
    InterfaceMethod<"The number of hidden sites (layers but the last).",
      "unsigned", "getSiteCount">,
    InterfaceMethod<[{
        The position of `slot` in data-flow order, or none when it is not a
        child of one of the net's lists.
      }],
      "std::optional<unsigned>", "getLayerIndex", (ins "::mlir::Operation *":$slot)>,
    InterfaceMethod<"Layer `index` in data-flow order, or null.",
      "::mlir::Operation *", "getLayerAt", (ins "unsigned":$index)>,
    InterfaceMethod<"The (in, out) sizes the params give layer `index`.",
      "std::pair<int64_t, int64_t>", "getLayerSizes", (ins "unsigned":$index)>,
    InterfaceMethod<"The effective activation of site `site` (override first).",
      "::mlir::nnx::ActivationKind", "activationFor", (ins "unsigned":$site),
      [{}], [{
        return ::mlir::nnx::detail::getSiteActivation(
            $_op.getActivationsAttr(), $_op.getActivation(), site);
      }]>,
    InterfaceMethod<"Whether the params hold per-site activation overrides.",
      "bool", "hasActivationOverrides", (ins), [{}], [{
        return $_op.getActivationsAttr() != nullptr;
      }]>,
    InterfaceMethod<"The effective dropout probability of site `site`.",
      "double", "dropoutFor", (ins "unsigned":$site), [{}], [{
        return ::mlir::nnx::detail::getSiteDropout($_op.getDropoutProbs(),
                                                   $_op.getDropout(), site);
      }]>,
    InterfaceMethod<"Records width `width` for site `site` (nnx-widen).",
      "void", "setSiteWidth", (ins "unsigned":$site, "int64_t":$width)>,
    InterfaceMethod<[{
        Records a new site `at` of `width` (nnx-deepen inserted an identity
        layer there): ReLU, dropout 0 and, for a convolution site, no pooling
        and a `kernel` window. Per-site lists stay aligned.
      }],
      "void", "insertSite",
      (ins "unsigned":$at, "int64_t":$width, "int64_t":$kernel)>,
  ];
}

#endif // NNX_INTERFACES_TD
