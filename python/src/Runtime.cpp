//===- Runtime.cpp - nnx._nnx.CompiledModel: compile once, run many -------===//
//
// The in-process runtime: a model compiled once (CompiledModel::compile,
// with its probes) and run many times on numpy arrays, without a
// subprocess. Inputs are copied once into the call's arguments (the
// compiled code may write them); outputs are handed to numpy without a
// copy (the array owns the buffer the forward wrote). The GIL is released
// while the forward runs; calls of one compiled model are serialized.
//
// Tensor parallelism (compile(..., tensor_parallel=True)): the process is
// one rank of an MPI job. MPI is initialized here unless someone else
// (mpi4py) did, and then finalized at interpreter exit; libmpi is promoted
// to the global symbol scope the JIT resolves the compiled code's
// MPI_Allreduce / ompi_* symbols from (Python loads _nnx RTLD_LOCAL).
//
//===----------------------------------------------------------------------===//
#include "Bindings.h"

#include "nnx/Execution/CompiledModel.h"

#include "llvm/Support/Error.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <chrono>
#include <mutex>
#include <new>

#include <unistd.h>

#ifdef NNX_HAVE_MPI
// The C API only (OpenMPI's and MPICH's mpi.h pull in the C++ bindings,
// whose symbols the module does not link).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <dlfcn.h>
#include <mpi.h>
#endif

namespace py = pybind11;
using namespace mlir;
namespace nx = mlir::nnx;
using namespace ::nnx::python;

namespace {

/// What `compile` takes besides the model (its Python keywords).
struct CompileArgs {
  std::string target = "cpu";
  std::string modelName;
  unsigned threads = 0;
  unsigned optLevel = 3;
  std::vector<std::string> reads, writes;
  std::string family, familiesDir;
  std::string weights, cacheDir, objectFile;
  bool tensorParallel = false;
  std::string generate;
  int64_t maxLength = 1024;
};

#ifdef NNX_HAVE_MPI
/// Whether this module called MPI_Init_thread (and so finalizes MPI).
bool mpiInitializedHere = false;

/// MPI_Finalize at interpreter exit (atexit), if this module initialized
/// MPI and nobody finalized it yet.
void finalizeMPI() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (mpiInitializedHere && !finalized)
    MPI_Finalize();
  mpiInitializedHere = false;
}

/// Makes libmpi's symbols visible to dlsym(RTLD_DEFAULT), which the JIT
/// resolves the compiled code's MPI symbols with: Python loaded _nnx, and
/// with it libmpi, RTLD_LOCAL. (OpenMPI 4's MPI_Init happens to promote it
/// too, dlopening its components RTLD_GLOBAL; other builds need not.)
void promoteLibMPI() {
  Dl_info info;
  if (!dladdr(reinterpret_cast<void *>(&MPI_Init), &info) || !info.dli_fname)
    throw NNXError("tensor_parallel: cannot find libmpi (dladdr on MPI_Init)");
  if (!dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL))
    throw NNXError(std::string("tensor_parallel: cannot make ") +
                   info.dli_fname + "'s symbols global: " + dlerror());
}
#endif

/// This process's rank and the number of ranks of MPI_COMM_WORLD, MPI
/// initialized first if nobody did.
nx::CompileOptions::TensorParallel initTensorParallel() {
#ifdef NNX_HAVE_MPI
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (finalized)
    throw py::value_error("tensor_parallel=True: MPI was finalized already");
  if (!initialized) {
    // Forwards may be called from any Python thread, one at a time.
    int provided = 0;
    if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided) !=
        MPI_SUCCESS)
      throw NNXError("tensor_parallel=True: MPI_Init_thread failed");
    mpiInitializedHere = true;
    py::module_::import("atexit").attr("register")(
        py::cpp_function(&finalizeMPI));
  }
  promoteLibMPI();
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2)
    throw py::value_error(
        "tensor_parallel=True needs at least 2 ranks: run the script under "
        "mpirun -np N (N >= 2), e.g. mpirun -np 2 python3 script.py");
  return {size, rank};
#else
  throw std::runtime_error(
      "tensor_parallel=True: this nnx was built without MPI (install "
      "libopenmpi-dev, scripts/setup.sh does, and reconfigure)");
#endif
}

/// The numpy dtype of `dtype`.
py::dtype toNumpy(nx::DType dtype) {
  return py::dtype(nx::getDTypeDescr(dtype).str());
}

/// "(1099511627776, 4) float32", for errors.
std::string describeArray(const py::array &array) {
  return std::string(py::str(py::tuple(array.attr("shape")))) + " " +
         std::string(py::str(array.dtype()));
}

