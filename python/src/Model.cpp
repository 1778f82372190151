//===- Model.cpp - nnx._nnx.Model: a parsed file of nnx IR ------*- C++ -*-===//
//
// Parse a model file or string, look modules up by dotted path, read its
// tensors, count parameters, run pass pipelines. Errors become Python
// exceptions that carry the MLIR diagnostics.
//
//===----------------------------------------------------------------------===//
#include "Bindings.h"

#include "nnx/Dialect/NNX/IR/ModuleTree.h"
#include "nnx/Dialect/NNX/IR/NNXDialect.h"
#include "nnx/Dialect/NNX/IR/Weights.h"
#include "nnx/Dialect/NNX/Tracing/Family.h"
#include "nnx/Dialect/NNX/Tracing/Resolver.h"
#include "nnx/InitNNX.h"
#include "nnx/Support/DiagnosticText.h"
#include "nnx/Support/Environment.h"
#include "nnx/Support/ErrorKind.h"
#include "nnx/Support/InputGuard.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <mutex>

namespace py = pybind11;
using namespace mlir;
namespace nx = mlir::nnx;
using namespace ::nnx::python;

namespace {

std::string printOp(Operation *op) {
  std::string s;
  llvm::raw_string_ostream os(s);
  op->print(os);
  return s;
}

/// Adds `text` to `pm`: either an anchored pipeline ("builtin.module(...)",
/// parsed as is) or a comma-separated list of passes / named pipelines with
/// `{options}`, each added like an nnx-opt command-line flag (implicit
/// nesting on an op-anchored pass).
LogicalResult addPipeline(StringRef text, OpPassManager &pm,
                          llvm::raw_ostream &es) {
  text = text.trim();
  if (text.starts_with("builtin.module(") && text.ends_with(")"))
    return parsePassPipeline(
        text.drop_front(strlen("builtin.module(")).drop_back(), pm, es);
  SmallVector<StringRef> elements;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    char c = i < text.size() ? text[i] : ',';
    if (c == '{' || c == '(')
      ++depth;
    else if (c == '}' || c == ')')
      --depth;
    else if (c == ',' && depth == 0) {
      elements.push_back(text.slice(start, i).trim());
      start = i + 1;
    }
  }
  if (depth != 0) {
    es << "unbalanced braces";
    return failure();
  }
  auto errorHandler = [&](const Twine &msg) {
    es << msg;
    return failure();
  };
  for (StringRef e : elements) {
    if (e.empty()) {
      es << "empty pipeline element";
      return failure();
    }
    size_t brace = e.find_first_of("{(");
    if (brace != StringRef::npos && e[brace] == '(') {
      // An op-anchored nested pipeline: "nnx.model(nnx-widen{...})".
      if (failed(parsePassPipeline(e, pm, es)))
        return failure();
      continue;
    }
    StringRef name = e.take_front(brace).trim();
    StringRef options;
    if (brace != StringRef::npos) {
      if (!e.ends_with("}")) {
        es << "expected '}' at the end of '" << e << "'";
        return failure();
      }
      options = e.drop_front(brace + 1).drop_back();
    }
    if (const PassInfo *info = PassInfo::lookup(name)) {
      if (failed(info->addToPipeline(pm, options, errorHandler)))
        return failure();
    } else if (const PassPipelineInfo *info = PassPipelineInfo::lookup(name)) {
      if (failed(info->addToPipeline(pm, options, errorHandler)))
        return failure();
    } else {
      es << "no pass or pipeline named '" << name << "'";
      return failure();
    }
  }
  return success();
}

} // namespace

DiagnosticCollector::DiagnosticCollector(MLIRContext &ctx)
    : handler(&ctx, [this](Diagnostic &diag) {
        nx::appendDiagnosticText(text, diag);
        if (diag.getSeverity() == DiagnosticSeverity::Error)
          kinds.push_back(
              nx::stringifyErrorKind(
                  nx::getErrorKind(diag).value_or(nx::ErrorKind::Refusal))
                  .str());
        return success();
      }) {}

