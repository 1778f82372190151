// Executes the lowered forward of the containers: sequential (with an
// alias), feed_fwd (per-layer activations, dropout in eval and train mode)
// and a custom nnx.module with a residual add; the expected numbers were
// computed by hand.
// RUN: nnx-opt %s --nnx-build-forward=parameters=constants --nnx-cpu-pipeline \
// RUN: | mlir-runner -e main -entry-point-result=void --shared-libs=%mlir_runner_libs \
// RUN: | FileCheck %s

// relu(x W1^T + b1) W2^T
nnx.model @mlp inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = positional {
    nnx.linear @"0" {weight = dense<[[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0]]> : tensor<3x4xf32>,
                     bias = dense<[0.5, -0.5, 1.0]> : tensor<3xf32>}
    nnx.relu @"1"
    nnx.linear @"2" {weight = dense<[[1.0, 2.0, 3.0]]> : tensor<1x3xf32>}
  }
}
// The alias applies `body.scale` a second time: x * 2 * 2.
nnx.model @tied inputs(tensor<?x2xf32>) {
  nnx.sequential @body keying = named {
    nnx.linear @scale {weight = dense<[[2.0, 0.0], [0.0, 2.0]]> : tensor<2x2xf32>}
    nnx.alias @again = @scale
  }
}
// Hidden 0: linear -> tanh; hidden 1: linear -> leaky_relu (slope 0.01);
// eval mode, so dropout is the identity.
nnx.model @ff inputs(tensor<?x2xf32>) {
  nnx.feed_fwd @net attributes {input_dim = 2, hidden_dims = array<i64: 2, 2>, output_dim = 1,
                                activation = #nnx.activation<relu>, activations = [#nnx.activation<identity>, #nnx.activation<leaky_relu>],
                                dropout = 0.5 : f64} {
    nnx.module_list @layers {
      nnx.linear @"0" {weight = dense<[[1.0, 0.0], [0.0, -1.0]]> : tensor<2x2xf32>}
      nnx.linear @"1" {weight = dense<[[1.0, 0.0], [0.0, 1.0]]> : tensor<2x2xf32>}
      nnx.linear @"2" {weight = dense<[[1.0, 1.0]]> : tensor<1x2xf32>}
    }
  }
}
// The same in train mode: hidden layer i uses seed i; with p = 0.5 the hash
// keeps, for seed 0, linear indices 0 1 2 6 and, for seed 1, 1 2 3 4 5.
nnx.model @ff_train inputs(tensor<?x2xf32>) {
  nnx.feed_fwd @net attributes {train, input_dim = 2, hidden_dims = array<i64: 2, 2>, output_dim = 1,
                                activation = #nnx.activation<identity>, dropout = 0.5 : f64} {
    nnx.module_list @layers {
      nnx.linear @"0" {weight = dense<[[1.0, 0.0], [0.0, 1.0]]> : tensor<2x2xf32>}
      nnx.linear @"1" {weight = dense<[[1.0, 0.0], [0.0, 1.0]]> : tensor<2x2xf32>}
      nnx.linear @"2" {weight = dense<[[1.0, 10.0]]> : tensor<1x2xf32>}
    }
  }
}
// x + proj(norm(x)) where proj sums the normalized features.
nnx.model @res inputs(tensor<?x2xf32>) {
  nnx.module @block class = "ResidualBlock" {
    nnx.layer_norm @norm {normalized_shape = array<i64: 2>, eps = 1.0e-12 : f64}
    nnx.linear @proj {weight = dense<[[1.0, 0.0], [1.0, 1.0]]> : tensor<2x2xf32>}
    nnx.forward @forward(%x: tensor<?x2xf32>) -> tensor<?x2xf32> {
      %h = nnx.call @norm(%x) : (tensor<?x2xf32>) -> tensor<?x2xf32>
      %p = nnx.call @proj(%h) : (tensor<?x2xf32>) -> tensor<?x2xf32>
      %y = arith.addf %x, %p {nnx.source = "add_0"} : tensor<?x2xf32>
      nnx.return %y : tensor<?x2xf32>
    }
  }
}

