//===- NNXDialect.td - nnx dialect definition --------------*- tablegen -*-===//
#ifndef NNX_DIALECT_TD
#define NNX_DIALECT_TD

include "mlir/IR/OpBase.td"

def NNX_Dialect : Dialect {
  let name = "nnx";
  let cppNamespace = "::mlir::nnx";
  let summary = "A neural network as its module tree, for structural editing";
  let description = [{
    The `nnx` dialect describes a neural network the way PyTorch's `nn.Module`
    tree does: containers (`nnx.sequential`, `nnx.feed_fwd`, `nnx.module`,
    `nnx.module_list`), leaf layers (`nnx.linear`, `nnx.embedding`, the norms,
    the activations, `nnx.dropout`, `nnx.identity`), their parameters as tensor
    attributes, and the flags a rebuild must respect (per-tensor
    `requires_grad`, per-module train/eval mode, hooks, parametrizations,
    prune masks, subclasses with their own forward, lazy layers, aliases).

    Every module is a symbol whose name is its registered key, and every
    container is a symbol table, so the dotted path `body.0` is the nested
    reference `@body::@"0"`. Surgery passes rewrite this level;
    `nnx-build-forward` lowers it to `func.func @forward` on tensors.
  }];
  let useDefaultAttributePrinterParser = 1;
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

#endif // NNX_DIALECT_TD