//===----------------------------------------------------------------------===//
// Model
//===----------------------------------------------------------------------===//

static DialectRegistry &getRegistry() {
  static DialectRegistry r;
  static std::once_flag once;
  std::call_once(once, [] { ::nnx::registerNNXDialects(r); });
  return r;
}

Model::Model() : ctx(std::make_shared<MLIRContext>(getRegistry())) {
  ctx->disableMultithreading();
  ctx->printOpOnDiagnostic(false);
  ctx->loadAllAvailableDialects();
}

std::unique_ptr<Model> Model::parse(const std::string &text,
                                    const std::string &name) {
  auto m = std::unique_ptr<Model>(new Model());
  std::string errors;
  {
    DiagnosticCollector diags(*m->ctx);
    auto buf = llvm::MemoryBuffer::getMemBufferCopy(text, name);
    llvm::SourceMgr sm;
    sm.AddNewSourceBuffer(std::move(buf), llvm::SMLoc());
    llvm::raw_string_ostream refusal(errors);
    bool crashed = false;
    m->module = mlir::nnx::parseGuarded(sm, m->ctx.get(), refusal, &crashed);
    errors = diags.take() + errors;
    if (crashed) {
      // The context may hold what the crashed parse built half-way: it is
      // leaked (one reference never dropped), never destroyed, and the
      // interpreter lives on.
      (void)m->module.release();
      new std::shared_ptr<MLIRContext>(m->ctx);
      throw NNXError("cannot parse " + name + ":\n" + errors, errors);
    }
  }
  if (!m->module)
    throw NNXError("cannot parse " + name + ":\n" + errors, errors);
  if (m->modelOps().empty())
    throw NNXError(name + " holds no 'nnx.model'");
  return m;
}

std::unique_ptr<Model> Model::parseFile(const std::string &path) {
  auto buf = llvm::MemoryBuffer::getFileOrSTDIN(path);
  if (!buf)
    throw py::value_error("cannot read '" + path +
                          "': " + buf.getError().message());
  return parse((*buf)->getBuffer().str(), path);
}

std::vector<std::string> Model::modelNames() {
  std::vector<std::string> names;
  for (nx::ModelOp m : modelOps())
    names.push_back(m.getSymName().str());
  return names;
}

nx::ModelOp Model::getModel(const std::string &name) {
  for (nx::ModelOp m : modelOps())
    if (name.empty() || m.getSymName() == name)
      return m;
  throw py::key_error("no 'nnx.model @" + name + "' in this file");
}

SmallVector<nx::ModelOp> Model::modelOps() {
  SmallVector<nx::ModelOp> ops;
  for (nx::ModelOp m : module->getOps<nx::ModelOp>())
    ops.push_back(m);
  return ops;
}

nx::ModuleOpInterface Model::lookupModule(const std::string &path,
                                          const std::string &model) {
  nx::ModelOp m = getModel(model);
  std::string why;
  FailureOr<nx::ModuleOpInterface> found = nx::lookupModule(m, path, &why);
  if (failed(found))
    throw py::key_error(why.empty() ? "no module at '" + path + "'" : why);
  return *found;
}

static int64_t checkedParamCount(nx::ModuleOpInterface mod,
                                 const std::string &path) {
  std::optional<int64_t> n = nx::getParameterCount(mod);
  if (!n)
    throw std::overflow_error("the parameter count of '" + path +
                              "' overflows 64 bits");
  return *n;
}

int64_t Model::paramCount(const std::string &path, const std::string &model) {
  return checkedParamCount(lookupModule(path, model), path);
}

