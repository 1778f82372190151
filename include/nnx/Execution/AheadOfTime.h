//===- AheadOfTime.h - a forward compiled to an object file -----*- C++ -*-===//
//
// nnx-compile's library: the forward nnx-run would JIT, compiled instead to
// a relocatable object (the same pipeline, optimization and code
// generation, so the same bits), plus a C header that declares a plain C
// signature for it. The object needs no MLIR or LLVM at run time: it links
// against nnx's small C runtime (libnnx_aot_runtime.a, nnx-aot/Runtime.h),
// which binds the weights from a safetensors file at load, checks the
// arguments as nnx-run does and runs the forward (docs/Integration.md,
// "Ahead of time").
//
// For a model compiled with the prefix `mlp`, the header declares:
//
//   typedef struct nnx_aot_model mlp_model;
//   int mlp_load(const char *weights, mlp_model **model);
//   int mlp_result_shapes(mlp_model *model, const float *input0,
//                         const int64_t input0_dims[2],
//                         int64_t output0_dims[2]);
//   int mlp_forward(mlp_model *model, const float *input0,
//                   const int64_t input0_dims[2], float *output0,
//                   int64_t output0_capacity, int64_t output0_dims[2]);
//   const char *mlp_error(const mlp_model *model);
//   void mlp_free(mlp_model *model);
//
//===----------------------------------------------------------------------===//
#ifndef NNX_EXECUTION_AHEADOFTIME_H
#define NNX_EXECUTION_AHEADOFTIME_H

#include "nnx/Execution/CompiledModel.h"
#include "nnx/Execution/ForwardTables.h"

#include <string>
#include <vector>

namespace mlir::nnx {

/// What nnx-compile writes: the object and what its header describes.
struct CompiledObject : ForwardTables {
  /// ELF, relocatable, position independent.
  std::string object;
  /// Of every symbol the object exports and the header declares.
  std::string prefix;
  /// The packed entry points the object exports (`<prefix>_mlir_...`), in
  /// the order forward, result shapes, write shapes, shape checks; empty
  /// when the module has no such function.
  std::string forward, resultShapes, writeShapes, shapeChecksFunction;
  /// Its constructor and destructor functions.
  std::string init, fini;
  /// The symbol of the weights linked into the object (a safetensors image
  /// of `embeddedWeightsSize` bytes), or empty.
  std::string embeddedWeights;
  uint64_t embeddedWeightsSize = 0;
  /// The instruction sets the code may use, of those the runtime checks at
  /// load ("avx2", "avx512f", ...: the host's, less what max-isa caps).
  std::vector<std::string> cpuFeatures;
};

/// Compiles `module` (lowered in place) as CompiledModel::compile does, for
/// the CPU, into an object whose symbols start with `prefix` (a C
/// identifier). The weights are bound at load from a safetensors file; with
/// `embedWeights`, the model's own (or those of `options.weightsFile`) are
/// also linked into the object, for a load without a file.
llvm::Expected<CompiledObject> compileAheadOfTime(ModuleOp module,
                                                  const CompileOptions &options,
                                                  llvm::StringRef prefix,
                                                  bool embedWeights = false);

/// The C header of `object`: the runtime's types, the forward's signature
/// in plain C, and the tables the runtime reads. `source` names the file
/// it came from (a comment).
std::string emitObjectHeader(const CompiledObject &object,
                             llvm::StringRef source);

} // namespace mlir::nnx

#endif // NNX_EXECUTION_AHEADOFTIME_H
