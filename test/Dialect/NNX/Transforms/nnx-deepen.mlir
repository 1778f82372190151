// RUN: split-file %s %t
// RUN: nnx-opt %t/pos.mlir --nnx-deepen="after=body.1" | FileCheck %t/pos.mlir
// RUN: nnx-opt %t/named.mlir --nnx-deepen="after=relu" --nnx-deepen="after=relu" | FileCheck %t/named.mlir
// RUN: nnx-opt %t/call.mlir --nnx-deepen="after=s.1" | FileCheck %t/call.mlir
// RUN: nnx-opt %t/ff.mlir --nnx-deepen="after=layers.0" | FileCheck %t/ff.mlir
// RUN: nnx-opt %t/ff2.mlir --nnx-deepen="after=layers.1" | FileCheck %t/ff2.mlir
// RUN: nnx-opt %t/wide.mlir --nnx-deepen="after=relu" | FileCheck %t/wide.mlir
// The blob holds the exact identity: the deepened model computes what the
// original does, bit for bit.
// RUN: %python %S/../../../nnx-run/Inputs/make_inputs.py %t/in
// RUN: nnx-opt %t/wide.mlir --nnx-deepen="after=relu" -o %t/wide-deep.mlir
// RUN: nnx-run %t/wide.mlir --input %t/in/x8.npy --output %t/y.npy
// RUN: nnx-run %t/wide-deep.mlir --input %t/in/x8.npy --output %t/y-deep.npy
// RUN: cmp %t/y.npy %t/y-deep.npy
// RUN: nnx-opt %t/cnn.mlir --nnx-deepen="after=layers.1" | FileCheck %t/cnn.mlir --check-prefix=CNN
// RUN: nnx-opt %t/cnn.mlir --nnx-deepen="after=layers.0 kernel-size=1" | FileCheck %t/cnn.mlir --check-prefix=CNN1X1
// RUN: nnx-opt %t/cnn.mlir --nnx-deepen="after=fcs.0" | FileCheck %t/cnn.mlir --check-prefix=CNNFC

//--- pos.mlir
// A positional container is rebuilt by position: the identity Linear and the
// ReLU become "2" and "3", later keys shift by two, and every alias that named
// a shifted module (inside the container and outside) still resolves to it.
// The new modules are trainable and in the container's mode (train); the
// existing ones keep theirs.
// CHECK-LABEL: nnx.model @pos
// CHECK:      nnx.sequential @body keying = positional attributes {train} {
// CHECK-NEXT:   nnx.linear @"0" {bias = dense<0.000000e+00> : tensor<2xf32>, weight = dense<1.000000e+00> : tensor<2x4xf32>}
// CHECK-NEXT:   nnx.relu @"1"
// CHECK-NEXT:   nnx.linear @"2" {bias = dense<0.000000e+00> : tensor<2xf32>, train, weight = dense<{{\[}}[1.000000e+00, 0.000000e+00], [0.000000e+00, 1.000000e+00]]> : tensor<2x2xf32>}
// CHECK-NEXT:   nnx.relu @"3" {train}
// CHECK-NEXT:   nnx.linear @"4" {weight = dense<5.000000e-01> : tensor<2x2xf32>}
// CHECK-NEXT:   nnx.alias @"5" = @body::@"4"
// CHECK-NEXT: }
// CHECK-NEXT: nnx.alias @tied = @body::@"4"
nnx.model @pos inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    nnx.sequential @body keying = positional attributes {train} {
      nnx.linear @"0" {weight = dense<1.0> : tensor<2x4xf32>, bias = dense<0.0> : tensor<2xf32>}
      nnx.relu @"1"
      nnx.linear @"2" {weight = dense<0.5> : tensor<2x2xf32>}
      nnx.alias @"3" = @body::@"2"
    }
    nnx.alias @tied = @body::@"2"
  }
}

