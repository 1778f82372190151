// nnx-prepare-forward's refusals: each names what is wrong, the IR is not
// compiled.
// RUN: nnx-opt %s -split-input-file -verify-diagnostics --nnx-prepare-forward
// RUN: not nnx-opt %s -split-input-file --nnx-prepare-forward=model=nope \
// RUN:   2>&1 | FileCheck %s --check-prefix=NONAME

// expected-error @below {{the module holds 2 nnx.model ops (@a, @b); choose one by name (nnx-run --model NAME)}}
module {
  nnx.model @a inputs(tensor<2x2xf32>) { nnx.relu @act }
  nnx.model @b inputs(tensor<2x2xf32>) { nnx.relu @act }
}

// -----

module {
  nnx.model @a inputs(tensor<2x2xf32>) { nnx.relu @act }
  // expected-error @below {{the module holds both an nnx.model and a symbol @forward; remove one}}
  func.func @forward(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
    return %x : tensor<2x2xf32>
  }
}

// -----

// expected-error @below {{the module holds neither an nnx.model nor a func.func @forward with a body}}
module {
  func.func private @forward(tensor<2xf32>) -> tensor<2xf32>
}

// -----

module {
  nnx.model @lazy inputs(tensor<?x2xf32>) {
    nnx.sequential @net keying = named {
      // expected-error @below {{is an uninitialized lazy layer}}
      nnx.linear @fc {lazy, out_features = 3}
    }
  }
}
// NONAME: error: no nnx.model named @nope in the module (it holds @a, @b)

// -----

// A model split for tensor parallelism compiles only as one rank's part.
// expected-error @below {{'nnx.model' op is split for tensor parallelism (nnx.partial_sum on 'proj'): compile it as one rank of an MPI job (nnx-run --tensor-parallel under mpirun, nnx.compile(..., tensor_parallel=True), CompileOptions::tensorParallel, or nnx-prepare-forward's tensor-parallel-ranks and tensor-parallel-rank)}}
nnx.model @split inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    nnx.linear @fc {weight = dense<0.5> : tensor<2x4xf32>}
    nnx.linear @proj {weight = dense<0.25> : tensor<4x2xf32>, nnx.partial_sum = {ranks = 2 : i64}}
  }
}

// -----

// expected-error @below {{'nnx.model' op is split for tensor parallelism: compile it as one rank of an MPI job}}
nnx.model @recorded inputs(tensor<?x4xf32>) attributes {nnx.tensor_parallel = {rank = 1 : i64, ranks = 2 : i64}} {
  nnx.linear @fc {weight = dense<0.5> : tensor<4x4xf32>}
}
