// RUN: nnx-opt %s -split-input-file --nnx-outline-layers | FileCheck %s

// Two convolutions of the same shapes share one kernel, called twice; the
// padding of the input and the fill of the destination move into it (the
// zero constant is cloned, the destination's tensor.empty is passed). A
// convolution of other shapes (stride 2) gets a kernel of its own, with the
// elementwise ReLU that alone reads its result: the conv's epilogue, which
// the schedule applies to each block of the conv (ConvEpilogues.cpp).
// CHECK-LABEL: func.func @forward(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<?x4x8x8xf32>, %[[W1:[^:]*]]: tensor<4x4x3x3xf32>, %[[W2:[^:]*]]: tensor<4x4x3x3xf32>, %[[W3:[^:]*]]: tensor<4x4x3x3xf32>
// CHECK-NOT:     tensor.pad
// CHECK-NOT:     linalg.
// CHECK:         %[[E:.*]] = tensor.empty(%{{.*}}) : tensor<?x4x8x8xf32>
// CHECK:         %[[C1:.*]] = call @forward_layer_0(%[[X]], %[[E]], %[[W1]])
// CHECK:         %[[C2:.*]] = call @forward_layer_0(%[[C1]], %{{.*}}, %[[W2]])
// CHECK:         %[[R:.*]] = call @forward_layer_1(%{{.*}}, %[[C2]], %[[W3]], %{{.*}}) : (tensor<?x4x4x4xf32>, tensor<?x4x8x8xf32>, tensor<4x4x3x3xf32>, tensor<?x4x4x4xf32>) -> tensor<?x4x4x4xf32>
// CHECK:         return %[[R]]
// CHECK:       func.func private @forward_layer_0(%[[I:[^:]*]]: tensor<?x4x8x8xf32>, %[[D:[^:]*]]: tensor<?x4x8x8xf32>, %[[W:[^:]*]]: tensor<4x4x3x3xf32>) -> tensor<?x4x8x8xf32>
// CHECK:         %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[P:.*]] = tensor.pad %[[I]] low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK:         %[[F:.*]] = linalg.fill ins(%[[Z]] : f32) outs(%[[D]] : tensor<?x4x8x8xf32>)
// CHECK:         %[[CV:.*]] = linalg.conv_2d_nchw_fchw {{.*}} ins(%[[P]], %[[W]] : {{.*}}) outs(%[[F]] : tensor<?x4x8x8xf32>)
// CHECK:         return %[[CV]]
// CHECK:       func.func private @forward_layer_1(
// CHECK:         %[[CV3:.*]] = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
// CHECK:         %[[RELU:.*]] = linalg.generic {{.*}} ins(%[[CV3]] : tensor<?x4x4x4xf32>)
// CHECK:           arith.maximumf
// CHECK:         return %[[RELU]]
// CHECK-NOT:   func.func private @forward_layer_2
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @forward(%x: tensor<?x4x8x8xf32>, %w1: tensor<4x4x3x3xf32>, %w2: tensor<4x4x3x3xf32>, %w3: tensor<4x4x3x3xf32>) -> tensor<?x4x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x4x8x8xf32>
  %p1 = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<?x4x8x8xf32> to tensor<?x4x10x10xf32>
  %e1 = tensor.empty(%n) : tensor<?x4x8x8xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<?x4x8x8xf32>) -> tensor<?x4x8x8xf32>
  %y1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
          ins(%p1, %w1 : tensor<?x4x10x10xf32>, tensor<4x4x3x3xf32>) outs(%f1 : tensor<?x4x8x8xf32>) -> tensor<?x4x8x8xf32>
  %p2 = tensor.pad %y1 low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<?x4x8x8xf32> to tensor<?x4x10x10xf32>
  %e2 = tensor.empty(%n) : tensor<?x4x8x8xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<?x4x8x8xf32>) -> tensor<?x4x8x8xf32>
  %y2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
          ins(%p2, %w2 : tensor<?x4x10x10xf32>, tensor<4x4x3x3xf32>) outs(%f2 : tensor<?x4x8x8xf32>) -> tensor<?x4x8x8xf32>
  %e3 = tensor.empty(%n) : tensor<?x4x4x4xf32>
  %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<?x4x4x4xf32>) -> tensor<?x4x4x4xf32>
  %y3 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
          ins(%y2, %w3 : tensor<?x4x8x8xf32>, tensor<4x4x3x3xf32>) outs(%f3 : tensor<?x4x4x4xf32>) -> tensor<?x4x4x4xf32>
  %e4 = tensor.empty(%n) : tensor<?x4x4x4xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%y3 : tensor<?x4x4x4xf32>) outs(%e4 : tensor<?x4x4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.maximumf %in, %zero : f32
    linalg.yield %0 : f32
  } -> tensor<?x4x4x4xf32>
  return %r : tensor<?x4x4x4xf32>
}

