// Parameter counts that 64 bits cannot hold are errors, never a wrapped count.
// RUN: split-file %s %t
// RUN: nnx-opt %t/tensor.mlir -verify-diagnostics --nnx-param-count -o /dev/null
// RUN: nnx-opt %t/total.mlir -verify-diagnostics --nnx-param-count -o /dev/null

//--- tensor.mlir

// A 2^62x4 Linear (the count wrapped to 0): its tensor is no tensor.
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    // expected-error @+1 {{'nnx.linear' op at 'fc': tensor 'weight' of type 'tensor<4611686018427387904x4xf32>' holds more bytes than 64 bits can count}}
    nnx.linear @fc {weight = dense<1.0> : tensor<4611686018427387904x4xf32>}
  }
}

//--- total.mlir

// Four tensors of 2^61 elements each: every one fits, the sum does not.
// expected-error @+1 {{nnx-param-count: the parameter count of model @m overflows 64 bits}}
nnx.model @m inputs(tensor<?x1xf16>) {
  nnx.sequential @net keying = positional {
    nnx.linear @"0" {weight = dense<1.0> : tensor<2305843009213693952x1xf16>}
    nnx.linear @"1" {weight = dense<1.0> : tensor<1x2305843009213693952xf16>}
    nnx.linear @"2" {weight = dense<1.0> : tensor<2305843009213693952x1xf16>}
    nnx.linear @"3" {weight = dense<1.0> : tensor<1x2305843009213693952xf16>}
  }
}
