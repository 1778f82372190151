// nnx-prepare-forward, compiling one rank's part, refuses a model already
// split for another rank (each rank given rank 0's split file), naming both
// ranks as numbers.
// RUN: nnx-opt %s -split-input-file -verify-diagnostics \
// RUN:   --nnx-prepare-forward="tensor-parallel-ranks=2 tensor-parallel-rank=1"

// expected-error @below {{'nnx.model' op is already split for tensor parallelism ({rank = 0 : i64, ranks = 2 : i64}), but this is rank 1 of 2; give every rank the unsplit model}}
nnx.model @split inputs(tensor<?x?x8xf32>) attributes {nnx.tensor_parallel = {rank = 0 : i64, ranks = 2 : i64}} {
  nnx.module @net class = "Net" {
    nnx.linear @fc {weight = dense<0.1> : tensor<8x8xf32>}
    nnx.forward @forward(%x: tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
      %y0 = nnx.call @fc(%x) : (tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
      nnx.return %y0 : tensor<?x?x8xf32>
    }
  }
}

// -----

// expected-error @below {{'nnx.model' op is already split for tensor parallelism ({rank = 1 : i64, ranks = 4 : i64}), but this is rank 1 of 2; give every rank the unsplit model}}
nnx.model @ranks inputs(tensor<?x?x8xf32>) attributes {nnx.tensor_parallel = {rank = 1 : i64, ranks = 4 : i64}} {
  nnx.module @net class = "Net" {
    nnx.linear @fc {weight = dense<0.1> : tensor<8x8xf32>}
    nnx.forward @forward(%x: tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
      %y0 = nnx.call @fc(%x) : (tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
      nnx.return %y0 : tensor<?x?x8xf32>
    }
  }
}