func.func private @mlp_forward(tensor<?x4xf32>) -> tensor<?x1xf32>
func.func private @tied_forward(tensor<?x2xf32>) -> tensor<?x2xf32>
func.func private @ff_forward(tensor<?x2xf32>) -> tensor<?x1xf32>
func.func private @ff_train_forward(tensor<?x2xf32>) -> tensor<?x1xf32>
func.func private @res_forward(tensor<?x2xf32>) -> tensor<?x2xf32>
func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  // [1.5, 1.5, 4] . [1, 2, 3] = 16.5 ; relu([-0.5, -2.5, 1.5]) . [1, 2, 3] = 4.5
  // CHECK: sizes = [2, 1]
  // CHECK-NEXT: {{\[\[}}16.5],
  // CHECK-NEXT: {{\[}}4.5]]
  %m = arith.constant dense<[[1.0, 2.0, 3.0, 4.0], [-1.0, -2.0, 0.5, 0.0]]> : tensor<2x4xf32>
  %md = tensor.cast %m : tensor<2x4xf32> to tensor<?x4xf32>
  %0 = call @mlp_forward(%md) : (tensor<?x4xf32>) -> tensor<?x1xf32>
  %u0 = tensor.cast %0 : tensor<?x1xf32> to tensor<*xf32>
  call @printMemrefF32(%u0) : (tensor<*xf32>) -> ()

  // CHECK: sizes = [1, 2]
  // CHECK-NEXT: {{\[\[}}4, -12]]
  %t = arith.constant dense<[[1.0, -3.0]]> : tensor<1x2xf32>
  %td = tensor.cast %t : tensor<1x2xf32> to tensor<?x2xf32>
  %1 = call @tied_forward(%td) : (tensor<?x2xf32>) -> tensor<?x2xf32>
  %u1 = tensor.cast %1 : tensor<?x2xf32> to tensor<*xf32>
  call @printMemrefF32(%u1) : (tensor<*xf32>) -> ()

  // [2, -3] -> [2, 3] (identity) -> leaky: [2, 3] -> 5 ;
  // [-1, 4] -> [-1, -4] -> leaky: [-0.01, -0.04] -> -0.05
  // CHECK: sizes = [2, 1]
  // CHECK-NEXT: {{\[\[}}5],
  // CHECK-NEXT: {{\[}}-0.05]]
  %f = arith.constant dense<[[2.0, -3.0], [-1.0, 4.0]]> : tensor<2x2xf32>
  %fd = tensor.cast %f : tensor<2x2xf32> to tensor<?x2xf32>
  %2 = call @ff_forward(%fd) : (tensor<?x2xf32>) -> tensor<?x1xf32>
  %u2 = tensor.cast %2 : tensor<?x1xf32> to tensor<*xf32>
  call @printMemrefF32(%u2) : (tensor<*xf32>) -> ()

  // Rows of ones (4 x 2, indices 0..7). After layer 0 + dropout(seed 0):
  // [[2, 2], [2, 0], [0, 0], [2, 0]]; after layer 1 + dropout(seed 1):
  // [[0, 4], [4, 0], [0, 0], [0, 0]]; head [1, 10]: 40, 4, 0, 0.
  // CHECK: sizes = [4, 1]
  // CHECK-NEXT: {{\[\[}}40],
  // CHECK-NEXT: {{\[}}4],
  // CHECK-NEXT: {{\[}}0],
  // CHECK-NEXT: {{\[}}0]]
  %o = arith.constant dense<1.0> : tensor<4x2xf32>
  %od = tensor.cast %o : tensor<4x2xf32> to tensor<?x2xf32>
  %3 = call @ff_train_forward(%od) : (tensor<?x2xf32>) -> tensor<?x1xf32>
  %u3 = tensor.cast %3 : tensor<?x1xf32> to tensor<*xf32>
  call @printMemrefF32(%u3) : (tensor<*xf32>) -> ()

  // norm([1, 3]) = [-1, 1]; proj -> [-1, 0]; + x = [0, 3]
  // CHECK: sizes = [1, 2]
  // CHECK-NEXT: {{\[\[}}0, 3]]
  %r = arith.constant dense<[[1.0, 3.0]]> : tensor<1x2xf32>
  %rd = tensor.cast %r : tensor<1x2xf32> to tensor<?x2xf32>
  %4 = call @res_forward(%rd) : (tensor<?x2xf32>) -> tensor<?x2xf32>
  %u4 = tensor.cast %4 : tensor<?x2xf32> to tensor<*xf32>
  call @printMemrefF32(%u4) : (tensor<*xf32>) -> ()
  return
}