//--- named.mlir
// A named container keeps every key. The new keys use the smallest N for
// which both _nnx_deepen_linear_N and _nnx_deepen_relu_N are unused (0 is
// taken here by a user module), and go right after the site: a second deepen
// at the same site lands before the first one's modules. The ReLU is fed
// through a layer_norm; the element type (bf16) comes from the feeding
// Linear; the container is in eval mode, so the new modules are too.
// CHECK-LABEL: nnx.model @named
// CHECK:      nnx.linear @fc
// CHECK-NEXT: nnx.layer_norm @ln
// CHECK-NEXT: nnx.relu @relu {train}
// CHECK-NEXT: nnx.linear @_nnx_deepen_linear_2 {bias = dense<0.000000e+00> : tensor<2xbf16>, weight = dense<{{\[}}[1.000000e+00, 0.000000e+00], [0.000000e+00, 1.000000e+00]]> : tensor<2x2xbf16>}
// CHECK-NEXT: nnx.relu @_nnx_deepen_relu_2{{$}}
// CHECK-NEXT: nnx.linear @_nnx_deepen_linear_1 {bias = dense<0.000000e+00> : tensor<2xbf16>, weight = dense<{{\[}}[1.000000e+00, 0.000000e+00], [0.000000e+00, 1.000000e+00]]> : tensor<2x2xbf16>}
// CHECK-NEXT: nnx.relu @_nnx_deepen_relu_1{{$}}
// CHECK-NEXT: nnx.relu @_nnx_deepen_relu_0{{$}}
// CHECK-NEXT: nnx.linear @"1" {weight = dense<1.000000e+00> : tensor<3x2xbf16>}
nnx.model @named inputs(tensor<?x4xbf16>) {
  nnx.sequential @net keying = named {
    nnx.linear @fc {weight = dense<1.0> : tensor<2x4xbf16>}
    nnx.layer_norm @ln {normalized_shape = array<i64: 2>, weight = dense<1.0> : tensor<2xbf16>}
    nnx.relu @relu {train}
    nnx.relu @_nnx_deepen_relu_0
    nnx.linear @"1" {weight = dense<1.0> : tensor<3x2xbf16>}
  }
}

//--- call.mlir
// nnx.call references into a rebuilt positional container are retargeted.
// CHECK-LABEL: nnx.model @call
// CHECK:      nnx.linear @"4" {weight = dense<2.000000e+00> : tensor<2x2xf32>}
// CHECK:      nnx.forward
// CHECK-NEXT: %[[A:.*]] = nnx.call @s(%{{.*}})
// CHECK-NEXT: %[[B:.*]] = nnx.call @s::@"4"(%[[A]])
// CHECK-NEXT: nnx.return %[[B]]
nnx.model @call inputs(tensor<?x2xf32>) {
  nnx.module @blk class = "Block" {
    nnx.sequential @s keying = positional {
      nnx.linear @"0" {weight = dense<1.0> : tensor<2x2xf32>}
      nnx.relu @"1"
      nnx.linear @"2" {weight = dense<2.0> : tensor<2x2xf32>}
    }
    nnx.forward @forward(%x: tensor<?x2xf32>) -> tensor<?x2xf32> {
      %a = nnx.call @s(%x) : (tensor<?x2xf32>) -> tensor<?x2xf32>
      %b = nnx.call @s::@"2"(%a) : (tensor<?x2xf32>) -> tensor<?x2xf32>
      nnx.return %b : tensor<?x2xf32>
    }
  }
}