/// `attr` as a Python value: bools, integers, floats, strings, arrays and
/// dictionaries of them; None for what has no plain value (tensors, types,
/// symbol references), which the caller leaves out.
static py::object toPython(Attribute attr) {
  if (isa<UnitAttr>(attr))
    return py::bool_(true);
  if (auto b = dyn_cast<BoolAttr>(attr))
    return py::bool_(b.getValue());
  if (auto i = dyn_cast<IntegerAttr>(attr))
    return py::int_(i.getValue().getSExtValue());
  if (auto f = dyn_cast<FloatAttr>(attr))
    return py::float_(f.getValueAsDouble());
  if (auto s = dyn_cast<StringAttr>(attr))
    return py::str(s.getValue().str());
  if (auto a = dyn_cast<DenseI64ArrayAttr>(attr))
    return py::cast(std::vector<int64_t>(a.asArrayRef()));
  if (auto a = dyn_cast<DenseF64ArrayAttr>(attr))
    return py::cast(std::vector<double>(a.asArrayRef()));
  if (auto a = dyn_cast<DenseBoolArrayAttr>(attr))
    return py::cast(std::vector<bool>(a.asArrayRef()));
  if (auto a = dyn_cast<ArrayAttr>(attr)) {
    py::list l;
    for (Attribute e : a) {
      py::object v = toPython(e);
      if (v.is_none())
        return py::none();
      l.append(v);
    }
    return std::move(l);
  }
  if (isa<nx::NNXDialect>(attr.getDialect())) {
    // An nnx enum (`#nnx.activation<relu>`) as its keyword.
    std::string s;
    llvm::raw_string_ostream os(s);
    attr.print(os);
    StringRef text(s);
    size_t open = text.find('<');
    if (open != StringRef::npos && text.ends_with(">")) {
      StringRef value = text.slice(open + 1, text.size() - 1);
      if (!value.empty() && llvm::all_of(value, [](char c) {
            return llvm::isAlnum(c) || c == '_';
          }))
        return py::str(value.str());
    }
    return py::none();
  }
  if (auto d = dyn_cast<DictionaryAttr>(attr)) {
    py::dict out;
    for (NamedAttribute na : d) {
      py::object v = toPython(na.getValue());
      if (!v.is_none())
        out[py::str(na.getName().str())] = v;
    }
    return std::move(out);
  }
  return py::none();
}

/// The registered children of `mod`, in order.
static py::list childKeys(nx::ModuleOpInterface mod) {
  py::list children;
  if (mod->hasTrait<OpTrait::SymbolTable>())
    for (Operation &child : mod->getRegion(0).front())
      if (nx::isRegisteredChild(&child))
        children.append(SymbolTable::getSymbolName(&child).getValue().str());
  return children;
}

py::dict Model::lookup(const std::string &path, const std::string &model) {
  nx::ModelOp m = getModel(model);
  nx::ModuleOpInterface root = m.getRootModule();
  unsigned failedSeg = 0;
  Operation *reg =
      root ? nx::lookupRegistered(root, path, &failedSeg) : nullptr;
  if (!reg) {
    SmallVector<StringRef> segs = nx::splitPath(path);
    std::string seg =
        failedSeg < segs.size() ? segs[failedSeg].str() : std::string();
    throw py::key_error("no module at '" + path + "': segment '" + seg +
                        "' names nothing");
  }
  nx::ModuleOpInterface mod = nx::resolveAlias(reg);
  if (!mod)
    throw py::key_error("'" + path + "' is an alias whose target is missing");
  py::dict d;
  d["path"] = path;
  d["kind"] = mod->getName().getStringRef().str();
  d["key"] = mod.getModuleKey().str();
  d["target"] = nx::getModulePath(mod);
  d["alias"] = isa<nx::AliasOp>(reg);
  d["train"] = mod.getTrain();
  d["params"] = checkedParamCount(mod, path);
  d["children"] = childKeys(mod);
  py::list tensors;
  for (StringRef t : mod.getParameterNames())
    if (mod.getTensor(t))
      tensors.append(t.str());
  for (StringRef t : mod.getBufferNames())
    if (mod.getTensor(t))
      tensors.append(t.str());
  d["tensors"] = tensors;
  // The op's own attributes with a plain value (a descriptor's dims, a
  // layer's options); tensors and the symbol name are not among them.
  py::dict attrs;
  for (NamedAttribute na : mod->getAttrs()) {
    if (na.getName() == SymbolTable::getSymbolAttrName())
      continue;
    py::object v = toPython(na.getValue());
    if (!v.is_none())
      attrs[py::str(na.getName().str())] = v;
  }
  d["attributes"] = attrs;
  return d;
}