/// Raises Python's MemoryError with `message`.
[[noreturn]] void throwMemoryError(const std::string &message) {
  PyErr_SetString(PyExc_MemoryError, message.c_str());
  throw py::error_already_set();
}

/// `object` as a numpy array, as it is (strided, broadcast); `what` names it
/// in errors. Something numpy cannot convert raises numpy's own error.
py::array asArray(const py::handle &object, const std::string &what) {
  if (py::isinstance<py::array>(object))
    return py::reinterpret_borrow<py::array>(object);
  py::object converted;
  try {
    converted = py::module_::import("numpy").attr("asarray")(object);
  } catch (py::error_already_set &e) {
    throw py::type_error(what + " is not an array (got " +
                         std::string(py::str(py::type::of(object))) +
                         ", which numpy.asarray refuses: " + e.what() + ")");
  }
  if (!py::isinstance<py::array>(converted))
    throw py::type_error(what + " is not an array (got " +
                         std::string(py::str(py::type::of(object))) + ")");
  return py::reinterpret_steal<py::array>(converted.release());
}

/// `object` as an NpyArray: a dense copy, whatever its strides (a
/// broadcast view, stride 0, is copied out whole); `what` names it in
/// errors. One that could not exist in this machine's memory is refused.
nx::NpyArray fromNumpy(const py::handle &object, const std::string &what) {
  py::array array = asArray(object, what);
  std::string descr = py::str(array.dtype().attr("str"));
  std::optional<nx::DType> dtype;
  for (nx::DType d :
       {nx::DType::F16, nx::DType::BF16, nx::DType::F32, nx::DType::F64,
        nx::DType::I32, nx::DType::I64, nx::DType::Bool})
    if (nx::getDTypeDescr(d) == descr)
      dtype = d;
  if (!dtype)
    throw py::type_error(
        what + " has dtype " + std::string(py::str(array.dtype())) +
        "; nnx passes f16, bf16 (as uint16 bits), f32, f64, i32, i64 or bool");
  llvm::SmallVector<int64_t, 4> shape(array.shape(),
                                      array.shape() + array.ndim());
  std::optional<uint64_t> bytes = nx::getArrayByteSize(*dtype, shape);
  uint64_t memory = static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) *
                    static_cast<uint64_t>(sysconf(_SC_PAGE_SIZE));
  bool broadcast = false;
  for (py::ssize_t i = 0; i < array.ndim(); ++i)
    broadcast |= array.strides(i) == 0 && array.shape(i) > 1;
  std::string view = broadcast ? " (a broadcast view, with zero strides: "
                                 "nnx copies it into dense memory)"
                               : "";
  if (!bytes)
    throwMemoryError(what + " of shape " + describeArray(array) +
                     " has more bytes than 64 bits count");
  if (*bytes > memory)
    throwMemoryError(what + " of shape " + describeArray(array) + " is " +
                     std::to_string(*bytes) + " bytes" + view +
                     ", more than this machine's " + std::to_string(memory) +
                     " bytes of memory");
  nx::NpyArray out;
  out.dtype = *dtype;
  out.shape = shape;
  try {
    out.data.resize(*bytes);
  } catch (const std::bad_alloc &) {
    throwMemoryError(what + " of shape " + describeArray(array) + " is " +
                     std::to_string(*bytes) + " bytes" + view +
                     ", which the system cannot give");
  }
  if (!*bytes)
    return out;
  if (array.flags() & py::array::c_style) {
    std::memcpy(out.data.data(), array.data(), *bytes);
    return out;
  }
  // Strided: numpy copies it into a view of the buffer (the capsule keeps
  // nothing alive; the view dies before `out` moves).
  py::array dense(array.dtype(),
                  std::vector<py::ssize_t>(shape.begin(), shape.end()),
                  out.data.data(), py::capsule(out.data.data(), [](void *) {}));
  py::module_::import("numpy").attr("copyto")(dense, array);
  return out;
}

/// The name of the capsule that owns an NpyArray a numpy array views.
constexpr const char *kOwnedArrayCapsule = "nnx.NpyArray";

/// `array` as a numpy array that owns its storage (no copy).
py::array toNumpy(nx::NpyArray &&array) {
  auto *owned = new nx::NpyArray(std::move(array));
  py::capsule free(owned, kOwnedArrayCapsule, [](PyObject *capsule) {
    delete static_cast<nx::NpyArray *>(
        PyCapsule_GetPointer(capsule, kOwnedArrayCapsule));
  });
  return py::array(
      toNumpy(owned->dtype),
      std::vector<int64_t>(owned->shape.begin(), owned->shape.end()),
      owned->data.data(), free);
}

