//===- RuntimeDescriptor.cpp - a JIT's forward for the runtime ------------===//
#include "RuntimeDescriptor.h"

#include "IndexChecks.h"
#include "Parameters.h"
#include "ShapeCheckText.h"

using namespace mlir;
using namespace mlir::nnx;

nnx_aot_dtype mlir::nnx::getRuntimeDType(DType dtype) {
  switch (dtype) {
  case DType::F16:
    return NNX_AOT_F16;
  case DType::BF16:
    return NNX_AOT_BF16;
  case DType::F32:
    return NNX_AOT_F32;
  case DType::F64:
    return NNX_AOT_F64;
  case DType::I32:
    return NNX_AOT_I32;
  case DType::I64:
    return NNX_AOT_I64;
  case DType::Bool:
    return NNX_AOT_BOOL;
  }
  llvm_unreachable("unknown dtype");
}

/// `text` with every '%' doubled, for a printf format.
static std::string escapePercent(StringRef text) {
  std::string escaped;
  for (char c : text) {
    escaped += c;
    if (c == '%')
      escaped += '%';
  }
  return escaped;
}

/// `check` as the runtime's printf format and the argument it blames
/// (ShapeCheckText.h).
static ObjectShapeCheck describeShapeCheckForRuntime(
    const ShapeCheck &check, ArrayRef<TensorSpec> inputs,
    ArrayRef<TensorSpec> parameters, ArrayRef<TensorSpec> writeProbes) {
  ShapeCheckText t = describeShapeCheck(check, inputs, parameters, writeProbes);
  std::string format = escapePercent(t.text);
  for (StringRef from : {"{given}", "{expected}"})
    format.replace(format.find(from), from.size(), "%lld");
  // The runtime numbers the caller's arrays inputs, then write probes.
  int32_t blamed = -1;
  if (t.blamed >= 0 && static_cast<size_t>(t.blamed) < inputs.size())
    blamed = static_cast<int32_t>(t.blamed);
  else if (t.blamed >= 0)
    blamed = static_cast<int32_t>(t.blamed - parameters.size());
  return {std::move(format), t.swapped, blamed};
}

ForwardTables CompiledModel::describeForRuntime() const {
  ForwardTables result;
  result.modelName = modelName;
  result.inputs = inputs;
  result.writeProbes = writeProbes;
  result.outputs = outputs;
  result.readProbes = readProbes;
  const ParameterBindings &params = *parameters;
  for (auto [spec, key, layout] : llvm::zip_equal(
           params.getSpecs(), params.getKeys(), params.getLayouts()))
    result.parameters.push_back({spec, key, layout.view, layout.perm});
  for (const IndexCheckSpec &check : indexChecks)
    result.indexChecks.push_back(
        {check.layer, check.op, check.bound, check.input});
  for (const ShapeCheck &check : shapeChecks)
    result.shapeChecks.push_back(describeShapeCheckForRuntime(
        check, result.inputs, params.getSpecs(), result.writeProbes));
  result.measuredWriteProbes = measuredWriteProbes;
  return result;
}

/// The runtime's view of `spec`, pointing into it.
static nnx_aot_tensor getRuntimeTensor(const TensorSpec &spec) {
  nnx_aot_tensor t = {};
  t.name = spec.name.c_str();
  t.dtype = getRuntimeDType(spec.dtype);
  t.rank = static_cast<int32_t>(spec.shape.size());
  t.shape = spec.shape.data();
  t.type = spec.typeString.c_str();
  t.updated_in_place = spec.updatedInPlace;
  return t;
}

static std::vector<nnx_aot_tensor>
getRuntimeTensors(ArrayRef<TensorSpec> specs) {
  std::vector<nnx_aot_tensor> tensors;
  for (const TensorSpec &spec : specs)
    tensors.push_back(getRuntimeTensor(spec));
  return tensors;
}

RuntimeDescriptor::RuntimeDescriptor(ForwardTables tablesIn,
                                     Functions functions,
                                     const nnx_aot_device *device)
    : tables(std::move(tablesIn)) {
  inputs = getRuntimeTensors(tables.inputs);
  writeProbes = getRuntimeTensors(tables.writeProbes);
  outputs = getRuntimeTensors(tables.outputs);
  readProbes = getRuntimeTensors(tables.readProbes);
  for (const ObjectParameter &p : tables.parameters) {
    nnx_aot_tensor t = getRuntimeTensor(p.spec);
    parameters.push_back({t.name, p.key.c_str(), t.dtype, t.rank, t.shape,
                          t.type, static_cast<int32_t>(p.view.size()),
                          p.view.data(), p.perm.data()});
  }
  for (const ObjectIndexCheck &c : tables.indexChecks)
    indexChecks.push_back({c.layer.c_str(), c.op.c_str(), c.bound, c.input});
  for (const ObjectShapeCheck &c : tables.shapeChecks)
    shapeChecks.push_back({c.format.c_str(), c.swapped, c.blamed});
  for (size_t w : tables.measuredWriteProbes)
    measuredWriteProbes.push_back(static_cast<int32_t>(w));

  nnx_aot_descriptor &d = descriptor;
  d.model = tables.modelName.c_str();
  auto table = [](const auto &v, int32_t &count) {
    count = static_cast<int32_t>(v.size());
    return v.data();
  };
  d.inputs = table(inputs, d.num_inputs);
  d.parameters = table(parameters, d.num_parameters);
  d.write_probes = table(writeProbes, d.num_write_probes);
  d.outputs = table(outputs, d.num_outputs);
  d.read_probes = table(readProbes, d.num_read_probes);
  d.index_checks = table(indexChecks, d.num_index_checks);
  d.shape_checks = table(shapeChecks, d.num_shape_checks);
  d.measured_write_probes =
      table(measuredWriteProbes, d.num_measured_write_probes);
  d.forward = functions.forward;
  d.result_shapes = functions.resultShapes;
  d.write_shapes = functions.writeShapes;
  d.shape_checks_fn = functions.shapeChecks;
  // The JIT ran the module's initializers; the host's CPU compiled it.
  d.init = d.fini = nullptr;
  d.cpu_features = "";
  d.device = device;
}
