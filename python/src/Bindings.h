//===- Bindings.h - what the nnx._nnx bindings share ------------*- C++ -*-===//
//
// The pieces of `nnx._nnx` that its files share: the diagnostics collector,
// the exception that carries diagnostics to Python, and `Model` (a parsed
// file of nnx IR in its own context), which the model bindings (Model.cpp)
// and the in-process runtime (Runtime.cpp) both use.
//
// Nothing throws through MLIR frames: exceptions are raised only after MLIR
// calls return.
//
//===----------------------------------------------------------------------===//
#ifndef NNX_PYTHON_BINDINGS_H
#define NNX_PYTHON_BINDINGS_H

#include "nnx/Dialect/NNX/IR/NNXOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include <pybind11/pybind11.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace nnx::python {

/// Collects the diagnostics emitted while it is alive, printed as the
/// command-line tools print them (`file:line:col: error: message`, then
/// its notes).
class DiagnosticCollector {
public:
  explicit DiagnosticCollector(mlir::MLIRContext &ctx);
  /// The text collected so far; the collector starts over.
  std::string take() { return std::move(text); }
  /// The kind of each error collected so far (nnx/Support/ErrorKind.h:
  /// "refusal" where the diagnostic names none), in order; the collector
  /// starts over.
  std::vector<std::string> takeKinds() { return std::move(kinds); }

private:
  std::string text;
  std::vector<std::string> kinds;
  mlir::ScopedDiagnosticHandler handler;
};

/// Raised for a malformed model, a failed pipeline or a failed compile, as
/// `nnx._nnx.Error`. `what()` is the whole message (a line saying what
/// failed, then the diagnostics); `diagnostics` is the diagnostics alone,
/// the text nnx-opt prints for the same failure (the exception's
/// `diagnostics` attribute in Python).
struct NNXError : std::runtime_error {
  NNXError(const std::string &message, std::string diagnostics = "",
           std::vector<std::string> kinds = {})
      : std::runtime_error(message), diagnostics(std::move(diagnostics)),
        kinds(std::move(kinds)) {}
  std::string diagnostics;
  /// The kind of each error diagnostic (the exception's `kinds`).
  std::vector<std::string> kinds;
};

/// A parsed file of nnx IR: its own context and top-level module. The
/// context is shared with the models compiled from it (Runtime.cpp).
class Model {
public:
  static std::unique_ptr<Model> parse(const std::string &text,
                                      const std::string &name);
  static std::unique_ptr<Model> parseFile(const std::string &path);

  std::vector<std::string> modelNames();
  /// The model called `name`, or the only / first one if `name` is empty.
  mlir::nnx::ModelOp getModel(const std::string &name);
  int64_t paramCount(const std::string &path, const std::string &model);
  pybind11::dict lookup(const std::string &path, const std::string &model);
  /// Every tensor of the model by dotted name (the state_dict key): a
  /// (numpy array, element type name) pair; bf16 arrays are uint16 bits.
  pybind11::dict stateDict(const std::string &model);
  /// Dotted tensor name -> requires_grad, for every tensor of the model.
  pybind11::dict requiresGrad(const std::string &model);
  /// The forward region of the custom module at `path`: its argument and
  /// result types and its ops in order, each with numbered operands and
  /// results (the arguments are 0..n-1), its attributes as Python values
  /// and `callee` (a dotted path) for an nnx.call; None for a module
  /// without one.
  pybind11::object forward(const std::string &path, const std::string &model);
  /// The standardized names of `family` on the model (nnx-support): for
  /// each, in report order, (name, "available" | "unavailable" | "error",
  /// where it resolves or why not).
  pybind11::list tracingSupport(const std::string &family,
                                const std::string &familiesDir,
                                const std::string &model);
  /// The model's attribute `name` as printed (`nnx.base`, `nnx.recipe`), or
  /// None when it has none.
  pybind11::object getAttribute(const std::string &name,
                                const std::string &model);
  /// Sets the model's attribute `name` to the attribute `text` parses to;
  /// a malformed text, or a value the verifiers refuse, raises and
  /// changes nothing.
  void setAttribute(const std::string &name, const std::string &text,
                    const std::string &model);
  /// Runs `pipeline` on a clone; on success the clone becomes the model and
  /// its printed IR is returned, on failure the model is left unchanged.
  std::string runPipeline(const std::string &pipeline);
  std::string str();
  std::string verify();

  const std::shared_ptr<mlir::MLIRContext> &getContext() { return ctx; }
  mlir::ModuleOp getModule() { return *module; }

private:
  Model();
  mlir::nnx::ModuleOpInterface lookupModule(const std::string &path,
                                            const std::string &model);
  llvm::SmallVector<mlir::nnx::ModelOp> modelOps();

  // Declared in this order so the module is destroyed before its context.
  std::shared_ptr<mlir::MLIRContext> ctx;
  mlir::OwningOpRef<mlir::ModuleOp> module;
};

/// Registers `Model`, `parse` and `parse_file` (Model.cpp).
void bindModel(pybind11::module_ &m);
/// Registers `CompiledModel` and `compile` (Runtime.cpp).
void bindRuntime(pybind11::module_ &m);

} // namespace nnx::python

#endif // NNX_PYTHON_BINDINGS_H