/// The numpy dtype nnx stores elements of `type` as, and the element type's
/// name; bf16 is stored as its 16 bits.
static std::pair<py::dtype, std::string> storedDType(Type type) {
  std::string s;
  llvm::raw_string_ostream os(s);
  type.print(os);
  if (type.isBF16())
    return {py::dtype("<u2"), s};
  if (type.isF16())
    return {py::dtype("<f2"), s};
  if (type.isF32())
    return {py::dtype("<f4"), s};
  if (type.isF64())
    return {py::dtype("<f8"), s};
  if (type.isInteger(1))
    return {py::dtype("|b1"), s};
  if (auto i = dyn_cast<IntegerType>(type)) {
    if (i.getWidth() == 8 || i.getWidth() == 16 || i.getWidth() == 32 ||
        i.getWidth() == 64)
      return {py::dtype((i.isUnsigned() ? "<u" : "<i") +
                        std::to_string(i.getWidth() / 8)),
              s};
  }
  throw NNXError("tensors of element type " + s + " have no numpy form");
}

py::dict Model::stateDict(const std::string &model) {
  nx::ModelOp m = getModel(model);
  SmallVector<nx::ModelTensor> tensors = nx::getModelTensors(m);
  std::string weightsPath = nx::getEnclosingWeightsPath(m.getRootModule());
  py::dict out;
  DiagnosticCollector diags(*ctx);
  for (const nx::ModelTensor &t : tensors) {
    // By value: a container's `state` entry is not an attribute of its own.
    FailureOr<nx::TensorData> data = nx::getTensorData(
        t.value, weightsPath, t.module->getLoc(), t.describe());
    if (failed(data)) {
      std::string text = diags.take();
      throw NNXError("cannot read " + t.describe() + ":\n" + text, text);
    }
    auto type = cast<ShapedType>(t.value.getType());
    auto [dtype, name] = storedDType(type.getElementType());
    py::array array(dtype, std::vector<int64_t>(type.getShape()));
    if (static_cast<size_t>(array.nbytes()) != data->bytes.size())
      throw NNXError(t.describe() + " holds " +
                     std::to_string(data->bytes.size()) + " bytes, not " +
                     std::to_string(array.nbytes()));
    if (!data->bytes.empty())
      std::memcpy(array.mutable_data(), data->bytes.data(), data->bytes.size());
    out[py::str(t.getDottedName())] = py::make_tuple(array, name);
  }
  return out;
}

py::dict Model::requiresGrad(const std::string &model) {
  py::dict out;
  for (const nx::ModelTensor &t : nx::getModelTensors(getModel(model))) {
    auto mod = dyn_cast<nx::ModuleOpInterface>(t.module);
    out[py::str(t.getDottedName())] =
        !mod || t.inState || mod.requiresGrad(t.name.getValue());
  }
  return out;
}

static std::string printType(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  t.print(os);
  return s;
}