/// The NpyArray that `object` views whole, if nnx returned it (toNumpy:
/// an output kept by the caller, such as a KV cache from prefill).
nx::NpyArray *ownedArray(const py::handle &object) {
  if (!py::isinstance<py::array>(object))
    return nullptr;
  auto array = py::reinterpret_borrow<py::array>(object);
  py::object base = array.base();
  if (!base || !PyCapsule_IsValid(base.ptr(), kOwnedArrayCapsule))
    return nullptr;
  auto *owned = static_cast<nx::NpyArray *>(
      PyCapsule_GetPointer(base.ptr(), kOwnedArrayCapsule));
  bool whole =
      array.data() == owned->data.data() &&
      (array.flags() & py::array::c_style) && array.writeable() &&
      llvm::equal(llvm::ArrayRef(array.shape(), array.ndim()), owned->shape);
  return whole ? owned : nullptr;
}

py::list describe(llvm::ArrayRef<nx::TensorSpec> specs) {
  py::list out;
  for (const nx::TensorSpec &s : specs) {
    py::list shape;
    for (int64_t d : s.shape)
      shape.append(ShapedType::isDynamic(d) ? py::object(py::none())
                                            : py::object(py::int_(d)));
    py::dict d;
    d["name"] = s.name;
    d["dtype"] = toNumpy(s.dtype);
    d["element"] = nx::getDTypeName(s.dtype).str();
    d["shape"] = py::tuple(shape);
    d["type"] = s.typeString;
    out.append(d);
  }
  return out;
}

/// A model compiled for a target, with the context and the lowered module
/// it came from.
class Compiled {
public:
  static std::unique_ptr<Compiled> create(Model &model,
                                          const CompileArgs &args);

  /// Runs the forward; (outputs, read probes), each a list of arrays.
  py::tuple run(const py::sequence &inputs, const py::sequence &patches,
                unsigned repeat);
  void bindWeights(const std::string &path);
  /// A call this rank cannot make (`message` says why): under tensor
  /// parallelism the other ranks' calls learn it instead of waiting.
  void failCall(const std::string &message);

  nx::CompiledModel &get() { return *compiled; }
  double getCompileSeconds() const { return compileSeconds; }
  /// Inputs updated in place that a call copied in and back (arrays nnx
  /// did not return); those nnx returned are bound without a copy.
  uint64_t getInPlaceCopies() const { return inPlaceCopies; }
  /// The ranks the model is split over (1: not split) and this one's.
  int64_t getRanks() const { return std::max<int64_t>(1, parallel.ranks); }
  int64_t getRank() const { return parallel.rank; }

private:
  std::shared_ptr<MLIRContext> ctx;
  OwningOpRef<ModuleOp> module;
  std::unique_ptr<nx::CompiledModel> compiled;
  double compileSeconds = 0;
  nx::CompileOptions::TensorParallel parallel;
  std::mutex mutex;
  uint64_t inPlaceCopies = 0;
};

nx::CompileOptions toCompileOptions(const CompileArgs &args) {
  nx::CompileOptions options;
  std::optional<nx::Target> target = nx::parseTarget(args.target);
  if (!target)
    throw py::value_error("unknown target '" + args.target +
                          "' (expected 'cpu' or 'cuda')");
  if (args.optLevel > 3)
    throw py::value_error("opt_level must be 0-3, got " +
                          std::to_string(args.optLevel));
  options.target = *target;
  options.modelName = args.modelName;
  options.threads = args.threads;
  options.optLevel = args.optLevel;
  options.probes.family = args.family;
  options.probes.familiesDir = args.familiesDir;
  options.probes.reads.assign(args.reads.begin(), args.reads.end());
  options.probes.writes.assign(args.writes.begin(), args.writes.end());
  options.weightsFile = args.weights;
  options.cacheDir = args.cacheDir;
  options.objectFile = args.objectFile;
  options.generate = args.generate;
  options.maxLength = args.maxLength;
  if (args.tensorParallel && options.target != nx::Target::CPU)
    throw py::value_error("tensor_parallel=True is for target='cpu'");
  if (args.tensorParallel)
    options.tensorParallel = initTensorParallel();
  return options;
}

