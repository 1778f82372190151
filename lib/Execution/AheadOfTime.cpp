//===- AheadOfTime.cpp - a forward compiled to an object file -------------===//
#include "nnx/Execution/AheadOfTime.h"

#include "ExecutionError.h"
#include "ModelJIT.h"
#include "Parameters.h"
#include "RuntimeDescriptor.h"

#include "nnx/Dialect/NNX/IR/NNXOps.h"
#include "nnx/Support/SafeTensors.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::nnx;

/// The CPU features a program checks before it runs an object
/// (`__builtin_cpu_supports` knows them): the instruction sets nnx's code
/// generation uses.
static constexpr llvm::StringLiteral kCheckedCPUFeatures[] = {
    "sse4.2",   "avx",      "avx2",     "fma",       "avx512f",
    "avx512bw", "avx512dq", "avx512vl", "avx512bf16"};

/// What the object's symbols start with.
static std::string symbolPrefixOf(StringRef prefix) {
  return (prefix + "_").str();
}

/// The C runtime binds each parameter by its key and shape (a whole stored
/// tensor): a parameter that is a slice of its stored tensor (an
/// #nnx.external with `slices`) is refused, naming it.
static llvm::Error refuseSlicedParameters(const ParameterBindings &params) {
  for (auto [spec, key, slices] :
       llvm::zip_equal(params.getSpecs(), params.getKeys(), params.getSlices()))
    if (!slices.empty())
      return makeError(
          "parameter '" + spec.name + "' (" + spec.typeString +
          ") is a slice of the stored tensor '" + key +
          "' (#nnx.external with slices), which ahead-of-time objects do not "
          "bind (they bind whole tensors by key): run nnx-internalize-weights "
          "or nnx-externalize-weights on the model first");
  return llvm::Error::success();
}

/// The parameters' stored bytes as a safetensors image, one tensor per key.
static llvm::Expected<std::string>
makeWeightsImage(const ParameterBindings &params) {
  std::vector<SafeTensorsEntry> entries;
  llvm::StringSet<> keys;
  for (auto [spec, key, data] : llvm::zip_equal(
           params.getSpecs(), params.getKeys(), params.getStored())) {
    if (!keys.insert(key).second)
      continue;
    SafeTensorsEntry &entry = entries.emplace_back();
    entry.name = key;
    entry.dtype = getSafeTensorsDTypeName(spec.dtype).str();
    entry.shape.assign(spec.shape.begin(), spec.shape.end());
    entry.data = data.bytes;
  }
  std::string image;
  llvm::raw_string_ostream os(image);
  if (llvm::Error err = writeSafeTensors(os, entries))
    return std::move(err);
  os.flush();
  return image;
}

llvm::Expected<CompiledObject>
mlir::nnx::compileAheadOfTime(ModuleOp module, const CompileOptions &options,
                              StringRef prefix, bool embedWeights) {
  if (options.target != Target::CPU)
    return makeError("ahead-of-time compilation has the cpu target only, "
                     "not '" +
                     stringifyTarget(options.target) + "'");
  CompiledObject result;
  result.prefix = prefix.str();
  TargetConfig config;
  if (llvm::Error err = getTargetConfig(Target::CPU, config))
    return std::move(err);
  llvm::Expected<std::unique_ptr<CompiledModel>> lowered =
      CompiledModel::lower(module, options, config, embedWeights);
  if (!lowered)
    return lowered.takeError();
  const CompiledModel &model = **lowered;
  if (llvm::Error err = refuseSlicedParameters(*model.parameters))
    return std::move(err);
  std::string image;
  if (embedWeights && !model.parameters->getSpecs().empty()) {
    llvm::Expected<std::string> made = makeWeightsImage(*model.parameters);
    if (!made)
      return made.takeError();
    image = std::move(*made);
    result.embeddedWeights = symbolPrefixOf(prefix) + "weights";
    result.embeddedWeightsSize = image.size();
  }

  std::vector<std::string> exported;
  for (const std::string &name : model.getEntryPoints())
    exported.push_back("_mlir_" + name);
  std::string symbolPrefix = symbolPrefixOf(prefix);
  SmallVector<StringRef> checked(std::begin(kCheckedCPUFeatures),
                                 std::end(kCheckedCPUFeatures));
  llvm::Expected<std::string> object =
      compileObjectAheadOfTime(module, options.optLevel, exported, symbolPrefix,
                               image, checked, result.cpuFeatures);
  if (!object)
    return makeError("ahead-of-time compilation failed: " +
                     llvm::toString(object.takeError()));
  result.object = std::move(*object);
  static_cast<ForwardTables &>(result) = model.describeForRuntime();
  // The packed functions, in getEntryPoints()'s order.
  auto symbol = [&](StringRef function) {
    return (symbolPrefix + "_mlir_" + kCInterfacePrefix + function).str();
  };
  result.forward = symbol("forward");
  if (model.hasResultShapesFunction)
    result.resultShapes = symbol(kResultShapesFuncName);
  if (!model.measuredWriteProbes.empty())
    result.writeShapes = symbol(kWriteShapesFuncName);
  if (!model.shapeChecks.empty())
    result.shapeChecksFunction = symbol(kShapeChecksFuncName);
  result.init = symbolPrefix + "__nnx_jit_init";
  result.fini = symbolPrefix + "__nnx_jit_fini";
  return result;
}

