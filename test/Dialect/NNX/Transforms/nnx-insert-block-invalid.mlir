// Every nnx-insert-block refusal: an error at the block (or the slot),
// before anything changes.
// RUN: nnx-opt %s -split-input-file -verify-diagnostics --nnx-insert-block="after=layers.0"

// A post-norm block (BERT's): the LayerNorm follows the residual add, so
// zeroing it zeroes the block's output, not a branch.
nnx.model @m inputs(tensor<?x2xf32>) {
  nnx.module @net class = "Net" {
    nnx.module_list @layers {
      // expected-error @+1 {{nnx-insert-block: block 'layers.0' (nnx.module) cannot be made an identity: with its branches' last affine layers ('layers.0.ln') zero, its forward is not proven to return its input}}
      nnx.module @"0" class = "PostNormBlock" {
        nnx.linear @fc {weight = dense<1.0> : tensor<2x2xf32>}
        // expected-note @+1 {{zeroed here}}
        nnx.layer_norm @ln {normalized_shape = array<i64: 2>, eps = 1.0e-05 : f64, weight = dense<1.0> : tensor<2xf32>, bias = dense<0.5> : tensor<2xf32>}
        nnx.forward @forward(%x: tensor<?x2xf32>) -> tensor<?x2xf32> {
          %h = nnx.call @fc(%x) : (tensor<?x2xf32>) -> tensor<?x2xf32>
          %r = nnx.fn.add %x, %h : tensor<?x2xf32>, tensor<?x2xf32> -> tensor<?x2xf32>
          %y = nnx.call @ln(%r) : (tensor<?x2xf32>) -> tensor<?x2xf32>
          nnx.return %y : tensor<?x2xf32>
        }
      }
    }
    nnx.forward @forward(%x: tensor<?x2xf32>) -> tensor<?x2xf32> {
      %h = nnx.call @layers::@"0"(%x) : (tensor<?x2xf32>) -> tensor<?x2xf32>
      nnx.return %h : tensor<?x2xf32>
    }
  }
}

// -----

// The input counted twice (x + x + fc(x)): the branches found vanish, but
// the forward still returns 2x, which the evaluation refuses.
nnx.model @m inputs(tensor<?x2xf32>) {
  nnx.module @net class = "Net" {
    nnx.module_list @layers {
      // expected-error @+1 {{nnx-insert-block: block 'layers.0' (nnx.module) cannot be made an identity: with its branches' last affine layers ('layers.0.fc') zero, its forward is not proven to return its input}}
      nnx.module @"0" class = "Block" {
        // expected-note @+1 {{zeroed here}}
        nnx.linear @fc {weight = dense<1.0> : tensor<2x2xf32>}
        nnx.forward @forward(%x: tensor<?x2xf32>) -> tensor<?x2xf32> {
          %d = nnx.fn.add %x, %x : tensor<?x2xf32>, tensor<?x2xf32> -> tensor<?x2xf32>
          %h = nnx.call @fc(%x) : (tensor<?x2xf32>) -> tensor<?x2xf32>
          %y = nnx.fn.add %d, %h : tensor<?x2xf32>, tensor<?x2xf32> -> tensor<?x2xf32>
          nnx.return %y : tensor<?x2xf32>
        }
      }
    }
    nnx.forward @forward(%x: tensor<?x2xf32>) -> tensor<?x2xf32> {
      %h = nnx.call @layers::@"0"(%x) : (tensor<?x2xf32>) -> tensor<?x2xf32>
      nnx.return %h : tensor<?x2xf32>
    }
  }
}

// -----

// A branch no Linear ends: nothing to zero.
nnx.model @m inputs(tensor<?x2xf32>) {
  nnx.module @net class = "Net" {
    nnx.module_list @layers {
      // expected-error @+1 {{nnx-insert-block: block 'layers.0' (nnx.module) has a residual branch that ends in no Linear, convolution or affine norm of the block: nothing can be zeroed to make the branch vanish}}
      nnx.module @"0" class = "Block" {
        nnx.forward @forward(%x: tensor<?x2xf32>) -> tensor<?x2xf32> {
          // expected-note @+1 {{the branch ends here}}
          %t = math.tanh %x : tensor<?x2xf32>
          %y = nnx.fn.add %x, %t : tensor<?x2xf32>, tensor<?x2xf32> -> tensor<?x2xf32>
          nnx.return %y : tensor<?x2xf32>
        }
      }
    }
    nnx.forward @forward(%x: tensor<?x2xf32>) -> tensor<?x2xf32> {
      %h = nnx.call @layers::@"0"(%x) : (tensor<?x2xf32>) -> tensor<?x2xf32>
      nnx.return %h : tensor<?x2xf32>
    }
  }
}