std::unique_ptr<Compiled> Compiled::create(Model &model,
                                           const CompileArgs &args) {
  nx::CompileOptions options = toCompileOptions(args);
  if (!args.family.empty() && args.reads.empty() && args.writes.empty())
    throw py::value_error("family= needs at least one probe or patch");
  auto c = std::make_unique<Compiled>();
  c->parallel = options.tensorParallel;
  c->ctx = model.getContext();
  // compile() lowers in place: the model stays as it was.
  c->module = model.getModule().clone();
  auto start = std::chrono::steady_clock::now();
  std::string diagnostics;
  llvm::Expected<std::unique_ptr<nx::CompiledModel>> compiled = [&] {
    DiagnosticCollector diags(*c->ctx);
    py::gil_scoped_release release;
    auto result = nx::CompiledModel::compile(*c->module, options);
    diagnostics = diags.take();
    return result;
  }();
  if (!compiled) {
    // compile() puts its errors, with where, in the message; what reached
    // the context's handler besides (warnings, an error from outside the
    // compile steps) follows it.
    std::string message = llvm::toString(compiled.takeError());
    if (c->parallel.ranks)
      message = "[rank " + std::to_string(c->parallel.rank) + "] " + message;
    if (diagnostics.empty())
      throw NNXError(message, message);
    throw NNXError(message + ":\n" + diagnostics, diagnostics);
  }
  c->compiled = std::move(*compiled);
  c->compileSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  return c;
}

py::tuple Compiled::run(const py::sequence &inputs, const py::sequence &patches,
                        unsigned repeat) {
  std::vector<nx::NpyArray> in, writes;
  llvm::ArrayRef<nx::TensorSpec> specs = compiled->getInputs();
  // Inputs updated in place: an array nnx returned is moved into the call
  // and back (its storage, which numpy views, stays where it is); another
  // is copied in and its new values copied back.
  std::vector<std::pair<size_t, nx::NpyArray *>> bound;
  std::vector<size_t> copiedBack;
  // No reallocation: NpyArray's move may throw, so a growing vector would
  // copy the arrays moved in (numpy would view the freed storage).
  in.reserve(inputs.size());
  try {
    for (size_t i = 0; i < inputs.size(); ++i) {
      bool inPlace = i < specs.size() && specs[i].updatedInPlace;
      nx::NpyArray *owned = inPlace ? ownedArray(inputs[i]) : nullptr;
      if (owned) {
        bound.push_back({i, owned});
        in.push_back(std::move(*owned));
        continue;
      }
      if (inPlace)
        copiedBack.push_back(i);
      in.push_back(fromNumpy(inputs[i], "input " + std::to_string(i)));
    }
    llvm::ArrayRef<nx::TensorSpec> writeSpecs = compiled->getWriteProbes();
    for (size_t i = 0; i < patches.size(); ++i)
      writes.push_back(
          fromNumpy(patches[i], i < writeSpecs.size()
                                    ? "patch '" + writeSpecs[i].name + "'"
                                    : "patch " + std::to_string(i)));
  } catch (std::exception &e) {
    for (auto [i, owned] : bound)
      *owned = std::move(in[i]);
    failCall(e.what());
    throw;
  }
  nx::RunOptions options;
  options.repeat = std::max(1u, repeat);
  llvm::Expected<nx::RunResult> result = [&] {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(mutex);
    return compiled->run(in, writes, options);
  }();
  for (auto [i, owned] : bound)
    *owned = std::move(in[i]);
  if (!result)
    throw NNXError(llvm::toString(result.takeError()));
  for (size_t i : copiedBack) {
    py::module_::import("numpy").attr("copyto")(inputs[i],
                                                toNumpy(std::move(in[i])));
    ++inPlaceCopies;
  }
  py::list outputs, probes, seconds;
  for (nx::NpyArray &a : result->outputs)
    outputs.append(toNumpy(std::move(a)));
  for (nx::NpyArray &a : result->readProbes)
    probes.append(toNumpy(std::move(a)));
  for (double s : result->seconds)
    seconds.append(s);
  return py::make_tuple(outputs, probes, seconds);
}

void Compiled::failCall(const std::string &message) {
  // Tensor parallelism: the other ranks' calls learn that this one failed,
  // instead of waiting for it.
  py::gil_scoped_release release;
  std::lock_guard<std::mutex> lock(mutex);
  llvm::consumeError(compiled->failCall(
      llvm::createStringError(llvm::inconvertibleErrorCode(), message)));
}

void Compiled::bindWeights(const std::string &path) {
  llvm::Error err = [&] {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(mutex);
    return compiled->bindWeights(path);
  }();
  if (err)
    throw NNXError(llvm::toString(std::move(err)));
}

} // namespace

