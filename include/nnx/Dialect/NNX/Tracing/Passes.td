//===- Passes.td - nnx tracing passes ----------------------*- tablegen -*-===//
#ifndef NNX_DIALECT_NNX_TRACING_PASSES_TD
#define NNX_DIALECT_NNX_TRACING_PASSES_TD

include "nnx/Support/PassBase.td"

def NNXSupportPass : NNX_Pass<"nnx-support", "::mlir::ModuleOp"> {
  let summary = "Print every standardized name of a model and whether it is available";
  let description = [{
    An analysis: loads the family definition `family` (a name looked up in
    the families directory, or a path to a `.json` file; see
    docs/Tracing.md) and prints, for every `nnx.model`, each standardized
    name with the location it resolves to, or the reason it is unavailable.
    The IR is not changed.

    ```
    $ nnx-opt --nnx-support=family=cohere cohere.mlir -o /dev/null
    model @cohere family cohere
      input_ids                  available    input 0 of module '<root>' (nnx.module)
      layers.0.layer_mid         unavailable  the block is parallel: ...
    ```
  }];
  let options = [
    Option<"family", "family", "std::string", /*default=*/"\"\"",
           "Family name (looked up in the families directory) or path to a family file">,
    Option<"familiesDir", "families-dir", "std::string", /*default=*/"\"\"",
           "Directory of family files (default: the source tree's families/, compiled in; drivers pass $NNX_FAMILIES_DIR)">,
  ];
}

def NNXInsertProbesPass : NNX_Pass<"nnx-insert-probes", "::mlir::ModuleOp"> {
  let summary = "Resolve tracing requests and mark their locations for build-forward";
  let description = [{
    Resolves each requested standardized name (`reads`, `writes`; e.g.
    `layers.0.attention_output`) through the family definition to a module
    or a labeled forward op, a point (`input`/`output`) and an index, and
    appends `{name, point, index, kind}` to that op's `nnx.probes` array.
    `nnx-build-forward` turns those entries into `nnx.probe` ops.

    Every request is checked before anything changes (the IR is untouched
    on error): unknown names, paths naming nothing (the failing segment is
    named), unavailable values (the family's reason), locations computed
    more than once, and requests out of execution order (each of `reads`
    and `writes` must list values in the order the forward computes them).

    A name in both `reads` and `writes` is one value: the read comes first
    in the op's list and sees the value before the write (resolved where the
    write lands, it follows no in-place update of the written tensor).

    ```mlir
    // before
    nnx.module @attn class = "Attn" { ... }
    // after --nnx-insert-probes="family=gpt2 reads=layers.0.attention_output"
    nnx.module @attn class = "Attn" attributes {nnx.probes = [
        {index = 0 : i64, kind = "read", name = "layers.0.attention_output",
         point = "output"}
      ]} { ... }
    ```
  }];
  let options = [
    Option<"family", "family", "std::string", /*default=*/"\"\"",
           "Family name (looked up in the families directory) or path to a family file">,
    ListOption<"reads", "reads", "std::string",
               "Standardized names to read, in execution order">,
    ListOption<"writes", "writes", "std::string",
               "Standardized names to write, in execution order">,
    Option<"familiesDir", "families-dir", "std::string", /*default=*/"\"\"",
           "Directory of family files (default: the source tree's families/, compiled in; drivers pass $NNX_FAMILIES_DIR)">,
  ];
}

def NNXLowerProbesPass : NNX_Pass<"nnx-lower-probes", "::mlir::ModuleOp"> {
  let summary = "Turn nnx.probe ops into extra function results and arguments";
  let description = [{
    For every `func.func` holding `nnx.probe` ops: a copy of each `read`
    probe's value (`bufferization.alloc_tensor copy`, a buffer of its own)
    becomes an extra trailing result (in op order) and each `write` probe
    becomes an extra trailing argument that replaces the value from there on.
    Where the value has dynamic dims the argument replaces it through a
    `tensor.extract_slice` of all of it with the value's sizes (a view; the
    run checks a patch has exactly the value's shape), so the sizes of what
    follows stay those of the inputs (`nnx-derive-kv-cache` proves positions
    from the ids' length).
    The names are recorded in the function attributes `nnx.read_probes` and
    `nnx.write_probes` (arrays of strings, in result/argument order).

    A name is read at most once and written at most once. One name both
    read and written is one value, read first: the write probes the read's
    result, so the read copies the value before the write replaces it (the
    order `nnx-insert-probes` and `nnx-build-forward` emit). Anything else
    (a second read or write, a read after the write, a write of another
    value) is an error naming the probe.

    ```mlir
    // before
    func.func @forward(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
      %a = nnx.probe read "h" %x : tensor<?x8xf32>
      %b = nnx.probe write "w" %a : tensor<?x8xf32>
      return %b : tensor<?x8xf32>
    }
    // after
    func.func @forward(%x: tensor<?x8xf32>, %w: tensor<?x8xf32>)
        -> (tensor<?x8xf32>, tensor<?x8xf32>)
        attributes {nnx.read_probes = ["h"], nnx.write_probes = ["w"]} {
      %h = bufferization.alloc_tensor() copy(%x) : tensor<?x8xf32>
      return %w, %h : tensor<?x8xf32>, tensor<?x8xf32>
    }
    ```
  }];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::bufferization::BufferizationDialect",
                           "::mlir::tensor::TensorDialect"];
}

#endif // NNX_DIALECT_NNX_TRACING_PASSES_TD