// -----

// A block that maps 2 features to 3 cannot be followed by a copy of itself.
nnx.model @m inputs(tensor<?x2xf32>) {
  nnx.module @net class = "Net" {
    nnx.module_list @layers {
      // expected-error @+1 {{nnx-insert-block: block 'layers.0' (nnx.module) does not return a value of its first input's type: a copy cannot follow it in the chain}}
      nnx.module @"0" class = "Proj" {
        nnx.linear @fc {weight = dense<1.0> : tensor<3x2xf32>}
        nnx.forward @forward(%x: tensor<?x2xf32>) -> tensor<?x3xf32> {
          %h = nnx.call @fc(%x) : (tensor<?x2xf32>) -> tensor<?x3xf32>
          nnx.return %h : tensor<?x3xf32>
        }
      }
    }
    nnx.forward @forward(%x: tensor<?x2xf32>) -> tensor<?x3xf32> {
      // expected-note @+1 {{call is here}}
      %h = nnx.call @layers::@"0"(%x) : (tensor<?x2xf32>) -> tensor<?x3xf32>
      nnx.return %h : tensor<?x3xf32>
    }
  }
}

// -----

// A block run twice (a shared block): the copy's place in the chain is
// ambiguous.
nnx.model @m inputs(tensor<?x2xf32>) {
  nnx.module @net class = "Net" {
    nnx.module_list @layers {
      // expected-error @+1 {{nnx-insert-block: block 'layers.0' (nnx.module) is run by 2 'nnx.call's}}
      nnx.module @"0" class = "Block" {
        nnx.linear @fc {weight = dense<1.0> : tensor<2x2xf32>}
        nnx.forward @forward(%x: tensor<?x2xf32>) -> tensor<?x2xf32> {
          %h = nnx.call @fc(%x) : (tensor<?x2xf32>) -> tensor<?x2xf32>
          %y = nnx.fn.add %x, %h : tensor<?x2xf32>, tensor<?x2xf32> -> tensor<?x2xf32>
          nnx.return %y : tensor<?x2xf32>
        }
      }
    }
    nnx.forward @forward(%x: tensor<?x2xf32>) -> tensor<?x2xf32> {
      // expected-note @+1 {{call is here}}
      %h = nnx.call @layers::@"0"(%x) : (tensor<?x2xf32>) -> tensor<?x2xf32>
      // expected-note @+1 {{call is here}}
      %h2 = nnx.call @layers::@"0"(%h) : (tensor<?x2xf32>) -> tensor<?x2xf32>
      nnx.return %h2 : tensor<?x2xf32>
    }
  }
}

// -----

// A leaf in a module_list has no forward to copy.
nnx.model @m inputs(tensor<?x2xf32>) {
  nnx.module @net class = "Net" {
    nnx.module_list @layers {
      // expected-error @+1 {{nnx-insert-block: block 'layers.0' (nnx.linear) is not an 'nnx.module' with a forward: there is no residual to keep}}
      nnx.linear @"0" {weight = dense<1.0> : tensor<2x2xf32>}
    }
    nnx.forward @forward(%x: tensor<?x2xf32>) -> tensor<?x2xf32> {
      %h = nnx.call @layers::@"0"(%x) : (tensor<?x2xf32>) -> tensor<?x2xf32>
      nnx.return %h : tensor<?x2xf32>
    }
  }
}

// -----

// Not a block of a module_list or of a positional sequential.
nnx.model @m inputs(tensor<?x2xf32>) {
  nnx.sequential @net keying = named {
    nnx.sequential @layers keying = named {
      // expected-error @+1 {{nnx-insert-block: block 'layers.0' (nnx.linear) is not a block of an 'nnx.module_list' or of a positional 'nnx.sequential' (a stock net's layers grow with nnx-deepen)}}
      nnx.linear @"0" {weight = dense<1.0> : tensor<2x2xf32>}
    }
  }
}

// -----

