// RUN: nnx-opt %s | FileCheck %s
// Round trip through text, generic form and bytecode must be lossless: each
// form parses back to the same custom-form text.
// RUN: nnx-opt %s | nnx-opt | FileCheck %s
// RUN: nnx-opt %s --mlir-print-op-generic | nnx-opt | FileCheck %s
// RUN: nnx-opt %s --emit-bytecode | nnx-opt | FileCheck %s
// RUN: nnx-opt %s > %t.txt && nnx-opt %s --emit-bytecode | nnx-opt > %t.bc.txt && diff %t.txt %t.bc.txt

// CHECK-LABEL: nnx.model @mlp inputs(tensor<?x4xf32>)
// CHECK-NEXT:    nnx.sequential @net keying = positional {
// CHECK-NEXT:      nnx.linear @"0" {bias = dense<0.000000e+00> : tensor<8xf32>, requires_grad = {bias = false}, weight = dense<5.000000e-01> : tensor<8x4xf32>}
// CHECK-NEXT:      nnx.relu @"1" {train}
// CHECK-NEXT:      nnx.dropout @"2" {p = 1.000000e-01 : f64}
// CHECK-NEXT:      nnx.linear @"3" {hooks = ["forward_hook"], weight = dense<2.500000e-01> : tensor<2x8xf32>}
nnx.model @mlp inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = positional {
    nnx.linear @"0" {weight = dense<0.5> : tensor<8x4xf32>, bias = dense<0.0> : tensor<8xf32>, requires_grad = {bias = false}}
    nnx.relu @"1" {train}
    nnx.dropout @"2" {p = 0.1 : f64}
    nnx.linear @"3" {weight = dense<0.25> : tensor<2x8xf32>, hooks = ["forward_hook"]}
  }
}