//===----------------------------------------------------------------------===//
// The header
//===----------------------------------------------------------------------===//

/// The C type of an element of `dtype` (bool and the 16-bit floats as their
/// bits).
static StringRef getCType(DType dtype) {
  switch (dtype) {
  case DType::F16:
  case DType::BF16:
    return "uint16_t";
  case DType::F32:
    return "float";
  case DType::F64:
    return "double";
  case DType::I32:
    return "int32_t";
  case DType::I64:
    return "int64_t";
  case DType::Bool:
    return "uint8_t";
  }
  llvm_unreachable("unknown dtype");
}

static StringRef getDTypeEnum(DType dtype) {
  // Indexed by the runtime's nnx_aot_dtype.
  static constexpr llvm::StringLiteral kNames[] = {
      "NNX_AOT_F16", "NNX_AOT_BF16", "NNX_AOT_F32", "NNX_AOT_F64",
      "NNX_AOT_I32", "NNX_AOT_I64",  "NNX_AOT_BOOL"};
  return kNames[getRuntimeDType(dtype)];
}

/// `text` as a C string literal.
static std::string quote(StringRef text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (c < 0x20 || c >= 0x7f) {
      out += llvm::formatv("\\{0:o3}", static_cast<unsigned>(c)).str();
      continue;
    }
    out += static_cast<char>(c);
  }
  return out + "\"";
}

/// `name` as a C identifier: other characters become '_'.
static std::string identifier(StringRef name) {
  std::string out;
  for (char c : name)
    out += llvm::isAlnum(c) ? c : '_';
  if (out.empty() || llvm::isDigit(out[0]))
    out = "_" + out;
  return out;
}

/// "{-1, 4}" or NULL for rank 0, as an array `name` defined before.
static std::string emitShapeArray(llvm::raw_ostream &os, StringRef name,
                                  ArrayRef<int64_t> shape) {
  if (shape.empty())
    return "NULL";
  os << "static const int64_t " << name << "[] = {";
  llvm::interleaveComma(
      shape, os, [&](int64_t d) { os << (ShapedType::isDynamic(d) ? -1 : d); });
  os << "};\n";
  return name.str();
}

/// The table of `specs` named `name` (NULL when empty).
static std::string emitTensorTable(llvm::raw_ostream &os, StringRef prefix,
                                   StringRef kind, ArrayRef<TensorSpec> specs) {
  if (specs.empty())
    return "NULL";
  std::vector<std::string> shapes;
  for (auto [i, spec] : llvm::enumerate(specs))
    shapes.push_back(emitShapeArray(
        os, (prefix + "_" + kind + "_shape_" + Twine(i)).str(), spec.shape));
  std::string name = (prefix + "_" + kind + "s").str();
  os << "static const nnx_aot_tensor " << name << "[] = {\n";
  for (auto [spec, shape] : llvm::zip_equal(specs, shapes))
    os << "  {" << quote(spec.name) << ", " << getDTypeEnum(spec.dtype) << ", "
       << spec.shape.size() << ", " << shape << ", " << quote(spec.typeString)
       << ", " << (spec.updatedInPlace ? 1 : 0) << "},\n";
  os << "};\n";
  return name;
}

