# -*- Python -*-
import os
import shutil

import lit.formats
from lit.llvm import llvm_config

config.name = "NNX"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test", ".py"]
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.nnx_obj_root, "test")

config.environment["FILECHECK_OPTS"] = "-enable-var-scope --allow-unused-prefixes=false"
llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.nnx_tools_dir, append_path=True)
# The Python tests import nnx.testing (the tolerances, test/README.md) from
# the source tree; the references' summation order (NNX_TEST_REORDER) and
# the JIT's instruction-set cap (NNX_JIT_MAX_ISA) reach every test.
llvm_config.with_environment(
    "PYTHONPATH", os.path.join(config.nnx_src_root, "python"), append_path=True)
llvm_config.with_system_environment(["NNX_TEST_REORDER", "NNX_JIT_MAX_ISA"])
# nnx-run's compile cache (docs/Running.md): a model compiled again for the
# same CPU loads its machine code instead of running LLVM again.
config.environment["NNX_CACHE_DIR"] = os.path.join(config.test_exec_root,
                                                   "jit-cache")

tools = ["nnx-opt", "nnx-run", "nnx-capi-test", "nnx-compile", "mlir-opt",
         "mlir-runner"]
llvm_config.add_tool_substitutions(
    [t for t in tools if shutil.which(t, path=config.environment["PATH"])],
    [config.nnx_tools_dir, config.llvm_tools_dir])

# Debian's python3 sees python3-torch / python3-numpy; the PATH one may not.
config.substitutions.append(("%python", config.python_executable))
config.substitutions.append(("%nnx_src", config.nnx_src_root))
config.substitutions.append(("%nnx_bin", config.nnx_obj_root))
# `%exit1 CMD`: CMD must exit with exactly 1 (an error), not with another
# non-zero code (which `not` accepts) and not by a signal.
config.substitutions.append(("%exit1", "%s %s 1" % (
    config.python_executable,
    os.path.join(config.nnx_src_root, "utils", "nnx-exit-code.py"))))
# Runtime libraries for `mlir-runner` execution tests (printMemrefF32, ...;
# libomp for the CPU pipeline's parallel loops).
config.substitutions.append(("%mlir_runner_libs", ",".join(
    [os.path.normpath(os.path.join(config.llvm_tools_dir, "..", "lib", lib + ".so"))
     for lib in ["libmlir_runner_utils", "libmlir_c_runner_utils"]]
    + [config.libomp])))

# Feature flags for tests that need optional tools or hardware.
# ptxas of the CUDA toolkit CMake was given (NNX_CUDA_TOOLKIT_DIR), also
# handed to utils/nnx-cuda-check.py.
# A C program that links an object of nnx-compile (test/nnx-compile):
# `%nnx_cc %aot_cflags prog.c model.o %aot_libs -o prog`: the runtime's
# headers and the test programs' (test/Integration/aot), then the runtime
# library, libomp and libm.
config.substitutions.append(("%nnx_cc", config.c_compiler))
config.substitutions.append(("%aot_cflags", " ".join([
    "-std=c11", "-Wall", "-Wextra", "-Werror",
    "-I" + os.path.join(config.nnx_src_root, "include"),
    "-I" + os.path.join(config.nnx_src_root, "test", "Integration", "aot")])))
config.substitutions.append(("%aot_libs", " ".join([
    "-L" + config.nnx_lib_dir, "-lnnx_aot_runtime", config.libomp,
    "-Wl,-rpath," + os.path.dirname(config.libomp), "-lm"])))
ptxas = os.path.join(config.cuda_toolkit_dir, "bin", "ptxas")
if os.access(ptxas, os.X_OK):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))
    config.substitutions.append(("%cuda_toolkit", config.cuda_toolkit_dir))
    config.environment["NNX_PTXAS"] = ptxas
# The ASan + UBSan build (make test-sanitizers): ASan's allocator aborts on
# the sizes the out-of-memory tests ask for, and its shadow memory needs the
# address space their `ulimit -v` takes away.
if getattr(config, "nnx_sanitizers", "").upper() in ("ON", "TRUE", "1", "YES"):
    config.available_features.add("sanitizers")
# mknod (a private device node for the output-file tests) needs root.
if hasattr(os, "geteuid") and os.geteuid() == 0:
    config.available_features.add("root")
# The host's AVX512_BF16 (vdpbf16ps), unless the JIT is capped below
# AVX-512 (lit-avx2): the bf16 tiles' machine-code checks.
try:
    with open("/proc/cpuinfo") as cpuinfo:
        flags = set(cpuinfo.read().split())
    capped = os.environ.get("NNX_JIT_MAX_ISA", "").lower() not in ("", "avx512")
    if {"avx512f", "avx512_bf16"} <= flags and not capped:
        config.available_features.add("avx512bf16")
    # A host that runs AVX2 + FMA code (a module's stated 256-bit target).
    if {"avx2", "fma"} <= flags:
        config.available_features.add("avx2")
except OSError:
    pass
# MPI (nnx-run --tensor-parallel): nnx-run built with it and mpirun found.
# Oversubscribed (more ranks than cores), as root in a container, the
# shared-memory and self transports only, no launcher daemons on other hosts.
mpirun = shutil.which("mpirun")
if getattr(config, "nnx_have_mpi", "").upper() in ("ON", "TRUE", "1", "YES") \
        and mpirun:
    config.available_features.add("mpi")
    config.substitutions.append(("%mpirun", " ".join([
        mpirun, "--oversubscribe", "--allow-run-as-root",
        "--mca", "btl", "self,vader", "--mca", "plm", "isolated", "-np"])))
# The nnx._nnx bindings (not built without pybind11, nor by the sanitizer
# build): the tests of nnx.compile.
import glob
if glob.glob(os.path.join(config.nnx_obj_root, "python", "nnx", "_nnx*.so")):
    config.available_features.add("python-bindings")
if shutil.which("nvidia-smi") and os.path.exists("/dev/nvidia0"):
    config.available_features.add("cuda-device")
try:
    import importlib.util
    if os.path.exists(config.python_executable):
        import subprocess
        if subprocess.call([config.python_executable, "-c", "import torch"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) == 0:
            config.available_features.add("torch")
except Exception:
    pass