// Every leaf, parameters as dense_resource blobs.
// CHECK-LABEL: nnx.model @leaves inputs(tensor<?x3xi64>)
// CHECK:      nnx.embedding @embed {padding_idx = 0 : i64, weight = dense_resource<emb_w> : tensor<5x4xf32>}
// CHECK-NEXT: nnx.layer_norm @ln {bias = dense<0.000000e+00> : tensor<4xf32>, normalized_shape = array<i64: 4>, weight = dense<1.000000e+00> : tensor<4xf32>}
// CHECK-NEXT: nnx.rms_norm @rms {normalized_shape = array<i64: 4>, weight = dense<1.000000e+00> : tensor<4xf32>}
// CHECK-NEXT: nnx.gelu @gelu {approximate = #nnx.gelu_approximation<tanh>}
// CHECK-NEXT: nnx.tanh @tanh
// CHECK-NEXT: nnx.sigmoid @sigmoid
// CHECK-NEXT: nnx.silu @silu
// CHECK-NEXT: nnx.leaky_relu @leaky {negative_slope = 2.000000e-01 : f64}
// CHECK-NEXT: nnx.identity @id
// CHECK-NEXT: nnx.hardswish @hs {nnx.probes = [#nnx.probe<name = "hs.out", point = output, index = 0, kind = read>, #nnx.probe<name = "hs.in", point = input, index = 0, kind = write>]}
// CHECK-NEXT: nnx.softmax @sm{{$}}
nnx.model @leaves inputs(tensor<?x3xi64>) {
  nnx.sequential @net keying = named {
    nnx.embedding @embed {weight = dense_resource<emb_w> : tensor<5x4xf32>, padding_idx = 0}
    nnx.layer_norm @ln {normalized_shape = array<i64: 4>, eps = 1.0e-5 : f64, weight = dense<1.0> : tensor<4xf32>, bias = dense<0.0> : tensor<4xf32>}
    nnx.rms_norm @rms {normalized_shape = array<i64: 4>, weight = dense<1.0> : tensor<4xf32>}
    nnx.gelu @gelu {approximate = #nnx.gelu_approximation<tanh>}
    nnx.tanh @tanh
    nnx.sigmoid @sigmoid
    nnx.silu @silu
    nnx.leaky_relu @leaky {negative_slope = 0.2 : f64}
    nnx.identity @id
    nnx.hardswish @hs {nnx.probes = [#nnx.probe<name = "hs.out", point = output, index = 0, kind = read>,
                                     #nnx.probe<name = "hs.in", point = input, index = 0, kind = write>]}
    nnx.softmax @sm {dim = -1 : i64}
  }
}

// CHECK-LABEL: nnx.model @bn inputs(tensor<?x4xf32>)
// CHECK: nnx.batch_norm @bn {bias = dense<0.000000e+00> : tensor<4xf32>, running_mean = dense<0.000000e+00> : tensor<4xf32>, running_var = dense<1.000000e+00> : tensor<4xf32>, train, weight = dense<1.000000e+00> : tensor<4xf32>}
nnx.model @bn inputs(tensor<?x4xf32>) {
  nnx.batch_norm @bn {running_mean = dense<0.0> : tensor<4xf32>, running_var = dense<1.0> : tensor<4xf32>, weight = dense<1.0> : tensor<4xf32>, bias = dense<0.0> : tensor<4xf32>, train}
}

// Convolutional layers: conv2d (bias optional, depthwise groups), batch_norm
// on N x C x H x W.
// CHECK-LABEL: nnx.model @convnet inputs(tensor<?x3x?x?xf32>)
// CHECK-NEXT:    nnx.sequential @net keying = positional {
// CHECK-NEXT:      nnx.conv2d @"0" {bias = dense<0.000000e+00> : tensor<4xf32>, dilation = array<i64: 1, 1>, in_channels = 3 : i64, kernel_size = array<i64: 3, 3>, out_channels = 4 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>, weight = dense<1.000000e-01> : tensor<4x3x3x3xf32>}
// CHECK-NEXT:      nnx.batch_norm @"1" {running_mean = dense<0.000000e+00> : tensor<4xf32>, running_var = dense<1.000000e+00> : tensor<4xf32>}
// CHECK-NEXT:      nnx.conv2d @"2" {dilation = array<i64: 2, 1>, groups = 4 : i64, in_channels = 4 : i64, kernel_size = array<i64: 3, 1>, out_channels = 4 : i64, padding = array<i64: 0, 0>, stride = array<i64: 2, 1>, weight = dense<5.000000e-01> : tensor<4x1x3x1xf32>}
nnx.model @convnet inputs(tensor<?x3x?x?xf32>) {
  nnx.sequential @net keying = positional {
    nnx.conv2d @"0" {in_channels = 3 : i64, out_channels = 4 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64, weight = dense<0.1> : tensor<4x3x3x3xf32>, bias = dense<0.0> : tensor<4xf32>}
    nnx.batch_norm @"1" {running_mean = dense<0.0> : tensor<4xf32>, running_var = dense<1.0> : tensor<4xf32>}
    nnx.conv2d @"2" {in_channels = 4 : i64, out_channels = 4 : i64, kernel_size = array<i64: 3, 1>, stride = array<i64: 2, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 2, 1>, groups = 4 : i64, weight = dense<0.5> : tensor<4x1x3x1xf32>}
  }
}

// Pooling, flatten, conv1d and a grouped conv2d.
// CHECK-LABEL: nnx.model @pools inputs(tensor<?x4x?x?xf32>)
// CHECK-NEXT:    nnx.sequential @net keying = positional {
// CHECK-NEXT:      nnx.conv2d @"0" {dilation = array<i64: 1, 1>, groups = 2 : i64, in_channels = 4 : i64, kernel_size = array<i64: 3, 3>, out_channels = 6 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>, weight = dense<1.000000e-01> : tensor<6x2x3x3xf32>}
// CHECK-NEXT:      nnx.max_pool2d @"1" {ceil_mode, dilation = array<i64: 1, 1>, kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>}
// CHECK-NEXT:      nnx.avg_pool2d @"2" {count_include_pad, kernel_size = array<i64: 2, 2>, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>}
// CHECK-NEXT:      nnx.adaptive_avg_pool2d @"3" {output_size = array<i64: 1, 1>}
// CHECK-NEXT:      nnx.flatten @"4"{{$}}
nnx.model @pools inputs(tensor<?x4x?x?xf32>) {
  nnx.sequential @net keying = positional {
    nnx.conv2d @"0" {in_channels = 4 : i64, out_channels = 6 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 2 : i64, weight = dense<0.1> : tensor<6x2x3x3xf32>}
    nnx.max_pool2d @"1" {kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, ceil_mode}
    nnx.avg_pool2d @"2" {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, count_include_pad}
    nnx.adaptive_avg_pool2d @"3" {output_size = array<i64: 1, 1>}
    nnx.flatten @"4"
  }
}

// CHECK-LABEL: nnx.model @conv1d inputs(tensor<?x3x?xf32>)
// CHECK:         nnx.conv1d @"0" {bias = dense<0.000000e+00> : tensor<4xf32>, dilation = array<i64: 1>, in_channels = 3 : i64, kernel_size = array<i64: 3>, out_channels = 4 : i64, padding = array<i64: 1>, stride = array<i64: 2>, weight = dense<1.000000e-01> : tensor<4x3x3xf32>}
nnx.model @conv1d inputs(tensor<?x3x?xf32>) {
  nnx.sequential @net keying = positional {
    nnx.conv1d @"0" {in_channels = 3 : i64, out_channels = 4 : i64, kernel_size = array<i64: 3>, stride = array<i64: 2>, padding = array<i64: 1>, dilation = array<i64: 1>, weight = dense<0.1> : tensor<4x3x3xf32>, bias = dense<0.0> : tensor<4xf32>}
  }
}

// Recorded properties surgery must refuse.
// CHECK-LABEL: nnx.model @recorded inputs(tensor<?x4xf32>)
// CHECK: nnx.linear @wn {parametrizations = {weight = "weight_norm"}, weight = dense<1.000000e+00> : tensor<4x4xf32>}
// CHECK: nnx.linear @pr {pruned = ["weight"], weight = dense<1.000000e+00> : tensor<4x4xf32>}
// CHECK: nnx.linear @qat {subclass = "FakeQuantLinear", weight = dense<1.000000e+00> : tensor<4x4xf32>}
// CHECK: nnx.sequential @sub keying = named attributes {state = {scale = dense<1.000000e+00> : tensor<4xf32>}, subclass = "MySeq"}
nnx.model @recorded inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    nnx.linear @wn {weight = dense<1.0> : tensor<4x4xf32>, parametrizations = {weight = "weight_norm"}}
    nnx.linear @pr {weight = dense<1.0> : tensor<4x4xf32>, pruned = ["weight"]}
    nnx.linear @qat {weight = dense<1.0> : tensor<4x4xf32>, subclass = "FakeQuantLinear"}
    nnx.sequential @sub keying = named attributes {subclass = "MySeq", state = {scale = dense<1.0> : tensor<4xf32>}} {
      nnx.relu @act
    }
  }
}

// An uninitialized lazy layer is representable (surgery and lowering refuse
// it), so the model's whole-forward type check is skipped.
// CHECK-LABEL: nnx.model @lazy inputs(tensor<?x4xf32>)
// CHECK: nnx.linear @"0" {lazy, out_features = 8 : i64}
nnx.model @lazy inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = positional {
    nnx.linear @"0" {lazy, out_features = 8}
    nnx.relu @"1"
  }
}