//--- ff.mlir
// feed_fwd: one more hidden_dims entry; a nonzero scalar dropout is
// materialized into a per-layer list with 0.0 at the new site; no explicit
// activations list appears (the default relu covers the new site). The new
// Linear joins `layers` in its mode (train).
// CHECK-LABEL: nnx.model @ff
// CHECK:      nnx.feed_fwd @net attributes {dropout = 2.000000e-01 : f64, dropout_probs = [2.000000e-01, 0.000000e+00, 2.000000e-01], hidden_dims = array<i64: 2, 2, 3>, input_dim = 4 : i64, output_dim = 2 : i64}
// CHECK-NEXT: nnx.module_list @layers attributes {train} {
// CHECK-NEXT:   nnx.linear @"0" {weight = dense<1.000000e+00> : tensor<2x4xf32>}
// CHECK-NEXT:   nnx.linear @"1" {bias = dense<0.000000e+00> : tensor<2xf32>, train, weight = dense<{{\[}}[1.000000e+00, 0.000000e+00], [0.000000e+00, 1.000000e+00]]> : tensor<2x2xf32>}
// CHECK-NEXT:   nnx.linear @"2" {weight = dense<1.000000e+00> : tensor<3x2xf32>}
// CHECK-NEXT:   nnx.linear @"3" {weight = dense<1.000000e+00> : tensor<2x3xf32>}
nnx.model @ff inputs(tensor<?x4xf32>) {
  nnx.feed_fwd @net attributes {input_dim = 4, hidden_dims = array<i64: 2, 3>, output_dim = 2, dropout = 0.2 : f64} {
    nnx.module_list @layers attributes {train} {
      nnx.linear @"0" {weight = dense<1.0> : tensor<2x4xf32>}
      nnx.linear @"1" {weight = dense<1.0> : tensor<3x2xf32>}
      nnx.linear @"2" {weight = dense<1.0> : tensor<2x3xf32>}
    }
  }
}

//--- ff2.mlir
// feed_fwd with per-layer overrides: the override (relu) wins over the tanh
// default at site 1; "relu" is inserted into the explicit activations list
// and 0.0 into dropout_probs; every other site keeps its own values.
// CHECK-LABEL: nnx.model @ff2
// CHECK:      nnx.feed_fwd @net attributes {activation = #nnx.activation<tanh>, activations = [#nnx.activation<tanh>, #nnx.activation<relu>, #nnx.activation<relu>], dropout_probs = [1.000000e-01, 3.000000e-01, 0.000000e+00], hidden_dims = array<i64: 3, 2, 2>, input_dim = 4 : i64, output_dim = 2 : i64}
// CHECK:      nnx.linear @"1" {weight = dense<1.000000e+00> : tensor<2x3xf32>}
// CHECK-NEXT: nnx.linear @"2" {bias = dense<0.000000e+00> : tensor<2xf32>, weight = dense<{{\[}}[1.000000e+00, 0.000000e+00], [0.000000e+00, 1.000000e+00]]> : tensor<2x2xf32>}
// CHECK-NEXT: nnx.linear @"3" {weight = dense<1.000000e+00> : tensor<2x2xf32>}
nnx.model @ff2 inputs(tensor<?x4xf32>) {
  nnx.feed_fwd @net attributes {input_dim = 4, hidden_dims = array<i64: 3, 2>, output_dim = 2, activation = #nnx.activation<tanh>, activations = [#nnx.activation<tanh>, #nnx.activation<relu>], dropout_probs = [0.1, 0.3]} {
    nnx.module_list @layers {
      nnx.linear @"0" {weight = dense<1.0> : tensor<3x4xf32>}
      nnx.linear @"1" {weight = dense<1.0> : tensor<2x3xf32>}
      nnx.linear @"2" {weight = dense<1.0> : tensor<2x2xf32>}
    }
  }
}

//--- wide.mlir
// A new tensor above 1 KiB (the 24 x 24 identity) is a dense_resource blob,
// not a uniqued dense literal; the zero bias (a splat) stays dense.
// CHECK-LABEL: nnx.model @wide
// CHECK:      nnx.linear @{{[^ ]+}} {bias = dense<0.000000e+00> : tensor<24xf32>, weight = dense_resource<nnx_tensor{{[_0-9]*}}> : tensor<24x24xf32>}
// CHECK:      dialect_resources
// CHECK-NEXT:   builtin: {
// CHECK-NEXT:     nnx_tensor{{[_0-9]*}}: "0x04000000
nnx.model @wide inputs(tensor<?x8xf32>) {
  nnx.sequential @net keying = named {
    nnx.linear @fc {weight = dense<0.5> : tensor<24x8xf32>, bias = dense<-1.0> : tensor<24xf32>}
    nnx.relu @relu
    nnx.linear @head {weight = dense<0.25> : tensor<2x24xf32>}
  }
}

