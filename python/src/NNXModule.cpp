//===- NNXModule.cpp - pybind11 bindings over the nnx C++ API ---*- C++ -*-===//
//
// `nnx._nnx`: parse a model file or string, look modules up by dotted path,
// count parameters, run pass pipelines. Errors become Python exceptions that
// carry the MLIR diagnostics; nothing throws through MLIR frames (exceptions
// are raised only after MLIR calls return).
//
//===----------------------------------------------------------------------===//
#include "nnx/Dialect/NNX/IR/ModuleTree.h"
#include "nnx/Dialect/NNX/IR/NNXOps.h"
#include "nnx/InitNNX.h"
#include "nnx/Support/InputGuard.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <mutex>

namespace py = pybind11;
using namespace mlir;
namespace nx = mlir::nnx;

namespace {

/// Collects the diagnostics emitted while it is alive, as printed text.
class DiagnosticCollector {
public:
  explicit DiagnosticCollector(MLIRContext &ctx)
      : handler(&ctx, [this](Diagnostic &diag) {
          llvm::raw_string_ostream os(text);
          os << where(diag.getLocation()) << ": "
             << severity(diag.getSeverity()) << ": " << diag << "\n";
          for (Diagnostic &note : diag.getNotes())
            os << where(note.getLocation()) << ": note: " << note << "\n";
          return success();
        }) {}
  std::string take() { return std::move(text); }

private:
  /// `file:line:col` like the command-line tools print it.
  static std::string where(Location loc) {
    std::string s;
    llvm::raw_string_ostream os(s);
    if (auto flc = dyn_cast<FileLineColLoc>(loc))
      os << flc.getFilename().getValue() << ":" << flc.getLine() << ":"
         << flc.getColumn();
    else
      os << loc;
    return s;
  }
  static const char *severity(DiagnosticSeverity s) {
    switch (s) {
    case DiagnosticSeverity::Error:
      return "error";
    case DiagnosticSeverity::Warning:
      return "warning";
    case DiagnosticSeverity::Note:
      return "note";
    case DiagnosticSeverity::Remark:
      return "remark";
    }
    return "error";
  }
  std::string text;
  ScopedDiagnosticHandler handler;
};

/// Raised for a malformed model or a failed pipeline; the message holds the
/// diagnostics.
struct NNXError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

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

/// A parsed file of nnx IR: its own context and top-level module.
class Model {
public:
  static std::unique_ptr<Model> parse(const std::string &text,
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
        // The context may hold what the crashed parse built half-way: it
        // is leaked, never destroyed, and the interpreter lives on.
        (void)m->ctx.release();
        throw NNXError("cannot parse " + name + ":\n" + errors);
      }
    }
    if (!m->module)
      throw NNXError("cannot parse " + name + ":\n" + errors);
    if (m->modelOps().empty())
      throw NNXError(name + " holds no 'nnx.model'");
    return m;
  }

  static std::unique_ptr<Model> parseFile(const std::string &path) {
    auto buf = llvm::MemoryBuffer::getFileOrSTDIN(path);
    if (!buf)
      throw py::value_error("cannot read '" + path +
                            "': " + buf.getError().message());
    return parse((*buf)->getBuffer().str(), path);
  }

  std::vector<std::string> modelNames() {
    std::vector<std::string> names;
    for (nx::ModelOp m : modelOps())
      names.push_back(m.getSymName().str());
    return names;
  }

  /// The model called `name`, or the only / first one if `name` is empty.
  nx::ModelOp getModel(const std::string &name) {
    for (nx::ModelOp m : modelOps())
      if (name.empty() || m.getSymName() == name)
        return m;
    throw py::key_error("no 'nnx.model @" + name + "' in this file");
  }

  nx::ModuleOpInterface lookupModule(const std::string &path,
                                     const std::string &model) {
    nx::ModelOp m = getModel(model);
    std::string why;
    FailureOr<nx::ModuleOpInterface> found = nx::lookupModule(m, path, &why);
    if (failed(found))
      throw py::key_error(why.empty() ? "no module at '" + path + "'" : why);
    return *found;
  }

  int64_t paramCount(const std::string &path, const std::string &model) {
    return checkedParamCount(lookupModule(path, model), path);
  }

  static int64_t checkedParamCount(nx::ModuleOpInterface mod,
                                   const std::string &path) {
    std::optional<int64_t> n = nx::getParameterCount(mod);
    if (!n)
      throw std::overflow_error("the parameter count of '" + path +
                                "' overflows 64 bits");
    return *n;
  }

  py::dict lookup(const std::string &path, const std::string &model) {
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
    py::list children;
    if (mod->hasTrait<OpTrait::SymbolTable>())
      for (Operation &child : mod->getRegion(0).front())
        if (nx::isRegisteredChild(&child))
          children.append(SymbolTable::getSymbolName(&child).getValue().str());
    d["children"] = children;
    py::list tensors;
    for (StringRef t : mod.getParameterNames())
      if (mod.getTensor(t))
        tensors.append(t.str());
    for (StringRef t : mod.getBufferNames())
      if (mod.getTensor(t))
        tensors.append(t.str());
    d["tensors"] = tensors;
    return d;
  }

  /// Runs `pipeline` on a clone; on success the clone becomes the model and
  /// its printed IR is returned, on failure the model is left unchanged.
  std::string runPipeline(const std::string &pipeline) {
    std::string errors;
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
    }
    if (!ok)
      throw NNXError("pipeline '" + pipeline + "' failed:\n" + errors);
    module = std::move(clone);
    return printOp(*module);
  }

  std::string str() { return printOp(*module); }

  std::string verify() {
    DiagnosticCollector diags(*ctx);
    bool ok = succeeded(mlir::verify(*module));
    std::string errors = diags.take();
    if (!ok)
      throw NNXError("verification failed:\n" + errors);
    return errors;
  }

private:
  Model() : ctx(std::make_unique<MLIRContext>(registry())) {
    ctx->disableMultithreading();
    ctx->printOpOnDiagnostic(false);
    ctx->loadAllAvailableDialects();
  }

  static DialectRegistry &registry() {
    static DialectRegistry r;
    static std::once_flag once;
    std::call_once(once, [] { ::nnx::registerNNXDialects(r); });
    return r;
  }

  SmallVector<nx::ModelOp> modelOps() {
    SmallVector<nx::ModelOp> ops;
    for (nx::ModelOp m : module->getOps<nx::ModelOp>())
      ops.push_back(m);
    return ops;
  }

  // Declared in this order so the module is destroyed before its context.
  std::unique_ptr<MLIRContext> ctx;
  OwningOpRef<ModuleOp> module;
};

} // namespace

PYBIND11_MODULE(_nnx, m) {
  m.doc() = "Bindings over the nnx C++ API: parsing, dotted-path lookup, "
            "parameter counts, pass pipelines.";
  ::nnx::registerNNXPasses();

  static py::exception<NNXError> error(m, "Error", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p)
        std::rethrow_exception(p);
    } catch (const NNXError &e) {
      error(e.what());
    }
  });

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
           "children, tensors. Raises KeyError naming the failing segment.")
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