void ::nnx::python::bindRuntime(py::module_ &m) {
  py::class_<Compiled>(m, "CompiledModel",
                       "A model compiled once for a target and run many "
                       "times in this process (nnx.compile wraps it).")
      .def("run", &Compiled::run, py::arg("inputs"),
           py::arg("patches") = py::list(), py::arg("repeat") = 1,
           "Runs the forward on numpy arrays (one per input, one per write "
           "probe, in the order of `write_probes`); returns (outputs, read "
           "probe values, seconds of each call). Raises nnx._nnx.Error "
           "naming a wrong array or a failed run-time check.")
      .def("fail_call", &Compiled::failCall, py::arg("message"),
           "Under tensor parallelism: this rank cannot make a call (its "
           "arguments failed before run); the other ranks' run raises "
           "instead of waiting. Does nothing for a model compiled whole.")
      .def("bind_weights", &Compiled::bindWeights, py::arg("path"),
           "Runs the forward with the tensors of the safetensors file at "
           "`path` from now on (keys, dtypes and shapes checked first).")
      .def_property_readonly(
          "inputs", [](Compiled &c) { return describe(c.get().getInputs()); })
      .def_property_readonly(
          "outputs", [](Compiled &c) { return describe(c.get().getOutputs()); })
      .def_property_readonly(
          "read_probes",
          [](Compiled &c) { return describe(c.get().getReadProbes()); })
      .def_property_readonly(
          "write_probes",
          [](Compiled &c) { return describe(c.get().getWriteProbes()); })
      .def_property_readonly(
          "parameters",
          [](Compiled &c) { return describe(c.get().getParameters()); })
      .def_property_readonly("parameter_keys",
                             [](Compiled &c) {
                               return std::vector<std::string>(
                                   c.get().getParameterKeys());
                             })
      .def_property_readonly("from_cache",
                             [](Compiled &c) { return c.get().isFromCache(); })
      .def_property_readonly("compile_seconds", &Compiled::getCompileSeconds)
      .def_property_readonly("in_place_copies", &Compiled::getInPlaceCopies,
                             "Inputs updated in place (decode's KV caches) "
                             "that calls copied in and back because nnx did "
                             "not return their arrays; 0 when each call "
                             "bound them by reference.")
      .def_property_readonly("ranks", &Compiled::getRanks,
                             "The MPI ranks the model is split over "
                             "(tensor_parallel=True), 1 when it is not.")
      .def_property_readonly("rank", &Compiled::getRank,
                             "This process's rank in MPI_COMM_WORLD "
                             "(tensor_parallel=True), 0 when not split.");

  m.def(
      "compile",
      [](Model &model, const std::string &target, const std::string &name,
         unsigned threads, unsigned optLevel, std::vector<std::string> reads,
         std::vector<std::string> writes, const std::string &family,
         const std::string &familiesDir, const std::string &weights,
         const std::string &cacheDir, const std::string &objectFile,
         bool tensorParallel, const std::string &generate, int64_t maxLength) {
        CompileArgs args;
        args.target = target;
        args.modelName = name;
        args.threads = threads;
        args.optLevel = optLevel;
        args.reads = std::move(reads);
        args.writes = std::move(writes);
        args.family = family;
        args.familiesDir = familiesDir;
        args.weights = weights;
        args.cacheDir = cacheDir;
        args.objectFile = objectFile;
        args.tensorParallel = tensorParallel;
        args.generate = generate;
        args.maxLength = maxLength;
        return Compiled::create(model, args);
      },
      py::arg("model"), py::kw_only(), py::arg("target") = "cpu",
      py::arg("model_name") = "", py::arg("threads") = 0,
      py::arg("opt_level") = 3, py::arg("reads") = std::vector<std::string>(),
      py::arg("writes") = std::vector<std::string>(), py::arg("family") = "",
      py::arg("families_dir") = "", py::arg("weights") = "",
      py::arg("cache_dir") = "", py::arg("object_file") = "",
      py::arg("tensor_parallel") = false, py::arg("generate") = "",
      py::arg("max_length") = 1024,
      "Compiles a parsed model for `target` with the given probes (tracing "
      "names of `family`, or probe paths); raises nnx._nnx.Error with the "
      "diagnostics on failure. tensor_parallel=True: this rank's part of "
      "the model split over MPI_COMM_WORLD (MPI initialized if nobody did, "
      "then finalized at exit; ValueError below 2 ranks). generate: "
      "'prefill' or 'decode' compiles that function of nnx-derive-kv-cache "
      "(a cache of max_length positions) instead of the forward.");
}
