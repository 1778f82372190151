#!/usr/bin/env bash
# The ctest `integration-install` (test/Integration/CMakeLists.txt,
# docs/Integration.md): installs the nnx build into a prefix, builds the
# out-of-tree project consumer/ against that prefix (find_package(NNX)), and
# runs its my-opt and the installed tools on examples/mlp.mlir, FileCheck'ing
# what they print (checks.txt); then the C client capi-consumer/, which
# links the C API target and names nothing else (no MLIR include dirs of its
# own). Any step that fails fails the test.
#
# Last, the model goes through the installed nnx-compile into a C program
# (aot/mlp-main.c) linked against the prefix's runtime, which must compute
# nnx-run's outputs bit for bit and load no MLIR or LLVM library.
#
#   run-consumer.sh BUILD_DIR MLIR_DIR FILECHECK CMAKE CXX CC LIBOMP
#
# BUILD_DIR is nnx's build directory, already built; MLIR_DIR the MLIR it was
# configured with; CMAKE, CXX and CC the cmake and compilers it used; LIBOMP
# the OpenMP runtime the compiled code calls (NNX_LIBOMP).
# Everything is written under BUILD_DIR/integration/, anew on each run.
set -euo pipefail
trap 'echo "run-consumer.sh: error: line $LINENO: $BASH_COMMAND failed" >&2' ERR