/// An elements attribute's values as a numpy array (of its element type's
/// storage dtype), or None when it has none.
static py::object elementsToNumpy(DenseElementsAttr dense) {
  auto type = dense.getType();
  Type et = type.getElementType();
  std::vector<int64_t> shape(type.getShape());
  if (et.isIndex())
    et = IntegerType::get(et.getContext(), 64);
  py::dtype dtype = py::dtype("<f4");
  try {
    dtype = storedDType(et).first;
  } catch (const NNXError &) {
    return py::none();
  }
  py::array array(dtype, shape);
  auto *out = static_cast<char *>(array.mutable_data());
  size_t size = dtype.itemsize();
  int64_t i = 0;
  auto put = [&](const APInt &bits) {
    uint64_t word =
        bits.getBitWidth() == 1 ? bits.getZExtValue() : bits.getZExtValue();
    std::memcpy(out + i * size, &word, size);
    ++i;
  };
  if (isa<FloatType>(et)) {
    for (APFloat v : dense.getValues<APFloat>())
      put(v.bitcastToAPInt());
  } else {
    for (APInt v : dense.getValues<APInt>())
      put(v.getBitWidth() < 8 * size ? v.sext(8 * size) : v);
  }
  return std::move(array);
}

/// `attr` for a forward op: toPython's value, an elements attribute as a
/// numpy array, a type as its text; else the printed attribute.
static py::object opAttrToPython(Attribute attr) {
  if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
    py::object array = elementsToNumpy(dense);
    if (!array.is_none())
      return array;
  }
  if (auto t = dyn_cast<TypeAttr>(attr))
    return py::str(printType(t.getValue()));
  py::object v = toPython(attr);
  if (!v.is_none())
    return v;
  std::string s;
  llvm::raw_string_ostream os(s);
  attr.print(os);
  return py::str(s);
}

/// A symbol reference as a dotted path (`@a::@"0"` -> "a.0").
static std::string dottedPath(SymbolRefAttr ref) {
  std::string path = ref.getRootReference().str();
  for (FlatSymbolRefAttr nested : ref.getNestedReferences())
    path += "." + nested.getValue().str();
  return path;
}

py::object Model::forward(const std::string &path, const std::string &model) {
  auto custom =
      dyn_cast<nx::CustomModuleOp>(lookupModule(path, model).getOperation());
  nx::ForwardOp fwd = custom ? custom.getForward() : nx::ForwardOp();
  if (!fwd)
    return py::none();
  llvm::DenseMap<Value, int64_t> ids;
  Block &body = fwd.getBody().front();
  py::list args, ops;
  for (BlockArgument a : body.getArguments()) {
    ids[a] = ids.size();
    args.append(printType(a.getType()));
  }
  for (Operation &op : body) {
    py::dict d;
    d["name"] = op.getName().getStringRef().str();
    py::list operands, results, types;
    for (Value v : op.getOperands())
      operands.append(ids.lookup(v));
    for (Value r : op.getResults()) {
      ids[r] = ids.size();
      results.append(ids[r]);
      types.append(printType(r.getType()));
    }
    d["operands"] = operands;
    d["results"] = results;
    d["types"] = types;
    py::dict attrs;
    for (NamedAttribute na : op.getAttrs())
      attrs[py::str(na.getName().str())] = opAttrToPython(na.getValue());
    d["attributes"] = attrs;
    if (auto call = dyn_cast<nx::CallOp>(op))
      d["callee"] = dottedPath(call.getCallee());
    ops.append(d);
  }
  py::dict out;
  out["arguments"] = args;
  py::list results;
  for (Type t : fwd.getResultTypes())
    results.append(printType(t));
  out["results"] = results;
  out["ops"] = ops;
  if (Attribute names = fwd->getAttr("nnx.output_names"))
    out["output_names"] = toPython(names);
  if (Attribute names = fwd->getAttr("nnx.input_names"))
    out["input_names"] = toPython(names);
  if (auto entry = fwd->getAttrOfType<StringAttr>("nnx.entry"))
    out["entry"] = entry.getValue().str();
  return std::move(out);
}

