//===- Passes.td - tensor parallelism's collectives to MPI -*- tablegen -*-===//
#ifndef NNX_CONVERSION_SHARDTOMPI_PASSES_TD
#define NNX_CONVERSION_SHARDTOMPI_PASSES_TD

include "nnx/Support/PassBase.td"

def NNXLowerAllReducePass
    : NNX_Pass<"nnx-lower-all-reduce", "::mlir::ModuleOp"> {
  let summary = "Lower shard.all_reduce on tensors to an MPI_Allreduce";
  let description = [{
    Runs on tensors, before bufferization. Every `shard.all_reduce` that
    sums over all the devices of a 1-D `shard.grid` of N devices (what a
    Linear with `nnx.partial_sum = {ranks = N}` lowers to) becomes one
    `mpi.allreduce` over MPI_COMM_WORLD: the operand, flattened to 1-D, is
    the send buffer (`bufferization.to_buffer read_only`), a fresh
    `memref.alloc` of the same size the receive buffer (MPI forbids one
    buffer for both), and the result is that buffer as a tensor
    (`to_tensor restrict`), reshaped back. Buffer deallocation frees it like
    any other temporary. bf16 / f16 tensors are summed in f32 (MPI has no
    type for them), then rounded once. Dims may be dynamic.

    Beside each, a run-time check (RuntimeChecks.h) that the MPI world has
    N processes: `mpirun -np M` with M != N fails the call with a message
    naming both. The module gets `dlti.map = #dlti.map<"MPI:Implementation"
    = "OpenMPI">` (the ABI nnx-convert-mpi-to-llvm targets) unless it names
    one, and grids left without users are erased. A module without shard ops
    is left as it is.

    Refused: another reduction, a grid of rank != 1 or of dynamic size,
    grid axes other than [0], an element type other than f32 / bf16 / f16,
    a result type that differs from the operand's, a 0-d tensor; with
    `mpi=false` (a target without MPI), any shard op.

    Before:

    ```mlir
    shard.grid @tensor_parallel(shape = 2)
    %s = shard.all_reduce %y on @tensor_parallel grid_axes = [0]
        : tensor<?x8xf32> -> tensor<?x8xf32>
    ```

    After (the size check left out):

    ```mlir
    %flat = tensor.collapse_shape %y [[0, 1]]
        : tensor<?x8xf32> into tensor<?xf32>
    %send = bufferization.to_buffer %flat read_only
        : tensor<?xf32> to memref<?xf32>
    %recv = memref.alloc(%n) : memref<?xf32>
    %world = mpi.comm_world : !mpi.comm
    mpi.allreduce(%send, %recv, MPI_SUM, %world)
        : memref<?xf32>, memref<?xf32>
    %sum = bufferization.to_tensor %recv restrict writable
        : memref<?xf32> to tensor<?xf32>
    %s = tensor.expand_shape %sum [[0, 1]] output_shape [%m, 8]
        : tensor<?xf32> into tensor<?x8xf32>
    ```
  }];
  let options = [
    Option<"mpi", "mpi", "bool", /*default=*/"true",
           "Whether the target lowers MPI; false (the CUDA pipeline): every "
           "shard op is refused">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::bufferization::BufferizationDialect",
    "::mlir::DLTIDialect", "::mlir::func::FuncDialect",
    "::mlir::LLVM::LLVMDialect", "::mlir::memref::MemRefDialect",
    "::mlir::mpi::MPIDialect", "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def NNXConvertMPIToLLVMPass
    : NNX_Pass<"nnx-convert-mpi-to-llvm", "::mlir::ModuleOp"> {
  let summary = "Lower the mpi dialect to calls of the MPI library";
  let description = [{
    Runs on buffers. Upstream's MPI-to-LLVM patterns (for the ABI the
    module's `dlti.map` names, `"MPI:Implementation"`: OpenMPI or MPICH),
    plus `mpi.comm_size`, which upstream does not lower, as `MPI_Comm_size`.
    The memrefs stay memrefs outside the mpi ops (casts that the final
    conversion to LLVM reconciles). A module without mpi ops is left as it
    is.

    Before:

    ```mlir
    %world = mpi.comm_world : !mpi.comm
    %n = mpi.comm_size(%world) : i32
    ```

    After (OpenMPI):

    ```mlir
    %p = llvm.mlir.addressof @ompi_mpi_comm_world : !llvm.ptr
    %one = llvm.mlir.constant(1 : i32) : i32
    %out = llvm.alloca %one x i32 : (i32) -> !llvm.ptr
    %rc = llvm.call @MPI_Comm_size(%p, %out) : (!llvm.ptr, !llvm.ptr) -> i32
    %n = llvm.load %out : !llvm.ptr -> i32
    ```
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // NNX_CONVERSION_SHARDTOMPI_PASSES_TD