// Custom module with a forward region, a nested call and an alias.
// CHECK-LABEL: nnx.model @res inputs(tensor<?x8xf32>)
// CHECK:      nnx.module @block class = "ResidualBlock" {
// CHECK:        nnx.alias @again = @inner::@proj
// CHECK:        nnx.forward @forward(%[[X:.*]]: tensor<?x8xf32>) -> tensor<?x8xf32> {
// CHECK-NEXT:     %[[H:.*]] = nnx.call @norm(%[[X]]) : (tensor<?x8xf32>) -> tensor<?x8xf32>
// CHECK-NEXT:     %[[P:.*]] = nnx.call @inner::@proj(%[[H]]) : (tensor<?x8xf32>) -> tensor<?x8xf32>
// CHECK-NEXT:     %[[Q:.*]] = nnx.call @again(%[[P]]) : (tensor<?x8xf32>) -> tensor<?x8xf32>
// CHECK-NEXT:     %[[Y:.*]] = arith.addf %[[X]], %[[Q]] {nnx.source = "add_0"} : tensor<?x8xf32>
// CHECK-NEXT:     nnx.return %[[Y]] : tensor<?x8xf32>
nnx.model @res inputs(tensor<?x8xf32>) {
  nnx.module @block class = "ResidualBlock" {
    nnx.layer_norm @norm {normalized_shape = array<i64: 8>}
    nnx.sequential @inner keying = named {
      nnx.linear @proj {weight = dense<1.0> : tensor<8x8xf32>}
    }
    nnx.alias @again = @inner::@proj
    nnx.forward @forward(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
      %h = nnx.call @norm(%x) : (tensor<?x8xf32>) -> tensor<?x8xf32>
      %p = nnx.call @inner::@proj(%h) : (tensor<?x8xf32>) -> tensor<?x8xf32>
      %q = nnx.call @again(%p) : (tensor<?x8xf32>) -> tensor<?x8xf32>
      %y = arith.addf %x, %q {nnx.source = "add_0"} : tensor<?x8xf32>
      nnx.return %y : tensor<?x8xf32>
    }
  }
}

