//===- NNXModule.cpp - the nnx._nnx Python module ---------------*- C++ -*-===//
//
// `nnx._nnx`, pybind11 bindings over the nnx C++ API: `Model` (Model.cpp)
// parses, inspects and transforms nnx IR; `CompiledModel` (Runtime.cpp)
// compiles a model once and runs it many times in this process. Failures
// raise `nnx._nnx.Error`, whose `diagnostics` attribute holds the MLIR
// diagnostics as nnx-opt prints them.
//
//===----------------------------------------------------------------------===//
#include "Bindings.h"

#include "nnx/InitNNX.h"

#include <pybind11/stl.h>

namespace py = pybind11;
using namespace ::nnx::python;

PYBIND11_MODULE(_nnx, m) {
  m.doc() = "Bindings over the nnx C++ API: parsing, dotted-path lookup, "
            "tensors, parameter counts, pass pipelines, and models compiled "
            "once and run in this process.";
  ::nnx::registerNNXPasses();

  static py::exception<NNXError> error(m, "Error", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p)
        std::rethrow_exception(p);
    } catch (const NNXError &e) {
      // An instance, so that it can carry the diagnostics as an attribute.
      py::object instance =
          py::reinterpret_borrow<py::object>(error.ptr())(e.what());
      instance.attr("diagnostics") = py::str(e.diagnostics);
      // The kind of each error, as data ("refusal", "type_error",
      // "bad_input", "resource"): nnx/Support/ErrorKind.h.
      instance.attr("kinds") = py::cast(e.kinds);
      PyErr_SetObject(error.ptr(), instance.ptr());
    }
  });

  bindModel(m);
  bindRuntime(m);
}