// A hooked block: what the hook does to a copy is unknown.
nnx.model @m inputs(tensor<?x2xf32>) {
  nnx.module @net class = "Net" {
    nnx.module_list @layers {
      // expected-error @+1 {{nnx-insert-block: block 'layers.0' (nnx.module) has hooks}}
      nnx.module @"0" class = "Block" attributes {hooks = ["capture"]} {
        nnx.linear @fc {weight = dense<1.0> : tensor<2x2xf32>}
        nnx.forward @forward(%x: tensor<?x2xf32>) -> tensor<?x2xf32> {
          %h = nnx.call @fc(%x) : (tensor<?x2xf32>) -> tensor<?x2xf32>
          %y = nnx.fn.add %x, %h : tensor<?x2xf32>, tensor<?x2xf32> -> tensor<?x2xf32>
          nnx.return %y : tensor<?x2xf32>
        }
      }
    }
    nnx.forward @forward(%x: tensor<?x2xf32>) -> tensor<?x2xf32> {
      %h = nnx.call @layers::@"0"(%x) : (tensor<?x2xf32>) -> tensor<?x2xf32>
      nnx.return %h : tensor<?x2xf32>
    }
  }
}

// -----

// A convnet block in a positional sequential that changes its input's
// shape (ResNet's downsampling first block): its copy cannot run on its
// output.
nnx.model @m inputs(tensor<?x2x4x4xf32>) {
  nnx.module @net class = "Net" {
    nnx.sequential @layers keying = positional {
      // expected-error @+1 {{nnx-insert-block: block 'layers.0' (nnx.module) does not return one value of its one input's type: a copy cannot follow it in the sequential}}
      nnx.module @"0" class = "BasicBlock" {
        nnx.conv2d @conv {in_channels = 2 : i64, out_channels = 4 : i64, kernel_size = array<i64: 1, 1>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64, weight = dense<0.5> : tensor<4x2x1x1xf32>}
        nnx.forward @forward(%x: tensor<?x2x4x4xf32>) -> tensor<?x4x2x2xf32> {
          %c = nnx.call @conv(%x) : (tensor<?x2x4x4xf32>) -> tensor<?x4x2x2xf32>
          nnx.return %c : tensor<?x4x2x2xf32>
        }
      }
    }
    nnx.forward @forward(%x: tensor<?x2x4x4xf32>) -> tensor<?x4x2x2xf32> {
      %h = nnx.call @layers(%x) : (tensor<?x2x4x4xf32>) -> tensor<?x4x2x2xf32>
      nnx.return %h : tensor<?x4x2x2xf32>
    }
  }
}

// -----

// A convnet block whose output is a sum, not a ReLU's: its copy's input
// may be negative, and the ReLU on the copy's skip path would change it.
nnx.model @m inputs(tensor<?x2x3x3xf32>) {
  nnx.module @net class = "Net" {
    nnx.sequential @layers keying = positional {
      // expected-error @+1 {{nnx-insert-block: block 'layers.0' (nnx.module) cannot be made an identity: with its branches' last affine layers ('layers.0.bn') zero, its forward is not proven to return its input}}
      nnx.module @"0" class = "Block" {
        nnx.conv2d @conv {in_channels = 2 : i64, out_channels = 2 : i64, kernel_size = array<i64: 1, 1>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64, weight = dense<0.5> : tensor<2x2x1x1xf32>}
        // expected-note @+1 {{zeroed here}}
        nnx.batch_norm @bn {running_mean = dense<0.0> : tensor<2xf32>, running_var = dense<1.0> : tensor<2xf32>, eps = 1.0e-05 : f64, momentum = 0.1 : f64, weight = dense<1.0> : tensor<2xf32>, bias = dense<0.5> : tensor<2xf32>}
        nnx.relu @relu
        nnx.forward @forward(%x: tensor<?x2x3x3xf32>) -> tensor<?x2x3x3xf32> {
          %c = nnx.call @conv(%x) : (tensor<?x2x3x3xf32>) -> tensor<?x2x3x3xf32>
          %b = nnx.call @bn(%c) : (tensor<?x2x3x3xf32>) -> tensor<?x2x3x3xf32>
          %r = nnx.call @relu(%x) : (tensor<?x2x3x3xf32>) -> tensor<?x2x3x3xf32>
          %y = nnx.fn.add %r, %b : tensor<?x2x3x3xf32>, tensor<?x2x3x3xf32> -> tensor<?x2x3x3xf32>
          nnx.return %y : tensor<?x2x3x3xf32>
        }
      }
    }
    nnx.forward @forward(%x: tensor<?x2x3x3xf32>) -> tensor<?x2x3x3xf32> {
      %h = nnx.call @layers(%x) : (tensor<?x2x3x3xf32>) -> tensor<?x2x3x3xf32>
      nnx.return %h : tensor<?x2x3x3xf32>
    }
  }
}
