# The CPU matmul schedule at every vector width of its table (512: AVX-512
# tiles 6x64, 256: AVX2 tiles 6x16, 128: SSE/NEON tiles 4x8), with and
# without threads, executed on this host (whatever its own width: wider
# tables than the host still run, LLVM splits the vectors): a matmul whose
# dynamic M (13, 59, 46 and 14 rows) and static N (37 columns) leave
# remainders in both (the M remainders in 4-, 2- and 1-row blocks), a
# K (300) longer than one cache tile, and a batched one (3 x 13 x 40 by
# 3 x 40 x 37), compared with a float64 reference within the bound of a
# K-long float32 dot product, gamma(K) (|A| @ |B|), plus half a unit of the
# 6th significant digit printMemrefF32 prints (nnx.testing, test/README.md).
# RUN: %python %s %mlir_runner_libs | FileCheck %s
# CHECK: vector-bits=512 parallel=true: OK
# CHECK: vector-bits=512 parallel=false: OK
# CHECK: vector-bits=256 parallel=true: OK
# CHECK: vector-bits=256 parallel=false: OK
# CHECK: vector-bits=128 parallel=true: OK
# CHECK: vector-bits=128 parallel=false: OK
import re
import subprocess
import sys

import numpy as np

from nnx import testing

LIBS = sys.argv[1]
rng = np.random.default_rng(0)
# Batches whose remainders (after 48-row cache tiles and 6- or 4-row
# register tiles) take every static row block: 13 (1 row left), 59 (5: 4 +
# 1; with 4-row tiles 3: 2 + 1), 46 (4; with 4-row tiles 2), 14 (2).
AS = [rng.standard_normal((m, 300)).astype(np.float32) for m in (13, 59, 46, 14)]
B = rng.standard_normal((300, 37)).astype(np.float32)
BA = rng.standard_normal((3, 13, 40)).astype(np.float32)
BB = rng.standard_normal((3, 40, 37)).astype(np.float32)


def dense(x):
    return "dense<" + np.array2string(
        x, separator=", ", threshold=sys.maxsize, floatmode="unique",
        max_line_width=sys.maxsize).replace("\n", "") + ">"


def ty(shape):
    return "tensor<" + "x".join(map(str, shape)) + "xf32>"


MODULE = f"""
#a = affine_map<(b, m, n, k) -> (b, m, k)>
#b = affine_map<(b, m, n, k) -> (b, k, n)>
#o = affine_map<(b, m, n, k) -> (b, m, n)>
func.func @mm(%a: tensor<?x300xf32>) -> tensor<?x37xf32> {{
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %w = arith.constant {dense(B)} : {ty(B.shape)}
  %m = tensor.dim %a, %c0 : tensor<?x300xf32>
  %e = tensor.empty(%m) : tensor<?x37xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<?x37xf32>) -> tensor<?x37xf32>
  %r = linalg.matmul ins(%a, %w : tensor<?x300xf32>, {ty(B.shape)}) outs(%z : tensor<?x37xf32>) -> tensor<?x37xf32>
  return %r : tensor<?x37xf32>
}}
func.func @bmm(%a: tensor<3x?x40xf32>) -> tensor<3x?x37xf32> {{
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %w = arith.constant {dense(BB)} : {ty(BB.shape)}
  %m = tensor.dim %a, %c1 : tensor<3x?x40xf32>
  %e = tensor.empty(%m) : tensor<3x?x37xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<3x?x37xf32>) -> tensor<3x?x37xf32>
  %r = linalg.generic {{indexing_maps = [#a, #b, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}}
      ins(%a, %w : tensor<3x?x40xf32>, {ty(BB.shape)}) outs(%z : tensor<3x?x37xf32>) {{
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }} -> tensor<3x?x37xf32>
  return %r : tensor<3x?x37xf32>
}}
func.func private @printMemrefF32(tensor<*xf32>)
func.func @main() {{
{{MM_CALLS}}
  %ba = arith.constant {dense(BA)} : {ty(BA.shape)}
  %bad = tensor.cast %ba : {ty(BA.shape)} to tensor<3x?x40xf32>
  %br = call @bmm(%bad) : (tensor<3x?x40xf32>) -> tensor<3x?x37xf32>
  %bru = tensor.cast %br : tensor<3x?x37xf32> to tensor<*xf32>
  call @printMemrefF32(%bru) : (tensor<*xf32>) -> ()
  return
}}
"""
MODULE = MODULE.replace("{MM_CALLS}", "\n".join(f"""
  %a{i} = arith.constant {dense(a)} : {ty(a.shape)}
  %ad{i} = tensor.cast %a{i} : {ty(a.shape)} to tensor<?x300xf32>
  %r{i} = call @mm(%ad{i}) : (tensor<?x300xf32>) -> tensor<?x37xf32>
  %ru{i} = tensor.cast %r{i} : tensor<?x37xf32> to tensor<*xf32>
  call @printMemrefF32(%ru{i}) : (tensor<*xf32>) -> ()""" for i, a in enumerate(AS)))
NUMBER = re.compile(r"-?(?:nan|inf|\d+(?:\.\d*)?(?:e[-+]?\d+)?)")


def printed_arrays(text):
    """The data of each printMemrefF32 block, flattened."""
    blocks = text.split("Unranked Memref")[1:]
    return [np.array([float(v) for v in NUMBER.findall(b.split("data =", 1)[1])],
                     np.float32) for b in blocks]


for bits in (512, 256, 128):
    for parallel in ("true", "false"):
        lowered = subprocess.run(
            ["nnx-opt", f"--nnx-cpu-pipeline=vector-bits={bits} parallel={parallel}"],
            input=MODULE, capture_output=True, text=True, check=True).stdout
        ran = subprocess.run(
            ["mlir-runner", "-e", "main", "-entry-point-result=void",
             f"--shared-libs={LIBS}"],
            input=lowered, capture_output=True, text=True, check=True).stdout
        got = printed_arrays(ran)
        assert len(got) == len(AS) + 1, len(got)
        what = f"vector-bits={bits} parallel={parallel}"
        for a, g in zip(AS, got):
            testing.assert_matmul(g.reshape(a.shape[0], 37), a, B,
                                  printed_digits=6, what=f"{what} M={a.shape[0]}")
        testing.assert_matmul(got[-1].reshape(3, 13, 37), BA, BB,
                              printed_digits=6, what=f"{what} batched")
        print(f"vector-bits={bits} parallel={parallel}: OK")
