// Upstream math ops on tensors in a forward region, through nnx-run's CPU
// pipeline (elementwise-to-linalg, nnx-approximate-math: erf as its
// polynomial, absi as LLVM's abs; libm or LLVM intrinsics for the rest),
// against float64 (Inputs/math_ops.py): floor, ceil, round, roundeven and
// absi exact (absi of INT32_MIN stays INT32_MIN, as torch), erf, log1p and
// expm1 within 2 ulp over [-10, 10] and the special values (erf also within
// 1.2e-7 absolute; upstream's erf polynomial was 2.4e-7 off near 1.9).

// RUN: rm -rf %t && %python %S/Inputs/math_ops.py make %t
// RUN: nnx-run %s --input %t/x.npy --input %t/i.npy \
// RUN:   --output %t/erf.npy --output %t/floor.npy --output %t/ceil.npy \
// RUN:   --output %t/log1p.npy --output %t/expm1.npy --output %t/round.npy \
// RUN:   --output %t/roundeven.npy --output %t/absi.npy
// RUN: %python %S/Inputs/math_ops.py check %t | FileCheck %s
// CHECK: {{^ok$}}

nnx.model @math inputs(tensor<?xf32>, tensor<?xi32>) {
  nnx.module @root class = "MathOps" {
    nnx.forward @forward(%x: tensor<?xf32>, %i: tensor<?xi32>)
        -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>,
            tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xi32>) {
      %erf = math.erf %x : tensor<?xf32>
      %floor = math.floor %x : tensor<?xf32>
      %ceil = math.ceil %x : tensor<?xf32>
      %log1p = math.log1p %x : tensor<?xf32>
      %expm1 = math.expm1 %x : tensor<?xf32>
      %round = math.round %x : tensor<?xf32>
      %roundeven = math.roundeven %x : tensor<?xf32>
      %absi = math.absi %i : tensor<?xi32>
      nnx.return %erf, %floor, %ceil, %log1p, %expm1, %round, %roundeven, %absi
          : tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>,
            tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xi32>
    }
  }
}