// -----

// A fill used by two ops stays (each takes the filled tensor); a gather
// that reads a captured table stays in the function, where the table's
// layout can follow it; a lone fill is not a kernel.
// CHECK-LABEL: func.func @stays(
// CHECK:         %[[F:.*]] = linalg.fill
// CHECK:         call @stays_layer_0(%{{.*}}, %[[F]])
// CHECK:         call @stays_layer_0(%{{.*}}, %[[F]])
// CHECK:         linalg.generic
// CHECK:           tensor.extract
// CHECK:       func.func private @stays_layer_0(
// CHECK-NOT:     linalg.fill
// CHECK:         linalg.matmul
// CHECK-NOT:   func.func private @stays_layer_1
#map = affine_map<(d0, d1) -> (d0)>
#map1 = affine_map<(d0, d1) -> (d0, d1)>
func.func @stays(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>, %ids: tensor<4xindex>, %table: tensor<16x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %m1 = linalg.matmul ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  %m2 = linalg.matmul ins(%b, %a : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  %g = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel"]}
      ins(%ids : tensor<4xindex>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%id: index, %out: f32):
    %j = linalg.index 1 : index
    %v = tensor.extract %table[%id, %j] : tensor<16x4xf32>
    linalg.yield %v : f32
  } -> tensor<4x4xf32>
  return %m1, %m2, %g, %f : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// A conv's filter permuted to its layout (a linalg.transpose of an argument,
// as nnx-channels-last writes it) moves into the conv's kernel with a
// destination of its own, though the two transposes shared one: the kernel
// argument is the stored filter, so the parameter layouts fold the
// permutation (ParameterLayouts.cpp), instead of a transpose per call.
// CHECK-LABEL: func.func @forward(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<?x8x8x4xf32>, %[[W1:[^:]*]]: tensor<4x4x1x1xf32>, %[[W2:[^:]*]]: tensor<4x4x1x1xf32>
// CHECK-NOT:     linalg.transpose
// CHECK:         %[[Y:.*]] = call @forward_layer_0(%[[W1]], %{{.*}}, %[[X]])
// CHECK:         call @forward_layer_0(%[[W2]], %{{.*}}, %[[Y]])
// CHECK-LABEL: func.func private @forward_layer_0(
// CHECK-SAME:      %[[W:[^:]*]]: tensor<4x4x1x1xf32>
// CHECK:         %[[T:.*]] = tensor.empty() : tensor<1x1x4x4xf32>
// CHECK:         %[[K:.*]] = linalg.transpose ins(%[[W]] : tensor<4x4x1x1xf32>) outs(%[[T]] : tensor<1x1x4x4xf32>) permutation = [2, 3, 1, 0]
// CHECK:         linalg.conv_2d_nhwc_hwcf {{.*}} ins(%{{.*}}, %[[K]] :
func.func @forward(%x: tensor<?x8x8x4xf32>, %w1: tensor<4x4x1x1xf32>, %w2: tensor<4x4x1x1xf32>) -> tensor<?x8x8x4xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x8x8x4xf32>
  %t = tensor.empty() : tensor<1x1x4x4xf32>
  %k1 = linalg.transpose ins(%w1 : tensor<4x4x1x1xf32>) outs(%t : tensor<1x1x4x4xf32>) permutation = [2, 3, 1, 0]
  %e1 = tensor.empty(%n) : tensor<?x8x8x4xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<?x8x8x4xf32>) -> tensor<?x8x8x4xf32>
  %c1 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%x, %k1 : tensor<?x8x8x4xf32>, tensor<1x1x4x4xf32>) outs(%f1 : tensor<?x8x8x4xf32>) -> tensor<?x8x8x4xf32>
  %k2 = linalg.transpose ins(%w2 : tensor<4x4x1x1xf32>) outs(%t : tensor<1x1x4x4xf32>) permutation = [2, 3, 1, 0]
  %e2 = tensor.empty(%n) : tensor<?x8x8x4xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<?x8x8x4xf32>) -> tensor<?x8x8x4xf32>
  %c2 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%c1, %k2 : tensor<?x8x8x4xf32>, tensor<1x1x4x4xf32>) outs(%f2 : tensor<?x8x8x4xf32>) -> tensor<?x8x8x4xf32>
  return %c2 : tensor<?x8x8x4xf32>
}
