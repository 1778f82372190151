// nnx-widen-residual refusals: norms whose statistics over d_model cannot
// be kept, and a width that does not grow. The IR is unchanged.
// RUN: nnx-opt %s -split-input-file -verify-diagnostics --nnx-widen-residual="width=12"

// A LayerNorm over the stream (GPT-2, BLOOM, Falcon, Cohere).
nnx.model @layer_norm inputs(tensor<?x?xi64>) {
  nnx.module @net class = "LM" {
    nnx.embedding @embed {weight = dense<0.5> : tensor<10x8xf32>}
    // expected-error @+1 {{norm 'ln' (nnx.layer_norm) normalizes over d_model and is not an RMSNorm (a 'nnx.layer_norm' layer): a LayerNorm's mean and variance over d' coordinates are not those over d, and no rescaling of its gain and bias keeps the old coordinates' values}}
    nnx.layer_norm @ln {normalized_shape = array<i64: 8>, eps = 1.0e-05 : f64, weight = dense<1.0> : tensor<8xf32>, bias = dense<0.0> : tensor<8xf32>}
    nnx.linear @head {weight = dense<0.25> : tensor<10x8xf32>}
    nnx.forward @forward(%ids: tensor<?x?xi64>) -> tensor<?x?x10xf32> {
      %e = nnx.call @embed(%ids) : (tensor<?x?xi64>) -> tensor<?x?x8xf32>
      // expected-note @+1 {{the reduction is here}}
      %h = nnx.call @ln(%e) : (tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
      %y = nnx.call @head(%h) : (tensor<?x?x8xf32>) -> tensor<?x?x10xf32>
      nnx.return %y : tensor<?x?x10xf32>
    }
  }
}

// -----

// A custom norm that subtracts the mean.
nnx.model @centered inputs(tensor<?x?xi64>) {
  nnx.module @net class = "LM" {
    nnx.embedding @embed {weight = dense<0.5> : tensor<10x8xf32>}
    // expected-error @+1 {{norm 'norm' (nnx.module) normalizes over d_model and is not an RMSNorm (a mean of something other than x * x)}}
    nnx.module @norm class = "CenterNorm" {
      nnx.forward @forward(%x: tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
        // expected-note @+1 {{the reduction is here}}
        %mean = nnx.fn.mean %x {dims = array<i64: 2>, keepdim} : tensor<?x?x8xf32> -> tensor<?x?x1xf32>
        %y = nnx.fn.sub %x, %mean : tensor<?x?x8xf32>, tensor<?x?x1xf32> -> tensor<?x?x8xf32>
        nnx.return %y : tensor<?x?x8xf32>
      }
    }
    nnx.forward @forward(%ids: tensor<?x?xi64>) -> tensor<?x?x8xf32> {
      %e = nnx.call @embed(%ids) : (tensor<?x?xi64>) -> tensor<?x?x8xf32>
      %h = nnx.call @norm(%e) : (tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
      nnx.return %h : tensor<?x?x8xf32>
    }
  }
}

// -----

// width=12 does not grow a d_model of 16.
// expected-error @+1 {{nnx-widen-residual: the residual stream has d_model = 16; option width=12 must be larger}}
nnx.model @narrower inputs(tensor<?x?xi64>) {
  nnx.module @net class = "LM" {
    nnx.embedding @embed {weight = dense<0.5> : tensor<10x16xf32>}
    nnx.forward @forward(%ids: tensor<?x?xi64>) -> tensor<?x?x16xf32> {
      %e = nnx.call @embed(%ids) : (tensor<?x?xi64>) -> tensor<?x?x16xf32>
      nnx.return %e : tensor<?x?x16xf32>
    }
  }
}
