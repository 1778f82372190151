// nnx.fn ops in a forward region are cloned into the forward like upstream
// ops, probes on them included; nnx-lower-probes and nnx-lower-functional
// then turn the probes into results and the ops into linalg.
// RUN: nnx-opt %s --nnx-build-forward | FileCheck %s
// RUN: nnx-opt %s --nnx-build-forward --nnx-lower-probes --nnx-lower-functional | FileCheck %s --check-prefix=LOWERED

// CHECK-LABEL: func.func @forward(
// CHECK-SAME:      %[[X:.*]]: tensor<?x?x2xf32>
// CHECK:         %[[IN:.*]] = nnx.probe read "into_mul" %[[X]] : tensor<?x?x2xf32>
// CHECK:         %[[M:.*]] = nnx.fn.mul %[[IN]], %{{.*}} {nnx.source = "mul_0"} : tensor<?x?x2xf32>, tensor<f32> -> tensor<?x?x2xf32>
// CHECK:         %[[OUT:.*]] = nnx.probe read "scaled" %[[M]] : tensor<?x?x2xf32>
// CHECK:         %[[R:.*]] = nnx.fn.relu %[[OUT]] : tensor<?x?x2xf32>
// The Linear on a rank-3 input with two dynamic dims: its rows reshaped
// into one 2-D linalg.matmul and back.
// CHECK:         %[[R2:.*]] = tensor.reshape %[[R]]
// CHECK:         %[[P:.*]] = linalg.matmul {{.*}} ins(%[[R2]], %{{.*}} : tensor<?x2xf32>, tensor<3x2xf32>)
// CHECK:         %[[P3:.*]] = tensor.reshape %[[P]]
// CHECK:         return %[[P3]]

// LOWERED-LABEL: func.func @forward(
// LOWERED-SAME:      -> (tensor<?x?x3xf32>, tensor<?x?x2xf32>, tensor<?x?x2xf32>)
// LOWERED-SAME:      nnx.read_probes = ["into_mul", "scaled"]
// LOWERED-NOT:   nnx.fn
// LOWERED-NOT:   nnx.probe
// LOWERED:       return

nnx.model @probed inputs(tensor<?x?x2xf32>) {
  nnx.module @root class = "Probed" {
    nnx.linear @proj {weight = dense<1.0> : tensor<3x2xf32>}
    nnx.forward @forward(%x: tensor<?x?x2xf32>) -> tensor<?x?x3xf32> {
      %two = arith.constant dense<2.000000e+00> : tensor<f32>
      %y = nnx.fn.mul %x, %two {nnx.source = "mul_0", nnx.probes = [#nnx.probe<name = "scaled", point = output, index = 0, kind = read>, #nnx.probe<name = "into_mul", point = input, index = 0, kind = read>]} : tensor<?x?x2xf32>, tensor<f32> -> tensor<?x?x2xf32>
      %r = nnx.fn.relu %y : tensor<?x?x2xf32>
      %p = nnx.call @proj(%r) : (tensor<?x?x2xf32>) -> tensor<?x?x3xf32>
      nnx.return %p : tensor<?x?x3xf32>
    }
  }
}