//--- cnn.mlir
// conv_nn: the new site gets relu (the default), dropout 0 (the nonzero
// scalar dropout is materialized per site) and no pool (the scalar pool is
// materialized per block); a kernel other than kernel_size is recorded in
// kernel_sizes. An identity conv after a block keeps "same" padding.
// CNN:         nnx.conv_nn @net attributes {channels = array<i64: 2, 3, 3>, dropout = 2.500000e-01 : f64, dropout_probs = [2.500000e-01, 2.500000e-01, 0.000000e+00, 2.500000e-01], hidden_dims = array<i64: 2>, in_channels = 2 : i64, output_dim = 1 : i64, pool = 2 : i64, pools = array<i64: 2, 2, 0>}
// CNN:         nnx.conv2d @"2" {bias = dense<0.000000e+00> : tensor<3xf32>, {{.*}}in_channels = 3 : i64, kernel_size = array<i64: 3, 3>, out_channels = 3 : i64, padding = array<i64: 1, 1>{{.*}}tensor<3x3x3x3xf32>}
// CNN1X1:      nnx.conv_nn @net attributes {channels = array<i64: 2, 2, 3>, {{.*}}kernel_sizes = array<i64: 3, 1, 3>, output_dim = 1 : i64, pool = 2 : i64, pools = array<i64: 2, 0, 2>}
// CNN1X1:      nnx.conv2d @"1" {{.*}}kernel_size = array<i64: 1, 1>{{.*}}padding = array<i64: 0, 0>{{.*}}weight = dense<{{\[\[\[\[}}1.000000e+00]], {{\[\[}}0.000000e+00]]], {{\[\[\[}}0.000000e+00]], {{\[\[}}1.000000e+00]]]]> : tensor<2x2x1x1xf32>}
// CNN1X1-NEXT: nnx.conv2d @"2" {{.*}}in_channels = 2 : i64
// CNNFC:       nnx.conv_nn @net attributes {channels = array<i64: 2, 3>, dropout = 2.500000e-01 : f64, dropout_probs = [2.500000e-01, 2.500000e-01, 2.500000e-01, 0.000000e+00], hidden_dims = array<i64: 2, 2>, in_channels = 2 : i64, output_dim = 1 : i64, pool = 2 : i64}
// CNNFC:       nnx.linear @"1" {bias = dense<0.000000e+00> : tensor<2xf32>, weight = dense<{{\[}}[1.000000e+00, 0.000000e+00], [0.000000e+00, 1.000000e+00]]> : tensor<2x2xf32>}
// CNNFC-NEXT:  nnx.linear @"2" {weight = dense<1.000000e+00> : tensor<1x2xf32>}
nnx.model @cnn inputs(tensor<?x2x8x8xf32>) {
  nnx.conv_nn @net attributes {in_channels = 2, channels = array<i64: 2, 3>, hidden_dims = array<i64: 2>, output_dim = 1, pool = 2, dropout = 0.25 : f64} {
    nnx.module_list @layers {
      nnx.conv2d @"0" {in_channels = 2 : i64, out_channels = 2 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, weight = dense<0.5> : tensor<2x2x3x3xf32>, bias = dense<0.1> : tensor<2xf32>}
      nnx.conv2d @"1" {in_channels = 2 : i64, out_channels = 3 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, weight = dense<0.25> : tensor<3x2x3x3xf32>}
    }
    nnx.module_list @fcs {
      nnx.linear @"0" {weight = dense<1.0> : tensor<2x3xf32>}
      nnx.linear @"1" {weight = dense<1.0> : tensor<1x2xf32>}
    }
  }
}