static std::string emitParameterTable(llvm::raw_ostream &os, StringRef prefix,
                                      ArrayRef<ObjectParameter> params) {
  if (params.empty())
    return "NULL";
  std::vector<std::string> rows;
  for (auto [i, p] : llvm::enumerate(params)) {
    std::string base = (prefix + "_parameter_" + Twine(i)).str();
    std::string shape = emitShapeArray(os, base + "_shape", p.spec.shape);
    std::string view = emitShapeArray(os, base + "_view", p.view);
    std::string perm = emitShapeArray(os, base + "_perm", p.perm);
    rows.push_back(("{" + quote(p.spec.name) + ", " + quote(p.key) + ", " +
                    getDTypeEnum(p.spec.dtype) + ", " +
                    Twine(p.spec.shape.size()) + ", " + shape + ", " +
                    quote(p.spec.typeString) + ", " +
                    Twine(p.perm.empty() ? 0 : p.view.size()) + ", " + view +
                    ", " + perm + "}")
                       .str());
  }
  std::string name = (prefix + "_parameters").str();
  os << "static const nnx_aot_parameter " << name << "[] = {\n";
  for (const std::string &row : rows)
    os << "  " << row << ",\n";
  os << "};\n";
  return name;
}

/// The checks' tables; their names (NULL when empty).
static std::pair<std::string, std::string>
emitCheckTables(llvm::raw_ostream &os, const CompiledObject &object) {
  std::pair<std::string, std::string> names = {"NULL", "NULL"};
  const std::string &prefix = object.prefix;
  if (!object.indexChecks.empty()) {
    names.first = prefix + "_index_checks";
    os << "static const nnx_aot_index_check " << names.first << "[] = {\n";
    for (const ObjectIndexCheck &c : object.indexChecks)
      os << "  {" << quote(c.layer) << ", " << quote(c.op) << ", " << c.bound
         << ", " << c.input << "},\n";
    os << "};\n";
  }
  if (!object.shapeChecks.empty()) {
    names.second = prefix + "_shape_checks";
    os << "static const nnx_aot_shape_check " << names.second << "[] = {\n";
    for (const ObjectShapeCheck &c : object.shapeChecks)
      os << "  {" << quote(c.format) << ", " << (c.swapped ? 1 : 0) << ", "
         << c.blamed << "},\n";
    os << "};\n";
  }
  return names;
}

namespace {
/// One array of the C signature: an argument or a result.
struct CArray {
  const TensorSpec *spec;
  std::string name;
};
} // namespace

/// The arrays of the signature: inputs and write probes, then outputs and
/// read probes.
static std::pair<std::vector<CArray>, std::vector<CArray>>
getCArrays(const CompiledObject &object) {
  std::vector<CArray> arguments, results;
  for (auto [i, spec] : llvm::enumerate(object.inputs))
    arguments.push_back({&spec, "input" + std::to_string(i)});
  for (const TensorSpec &spec : object.writeProbes)
    arguments.push_back({&spec, "write_" + identifier(spec.name)});
  for (auto [i, spec] : llvm::enumerate(object.outputs))
    results.push_back({&spec, "output" + std::to_string(i)});
  for (const TensorSpec &spec : object.readProbes)
    results.push_back({&spec, "read_" + identifier(spec.name)});
  return {arguments, results};
}