// The forward is a function op (printed like func.func, always @forward):
// argument and result attributes, a function attribute dictionary and several
// results survive the round trip.
// CHECK-LABEL: nnx.model @fn inputs(tensor<?x4xf32>, tensor<?x4xf32>)
// CHECK-NEXT:    nnx.module @pair class = "Pair" {
// CHECK-NEXT:      nnx.relu @act
// CHECK-NEXT:      nnx.forward @forward(%[[A:.*]]: tensor<?x4xf32> {user.name = "a"}, %[[B:.*]]: tensor<?x4xf32>) -> (tensor<?x4xf32> {user.name = "sum"}, tensor<?x4xf32>) attributes {user.note = "pair"} {
// CHECK-NEXT:        %[[R:.*]] = nnx.call @act(%[[A]]) : (tensor<?x4xf32>) -> tensor<?x4xf32>
// CHECK-NEXT:        %[[S:.*]] = arith.addf %[[R]], %[[B]] : tensor<?x4xf32>
// CHECK-NEXT:        nnx.return %[[S]], %[[R]] : tensor<?x4xf32>, tensor<?x4xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:    }
nnx.model @fn inputs(tensor<?x4xf32>, tensor<?x4xf32>) {
  nnx.module @pair class = "Pair" {
    nnx.relu @act
    nnx.forward @forward(%a: tensor<?x4xf32> {user.name = "a"}, %b: tensor<?x4xf32>) -> (tensor<?x4xf32> {user.name = "sum"}, tensor<?x4xf32>) attributes {user.note = "pair"} {
      %r = nnx.call @act(%a) : (tensor<?x4xf32>) -> tensor<?x4xf32>
      %s = arith.addf %r, %b : tensor<?x4xf32>
      nnx.return %s, %r : tensor<?x4xf32>, tensor<?x4xf32>
    }
  }
}

// The exporter names each result by its Python path in the returned
// structure; a dropped None (`return y, None`) has no entry.
// CHECK-LABEL: nnx.model @named inputs(tensor<?x4xf32>)
// CHECK:         nnx.forward @forward(%{{.*}}: tensor<?x4xf32>) -> tensor<?x4xf32> attributes {nnx.output_names = ["0"]} {
nnx.model @named inputs(tensor<?x4xf32>) {
  nnx.module @b class = "B" {
    nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> attributes {nnx.output_names = ["0"]} {
      nnx.return %x : tensor<?x4xf32>
    }
  }
}

// `model(x, (h, c))`: each argument by its path in the PyTorch call.
// CHECK-LABEL: nnx.model @nested inputs(tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>)
// CHECK:         nnx.forward @forward({{.*}}) -> (tensor<?x4xf32>, tensor<?x4xf32>) attributes {nnx.input_names = ["0", "1.0", "1.1"], nnx.output_names = ["0", "1.0"]} {
nnx.model @nested inputs(tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>) {
  nnx.module @b class = "B" {
    nnx.forward @forward(%x: tensor<?x4xf32>, %h: tensor<?x4xf32>, %c: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>) attributes {nnx.input_names = ["0", "1.0", "1.1"], nnx.output_names = ["0", "1.0"]} {
      nnx.return %x, %h : tensor<?x4xf32>, tensor<?x4xf32>
    }
  }
}

// A forward with no results.
// CHECK-LABEL: nnx.model @sink inputs(tensor<?x4xf32>)
// CHECK:         nnx.forward @forward(%{{.*}}: tensor<?x4xf32>) {
// CHECK-NEXT:      nnx.return{{$}}
nnx.model @sink inputs(tensor<?x4xf32>) {
  nnx.module @drop class = "Sink" {
    nnx.forward @forward(%x: tensor<?x4xf32>) {
      nnx.return
    }
  }
}

