// RUN: nnx-opt %s -split-input-file -verify-diagnostics --nnx-lower-all-reduce | FileCheck %s --enable-var-scope

// A sum over the 1-D grid: the operand flattened and read in place (send),
// a fresh buffer of the same size (receive), the world's size checked
// against the grid's, one MPI_Allreduce, the sum reshaped back. The grid
// goes, the module names the MPI ABI.
// CHECK:       module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "OpenMPI">}
// CHECK-NOT:   shard.grid
// CHECK-LABEL: func.func @f(
// CHECK-SAME:      %[[X:.*]]: tensor<?x?x8xf32>)
// CHECK-DAG:     %[[D0:.*]] = tensor.dim %[[X]], %c0
// CHECK-DAG:     %[[D1:.*]] = tensor.dim %[[X]], %c1
// CHECK:         %[[FLAT:.*]] = tensor.collapse_shape %[[X]] {{\[\[}}0, 1, 2]] : tensor<?x?x8xf32> into tensor<?xf32>
// CHECK:         %[[SEND:.*]] = bufferization.to_buffer %[[FLAT]] read_only : tensor<?xf32> to memref<?xf32>
// CHECK:         %[[N:.*]] = tensor.dim %[[FLAT]], %{{.*}} : tensor<?xf32>
// CHECK:         %[[BIG:.*]] = arith.cmpi sgt, %[[N]], %{{.*}} : index
// CHECK:         scf.if %[[BIG]] {
// CHECK:           func.call @nnxRuntimeFail(
// CHECK:         %[[RECV:.*]] = memref.alloc(%[[N]]) : memref<?xf32>
// CHECK:         %[[WORLD:.*]] = mpi.comm_world : !mpi.comm
// CHECK:         %[[SIZE:.*]] = mpi.comm_size(%[[WORLD]]) : i32
// CHECK:         %[[BAD:.*]] = arith.cmpi ne, %[[SIZE]], %{{.*}} : i32
// CHECK:         scf.if %[[BAD]] {
// CHECK:           func.call @nnxRuntimeFail(
// CHECK:         mpi.allreduce(%[[SEND]], %[[RECV]], MPI_SUM, %[[WORLD]]) : memref<?xf32>, memref<?xf32>
// CHECK:         %[[SUM:.*]] = bufferization.to_tensor %[[RECV]] restrict writable : memref<?xf32> to tensor<?xf32>
// CHECK:         %[[Y:.*]] = tensor.expand_shape %[[SUM]] {{\[\[}}0, 1, 2]] output_shape [%[[D0]], %[[D1]], 8] : tensor<?xf32> into tensor<?x?x8xf32>
// CHECK:         return %[[Y]]
module {
  shard.grid @tensor_parallel(shape = 2)
  func.func @f(%x: tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
    %s = shard.all_reduce %x on @tensor_parallel grid_axes = [0] : tensor<?x?x8xf32> -> tensor<?x?x8xf32>
    return %s : tensor<?x?x8xf32>
  }
}

// -----

// bf16: summed in f32 (MPI has no bf16), rounded once.
// CHECK-LABEL: func.func @f(
// CHECK:         %[[E:.*]] = arith.extf %{{.*}} : tensor<4x8xbf16> to tensor<4x8xf32>
// CHECK:         tensor.collapse_shape %[[E]] {{\[\[}}0, 1]] : tensor<4x8xf32> into tensor<32xf32>
// CHECK:         memref.alloc() : memref<32xf32>
// CHECK:         mpi.allreduce({{.*}}) : memref<32xf32>, memref<32xf32>
// CHECK:         arith.truncf %{{.*}} : tensor<4x8xf32> to tensor<4x8xbf16>
module {
  shard.grid @tensor_parallel(shape = 4)
  func.func @f(%x: tensor<4x8xbf16>) -> tensor<4x8xbf16> {
    %s = shard.all_reduce %x on @tensor_parallel grid_axes = [0] : tensor<4x8xbf16> -> tensor<4x8xbf16>
    return %s : tensor<4x8xbf16>
  }
}

// -----

// Without shard ops, nothing changes.
// CHECK-LABEL: func.func @plain(
// CHECK-NOT:     mpi.
// CHECK:         return
// CHECK-NOT:   dlti.map
func.func @plain(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

module {
  // expected-note @+1 {{grid defined here}}
  shard.grid @g(shape = 2x2)
  func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
    // expected-error @+1 {{'shard.all_reduce' op sums over a grid of shape array<i64: 2, 2>; nnx lowers only a 1-D grid of static size}}
    %s = shard.all_reduce %x on @g grid_axes = [0] : tensor<4xf32> -> tensor<4xf32>
    return %s : tensor<4xf32>
  }
}

// -----

module {
  shard.grid @g(shape = 2)
  func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
    // expected-error @+1 {{'shard.all_reduce' op must be a sum; nnx lowers no other reduction}}
    %s = shard.all_reduce %x on @g grid_axes = [0] reduction = max : tensor<4xf32> -> tensor<4xf32>
    return %s : tensor<4xf32>
  }
}

// -----

module {
  shard.grid @g(shape = 2)
  func.func @f(%x: tensor<4xi32>) -> tensor<4xi32> {
    // expected-error @+1 {{'shard.all_reduce' op must map a tensor of rank >= 1 of f64, f32, bf16 or f16 to the same type, got 'tensor<4xi32>' -> 'tensor<4xi32>'}}
    %s = shard.all_reduce %x on @g grid_axes = [0] : tensor<4xi32> -> tensor<4xi32>
    return %s : tensor<4xi32>
  }
}

// -----

module {
  shard.grid @g(shape = 2)
  func.func @f(%x: tensor<65536x32769xf32>) -> tensor<65536x32769xf32> {
    // expected-error @+1 {{'shard.all_reduce' op sums 2147549184 elements in one MPI_Allreduce, more than its int count holds (2147483647)}}
    %s = shard.all_reduce %x on @g grid_axes = [0] : tensor<65536x32769xf32> -> tensor<65536x32769xf32>
    return %s : tensor<65536x32769xf32>
  }
}