/// The generated functions (static inline: the header is their only
/// definition, and a program may include several models' headers).
static void emitFunctions(llvm::raw_ostream &os, const CompiledObject &object) {
  const std::string &p = object.prefix;
  // Named, not structured bindings: the lambdas below capture them.
  std::pair<std::vector<CArray>, std::vector<CArray>> arrays =
      getCArrays(object);
  const std::vector<CArray> &arguments = arrays.first;
  const std::vector<CArray> &results = arrays.second;
  auto dims = [](const CArray &a) {
    return a.spec->shape.empty() ? std::string()
                                 : (", int64_t " + a.name + "_dims[" +
                                    Twine(a.spec->shape.size()) + "]")
                                       .str();
  };
  // `type name[] = {a<suffix>, ...};` (NULL for an empty list, and for the
  // dimensions of a scalar).
  auto array = [&](StringRef type, StringRef name, ArrayRef<CArray> arrays,
                   StringRef suffix) {
    os << "  " << type << " " << name << "[] = {";
    if (arrays.empty())
      os << (suffix == "_capacity" ? "0" : "NULL");
    llvm::interleaveComma(arrays, os, [&](const CArray &a) {
      if (a.spec->shape.empty() && suffix == "_dims")
        os << "NULL";
      else
        os << a.name << suffix;
    });
    os << "};\n";
  };
  std::string argParams, shapeParams, forwardParams;
  for (const CArray &a : arguments) {
    std::string d = dims(a);
    if (!d.empty())
      d = ", const" + d.substr(1);
    // An argument updated in place is written (decode's KV caches).
    argParams += ",\n    " +
                 std::string(a.spec->updatedInPlace ? "" : "const ") +
                 getCType(a.spec->dtype).str() + " *" + a.name + d;
  }
  for (const CArray &r : results) {
    shapeParams += dims(r).empty() ? "" : ",\n   " + dims(r).substr(1);
    forwardParams += ",\n    " + getCType(r.spec->dtype).str() + " *" + r.name +
                     ", int64_t " + r.name + "_capacity" + dims(r);
  }
  os << "static inline int " << p << "_load(const char *weights, " << p
     << "_model **model) {\n  return nnx_aot_load(&" << p
     << "_descriptor, weights, model);\n}\n\n";
  auto prologue = [&]() {
    array("const void *const", "arguments", arguments, "");
    array("const int64_t *const", "dims", arguments, "_dims");
    array("int64_t *const", "result_dims", results, "_dims");
  };
  os << "static inline int " << p << "_result_shapes(" << p << "_model *model"
     << argParams << shapeParams << ") {\n";
  prologue();
  os << "  return nnx_aot_result_shapes(model, arguments, dims, "
        "result_dims);\n}\n\n";
  os << "static inline int " << p << "_forward(" << p << "_model *model"
     << argParams << forwardParams << ") {\n";
  prologue();
  array("void *const", "results", results, "");
  array("const int64_t", "capacities", results, "_capacity");
  os << "  return nnx_aot_run(model, arguments, dims, results, capacities, "
        "result_dims);\n}\n\n";
  os << "static inline const char *" << p << "_error(const " << p
     << "_model *model) {\n  return nnx_aot_error(model);\n}\n\n";
  os << "static inline void " << p << "_free(" << p
     << "_model *model) { nnx_aot_free(model); }\n";
}

/// The comment that describes the signature.
static void emitSignatureComment(llvm::raw_ostream &os,
                                 const CompiledObject &object,
                                 StringRef source) {
  os << "/* " << object.prefix << ": generated by nnx-compile from " << source;
  if (!object.modelName.empty())
    os << " (model @" << object.modelName << ")";
  os << ". Do not edit.\n *\n";
  auto [arguments, results] = getCArrays(object);
  for (const CArray &a : arguments)
    os << " *   argument " << a.name << ": " << a.spec->typeString
       << (a.spec->updatedInPlace ? " (updated in place)" : "") << "\n";
  for (const CArray &r : results)
    os << " *   result   " << r.name << ": " << r.spec->typeString << "\n";
  os << " *   " << object.parameters.size()
     << " parameters, bound by key from the safetensors file given to "
     << object.prefix << "_load\n";
  if (!object.embeddedWeights.empty())
    os << " *   (or, given NULL, from the weights linked into the object)\n";
  os << " *\n * " << object.prefix
     << "_result_shapes() gives each result's dimensions (-1 in a type: "
        "set\n * by the arguments' dimensions); "
     << object.prefix
     << "_forward() checks the arguments, runs\n * the forward into "
        "buffers of at least <result>_capacity elements and\n * writes "
        "each result's dimensions. Every function returns an\n * "
        "nnx_aot_status (0: NNX_AOT_OK); "
     << object.prefix << "_error() says why one failed.\n *\n";
  os << " * Link: the object, -lnnx_aot_runtime -lomp -lm "
        "(docs/Integration.md).\n */\n";
}

