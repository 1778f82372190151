// Executes the lowered forward of the parameterized leaves (linear,
// embedding, the norms in both modes, dropout in both modes); the expected
// numbers were computed by hand.
// RUN: nnx-opt %s --nnx-build-forward=parameters=constants --nnx-cpu-pipeline \
// RUN: | mlir-runner -e main -entry-point-result=void --shared-libs=%mlir_runner_libs \
// RUN: | FileCheck %s

// y = x W^T + b on a rank-3 input.
nnx.model @linear3d inputs(tensor<?x2x2xf32>) {
  nnx.linear @l {weight = dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>,
                 bias = dense<[1.0, -1.0]> : tensor<2xf32>}
}
nnx.model @embedding inputs(tensor<?x2xi64>) {
  nnx.embedding @e {weight = dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>}
}
nnx.model @layer_norm inputs(tensor<?x4xf32>) {
  nnx.layer_norm @n {normalized_shape = array<i64: 4>,
                     weight = dense<2.0> : tensor<4xf32>, bias = dense<1.0> : tensor<4xf32>}
}
nnx.model @rms_norm inputs(tensor<?x4xf32>) {
  nnx.rms_norm @n {normalized_shape = array<i64: 4>, eps = 1.0e-06 : f64}
}
// eval: running statistics.
nnx.model @bn_eval inputs(tensor<?x2xf32>) {
  nnx.batch_norm @n {running_mean = dense<[1.0, 2.0]> : tensor<2xf32>,
                     running_var = dense<[4.0, 1.0]> : tensor<2xf32>,
                     weight = dense<[1.0, 2.0]> : tensor<2xf32>,
                     bias = dense<[0.0, 1.0]> : tensor<2xf32>}
}
// train: the batch's biased statistics (running statistics ignored).
nnx.model @bn_train inputs(tensor<?x2xf32>) {
  nnx.batch_norm @n {train, running_mean = dense<[100.0, 100.0]> : tensor<2xf32>,
                     running_var = dense<[9.0, 9.0]> : tensor<2xf32>}
}
nnx.model @dropout_eval inputs(tensor<?x4xf32>) {
  nnx.dropout @d {p = 0.5 : f64, seed = 3 : i64}
}
nnx.model @dropout_train inputs(tensor<?x4xf32>) {
  nnx.dropout @d {train, p = 0.5 : f64, seed = 3 : i64}
}

func.func private @linear3d_forward(tensor<?x2x2xf32>) -> tensor<?x2x2xf32>
func.func private @embedding_forward(tensor<?x2xi64>)
    -> (tensor<?x2x2xf32>, tensor<i64>, tensor<i64>)
func.func private @layer_norm_forward(tensor<?x4xf32>) -> tensor<?x4xf32>
func.func private @rms_norm_forward(tensor<?x4xf32>) -> tensor<?x4xf32>
func.func private @bn_eval_forward(tensor<?x2xf32>) -> tensor<?x2xf32>
func.func private @bn_train_forward(tensor<?x2xf32>) -> tensor<?x2xf32>
func.func private @dropout_eval_forward(tensor<?x4xf32>) -> tensor<?x4xf32>
func.func private @dropout_train_forward(tensor<?x4xf32>) -> tensor<?x4xf32>
func.func private @printMemrefF32(tensor<*xf32>)
func.func private @printMemrefI64(tensor<*xi64>)