// CHECK-LABEL: nnx.model @ff inputs(tensor<?x4xf32>)
// CHECK: nnx.feed_fwd @net attributes {activation = #nnx.activation<gelu>, activations = [#nnx.activation<relu>, #nnx.activation<tanh>], dropout = 1.000000e-01 : f64, dropout_probs = [0.000000e+00, 5.000000e-01], hidden_dims = array<i64: 8, 6>, input_dim = 4 : i64, output_dim = 2 : i64} {
// CHECK-NEXT: nnx.module_list @layers {
nnx.model @ff inputs(tensor<?x4xf32>) {
  nnx.feed_fwd @net attributes {input_dim = 4, hidden_dims = array<i64: 8, 6>, output_dim = 2, activation = #nnx.activation<gelu>, activations = [#nnx.activation<relu>, #nnx.activation<tanh>], dropout = 0.1 : f64, dropout_probs = [0.0, 0.5]} {
    nnx.module_list @layers {
      nnx.linear @"0" {weight = dense<1.0> : tensor<8x4xf32>}
      nnx.linear @"1" {weight = dense<1.0> : tensor<6x8xf32>}
      nnx.linear @"2" {weight = dense<1.0> : tensor<2x6xf32>}
    }
  }
}

// A conv_nn with every optional param; a dropped block (an identity where
// the params say 4 -> 4).
// CHECK-LABEL: nnx.model @cnn inputs(tensor<?x3x8x8xf32>)
// CHECK: nnx.conv_nn @net attributes {activation = #nnx.activation<gelu>, activations = [#nnx.activation<relu>, #nnx.activation<tanh>, #nnx.activation<relu>], channels = array<i64: 4, 4>, dropout = 1.000000e-01 : f64, dropout_probs = [0.000000e+00, 5.000000e-01, 0.000000e+00], hidden_dims = array<i64: 6>, in_channels = 3 : i64, kernel_size = 5 : i64, kernel_sizes = array<i64: 3, 1>, output_dim = 2 : i64, pool = 2 : i64, pools = array<i64: 2, 0>} {
// CHECK-NEXT: nnx.module_list @layers {
// CHECK-NEXT:   nnx.conv2d @"0"
// CHECK-NEXT:   nnx.identity @"1"
// CHECK-NEXT: }
// CHECK-NEXT: nnx.module_list @fcs {
// CHECK-NEXT:   nnx.linear @"0" {weight = dense<1.000000e+00> : tensor<6x4xf32>}
// CHECK-NEXT:   nnx.linear @"1" {weight = dense<1.000000e+00> : tensor<2x6xf32>}
// The defaults (kernel_size 3, pool 0, relu, dropout 0) are not printed.
// CHECK-LABEL: nnx.model @cnn_defaults
// CHECK: nnx.conv_nn @net attributes {channels = array<i64: 4>, hidden_dims = array<i64>, in_channels = 3 : i64, output_dim = 2 : i64} {
nnx.model @cnn inputs(tensor<?x3x8x8xf32>) {
  nnx.conv_nn @net attributes {in_channels = 3, channels = array<i64: 4, 4>, hidden_dims = array<i64: 6>, output_dim = 2, kernel_size = 5, kernel_sizes = array<i64: 3, 1>, pool = 2, pools = array<i64: 2, 0>, activation = #nnx.activation<gelu>, activations = [#nnx.activation<relu>, #nnx.activation<tanh>, #nnx.activation<relu>], dropout = 0.1 : f64, dropout_probs = [0.0, 0.5, 0.0]} {
    nnx.module_list @layers {
      nnx.conv2d @"0" {in_channels = 3 : i64, out_channels = 4 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, weight = dense<0.1> : tensor<4x3x3x3xf32>}
      nnx.identity @"1"
    }
    nnx.module_list @fcs {
      nnx.linear @"0" {weight = dense<1.0> : tensor<6x4xf32>}
      nnx.linear @"1" {weight = dense<1.0> : tensor<2x6xf32>}
    }
  }
}

nnx.model @cnn_defaults inputs(tensor<?x3x8x8xf32>) {
  nnx.conv_nn @net attributes {in_channels = 3, channels = array<i64: 4>, hidden_dims = array<i64>, output_dim = 2} {
    nnx.module_list @layers {
      nnx.conv2d @"0" {in_channels = 3 : i64, out_channels = 4 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, weight = dense<0.1> : tensor<4x3x3x3xf32>}
    }
    nnx.module_list @fcs {
      nnx.linear @"0" {weight = dense<1.0> : tensor<2x4xf32>}
    }
  }
}

