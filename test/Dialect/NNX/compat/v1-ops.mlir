module {
  nnx.model @mlp inputs(tensor<?x4xf32>) {
    nnx.sequential @net keying = positional {
      nnx.linear @"0" {bias = dense<0.000000e+00> : tensor<8xf32>, requires_grad = {bias = false}, weight = dense<5.000000e-01> : tensor<8x4xf32>}
      nnx.relu @"1" {train}
      nnx.dropout @"2" {p = 1.000000e-01 : f64}
      nnx.linear @"3" {hooks = ["forward_hook"], weight = dense<2.500000e-01> : tensor<2x8xf32>}
    }
  }
  nnx.model @leaves inputs(tensor<?x3xi64>) {
    nnx.sequential @net keying = named {
      nnx.embedding @embed {padding_idx = 0 : i64, weight = dense_resource<emb_w> : tensor<5x4xf32>}
      nnx.layer_norm @ln {bias = dense<0.000000e+00> : tensor<4xf32>, normalized_shape = array<i64: 4>, weight = dense<1.000000e+00> : tensor<4xf32>}
      nnx.rms_norm @rms {normalized_shape = array<i64: 4>, weight = dense<1.000000e+00> : tensor<4xf32>}
      nnx.gelu @gelu {approximate = #nnx.gelu_approximation<tanh>}
      nnx.tanh @tanh
      nnx.sigmoid @sigmoid
      nnx.silu @silu
      nnx.leaky_relu @leaky {negative_slope = 2.000000e-01 : f64}
      nnx.identity @id
      nnx.hardswish @hs {nnx.probes = [#nnx.probe<name = "hs.out", point = output, index = 0, kind = read>, #nnx.probe<name = "hs.in", point = input, index = 0, kind = write>]}
      nnx.softmax @sm
    }
  }
  nnx.model @bn inputs(tensor<?x4xf32>) {
    nnx.batch_norm @bn {bias = dense<0.000000e+00> : tensor<4xf32>, running_mean = dense<0.000000e+00> : tensor<4xf32>, running_var = dense<1.000000e+00> : tensor<4xf32>, train, weight = dense<1.000000e+00> : tensor<4xf32>}
  }
  nnx.model @convnet inputs(tensor<?x3x?x?xf32>) {
    nnx.sequential @net keying = positional {
      nnx.conv2d @"0" {bias = dense<0.000000e+00> : tensor<4xf32>, dilation = array<i64: 1, 1>, in_channels = 3 : i64, kernel_size = array<i64: 3, 3>, out_channels = 4 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>, weight = dense<1.000000e-01> : tensor<4x3x3x3xf32>}
      nnx.batch_norm @"1" {running_mean = dense<0.000000e+00> : tensor<4xf32>, running_var = dense<1.000000e+00> : tensor<4xf32>}
      nnx.conv2d @"2" {dilation = array<i64: 2, 1>, groups = 4 : i64, in_channels = 4 : i64, kernel_size = array<i64: 3, 1>, out_channels = 4 : i64, padding = array<i64: 0, 0>, stride = array<i64: 2, 1>, weight = dense<5.000000e-01> : tensor<4x1x3x1xf32>}
    }
  }
  nnx.model @pools inputs(tensor<?x4x?x?xf32>) {
    nnx.sequential @net keying = positional {
      nnx.conv2d @"0" {dilation = array<i64: 1, 1>, groups = 2 : i64, in_channels = 4 : i64, kernel_size = array<i64: 3, 3>, out_channels = 6 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>, weight = dense<1.000000e-01> : tensor<6x2x3x3xf32>}
      nnx.max_pool2d @"1" {ceil_mode, dilation = array<i64: 1, 1>, kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>}
      nnx.avg_pool2d @"2" {count_include_pad, kernel_size = array<i64: 2, 2>, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>}
      nnx.adaptive_avg_pool2d @"3" {output_size = array<i64: 1, 1>}
      nnx.flatten @"4"
    }
  }
  nnx.model @conv1d inputs(tensor<?x3x?xf32>) {
    nnx.sequential @net keying = positional {
      nnx.conv1d @"0" {bias = dense<0.000000e+00> : tensor<4xf32>, dilation = array<i64: 1>, in_channels = 3 : i64, kernel_size = array<i64: 3>, out_channels = 4 : i64, padding = array<i64: 1>, stride = array<i64: 2>, weight = dense<1.000000e-01> : tensor<4x3x3xf32>}
    }
  }
  nnx.model @recorded inputs(tensor<?x4xf32>) {
    nnx.sequential @net keying = named {
      nnx.linear @wn {parametrizations = {weight = "weight_norm"}, weight = dense<1.000000e+00> : tensor<4x4xf32>}
      nnx.linear @pr {pruned = ["weight"], weight = dense<1.000000e+00> : tensor<4x4xf32>}
      nnx.linear @qat {subclass = "FakeQuantLinear", weight = dense<1.000000e+00> : tensor<4x4xf32>}
      nnx.sequential @sub keying = named attributes {state = {scale = dense<1.000000e+00> : tensor<4xf32>}, subclass = "MySeq"} {
        nnx.relu @act
      }
    }
  }
  nnx.model @lazy inputs(tensor<?x4xf32>) {
    nnx.sequential @net keying = positional {
      nnx.linear @"0" {lazy, out_features = 8 : i64}
      nnx.relu @"1"
    }
  }
  nnx.model @res inputs(tensor<?x8xf32>) {
    nnx.module @block class = "ResidualBlock" {
      nnx.layer_norm @norm {normalized_shape = array<i64: 8>}
      nnx.sequential @inner keying = named {
        nnx.linear @proj {weight = dense<1.000000e+00> : tensor<8x8xf32>}
      }
      nnx.alias @again = @inner::@proj
      nnx.forward @forward(%arg0: tensor<?x8xf32>) -> tensor<?x8xf32> {
        %0 = nnx.call @norm(%arg0) : (tensor<?x8xf32>) -> tensor<?x8xf32>
        %1 = nnx.call @inner::@proj(%0) : (tensor<?x8xf32>) -> tensor<?x8xf32>
        %2 = nnx.call @again(%1) : (tensor<?x8xf32>) -> tensor<?x8xf32>
        %3 = arith.addf %arg0, %2 {nnx.source = "add_0"} : tensor<?x8xf32>
        nnx.return %3 : tensor<?x8xf32>
      }
    }
  }
  nnx.model @fn inputs(tensor<?x4xf32>, tensor<?x4xf32>) {
    nnx.module @pair class = "Pair" {
      nnx.relu @act
      nnx.forward @forward(%arg0: tensor<?x4xf32> {user.name = "a"}, %arg1: tensor<?x4xf32>) -> (tensor<?x4xf32> {user.name = "sum"}, tensor<?x4xf32>) attributes {user.note = "pair"} {
        %0 = nnx.call @act(%arg0) : (tensor<?x4xf32>) -> tensor<?x4xf32>
        %1 = arith.addf %0, %arg1 : tensor<?x4xf32>
        nnx.return %1, %0 : tensor<?x4xf32>, tensor<?x4xf32>
      }
    }
  }
  nnx.model @named inputs(tensor<?x4xf32>) {
    nnx.module @b class = "B" {
      nnx.forward @forward(%arg0: tensor<?x4xf32>) -> tensor<?x4xf32> attributes {nnx.output_names = ["0"]} {
        nnx.return %arg0 : tensor<?x4xf32>
      }
    }
  }
  nnx.model @sink inputs(tensor<?x4xf32>) {
    nnx.module @drop class = "Sink" {
      nnx.forward @forward(%arg0: tensor<?x4xf32>) {
        nnx.return
      }
    }
  }
  nnx.model @ff inputs(tensor<?x4xf32>) {
    nnx.feed_fwd @net attributes {activation = #nnx.activation<gelu>, activations = [#nnx.activation<relu>, #nnx.activation<tanh>], dropout = 1.000000e-01 : f64, dropout_probs = [0.000000e+00, 5.000000e-01], hidden_dims = array<i64: 8, 6>, input_dim = 4 : i64, output_dim = 2 : i64} {
      nnx.module_list @layers {
        nnx.linear @"0" {weight = dense<1.000000e+00> : tensor<8x4xf32>}
        nnx.linear @"1" {weight = dense<1.000000e+00> : tensor<6x8xf32>}
        nnx.linear @"2" {weight = dense<1.000000e+00> : tensor<2x6xf32>}
      }
    }
  }
  nnx.model @cnn inputs(tensor<?x3x8x8xf32>) {
    nnx.conv_nn @net attributes {activation = #nnx.activation<gelu>, activations = [#nnx.activation<relu>, #nnx.activation<tanh>, #nnx.activation<relu>], channels = array<i64: 4, 4>, dropout = 1.000000e-01 : f64, dropout_probs = [0.000000e+00, 5.000000e-01, 0.000000e+00], hidden_dims = array<i64: 6>, in_channels = 3 : i64, kernel_size = 5 : i64, kernel_sizes = array<i64: 3, 1>, output_dim = 2 : i64, pool = 2 : i64, pools = array<i64: 2, 0>} {
      nnx.module_list @layers {
        nnx.conv2d @"0" {dilation = array<i64: 1, 1>, in_channels = 3 : i64, kernel_size = array<i64: 3, 3>, out_channels = 4 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>, weight = dense<1.000000e-01> : tensor<4x3x3x3xf32>}
        nnx.identity @"1"
      }
      nnx.module_list @fcs {
        nnx.linear @"0" {weight = dense<1.000000e+00> : tensor<6x4xf32>}
        nnx.linear @"1" {weight = dense<1.000000e+00> : tensor<2x6xf32>}
      }
    }
  }
  nnx.model @cnn_defaults inputs(tensor<?x3x8x8xf32>) {
    nnx.conv_nn @net attributes {channels = array<i64: 4>, hidden_dims = array<i64>, in_channels = 3 : i64, output_dim = 2 : i64} {
      nnx.module_list @layers {
        nnx.conv2d @"0" {dilation = array<i64: 1, 1>, in_channels = 3 : i64, kernel_size = array<i64: 3, 3>, out_channels = 4 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>, weight = dense<1.000000e-01> : tensor<4x3x3x3xf32>}
      }
      nnx.module_list @fcs {
        nnx.linear @"0" {weight = dense<1.000000e+00> : tensor<2x4xf32>}
      }
    }
  }
  nnx.model @external inputs(tensor<?x4xf32>) attributes {weights = "external.safetensors"} {
    nnx.linear @fc {bias = dense<0.000000e+00> : tensor<2xf32>, weight = #nnx.external<"fc.weight"> : tensor<2x4xf32>}
  }
  func.func @probes(%arg0: tensor<?x8xf32>) -> tensor<?x8xf32> {
    %0 = nnx.probe read "layers.0.attention_output" %arg0 : tensor<?x8xf32>
    %1 = nnx.probe write "layers.0.mlp_output" %0 : tensor<?x8xf32>
    return %1 : tensor<?x8xf32>
  }
  nnx.model @rms inputs(tensor<?x?x4xf32>) {
    nnx.module @norm class = "RMSNorm" attributes {state = {weight = dense<1.500000e+00> : tensor<4xf32>}} {
      nnx.forward @forward(%arg0: tensor<?x?x4xf32>) -> tensor<?x?x4xf32> {
        %0 = nnx.state "weight" : tensor<4xf32>
        %1 = nnx.fn.mul %arg0, %0 : tensor<?x?x4xf32>, tensor<4xf32> -> tensor<?x?x4xf32>
        nnx.return %1 : tensor<?x?x4xf32>
      }
    }
  }
  nnx.model @rope inputs(tensor<?x4xf32>) {
    nnx.module @rotary class = "Rotary" attributes {nnx.buffers = ["inv_freq"], state = {inv_freq = dense<5.000000e-01> : tensor<2xf32>, scale = dense<1.000000e+00> : tensor<4xf32>}} {
      nnx.forward @forward(%arg0: tensor<?x4xf32>) -> tensor<?x4xf32> {
        %0 = nnx.state "scale" : tensor<4xf32>
        %1 = nnx.fn.mul %arg0, %0 : tensor<?x4xf32>, tensor<4xf32> -> tensor<?x4xf32>
        nnx.return %1 : tensor<?x4xf32>
      }
    }
  }
  nnx.model @gpt inputs(tensor<?x3xi64>) {
    nnx.module @net class = "GPT" {
      nnx.module_dict @transformer attributes {state = {scale = dense<2.000000e+00> : tensor<4xf32>}} {
        nnx.embedding @wte {weight = dense<5.000000e-01> : tensor<16x4xf32>}
        nnx.module_list @h {
          nnx.linear @"0" {weight = dense<1.000000e+00> : tensor<4x4xf32>}
        }
        nnx.layer_norm @ln_f {normalized_shape = array<i64: 4>}
        nnx.alias @tied = @transformer::@wte
      }
      nnx.module_dict @empty {
      }
      nnx.forward @forward(%arg0: tensor<?x3xi64>) -> tensor<?x3x4xf32> {
        %0 = nnx.call @transformer::@wte(%arg0) : (tensor<?x3xi64>) -> tensor<?x3x4xf32>
        %1 = nnx.call @transformer::@h::@"0"(%0) : (tensor<?x3x4xf32>) -> tensor<?x3x4xf32>
        %2 = nnx.call @transformer::@ln_f(%1) : (tensor<?x3x4xf32>) -> tensor<?x3x4xf32>
        nnx.return %2 : tensor<?x3x4xf32>
      }
    }
  }
}

{-#
  dialect_resources: {
    builtin: {
      emb_w: "0x040000000000803F0000004000004040000080400000A0400000C0400000E04000000041000010410000204100003041000040410000504100006041000070410000804100008841000090410000984100000042"
    }
  }
#-}

