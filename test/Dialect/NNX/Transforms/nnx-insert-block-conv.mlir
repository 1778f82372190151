// nnx-insert-block on a convnet: a ResNet BasicBlock in a positional
// nnx.sequential (its forward: conv, bn, relu, conv, bn, add, relu). The
// copy's branch ends in its last batch norm, zeroed (weight and bias), so
// the add returns the copy's input, which the block's final ReLU made
// non-negative: the copy's own final ReLU keeps it. The sequential runs the
// copy after the block by position; the later block shifts one key. The
// preservation line runs both models (nnx-run) and compares at 1e-5.
// RUN: nnx-opt %s --nnx-insert-block="after=stage.0" | FileCheck %s
// RUN: %python %S/preservation/Inputs/nnxcheck.py --opt nnx-opt --run nnx-run %s --edit "nnx-insert-block{after=stage.0}" --edit "nnx-insert-block{after=stage.2}" --batch 2

// CHECK:      nnx.sequential @stage keying = positional {
// CHECK-NEXT:   nnx.module @"0" class = "BasicBlock" {
// CHECK:          nnx.batch_norm @bn2 {bias = dense<[1.000000e-01, -2.000000e-01]> : tensor<2xf32>
// CHECK:        nnx.module @"1" class = "BasicBlock" {
// CHECK:          nnx.conv2d @conv1 {{.*}}weight = dense<{{\[\[\[\[}}5.000000e-01
// CHECK:          nnx.batch_norm @bn2 {bias = dense<0.000000e+00> : tensor<2xf32>, {{.*}}weight = dense<0.000000e+00> : tensor<2xf32>}
// CHECK:        nnx.module @"2" class = "BasicBlock" {
// CHECK:          nnx.batch_norm @bn2 {bias = dense<[3.000000e-01, 1.000000e-01]> : tensor<2xf32>
// CHECK:      %[[S:.*]] = nnx.call @stage(%{{.*}}) :
// CHECK-NEXT:   nnx.return %[[S]]

nnx.model @m inputs(tensor<?x2x3x3xf32>) {
  nnx.module @net class = "Net" {
    nnx.sequential @stage keying = positional {
      nnx.module @"0" class = "BasicBlock" {
        nnx.conv2d @conv1 {in_channels = 2 : i64, out_channels = 2 : i64, kernel_size = array<i64: 1, 1>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64, weight = dense<[[[[0.5]], [[-1.0]]], [[[0.25]], [[0.75]]]]> : tensor<2x2x1x1xf32>}
        nnx.batch_norm @bn1 {running_mean = dense<[0.1, -0.1]> : tensor<2xf32>, running_var = dense<[1.5, 0.5]> : tensor<2xf32>, eps = 1.0e-05 : f64, momentum = 0.1 : f64, weight = dense<[1.2, 0.8]> : tensor<2xf32>, bias = dense<[0.05, 0.1]> : tensor<2xf32>}
        nnx.relu @relu
        nnx.conv2d @conv2 {in_channels = 2 : i64, out_channels = 2 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64, weight = dense<0.125> : tensor<2x2x3x3xf32>}
        nnx.batch_norm @bn2 {running_mean = dense<[0.2, 0.0]> : tensor<2xf32>, running_var = dense<[1.0, 2.0]> : tensor<2xf32>, eps = 1.0e-05 : f64, momentum = 0.1 : f64, weight = dense<[0.9, 1.1]> : tensor<2xf32>, bias = dense<[0.1, -0.2]> : tensor<2xf32>}
        nnx.forward @forward(%x: tensor<?x2x3x3xf32>) -> tensor<?x2x3x3xf32> {
          %c1 = nnx.call @conv1(%x) : (tensor<?x2x3x3xf32>) -> tensor<?x2x3x3xf32>
          %b1 = nnx.call @bn1(%c1) : (tensor<?x2x3x3xf32>) -> tensor<?x2x3x3xf32>
          %r1 = nnx.call @relu(%b1) : (tensor<?x2x3x3xf32>) -> tensor<?x2x3x3xf32>
          %c2 = nnx.call @conv2(%r1) : (tensor<?x2x3x3xf32>) -> tensor<?x2x3x3xf32>
          %b2 = nnx.call @bn2(%c2) : (tensor<?x2x3x3xf32>) -> tensor<?x2x3x3xf32>
          %a = nnx.fn.add %b2, %x : tensor<?x2x3x3xf32>, tensor<?x2x3x3xf32> -> tensor<?x2x3x3xf32>
          %y = nnx.call @relu(%a) : (tensor<?x2x3x3xf32>) -> tensor<?x2x3x3xf32>
          nnx.return %y : tensor<?x2x3x3xf32>
        }
      }
      nnx.module @"1" class = "BasicBlock" {
        nnx.conv2d @conv1 {in_channels = 2 : i64, out_channels = 2 : i64, kernel_size = array<i64: 1, 1>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64, weight = dense<[[[[1.5]], [[-0.5]]], [[[0.5]], [[1.0]]]]> : tensor<2x2x1x1xf32>}
        nnx.batch_norm @bn1 {running_mean = dense<[0.0, 0.3]> : tensor<2xf32>, running_var = dense<[1.0, 0.7]> : tensor<2xf32>, eps = 1.0e-05 : f64, momentum = 0.1 : f64, weight = dense<[1.0, 0.6]> : tensor<2xf32>, bias = dense<[-0.1, 0.2]> : tensor<2xf32>}
        nnx.relu @relu
        nnx.conv2d @conv2 {in_channels = 2 : i64, out_channels = 2 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64, weight = dense<-0.25> : tensor<2x2x3x3xf32>}
        nnx.batch_norm @bn2 {running_mean = dense<[0.0, 0.1]> : tensor<2xf32>, running_var = dense<[0.5, 1.0]> : tensor<2xf32>, eps = 1.0e-05 : f64, momentum = 0.1 : f64, weight = dense<[1.3, 0.7]> : tensor<2xf32>, bias = dense<[0.3, 0.1]> : tensor<2xf32>}
        nnx.forward @forward(%x: tensor<?x2x3x3xf32>) -> tensor<?x2x3x3xf32> {
          %c1 = nnx.call @conv1(%x) : (tensor<?x2x3x3xf32>) -> tensor<?x2x3x3xf32>
          %b1 = nnx.call @bn1(%c1) : (tensor<?x2x3x3xf32>) -> tensor<?x2x3x3xf32>
          %r1 = nnx.call @relu(%b1) : (tensor<?x2x3x3xf32>) -> tensor<?x2x3x3xf32>
          %c2 = nnx.call @conv2(%r1) : (tensor<?x2x3x3xf32>) -> tensor<?x2x3x3xf32>
          %b2 = nnx.call @bn2(%c2) : (tensor<?x2x3x3xf32>) -> tensor<?x2x3x3xf32>
          %a = nnx.fn.add %b2, %x : tensor<?x2x3x3xf32>, tensor<?x2x3x3xf32> -> tensor<?x2x3x3xf32>
          %y = nnx.call @relu(%a) : (tensor<?x2x3x3xf32>) -> tensor<?x2x3x3xf32>
          nnx.return %y : tensor<?x2x3x3xf32>
        }
      }
    }
    nnx.forward @forward(%x: tensor<?x2x3x3xf32>) -> tensor<?x2x3x3xf32> {
      %s = nnx.call @stage(%x) : (tensor<?x2x3x3xf32>) -> tensor<?x2x3x3xf32>
      nnx.return %s : tensor<?x2x3x3xf32>
    }
  }
}
