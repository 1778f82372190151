// A tiny MLP whose outputs are computed by hand:
//   fc(x) = x W^T + b, relu, head(h) = h V^T.
//   x = [1, 2]    -> fc [5.5, 0, 1]     -> head [6.5, 10]
//   x = [-1, 0.5] -> fc [0.5, 1.25, -0.5] -> relu [0.5, 1.25, 0] -> [1.75, 1]
//   x = [0, 0]    -> fc [0.5, 0, -1]    -> relu [0.5, 0, 0] -> [0.5, 1]

// RUN: %python %S/Inputs/make_inputs.py %t
// RUN: nnx-run %s --input %t/x3.npy --output %t/y.npy --print | FileCheck %s
// RUN: %python -c "import numpy as np; y = np.load('%t/y.npy'); assert y.dtype == np.float32, y.dtype; assert y.shape == (3, 2), y.shape; assert (y == np.array([[6.5, 10], [1.75, 1], [0.5, 1]], np.float32)).all(), y"

// The same through --target=cpu, spelled out.
// RUN: nnx-run --target=cpu %s --input %t/x3.npy --print | FileCheck %s

// --repeat runs the compiled forward N times (same outputs) and reports the
// time per forward on stderr.
// RUN: nnx-run %s --input %t/x3.npy --repeat 3 --print 2>%t/timing.txt | FileCheck %s
// RUN: FileCheck %s --check-prefix=TIME < %t/timing.txt
// TIME: nnx-run: compile {{[0-9.]+}} ms, weights {{[0-9.]+}} ms; forward x3 (excluding compilation): mean {{[0-9.]+}} ms, min {{[0-9.]+}} ms

// CHECK:      output 0: float32 array of shape (3, 2)
// CHECK-NEXT: {{^\[\[}}6.5, 10],
// CHECK-NEXT: {{^}} [1.75, 1],
// CHECK-NEXT: {{^}} [0.5, 1]]

nnx.model @tiny inputs(tensor<?x2xf32>) {
  nnx.sequential @net keying = named {
    nnx.linear @fc {weight = dense<[[1.0, 2.0], [-1.0, 0.5], [0.0, 1.0]]> : tensor<3x2xf32>,
                    bias = dense<[0.5, 0.0, -1.0]> : tensor<3xf32>}
    nnx.relu @act
    nnx.linear @head {weight = dense<[[1.0, 1.0, 1.0], [2.0, 0.0, -1.0]]> : tensor<2x3xf32>}
  }
}