// Tensors in the model's weights file: only the type is in the IR.
// CHECK-LABEL: nnx.model @external inputs(tensor<?x4xf32>) attributes {weights = "external.safetensors"}
// CHECK-NEXT:    nnx.linear @fc {bias = dense<0.000000e+00> : tensor<2xf32>, weight = #nnx.external<"fc.weight"> : tensor<2x4xf32>}
nnx.model @external inputs(tensor<?x4xf32>) attributes {weights = "external.safetensors"} {
  nnx.linear @fc {weight = #nnx.external<"fc.weight"> : tensor<2x4xf32>,
                  bias = dense<0.0> : tensor<2xf32>}
}

// CHECK-LABEL: func.func @probes
// CHECK: nnx.probe read "layers.0.attention_output" %{{.*}} : tensor<?x8xf32>
// CHECK: nnx.probe write "layers.0.mlp_output" %{{.*}} : tensor<?x8xf32>
func.func @probes(%a: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %0 = nnx.probe read "layers.0.attention_output" %a : tensor<?x8xf32>
  %1 = nnx.probe write "layers.0.mlp_output" %0 : tensor<?x8xf32>
  return %1 : tensor<?x8xf32>
}

{-#
  dialect_resources: {
    builtin: {
      emb_w: "0x040000000000803F0000004000004040000080400000A0400000C0400000E04000000041000010410000204100003041000040410000504100006041000070410000804100008841000090410000984100000042"
    }
  }
#-}

// A forward reads the tensors its module registers on itself (nnx.state).
// CHECK-LABEL: nnx.model @rms
// CHECK:         nnx.module @norm class = "RMSNorm" attributes {state = {weight = dense<1.500000e+00> : tensor<4xf32>}}
// CHECK:           %[[W:.*]] = nnx.state "weight" : tensor<4xf32>
// CHECK:           nnx.fn.mul %{{.*}}, %[[W]]
nnx.model @rms inputs(tensor<?x?x4xf32>) {
  nnx.module @norm class = "RMSNorm" attributes {state = {weight = dense<1.5> : tensor<4xf32>}} {
    nnx.forward @forward(%x: tensor<?x?x4xf32>) -> tensor<?x?x4xf32> {
      %w = nnx.state "weight" : tensor<4xf32>
      %y = nnx.fn.mul %x, %w : tensor<?x?x4xf32>, tensor<4xf32> -> tensor<?x?x4xf32>
      nnx.return %y : tensor<?x?x4xf32>
    }
  }
}

// `nnx.buffers` marks which `state` entries are buffers (register_buffer):
// the others are parameters, and only they are counted.
// CHECK-LABEL: nnx.model @rope
// CHECK:         nnx.module @rotary class = "Rotary" attributes {nnx.buffers = ["inv_freq"], state = {inv_freq = dense<5.000000e-01> : tensor<2xf32>, scale = dense<1.000000e+00> : tensor<4xf32>}}
nnx.model @rope inputs(tensor<?x4xf32>) {
  nnx.module @rotary class = "Rotary" attributes {state = {inv_freq = dense<0.5> : tensor<2xf32>, scale = dense<1.0> : tensor<4xf32>}, nnx.buffers = ["inv_freq"]} {
    nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
      %s = nnx.state "scale" : tensor<4xf32>
      %y = nnx.fn.mul %x, %s : tensor<?x4xf32>, tensor<4xf32> -> tensor<?x4xf32>
      nnx.return %y : tensor<?x4xf32>
    }
  }
}