if [[ $# -ne 7 ]]; then
  echo "usage: $0 BUILD_DIR MLIR_DIR FILECHECK CMAKE CXX CC LIBOMP" >&2
  exit 2
fi
BUILD=$(cd "$1" && pwd -P)
MLIR_DIR=$2
FILECHECK=$3
CMAKE=$4
CXX=$5
CC=$6
LIBOMP=$7
HERE=$(cd "$(dirname "$0")" && pwd -P)
SRC=$(cd "$HERE/../.." && pwd -P)
WORK=$BUILD/integration
PREFIX=$WORK/prefix
CONSUMER_BUILD=$WORK/consumer-build
CAPI_BUILD=$WORK/capi-consumer-build
MODEL=$SRC/examples/mlp.mlir
INPUT=$SRC/examples/mlp_input.npy
CHECKS=$HERE/checks.txt

step() {
  echo
  echo "== $*"
}
fail() {
  echo "run-consumer.sh: error: $*" >&2
  exit 1
}
# check PREFIX FILE: FILE matches checks.txt's PREFIX lines; FILE is printed
# when it does not.
check() {
  if ! "$FILECHECK" --check-prefix="$1" --dump-input=fail "$CHECKS" \
    --input-file="$2"; then
    fail "$1: $2 does not match the $1 lines of $CHECKS"
  fi
}

rm -rf "$WORK"
mkdir -p "$WORK"

step "cmake --install $BUILD --prefix $PREFIX"
"$CMAKE" --install "$BUILD" --prefix "$PREFIX" >"$WORK/install.log" ||
  { cat "$WORK/install.log"; fail "cmake --install failed"; }
echo "$(grep -c '^-- Installing' "$WORK/install.log") files installed"
for f in lib/cmake/nnx/NNXConfig.cmake lib/cmake/nnx/NNXTargets.cmake \
  bin/nnx-opt bin/nnx-run bin/nnx-compile include/nnx/InitNNX.h \
  include/nnx-aot/Runtime.h lib/libnnx_aot_runtime.a \
  include/nnx/Dialect/NNX/IR/NNXOps.h.inc include/nnx/Config.h; do
  [[ -e "$PREFIX/$f" ]] || fail "$PREFIX/$f was not installed"
done
# The package and the headers must not name the source or build tree: a
# prefix is used after both are gone.
if grep -rn -e "$SRC" -e "$BUILD" "$PREFIX/lib/cmake" "$PREFIX/include"; then
  fail "the installed CMake package or headers name $SRC or $BUILD"
fi

step "configure consumer/ against the prefix (find_package(NNX))"
"$CMAKE" -G Ninja -S "$HERE/consumer" -B "$CONSUMER_BUILD" \
  -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_COMPILER="$CXX" -DCMAKE_C_COMPILER="$CC" \
  -DNNX_DIR="$PREFIX/lib/cmake/nnx" -DMLIR_DIR="$MLIR_DIR" \
  >"$WORK/configure.log" ||
  { cat "$WORK/configure.log"; fail "configuring the consumer failed"; }
grep -e 'NNXConfig' -e 'MLIRConfig' "$WORK/configure.log"

step "build my-opt"
"$CMAKE" --build "$CONSUMER_BUILD" -j 2 >"$WORK/build.log" ||
  { cat "$WORK/build.log"; fail "building the consumer failed"; }
MY_OPT=$CONSUMER_BUILD/bin/my-opt
[[ -x "$MY_OPT" ]] || fail "$MY_OPT was not built"

step "configure and build capi-consumer/: a C client, find_package(NNX) only"
"$CMAKE" -G Ninja -S "$HERE/capi-consumer" -B "$CAPI_BUILD" \
  -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_COMPILER="$CXX" -DCMAKE_C_COMPILER="$CC" \
  -DNNX_DIR="$PREFIX/lib/cmake/nnx" \
  -DMY_CAPI_TEST_SOURCE="$SRC/test/CAPI/nnx-capi-test.c" \
  >"$WORK/capi-configure.log" ||
  { cat "$WORK/capi-configure.log"; fail "configuring capi-consumer failed"; }
"$CMAKE" --build "$CAPI_BUILD" >"$WORK/capi-build.log" ||
  { cat "$WORK/capi-build.log"; fail "building capi-consumer failed"; }
MY_CAPI_TEST=$CAPI_BUILD/my-capi-test
[[ -x "$MY_CAPI_TEST" ]] || fail "$MY_CAPI_TEST was not built"

step "my-opt: its own pass, nnx-widen, nnx-cpu-pipeline"
"$MY_OPT" "$MODEL" --my-linear-shapes -o /dev/null >"$WORK/shapes.txt"
check SHAPES "$WORK/shapes.txt"
"$MY_OPT" "$MODEL" --nnx-widen="layer=fc1 width=16 seed=7" \
  --my-linear-shapes >"$WORK/wide.txt"
check WIDEN "$WORK/wide.txt"
"$MY_OPT" "$MODEL" --nnx-widen="layer=fc1 width=16 seed=7" \
  -o "$WORK/wide.mlir"
"$MY_OPT" "$WORK/wide.mlir" --nnx-build-forward --nnx-cpu-pipeline \
  >"$WORK/cpu.mlir"
check CPU "$WORK/cpu.mlir"
if "$MY_OPT" "$MODEL" --nnx-widen="layer=head width=4" -o /dev/null \
  2>"$WORK/refuse.txt"; then
  fail "my-opt --nnx-widen=\"layer=head width=4\" succeeded"
fi
check REFUSE "$WORK/refuse.txt"

step "the installed nnx-opt and nnx-run on the widened model"
"$PREFIX/bin/nnx-opt" "$WORK/wide.mlir" --nnx-param-count -o /dev/null \
  >"$WORK/params.txt"
check PARAMS "$WORK/params.txt"
env -u NNX_CACHE_DIR "$PREFIX/bin/nnx-run" "$WORK/wide.mlir" \
  --input "$INPUT" --print >"$WORK/outputs.txt"
check OUTPUTS "$WORK/outputs.txt"

step "my-capi-test: the C API from the prefix (test/CAPI/nnx-capi-test.c)"
"$PREFIX/bin/nnx-opt" "$MODEL" \
  --nnx-externalize-weights=file="$WORK/mlp.safetensors" -o /dev/null
env -u NNX_CACHE_DIR "$MY_CAPI_TEST" "$MODEL" "$INPUT" \
  "$WORK/mlp.safetensors" >"$WORK/capi.txt"
check CAPI "$WORK/capi.txt"

step "nnx-compile: the widened model ahead of time, in a C program"
"$PREFIX/bin/nnx-opt" "$WORK/wide.mlir" \
  --nnx-externalize-weights=file="$WORK/wide.safetensors" -o "$WORK/wide-ext.mlir"
"$PREFIX/bin/nnx-compile" "$WORK/wide-ext.mlir" -o "$WORK/mlp.o" \
  --header "$WORK/mlp.h"
"$CC" -std=c11 -Wall -Wextra -Werror -I"$PREFIX/include" -I"$WORK" \
  -I"$HERE/aot" "$HERE/aot/mlp-main.c" "$WORK/mlp.o" -L"$PREFIX/lib" \
  -lnnx_aot_runtime "$LIBOMP" -Wl,-rpath,"$(dirname "$LIBOMP")" -lm \
  -o "$WORK/mlp-main"
ldd "$WORK/mlp-main" >"$WORK/ldd.txt"
check LDD "$WORK/ldd.txt"
"$WORK/mlp-main" "$WORK/wide.safetensors" "$INPUT" "$WORK/aot.npy" \
  >"$WORK/aot.txt"
check AOT "$WORK/aot.txt"
env -u NNX_CACHE_DIR "$PREFIX/bin/nnx-run" "$WORK/wide-ext.mlir" \
  --input "$INPUT" --output "$WORK/jit.npy"
# The data of a [5, 3] float32 .npy is its last 60 bytes.
cmp <(tail -c 60 "$WORK/aot.npy") <(tail -c 60 "$WORK/jit.npy") ||
  fail "mlp-main's outputs are not nnx-run's, bit for bit"
echo "mlp-main computes nnx-run's outputs, bit for bit"

echo
echo "run-consumer.sh: all checks passed"
