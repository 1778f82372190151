// A forward-level module (func.func @forward on tensors, no nnx.model) runs
// as is. Several outputs are written to several files: one computed, one that
// is the argument itself, one constant, one bool and one int64 tensor.

// RUN: %python %S/Inputs/make_inputs.py %t
// RUN: %python -c "import numpy as np; np.save('%t/ids.npy', np.array([4, -2, 7], np.int64))"
// RUN: nnx-run %s --input %t/x3.npy --input %t/ids.npy --print \
// RUN:   --output %t/o0.npy --output %t/o1.npy --output %t/o2.npy \
// RUN:   --output %t/o3.npy --output %t/o4.npy | FileCheck %s
// RUN: %python -c "import numpy as np; x = np.load('%t/x3.npy'); o = [np.load('%t/o%%d.npy' %% i) for i in range(5)]; assert (o[0] == 2 * x).all(); assert (o[1] == x).all(); assert o[2].dtype == np.float32 and (o[2] == [1.5, -2]).all(); assert o[3].dtype == np.bool_ and (o[3] == (x > 0)).all(), o[3]; assert o[4].dtype == np.int64 and (o[4] == [4, -2, 7]).all()"

// The argument count and dtypes come from this signature.
// RUN: not nnx-run %s --input %t/x3.npy 2>&1 | FileCheck %s --check-prefix=COUNT
// COUNT: nnx-run: error: the forward takes 2 inputs (tensor<?x2xf32>, tensor<3xi64>), got 1
// RUN: not nnx-run %s --input %t/x3.npy --input %t/x3_i64.npy 2>&1 | FileCheck %s --check-prefix=STATIC
// STATIC: nnx-run: error: input 1: expected tensor<3xi64>, got int64 array of shape (3, 2) from {{.*}}x3_i64.npy

// CHECK:      output 0: float32 array of shape (3, 2)
// CHECK-NEXT: {{^\[\[}}2, 4],
// CHECK-NEXT: {{^}} [-2, 1],
// CHECK-NEXT: {{^}} [0, 0]]
// CHECK-NEXT: output 1: float32 array of shape (3, 2)
// CHECK-NEXT: {{^\[\[}}1, 2],
// CHECK-NEXT: {{^}} [-1, 0.5],
// CHECK-NEXT: {{^}} [0, 0]]
// CHECK-NEXT: output 2: float32 array of shape (2,)
// CHECK-NEXT: {{^}}[1.5, -2]{{$}}
// CHECK-NEXT: output 3: bool array of shape (3, 2)
// CHECK-NEXT: {{^\[\[}}True, True],
// CHECK-NEXT: {{^}} [False, True],
// CHECK-NEXT: {{^}} [False, False]]
// CHECK-NEXT: output 4: int64 array of shape (3,)
// CHECK-NEXT: {{^}}[4, -2, 7]{{$}}

#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @forward(%x: tensor<?x2xf32>, %ids: tensor<3xi64>)
    -> (tensor<?x2xf32>, tensor<?x2xf32>, tensor<2xf32>, tensor<?x2xi1>,
        tensor<3xi64>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x2xf32>
  %e = tensor.empty(%n) : tensor<?x2xf32>
  %y = linalg.add ins(%x, %x : tensor<?x2xf32>, tensor<?x2xf32>)
                  outs(%e : tensor<?x2xf32>) -> tensor<?x2xf32>
  %c = arith.constant dense<[1.5, -2.0]> : tensor<2xf32>
  %eb = tensor.empty(%n) : tensor<?x2xi1>
  %pos = linalg.generic {indexing_maps = [#map, #map],
                         iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<?x2xf32>) outs(%eb : tensor<?x2xi1>) {
  ^bb0(%in: f32, %out: i1):
    %p = arith.cmpf ogt, %in, %zero : f32
    linalg.yield %p : i1
  } -> tensor<?x2xi1>
  return %y, %x, %c, %pos, %ids
      : tensor<?x2xf32>, tensor<?x2xf32>, tensor<2xf32>, tensor<?x2xi1>,
        tensor<3xi64>
}