py::list Model::tracingSupport(const std::string &family,
                               const std::string &familiesDir,
                               const std::string &model) {
  namespace tr = nx::tracing;
  std::string error;
  std::optional<tr::Family> fam = tr::loadFamily(
      family, tr::getFamiliesDir(nx::driverFamiliesDir(familiesDir)), error);
  if (!fam)
    throw NNXError("nnx-support: " + error);
  tr::Resolver resolver(*fam, getModel(model));
  std::vector<std::string> names = resolver.listNames(error);
  if (names.empty() && !error.empty())
    throw NNXError("nnx-support: family '" + fam->name + "': " + error);
  py::list out;
  for (const std::string &n : names) {
    tr::Resolution r = resolver.resolve(n, /*forWrite=*/false);
    switch (r.kind) {
    case tr::Resolution::Available:
      out.append(py::make_tuple(n, "available", r.location.describe()));
      break;
    case tr::Resolution::Unavailable:
      out.append(py::make_tuple(n, "unavailable", r.message));
      break;
    case tr::Resolution::Error:
      out.append(py::make_tuple(n, "error", r.message));
      break;
    }
  }
  return out;
}

py::object Model::getAttribute(const std::string &name,
                               const std::string &model) {
  Attribute attr = getModel(model)->getAttr(name);
  if (!attr)
    return py::none();
  std::string s;
  llvm::raw_string_ostream os(s);
  attr.print(os);
  return py::str(s);
}

void Model::setAttribute(const std::string &name, const std::string &text,
                         const std::string &model) {
  nx::ModelOp m = getModel(model);
  DiagnosticCollector diags(*ctx);
  Attribute attr = parseAttribute(text, ctx.get());
  if (!attr) {
    std::string errors = diags.take();
    throw NNXError("cannot parse the attribute '" + name + "':\n" + errors,
                   errors);
  }
  Attribute old = m->getAttr(name);
  m->setAttr(name, attr);
  if (failed(mlir::verify(m))) {
    if (old)
      m->setAttr(name, old);
    else
      m->removeAttr(name);
    std::string errors = diags.take();
    throw NNXError("the attribute '" + name + "' is refused:\n" + errors,
                   errors);
  }
}

std::string Model::runPipeline(const std::string &pipeline) {
  std::string errors;
  std::vector<std::string> kinds;
  OwningOpRef<ModuleOp> clone = module->clone();
  bool ok;
  {
    DiagnosticCollector diags(*ctx);
    // Implicit nesting, as on nnx-opt's command line: a pass anchored on
    // nnx.model (e.g. nnx-widen) runs on every model of the file.
    PassManager pm(ctx.get(), ModuleOp::getOperationName(),
                   OpPassManager::Nesting::Implicit);
    std::string parseErrors;
    llvm::raw_string_ostream es(parseErrors);
    if (failed(addPipeline(pipeline, pm, es)))
      throw py::value_error("invalid pass pipeline '" + pipeline +
                            "': " + parseErrors);
    ok = succeeded(pm.run(*clone));
    errors = diags.take();
    kinds = diags.takeKinds();
  }
  if (!ok)
    throw NNXError("pipeline '" + pipeline + "' failed:\n" + errors, errors,
                   kinds);
  module = std::move(clone);
  return printOp(*module);
}

std::string Model::str() { return printOp(*module); }

std::string Model::verify() {
  DiagnosticCollector diags(*ctx);
  bool ok = succeeded(mlir::verify(*module));
  std::string errors = diags.take();
  if (!ok)
    throw NNXError("verification failed:\n" + errors, errors,
                   diags.takeKinds());
  return errors;
}