func.func @main() {
  // CHECK: sizes = [1, 2, 2]
  // CHECK-NEXT: {{\[\[\[}}2, 2],
  // CHECK-NEXT: {{\[}}3, 3]]]
  %a = arith.constant dense<[[[1.0, 0.0], [0.0, 1.0]]]> : tensor<1x2x2xf32>
  %ad = tensor.cast %a : tensor<1x2x2xf32> to tensor<?x2x2xf32>
  %0 = call @linear3d_forward(%ad) : (tensor<?x2x2xf32>) -> tensor<?x2x2xf32>
  %u0 = tensor.cast %0 : tensor<?x2x2xf32> to tensor<*xf32>
  call @printMemrefF32(%u0) : (tensor<*xf32>) -> ()

  // Rows 2 and 0; the out-of-range id 7 reads the last row (the lookup
  // stays inside the table) and is reported by the index check: its
  // row-major position 3 as INT64_MAX - 3, and the id.
  // CHECK: sizes = [2, 2, 2]
  // CHECK-NEXT: {{\[\[\[}}5, 6],
  // CHECK-NEXT: {{\[}}1, 2]],
  // CHECK-NEXT: {{\[\[}}3, 4],
  // CHECK-NEXT: {{\[}}5, 6]]]
  // CHECK: [9223372036854775804]
  // CHECK: [7]
  %ids = arith.constant dense<[[2, 0], [1, 7]]> : tensor<2x2xi64>
  %idsd = tensor.cast %ids : tensor<2x2xi64> to tensor<?x2xi64>
  %1:3 = call @embedding_forward(%idsd)
      : (tensor<?x2xi64>) -> (tensor<?x2x2xf32>, tensor<i64>, tensor<i64>)
  %u1 = tensor.cast %1#0 : tensor<?x2x2xf32> to tensor<*xf32>
  call @printMemrefF32(%u1) : (tensor<*xf32>) -> ()
  %pos = tensor.cast %1#1 : tensor<i64> to tensor<*xi64>
  call @printMemrefI64(%pos) : (tensor<*xi64>) -> ()
  %bad = tensor.cast %1#2 : tensor<i64> to tensor<*xi64>
  call @printMemrefI64(%bad) : (tensor<*xi64>) -> ()

  %r = arith.constant dense<[[1.0, 2.0, 3.0, 4.0]]> : tensor<1x4xf32>
  %rd = tensor.cast %r : tensor<1x4xf32> to tensor<?x4xf32>
  // mean 2.5, var 1.25: 2 * (x - 2.5) / sqrt(1.25 + 1e-5) + 1
  // CHECK: {{\[\[}}-1.68327, 0.105576, 1.89442, 3.68327]]
  %2 = call @layer_norm_forward(%rd) : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %u2 = tensor.cast %2 : tensor<?x4xf32> to tensor<*xf32>
  call @printMemrefF32(%u2) : (tensor<*xf32>) -> ()
  // mean of squares 7.5: x / sqrt(7.5 + 1e-6)
  // CHECK: {{\[\[}}0.365148, 0.730297, 1.09545, 1.46059]]
  %3 = call @rms_norm_forward(%rd) : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %u3 = tensor.cast %3 : tensor<?x4xf32> to tensor<*xf32>
  call @printMemrefF32(%u3) : (tensor<*xf32>) -> ()

  // (x - rm) / sqrt(rv + 1e-5) * w + b
  // CHECK: sizes = [2, 2]
  // CHECK-NEXT: {{\[\[}}0, 1],
  // CHECK-NEXT: {{\[}}0.999999, 4.99998]]
  %b = arith.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %bd = tensor.cast %b : tensor<2x2xf32> to tensor<?x2xf32>
  %4 = call @bn_eval_forward(%bd) : (tensor<?x2xf32>) -> tensor<?x2xf32>
  %u4 = tensor.cast %4 : tensor<?x2xf32> to tensor<*xf32>
  call @printMemrefF32(%u4) : (tensor<*xf32>) -> ()
  // batch mean [2, 4], biased var [1, 4]
  // CHECK: sizes = [2, 2]
  // CHECK-NEXT: {{\[\[}}-0.999995, -0.999999],
  // CHECK-NEXT: {{\[}}0.999995, 0.999999]]
  %t = arith.constant dense<[[1.0, 2.0], [3.0, 6.0]]> : tensor<2x2xf32>
  %td = tensor.cast %t : tensor<2x2xf32> to tensor<?x2xf32>
  %5 = call @bn_train_forward(%td) : (tensor<?x2xf32>) -> tensor<?x2xf32>
  %u5 = tensor.cast %5 : tensor<?x2xf32> to tensor<*xf32>
  call @printMemrefF32(%u5) : (tensor<*xf32>) -> ()

  %o = arith.constant dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]> : tensor<2x4xf32>
  %od = tensor.cast %o : tensor<2x4xf32> to tensor<?x4xf32>
  // CHECK: sizes = [2, 4]
  // CHECK-NEXT: {{\[\[}}1, 2, 3, 4],
  // CHECK-NEXT: {{\[}}5, 6, 7, 8]]
  %6 = call @dropout_eval_forward(%od) : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %u6 = tensor.cast %6 : tensor<?x4xf32> to tensor<*xf32>
  call @printMemrefF32(%u6) : (tensor<*xf32>) -> ()
  // seed 3, p = 0.5: the documented hash keeps linear indices 0, 2 and 7,
  // scaled by 2.
  // CHECK: sizes = [2, 4]
  // CHECK-NEXT: {{\[\[}}2, 0, 6, 0],
  // CHECK-NEXT: {{\[}}0, 0, 0, 16]]
  %7 = call @dropout_train_forward(%od) : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %u7 = tensor.cast %7 : tensor<?x4xf32> to tensor<*xf32>
  call @printMemrefF32(%u7) : (tensor<*xf32>) -> ()
  return
}
