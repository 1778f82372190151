#!/usr/bin/env bash
# Installs every Debian package that nnx's build, tests and benchmarks need.
# Idempotent: packages already present are left alone; `apt-get update` runs once
# per invocation, and only when something is missing.
#
#   scripts/setup.sh               what `make build` and `make test` need
#   scripts/setup.sh --sanitizers  that, and clang-22's sanitizer and
#                                  libFuzzer runtimes, for `make
#                                  test-sanitizers` and `make fuzz`
set -euo pipefail

PACKAGES=(
  # toolchain (the Makefile builds with clang-22 where present; g++ works too)
  cmake ninja-build g++ make clang-22
  # LLVM / MLIR 22 (libMLIR.so, mlir-tblgen, lit, FileCheck, not)
  llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools
  # OpenMP runtime for the CPU code's threads (nnx-run --threads)
  libomp-22-dev
  # `make format-check` (.clang-format)
  clang-format-22
  # C++ libraries
  libeigen3-dev libgtest-dev libgmock-dev libbenchmark-dev pybind11-dev
  # Python reference, tests and bindings (Debian's /usr/bin/python3)
  python3-dev python3-numpy python3-torch python3-pytest python3-hypothesis
  # the torchvision model zoo (python/tests/test_zoo.py, make test-zoo)
  python3-torchvision
  # fast BLAS for the PyTorch peer in bench/ and the reference tests
  libopenblas0-pthread
  # MPI for tensor parallelism (nnx-run --tensor-parallel, mpirun in lit)
  openmpi-bin libopenmpi-dev
)

case "${1:-}" in
  "") ;;
  --sanitizers)
    # ASan, UBSan and libFuzzer runtimes for the sanitizer build dir.
    PACKAGES+=(libclang-rt-22-dev) ;;
  *)
    echo "usage: $0 [--sanitizers]" >&2
    exit 2 ;;
esac

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#PACKAGES[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
echo "setup: installing ${missing[*]}"
$SUDO apt-get update -q
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
