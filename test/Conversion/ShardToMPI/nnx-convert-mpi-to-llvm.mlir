// RUN: nnx-opt %s -split-input-file --nnx-convert-mpi-to-llvm | FileCheck %s --enable-var-scope

// OpenMPI's ABI: handles are the addresses of its predefined objects (the
// sum is ompi_mpi_op_sum, which upstream misnames ompi_mpi_sum);
// mpi.comm_size (which upstream does not lower) calls MPI_Comm_size with a
// stack slot for the size. Memrefs outside the mpi ops stay memrefs.
// CHECK:       llvm.func @MPI_Allreduce(!llvm.ptr, !llvm.ptr, i32, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> i32
// CHECK:       llvm.mlir.global external @ompi_mpi_op_sum()
// CHECK:       llvm.func @MPI_Comm_size(!llvm.ptr, !llvm.ptr) -> i32
// CHECK-LABEL: func.func @f(
// CHECK-SAME:      %[[S:.*]]: memref<?xf32>, %[[R:.*]]: memref<?xf32>)
// CHECK:         %[[W:.*]] = llvm.mlir.addressof @ompi_mpi_comm_world : !llvm.ptr
// CHECK:         %[[WI:.*]] = llvm.ptrtoint %[[W]] : !llvm.ptr to i64
// CHECK:         %[[WP:.*]] = llvm.inttoptr %[[WI]] : i64 to !llvm.ptr
// CHECK:         %[[SLOT:.*]] = llvm.alloca %{{.*}} x i32 : (i32) -> !llvm.ptr
// CHECK:         llvm.call @MPI_Comm_size(%[[WP]], %[[SLOT]])
// CHECK:         %[[N:.*]] = llvm.load %[[SLOT]] : !llvm.ptr -> i32
// CHECK:         llvm.mlir.addressof @ompi_mpi_float
// CHECK:         llvm.mlir.addressof @ompi_mpi_op_sum
// CHECK:         llvm.call @MPI_Allreduce(
// CHECK:         return %[[N]] : i32
module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "OpenMPI">} {
  func.func @f(%s: memref<?xf32>, %r: memref<?xf32>) -> i32 {
    %w = mpi.comm_world : !mpi.comm
    %n = mpi.comm_size(%w) : i32
    mpi.allreduce(%s, %r, MPI_SUM, %w) : memref<?xf32>, memref<?xf32>
    return %n : i32
  }
}

// -----

// MPICH: the communicator is an int.
// CHECK-LABEL: func.func @mpich(
// CHECK:         %[[C:.*]] = llvm.mlir.constant(1140850688 : i64) : i64
// CHECK:         %[[CI:.*]] = llvm.trunc %[[C]] : i64 to i32
// CHECK:         llvm.call @MPI_Comm_size(%[[CI]], %{{.*}}) : (i32, !llvm.ptr) -> i32
module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "MPICH">} {
  func.func @mpich() -> i32 {
    %w = mpi.comm_world : !mpi.comm
    %n = mpi.comm_size(%w) : i32
    return %n : i32
  }
}

// -----

// Without mpi ops, nothing changes.
// CHECK-LABEL: func.func @plain(
// CHECK-NEXT:    return
func.func @plain(%x: memref<4xf32>) {
  return
}
