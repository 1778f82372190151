//===- TensorParallelSync.h - the ranks agree before they sum ---*- C++ -*-===//
//
// Under tensor parallelism every rank must run the same program on the same
// arrays: the compiled forward meets the other ranks in MPI_Allreduce, and
// a rank that calls it a different number of times (another program) or
// with another count (other shapes) waits forever or aborts inside MPI;
// other inputs sum garbage. Two collectives every rank takes part in,
// whether or not its own step failed, make a mismatch an error on every
// rank instead:
//
// - after compile, each rank's status and program fingerprint (a SHA-1 of
//   its forward-level IR, weights elided) are gathered: a failure on any
//   rank, or a fingerprint other than rank 0's, fails the compile on all;
// - before each call, each rank's status is gathered, then rank 0's input
//   and write-probe arrays (dtypes, shapes, contents) are broadcast: every
//   rank runs rank 0's arrays.
//
//===----------------------------------------------------------------------===//
#ifndef NNX_LIB_EXECUTION_TENSORPARALLELSYNC_H
#define NNX_LIB_EXECUTION_TENSORPARALLELSYNC_H

#include "nnx/Execution/CompiledModel.h"

#include "mlir/IR/BuiltinOps.h"

#include <array>
#include <cstdint>
#include <vector>

namespace mlir::nnx {

/// The SHA-1 of `module` (forward level) printed with its elements
/// attributes elided, no locations and no parameter tensors or weights
/// path: the program a rank runs, without its weights (each rank's slices
/// differ, and the file's path may differ between hosts).
std::array<uint8_t, 20> fingerprintProgram(ModuleOp module);

/// Gathers whether each rank compiled (`local` success) and its program's
/// `fingerprint`; an error on every rank when one failed (that rank keeps
/// its own) or a rank's program is not rank 0's.
llvm::Error agreeOnProgram(const CompileOptions::TensorParallel &parallel,
                           llvm::Error local,
                           const std::array<uint8_t, 20> &fingerprint);

/// Gathers whether each rank could make this call (`local` success), then
/// gives every rank rank 0's inputs and write probes: on rank 0 `inputs` /
/// `writes` stay empty (the caller's arrays run); on the others they are
/// filled with rank 0's.
llvm::Error shareArrays(const CompileOptions::TensorParallel &parallel,
                        llvm::Error local, llvm::ArrayRef<NpyArray> given,
                        llvm::ArrayRef<NpyArray> givenWrites,
                        std::vector<NpyArray> &inputs,
                        std::vector<NpyArray> &writes);

} // namespace mlir::nnx

#endif // NNX_LIB_EXECUTION_TENSORPARALLELSYNC_H
