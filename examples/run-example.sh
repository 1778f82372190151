#!/usr/bin/env bash
# The main job of `make run`: compile the bundled example model
# (examples/mlp.mlir) for the CPU with nnx-run, run it on
# examples/mlp_input.npy and print the outputs.
#
#   examples/run-example.sh BUILD_DIR
#
# To add a step (e.g. a surgery pass applied first), transform the model with
# nnx-opt into "$WORK/<name>.mlir", call `run_model <title> <model> <name>`,
# then `compare_outputs original <name>`.
set -euo pipefail

BUILD_DIR=${1:-build}
HERE=$(cd "$(dirname "$0")" && pwd)
NNX_RUN="$BUILD_DIR/bin/nnx-run"
NNX_OPT="$BUILD_DIR/bin/nnx-opt"
PYTHON=/usr/bin/python3
MODEL="$HERE/mlp.mlir"
INPUT="$HERE/mlp_input.npy"

for tool in "$NNX_RUN" "$NNX_OPT"; do
  if [[ ! -x "$tool" ]]; then
    echo "run-example.sh: $tool not found; build first (make build)" >&2
    exit 1
  fi
done

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# run_model TITLE MODEL NAME: runs MODEL on the input, prints the outputs and
# keeps them as $WORK/NAME.npy.
run_model() {
  echo
  echo "== $1"
  "$NNX_RUN" "$2" --target=cpu --input "$INPUT" --output "$WORK/$3.npy" --print
}

# compare_outputs NAME_A NAME_B: max |a - b| of two runs; fails above 1e-5.
compare_outputs() {
  "$PYTHON" - "$WORK/$1.npy" "$WORK/$2.npy" "$1" "$2" <<'PY'
import sys
import numpy as np
a, b = np.load(sys.argv[1]), np.load(sys.argv[2])
diff = float(np.max(np.abs(a - b))) if a.shape == b.shape else float("inf")
ok = a.shape == b.shape and np.allclose(a, b, atol=1e-5, rtol=1e-5)
print(f"{sys.argv[4]} vs {sys.argv[3]}: max |diff| = {diff:.3g} "
      f"({'unchanged' if ok else 'CHANGED'})")
sys.exit(0 if ok else 1)
PY
}

echo "== the example model: $MODEL"
"$NNX_OPT" --nnx-param-count "$MODEL" -o /dev/null 2>&1 || true
echo
echo "== input: $INPUT"
"$PYTHON" -c "import numpy as np, sys; np.set_printoptions(precision=4); x = np.load(sys.argv[1]); print(x.dtype, x.shape); print(x)" "$INPUT"

run_model "forward on CPU (nnx-run --target=cpu)" "$MODEL" original

# Surgery: widen fc1 (8 -> 16 units, Net2WiderNet), then deepen after act1
# (identity Linear + ReLU, Net2DeeperNet). Both are function-preserving: the
# edited model's outputs match the original's (eval mode) within 1e-5.
echo
echo "== surgery: nnx-widen{layer=fc1 width=16} then nnx-deepen{after=act1}"
"$NNX_OPT" "$MODEL" \
  --pass-pipeline='builtin.module(nnx.model(nnx-widen{layer=fc1 width=16 seed=0},nnx-deepen{after=act1}))' \
  -o "$WORK/surgery.mlir"
"$NNX_OPT" --nnx-param-count "$WORK/surgery.mlir" -o /dev/null
run_model "forward of the widened + deepened model on CPU" "$WORK/surgery.mlir" surgery
compare_outputs original surgery