void ::nnx::python::bindModel(py::module_ &m) {
  py::class_<Model>(m, "Model",
                    "A parsed file of nnx IR (one or more nnx.model ops).")
      .def_static("parse", &Model::parse, py::arg("text"),
                  py::arg("name") = "<string>",
                  "Parses nnx IR text; raises nnx._nnx.Error with the "
                  "diagnostics if it is malformed.")
      .def_static("parse_file", &Model::parseFile, py::arg("path"),
                  "Parses an nnx IR file (text or bytecode).")
      .def_property_readonly("models", &Model::modelNames,
                             "Names of the nnx.model ops in the file.")
      .def("param_count", &Model::paramCount, py::arg("path") = "",
           py::arg("model") = "",
           "Parameter elements of the module at dotted `path` ('' = root) "
           "and everything below it; a module reached through an alias is "
           "counted once.")
      .def("lookup", &Model::lookup, py::arg("path"), py::arg("model") = "",
           "The module at dotted `path` as a dict: kind (op name), path, key, "
           "target (path after alias resolution), alias, train, params, "
           "children, tensors, attributes (the op's attributes with a plain "
           "Python value). Raises KeyError naming the failing segment.")
      .def("state_dict", &Model::stateDict, py::arg("model") = "",
           "Every tensor of the model by dotted name (its state_dict key), as "
           "(numpy array, element type): bf16 tensors are uint16 arrays of "
           "their bits.")
      .def("requires_grad", &Model::requiresGrad, py::arg("model") = "",
           "Dotted tensor name -> requires_grad, for every tensor.")
      .def("forward", &Model::forward, py::arg("path"), py::arg("model") = "",
           "The forward region of the custom module at `path` as a dict "
           "(arguments, results: types; ops: name, operands, results, types, "
           "attributes, callee; output_names, input_names where the forward "
           "has them), or None.")
      .def("tracing_support", &Model::tracingSupport, py::arg("family"),
           py::arg("families_dir") = "", py::arg("model") = "",
           "nnx-support as data: (name, status, where or why) for every "
           "standardized name of `family`.")
      .def("get_attribute", &Model::getAttribute, py::arg("name"),
           py::arg("model") = "",
           "The model's attribute `name` as printed, or None.")
      .def("set_attribute", &Model::setAttribute, py::arg("name"),
           py::arg("text"), py::arg("model") = "",
           "Sets the model's attribute `name` from its text; raises "
           "nnx._nnx.Error (nothing changed) when it does not parse or "
           "verify.")
      .def("run_pipeline", &Model::runPipeline, py::arg("pipeline"),
           "Runs a pass pipeline ('nnx-param-count' or "
           "'builtin.module(...)'); on success the result replaces the model "
           "and its printed IR is returned, on failure nnx._nnx.Error carries "
           "the diagnostics and the model is unchanged.")
      .def(
          "record_base",
          [](Model &m) {
            return m.runPipeline("builtin.module(nnx.model(nnx-record-base))");
          },
          "Records every model's structure as its base descriptor "
          "(nnx-record-base).")
      .def(
          "validate_recipe",
          [](Model &m) {
            m.runPipeline("builtin.module(nnx.model(nnx-validate-recipe))");
          },
          "Checks every model's recipe (nnx-validate-recipe); mutates "
          "nothing. Raises nnx._nnx.Error listing every problem.")
      .def(
          "materialize_recipe",
          [](Model &m, uint64_t seed) {
            return m.runPipeline("builtin.module(nnx-materialize-recipe{seed=" +
                                 std::to_string(seed) + "})");
          },
          py::arg("seed") = 0,
          "Validates and applies every model's pending recipe operations "
          "(nnx-materialize-recipe), all or nothing; returns the IR.")
      .def(
          "rebuild",
          [](Model &m) {
            return m.runPipeline("builtin.module(nnx.model(nnx-rebuild))");
          },
          "Rebuilds every model from base descriptor + recorded recipe and "
          "loads its tensors (nnx-rebuild); returns the IR.")
      .def("verify", &Model::verify, "Runs the verifiers; raises on failure.")
      .def("__str__", &Model::str);

  m.def("parse", &Model::parse, py::arg("text"), py::arg("name") = "<string>",
        "Same as Model.parse.");
  m.def("parse_file", &Model::parseFile, py::arg("path"),
        "Same as Model.parse_file.");
}