std::string mlir::nnx::emitObjectHeader(const CompiledObject &object,
                                        StringRef source) {
  std::string text;
  llvm::raw_string_ostream os(text);
  const std::string &p = object.prefix;
  std::string guard = "NNX_AOT_" + StringRef(identifier(p)).upper() + "_H";
  emitSignatureComment(os, object, source);
  os << "#ifndef " << guard << "\n#define " << guard << "\n\n"
     << "#include \"nnx-aot/Runtime.h\"\n\n"
     << "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
     << "/* The object's entry points: call the functions below. */\n";
  std::vector<std::string> functions = {object.forward, object.resultShapes,
                                        object.writeShapes,
                                        object.shapeChecksFunction};
  for (const std::string &fn : functions)
    if (!fn.empty())
      os << "void " << fn << "(void **);\n";
  os << "void " << object.init << "(void);\nvoid " << object.fini
     << "(void);\n";
  if (!object.embeddedWeights.empty())
    os << "extern const unsigned char " << object.embeddedWeights << "["
       << object.embeddedWeightsSize << "];\n";
  os << "\n";
  std::string inputs = emitTensorTable(os, p, "input", object.inputs);
  std::string writes =
      emitTensorTable(os, p, "write_probe", object.writeProbes);
  std::string outputs = emitTensorTable(os, p, "output", object.outputs);
  std::string reads = emitTensorTable(os, p, "read_probe", object.readProbes);
  std::string params = emitParameterTable(os, p, object.parameters);
  auto [indexChecks, shapeChecks] = emitCheckTables(os, object);
  std::string measured = "NULL";
  if (!object.measuredWriteProbes.empty()) {
    measured = p + "_measured_write_probes";
    os << "static const int32_t " << measured << "[] = {";
    llvm::interleaveComma(object.measuredWriteProbes, os);
    os << "};\n";
  }
  auto fn = [](const std::string &name) {
    return name.empty() ? std::string("NULL") : name;
  };
  os << "static const nnx_aot_descriptor " << p << "_descriptor = {\n  "
     << quote(object.modelName) << ",\n  " << object.inputs.size() << ", "
     << inputs << ",\n  " << object.parameters.size() << ", " << params
     << ",\n  " << object.writeProbes.size() << ", " << writes << ",\n  "
     << object.outputs.size() << ", " << outputs << ",\n  "
     << object.readProbes.size() << ", " << reads << ",\n  "
     << object.indexChecks.size() << ", " << indexChecks << ",\n  "
     << object.shapeChecks.size() << ", " << shapeChecks << ",\n  "
     << object.measuredWriteProbes.size() << ", " << measured << ",\n  "
     << fn(object.forward) << ", " << fn(object.resultShapes) << ", "
     << fn(object.writeShapes) << ", " << fn(object.shapeChecksFunction)
     << ",\n  " << object.init << ", " << object.fini << ",\n  "
     << (object.embeddedWeights.empty()
             ? std::string("NULL, 0")
             : object.embeddedWeights + ", " +
                   std::to_string(object.embeddedWeightsSize))
     << ",\n  " << quote(llvm::join(object.cpuFeatures, ",")) << ", NULL};\n\n";
  os << "typedef nnx_aot_model " << p << "_model;\n\n";
  emitFunctions(os, object);
  os << "\n#ifdef __cplusplus\n}\n#endif\n\n#endif /* " << guard << " */\n";
  return text;
}
