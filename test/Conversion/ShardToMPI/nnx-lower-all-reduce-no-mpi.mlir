// A target without MPI (the CUDA pipeline) refuses tensor parallelism.
// RUN: nnx-opt %s -verify-diagnostics --nnx-lower-all-reduce=mpi=false

module {
  shard.grid @tensor_parallel(shape = 2)
  func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
    // expected-error @+1 {{'shard.all_reduce' op is tensor parallelism, which this target does not run (the CPU pipeline lowers it to MPI)}}
    %s = shard.all_reduce %x on @tensor_parallel grid_axes = [0] : tensor<4xf32> -> tensor<4xf32>
    return %s : tensor<4xf32>
  }
}
