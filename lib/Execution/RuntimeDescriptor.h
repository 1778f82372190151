//===- RuntimeDescriptor.h - a JIT's forward for the runtime ----*- C++ -*-===//
//
// The nnx_aot_descriptor (include/nnx-aot/Runtime.h) of a forward the JIT
// compiled: the tables CompiledModel::describeForRuntime built, the
// addresses of the compiled functions and the target's device hooks. The
// runtime library then binds the weights, checks every call and runs it,
// exactly as it does for an object from nnx-compile, whose header holds
// the same tables as C.
//
//===----------------------------------------------------------------------===//
#ifndef NNX_LIB_EXECUTION_RUNTIMEDESCRIPTOR_H
#define NNX_LIB_EXECUTION_RUNTIMEDESCRIPTOR_H

#include "nnx/Execution/ForwardTables.h"

#include "nnx-aot/Runtime.h"

#include <vector>

namespace mlir::nnx {

/// The runtime's name of `dtype`.
nnx_aot_dtype getRuntimeDType(DType dtype);

class RuntimeDescriptor {
public:
  /// The compiled functions (NULL where the forward has none).
  struct Functions {
    nnx_aot_packed_fn forward = nullptr, resultShapes = nullptr,
                      writeShapes = nullptr, shapeChecks = nullptr;
  };

  RuntimeDescriptor(ForwardTables tables, Functions functions,
                    const nnx_aot_device *device);
  RuntimeDescriptor(const RuntimeDescriptor &) = delete;
  RuntimeDescriptor &operator=(const RuntimeDescriptor &) = delete;

  const nnx_aot_descriptor *get() const { return &descriptor; }
  const ForwardTables &getTables() const { return tables; }

private:
  /// Owns every string and shape the descriptor points to.
  ForwardTables tables;
  std::vector<nnx_aot_tensor> inputs, writeProbes, outputs, readProbes;
  std::vector<nnx_aot_parameter> parameters;
  std::vector<nnx_aot_index_check> indexChecks;
  std::vector<nnx_aot_shape_check> shapeChecks;
  std::vector<int32_t> measuredWriteProbes;
  nnx_aot_descriptor descriptor = {};
};

} // namespace mlir::nnx

#endif // NNX_LIB_EXECUTION_RUNTIMEDESCRIPTOR_H
