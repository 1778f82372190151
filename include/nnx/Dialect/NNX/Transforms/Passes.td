//===- Passes.td - nnx structure-level passes --------------*- tablegen -*-===//
#ifndef NNX_DIALECT_NNX_TRANSFORMS_PASSES_TD
#define NNX_DIALECT_NNX_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def NNXParamCountPass : Pass<"nnx-param-count", "::mlir::ModuleOp"> {
  let summary = "Print the parameter count per module and in total";
  let description = [{
    An analysis: prints, for every `nnx.model`, one row per module (its
    dotted path, its op and the parameters it owns, children excluded) and
    the model's total. A module reached through an alias counts once. The IR
    is not changed.

    ```
    $ nnx-opt --nnx-param-count mlp.mlir -o /dev/null
    model @mlp
      path  module          params
      0     nnx.linear          40
      1     nnx.relu             0
      2     nnx.linear          18
      total                     58
    ```
  }];
}

#endif // NNX_DIALECT_NNX_TRANSFORMS_PASSES_TD
