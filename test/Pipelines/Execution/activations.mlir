// Executes the lowered forward of every elementwise activation and softmax
// on a fixed input; the expected numbers were computed by hand.
// RUN: nnx-opt %s --nnx-build-forward --nnx-cpu-pipeline \
// RUN: | mlir-runner -e main -entry-point-result=void --shared-libs=%mlir_runner_libs \
// RUN: | FileCheck %s

nnx.model @relu inputs(tensor<?x5xf32>) { nnx.relu @a }
nnx.model @leaky inputs(tensor<?x5xf32>) { nnx.leaky_relu @a {negative_slope = 0.1 : f64} }
nnx.model @tanh inputs(tensor<?x5xf32>) { nnx.tanh @a }
nnx.model @sigmoid inputs(tensor<?x5xf32>) { nnx.sigmoid @a }
nnx.model @silu inputs(tensor<?x5xf32>) { nnx.silu @a }
nnx.model @gelu inputs(tensor<?x5xf32>) { nnx.gelu @a }
nnx.model @gelu_tanh inputs(tensor<?x5xf32>) { nnx.gelu @a {approximate = #nnx.gelu_approximation<tanh>} }
nnx.model @identity inputs(tensor<?x5xf32>) { nnx.identity @a }
nnx.model @hardswish inputs(tensor<?x5xf32>) { nnx.hardswish @a }
nnx.model @softmax inputs(tensor<?x5xf32>) { nnx.softmax @a {dim = 1 : i64} }

func.func private @relu_forward(tensor<?x5xf32>) -> tensor<?x5xf32>
func.func private @leaky_forward(tensor<?x5xf32>) -> tensor<?x5xf32>
func.func private @tanh_forward(tensor<?x5xf32>) -> tensor<?x5xf32>
func.func private @sigmoid_forward(tensor<?x5xf32>) -> tensor<?x5xf32>
func.func private @silu_forward(tensor<?x5xf32>) -> tensor<?x5xf32>
func.func private @gelu_forward(tensor<?x5xf32>) -> tensor<?x5xf32>
func.func private @gelu_tanh_forward(tensor<?x5xf32>) -> tensor<?x5xf32>
func.func private @identity_forward(tensor<?x5xf32>) -> tensor<?x5xf32>
func.func private @hardswish_forward(tensor<?x5xf32>) -> tensor<?x5xf32>
func.func private @softmax_forward(tensor<?x5xf32>) -> tensor<?x5xf32>
func.func private @printMemrefF32(tensor<*xf32>)

func.func @print(%t: tensor<?x5xf32>) {
  %u = tensor.cast %t : tensor<?x5xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}

func.func @main() {
  %c = arith.constant dense<[[-2.0, -0.5, 0.0, 1.0, 3.0]]> : tensor<1x5xf32>
  %x = tensor.cast %c : tensor<1x5xf32> to tensor<?x5xf32>
  %s = arith.constant dense<[[0.0, 1.0, 2.0, 2.0, 2.0], [0.0, 0.0, 0.0, 0.0, 0.0]]> : tensor<2x5xf32>
  %xs = tensor.cast %s : tensor<2x5xf32> to tensor<?x5xf32>

  // CHECK: sizes = [1, 5]
  // CHECK-NEXT: {{\[\[}}0, 0, 0, 1, 3]]
  %0 = call @relu_forward(%x) : (tensor<?x5xf32>) -> tensor<?x5xf32>
  call @print(%0) : (tensor<?x5xf32>) -> ()
  // CHECK: {{\[\[}}-0.2, -0.05, 0, 1, 3]]
  %1 = call @leaky_forward(%x) : (tensor<?x5xf32>) -> tensor<?x5xf32>
  call @print(%1) : (tensor<?x5xf32>) -> ()
  // CHECK: {{\[\[}}-0.964028, -0.462117, 0, 0.761594, 0.995055]]
  %2 = call @tanh_forward(%x) : (tensor<?x5xf32>) -> tensor<?x5xf32>
  call @print(%2) : (tensor<?x5xf32>) -> ()
  // CHECK: {{\[\[}}0.119203, 0.377541, 0.5, 0.731059, 0.952574]]
  %3 = call @sigmoid_forward(%x) : (tensor<?x5xf32>) -> tensor<?x5xf32>
  call @print(%3) : (tensor<?x5xf32>) -> ()
  // CHECK: {{\[\[}}-0.238406, -0.18877, 0, 0.731059, 2.85772]]
  %4 = call @silu_forward(%x) : (tensor<?x5xf32>) -> tensor<?x5xf32>
  call @print(%4) : (tensor<?x5xf32>) -> ()
  // x * Phi(x):
  // CHECK: {{\[\[}}-0.0455003, -0.154269, 0, 0.841345, 2.99595]]
  %5 = call @gelu_forward(%x) : (tensor<?x5xf32>) -> tensor<?x5xf32>
  call @print(%5) : (tensor<?x5xf32>) -> ()
  // x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))):
  // CHECK: {{\[\[}}-0.0454023, -0.154286, 0, 0.841192, 2.99636]]
  %6 = call @gelu_tanh_forward(%x) : (tensor<?x5xf32>) -> tensor<?x5xf32>
  call @print(%6) : (tensor<?x5xf32>) -> ()
  // CHECK: {{\[\[}}-2, -0.5, 0, 1, 3]]
  %7 = call @identity_forward(%x) : (tensor<?x5xf32>) -> tensor<?x5xf32>
  call @print(%7) : (tensor<?x5xf32>) -> ()
  // x * min(max(x + 3, 0), 6) / 6:
  // CHECK: {{\[\[}}-0.333333, -0.208333, 0, 0.666667, 3]]
  %hs = call @hardswish_forward(%x) : (tensor<?x5xf32>) -> tensor<?x5xf32>
  call @print(%hs) : (tensor<?x5xf32>) -> ()
  // e^x / (1 + e + 3 e^2) per row (25.8854); a row of zeros gives 1/5 each.
  // CHECK: sizes = [2, 5]
  // CHECK-NEXT: {{\[\[}}0.0386317, 0.105012, 0.285452, 0.285452, 0.285452],
  // CHECK-NEXT: {{\[}}0.2, 0.2, 0.2, 0.2, 0.2]]
  %8 = call @softmax_forward(%xs) : (tensor<?x5xf32>) -> tensor<?x5xf32>
  call @print(%8) : (tensor<?x5xf32>) -> ()
  return
}
