//===- ForwardTables.h - what the runtime knows of a forward ----*- C++ -*-===//
//
// The contract between the compiler and nnx's one runtime
// (include/nnx-aot/Runtime.h): a compiled forward's arguments, results,
// parameters and run-time checks as the runtime's descriptor holds them,
// less the addresses of the code. CompiledModel::describeForRuntime builds
// it once; the JIT fills a live nnx_aot_descriptor from it
// (lib/Execution/RuntimeDescriptor.h), nnx-compile prints it as the C
// tables of an object's header (AheadOfTime.h).
//
//===----------------------------------------------------------------------===//
#ifndef NNX_EXECUTION_FORWARDTABLES_H
#define NNX_EXECUTION_FORWARDTABLES_H

#include "nnx/Execution/CompiledModel.h"

#include <string>
#include <vector>

namespace mlir::nnx {

/// A parameter of the compiled forward: as stored (dtype, shape, dotted
/// name), its key in a weights file, and the layout the code reads it in.
struct ObjectParameter {
  TensorSpec spec;
  std::string key;
  /// The stored tensor viewed as `view`, then permuted by `perm`; both
  /// empty: read as stored.
  llvm::SmallVector<int64_t, 4> view, perm;
};

/// A run-time index check of the forward (IndexChecks.h).
struct ObjectIndexCheck {
  std::string layer, op;
  int64_t bound = 0;
  /// The input the ids are, or -1.
  int64_t input = -1;
};

/// A place where the forward assumes two argument sizes agree
/// (`@forward_shape_checks`).
struct ObjectShapeCheck {
  /// printf format of the error, with two `%lld`: the given size, then the
  /// expected one.
  std::string format;
  /// Whether the expected size is the second of the pair the shape
  /// function returns (else the first).
  bool swapped = false;
  /// The argument (an input, then a write probe) whose size is the given
  /// one, or -1.
  int32_t blamed = -1;
};

/// The tables of nnx_aot_descriptor.
struct ForwardTables {
  /// The model's name (empty for a forward-level module).
  std::string modelName;
  std::vector<TensorSpec> inputs, writeProbes, outputs, readProbes;
  std::vector<ObjectParameter> parameters;
  std::vector<ObjectIndexCheck> indexChecks;
  std::vector<ObjectShapeCheck> shapeChecks;
  /// The write probes `@forward_write_shapes` measures (indices into
  /// `writeProbes`).
  std::vector<size_t> measuredWriteProbes;
};

} // namespace mlir::nnx

#endif // NNX_EXECUTION_FORWARDTABLES_H
