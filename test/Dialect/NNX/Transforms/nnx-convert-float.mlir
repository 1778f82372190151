// nnx-convert-float: a model's float type changed as model.to(dtype). Every
// bf16 type becomes f16 (inputs, layer tensors, a module's state, forward
// values, constants, scalar attributes); tensors are converted element by
// element (bf16 to f16 is exact in f16's range; 3.0e38 is not in it and
// becomes infinity); values in other types (the explicit f32 upcast) stay.
// RUN: nnx-opt %s -split-input-file --nnx-convert-float="from=bf16 to=f16" | FileCheck %s
// RUN: nnx-opt %s -split-input-file --nnx-convert-float="from=bf16 to=f16" | nnx-opt -split-input-file --nnx-convert-float="from=f16 to=bf16" | FileCheck %s --check-prefix=BACK

// CHECK-LABEL: nnx.model @mlp inputs(tensor<?x4xf16>)
// CHECK:         nnx.linear @fc {bias = dense<0x7C00> : tensor<1xf16>, weight = dense<{{\[\[}}5.000000e-01, -2.500000e-01, 1.000000e+00, 3.000000e+00]]> : tensor<1x4xf16>}
// CHECK:         nnx.module @norm class = "RMSNorm" attributes {state = {weight = dense<1.500000e+00> : tensor<1xf16>}}
// CHECK:           nnx.forward @forward(%{{.*}}: tensor<?x1xf16>) -> tensor<?x1xf16>
// CHECK:             arith.extf %{{.*}} : tensor<?x1xf16> to tensor<?x1xf32>
// CHECK:             arith.constant dense<9.99999997E-7> : tensor<f32>
// CHECK:             arith.truncf %{{.*}} : tensor<?x1xf32> to tensor<?x1xf16>
// CHECK:             arith.constant dense<2.000000e+00> : tensor<f16>
// CHECK-NOT:     bf16

// BACK-LABEL: nnx.model @mlp inputs(tensor<?x4xbf16>)
// BACK:         bias = dense<0x7F80> : tensor<1xbf16>
// BACK-NOT:     {{x}}f16>

nnx.model @mlp inputs(tensor<?x4xbf16>) {
  nnx.sequential @net keying = named {
    nnx.linear @fc {weight = dense<[[0.5, -0.25, 1.0, 3.0]]> : tensor<1x4xbf16>, bias = dense<3.0e38> : tensor<1xbf16>}
    nnx.module @norm class = "RMSNorm" attributes {state = {weight = dense<1.5> : tensor<1xbf16>}} {
      nnx.forward @forward(%x: tensor<?x1xbf16>) -> tensor<?x1xbf16> {
        %w = nnx.state "weight" : tensor<1xbf16>
        %x32 = arith.extf %x : tensor<?x1xbf16> to tensor<?x1xf32>
        %eps = arith.constant dense<1.0e-6> : tensor<f32>
        %s = nnx.fn.add %x32, %eps : tensor<?x1xf32>, tensor<f32> -> tensor<?x1xf32>
        %y = arith.truncf %s : tensor<?x1xf32> to tensor<?x1xbf16>
        %two = arith.constant dense<2.0> : tensor<bf16>
        %z = nnx.fn.mul %y, %two : tensor<?x1xbf16>, tensor<bf16> -> tensor<?x1xbf16>
        %o = nnx.fn.mul %z, %w : tensor<?x1xbf16>, tensor<1xbf16> -> tensor<?x1xbf16>
        nnx.return %o : tensor<?x1xbf16>
      }
    }
  }
}