// A module_dict (nn.ModuleDict) keyed by names, holding a module_list and an
// alias; the owner's forward calls its children by path.
// CHECK-LABEL: nnx.model @gpt inputs(tensor<?x3xi64>)
// CHECK:         nnx.module_dict @transformer attributes {state = {scale = dense<2.000000e+00> : tensor<4xf32>}} {
// CHECK-NEXT:      nnx.embedding @wte {weight = dense<5.000000e-01> : tensor<16x4xf32>}
// CHECK-NEXT:      nnx.module_list @h {
// CHECK-NEXT:        nnx.linear @"0" {weight = dense<1.000000e+00> : tensor<4x4xf32>}
// CHECK-NEXT:      }
// CHECK-NEXT:      nnx.layer_norm @ln_f {normalized_shape = array<i64: 4>}
// CHECK-NEXT:      nnx.alias @tied = @transformer::@wte
// CHECK-NEXT:    }
// CHECK-NEXT:    nnx.module_dict @empty {
// CHECK-NEXT:    }
// CHECK:         nnx.call @transformer::@wte(%{{.*}}) : (tensor<?x3xi64>) -> tensor<?x3x4xf32>
// CHECK:         nnx.call @transformer::@h::@"0"(%{{.*}}) : (tensor<?x3x4xf32>) -> tensor<?x3x4xf32>
// CHECK:         nnx.call @transformer::@ln_f(%{{.*}}) : (tensor<?x3x4xf32>) -> tensor<?x3x4xf32>
nnx.model @gpt inputs(tensor<?x3xi64>) {
  nnx.module @net class = "GPT" {
    nnx.module_dict @transformer attributes {state = {scale = dense<2.0> : tensor<4xf32>}} {
      nnx.embedding @wte {weight = dense<0.5> : tensor<16x4xf32>}
      nnx.module_list @h {
        nnx.linear @"0" {weight = dense<1.0> : tensor<4x4xf32>}
      }
      nnx.layer_norm @ln_f {normalized_shape = array<i64: 4>}
      nnx.alias @tied = @transformer::@wte
    }
    nnx.module_dict @empty {
    }
    nnx.forward @forward(%ids: tensor<?x3xi64>) -> tensor<?x3x4xf32> {
      %e = nnx.call @transformer::@wte(%ids) : (tensor<?x3xi64>) -> tensor<?x3x4xf32>
      %h = nnx.call @transformer::@h::@"0"(%e) : (tensor<?x3x4xf32>) -> tensor<?x3x4xf32>
      %y = nnx.call @transformer::@ln_f(%h) : (tensor<?x3x4xf32>) -> tensor<?x3x4xf32>
      nnx.return %y : tensor<?x3x4xf32>
    }
  }
}

// The sequential chain compares sizes on the same feature axis only: a
// conv's channels (dim 1) with the channels a custom module's forward takes
// (ConvNeXt's stem: Conv2d then LayerNorm2d), never with a last dim (here
// 8, the image width). A LayerNorm over the width after a conv is valid.
// CHECK-LABEL: nnx.model @chain_axes inputs(tensor<?x3x8x8xf32>)
// CHECK:         nnx.batch_norm @bn {cumulative_average, running_mean
nnx.model @chain_axes inputs(tensor<?x3x8x8xf32>) {
  nnx.sequential @net keying = named {
    nnx.conv2d @stem {in_channels = 3 : i64, out_channels = 16 : i64, kernel_size = array<i64: 1, 1>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, weight = dense<0.1> : tensor<16x3x1x1xf32>}
    nnx.module @norm2d class = "LayerNorm2d" {
      nnx.forward @forward(%x: tensor<?x16x8x8xf32>) -> tensor<?x16x8x8xf32> {
        nnx.return %x : tensor<?x16x8x8xf32>
      }
    }
    nnx.batch_norm @bn {running_mean = dense<0.0> : tensor<16xf32>, running_var = dense<1.0> : tensor<16xf32>, cumulative_average}
    nnx.layer_norm @width {normalized_shape = array<i64: 8>}
    nnx.max_pool2d @pool {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>}
    nnx.module @block class = "Block" {
      nnx.forward @forward(%x: tensor<?x16x4x4xf32>) -> tensor<?x32x4x4xf32> {
        %0 = tensor.concat dim(1) %x, %x : (tensor<?x16x4x4xf32>, tensor<?x16x4x4xf32>) -> tensor<?x32x4x4xf32>
        nnx.return %0 : tensor<?x32x4x4xf32>
      }
    }
    nnx.batch_norm @bn2 {running_mean = dense<0.0> : tensor<32xf32>, running_var = dense<1.0> : tensor<32xf32>}
    nnx.adaptive_avg_pool2d @avg {output_size = array<i64: 1, 1>}
    nnx.flatten @flat {start_dim = 1 : i64, end_dim = -1 : i64}
    nnx.linear @fc {weight = dense<0.1> : tensor<10x32xf32>}
  }
}
