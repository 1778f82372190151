//===- TensorParallelSync.cpp - the ranks agree before they sum -----------===//
//
// TensorParallelSync.h's collectives over MPI_COMM_WORLD.
//
//===----------------------------------------------------------------------===//
#include "TensorParallelSync.h"

#include "ExecutionError.h"
#include "HashStream.h"
#include "Parameters.h"

#include "nnx/Dialect/NNX/IR/NNXOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/OperationSupport.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/SHA1.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

#ifdef NNX_HAVE_MPI
// The C API only (OpenMPI's and MPICH's mpi.h pull in the C++ bindings).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

using namespace mlir;
using namespace mlir::nnx;

char CollectiveError::ID = 0;

/// The error all ranks return together.
static llvm::Error makeCollectiveError(const llvm::Twine &message) {
  return llvm::make_error<CollectiveError>(message,
                                           llvm::inconvertibleErrorCode());
}

std::array<uint8_t, 20> mlir::nnx::fingerprintProgram(ModuleOp module) {
  // Without what differs between ranks of one program: the parameters'
  // tensors (a rank's slices) and the weights file's path (a host's).
  HashStream<llvm::SHA1> os;
  printProgram(module, os, /*withLocations=*/false);
  return os.result();
}

/// "rank 1", "ranks 1, 3".
static std::string listRanks(llvm::ArrayRef<int> ranks) {
  std::string out = ranks.size() == 1 ? "rank " : "ranks ";
  for (auto [i, r] : llvm::enumerate(ranks))
    out += (i ? ", " : "") + std::to_string(r);
  return out;
}

#ifdef NNX_HAVE_MPI
/// Every rank's `ok`; the ranks where it is false.
static std::vector<int> gatherFailures(bool ok) {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int mine = ok ? 1 : 0;
  std::vector<int> all(size);
  MPI_Allgather(&mine, 1, MPI_INT, all.data(), 1, MPI_INT, MPI_COMM_WORLD);
  std::vector<int> failed;
  for (int r = 0; r < size; ++r)
    if (!all[r])
      failed.push_back(r);
  return failed;
}

/// Every rank tells whether its own step succeeded: this rank's error if
/// it failed, one naming the ranks that failed (then `why`) if another did,
/// else success for every rank.
static llvm::Error allSucceeded(llvm::Error local, llvm::StringRef why) {
  bool ok = !local;
  std::vector<int> failed = gatherFailures(ok);
  if (!ok)
    return local;
  if (!failed.empty())
    return makeCollectiveError(listRanks(failed) + why.str());
  return llvm::Error::success();
}

llvm::Error
mlir::nnx::agreeOnProgram(const CompileOptions::TensorParallel &parallel,
                          llvm::Error local,
                          const std::array<uint8_t, 20> &fingerprint) {
  if (llvm::Error e = allSucceeded(
          std::move(local), " failed to compile its part of the model (its "
                            "error says why), so no rank runs it"))
    return e;
  std::vector<uint8_t> all(fingerprint.size() * parallel.ranks);
  MPI_Allgather(fingerprint.data(), fingerprint.size(), MPI_BYTE, all.data(),
                fingerprint.size(), MPI_BYTE, MPI_COMM_WORLD);
  auto of = [&](int64_t r) {
    return llvm::ArrayRef<uint8_t>(all).slice(r * fingerprint.size(),
                                              fingerprint.size());
  };
  std::vector<int> other;
  for (int64_t r = 1; r < parallel.ranks; ++r)
    if (of(r) != of(0))
      other.push_back(r);
  if (other.empty())
    return llvm::Error::success();
  std::string digests = "rank 0's " + llvm::toHex(of(0).take_front(6), true);
  for (int r : other)
    digests += ", rank " + std::to_string(r) + "'s " +
               llvm::toHex(of(r).take_front(6), true);
  return makeCollectiveError(
      "the ranks compiled different programs: " + listRanks(other) +
      " did not compile rank 0's (program fingerprints " + digests +
      "); every rank must be given the same model and the same options "
      "(only the weights each rank binds differ)");
}

/// Broadcasts `bytes` bytes at `data` from rank 0, in pieces MPI's int
/// count can hold.
static void broadcastBytes(void *data, size_t bytes) {
  constexpr size_t kPiece = size_t(1) << 30;
  for (size_t at = 0; at < bytes; at += kPiece)
    MPI_Bcast(static_cast<char *>(data) + at,
              static_cast<int>(std::min(kPiece, bytes - at)), MPI_BYTE, 0,
              MPI_COMM_WORLD);
}

llvm::Error mlir::nnx::shareArrays(
    const CompileOptions::TensorParallel &parallel, llvm::Error local,
    llvm::ArrayRef<NpyArray> given, llvm::ArrayRef<NpyArray> givenWrites,
    std::vector<NpyArray> &inputs, std::vector<NpyArray> &writes) {
  if (llvm::Error e =
          allSucceeded(std::move(local), " could not make this call (its error "
                                         "says why), so no rank runs it"))
    return e;
  // Rank 0's arrays: [#inputs, #writes, then per array dtype, rank, dims].
  std::vector<int64_t> header;
  if (parallel.rank == 0) {
    header = {static_cast<int64_t>(given.size()),
              static_cast<int64_t>(givenWrites.size())};
    for (const NpyArray &a : llvm::concat<const NpyArray>(given, givenWrites)) {
      header.push_back(static_cast<int64_t>(a.dtype));
      header.push_back(a.rank());
      llvm::append_range(header, a.shape);
    }
  }
  int64_t length = header.size();
  MPI_Bcast(&length, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
  header.resize(length);
  MPI_Bcast(header.data(), static_cast<int>(length), MPI_INT64_T, 0,
            MPI_COMM_WORLD);
  if (parallel.rank == 0) {
    for (const NpyArray &a : llvm::concat<const NpyArray>(given, givenWrites))
      broadcastBytes(const_cast<uint8_t *>(a.data.data()), a.numBytes());
    return llvm::Error::success();
  }
  inputs.clear();
  writes.clear();
  size_t at = 2;
  for (int64_t i = 0; i < header[0] + header[1]; ++i) {
    auto dtype = static_cast<DType>(header[at]);
    llvm::ArrayRef<int64_t> shape(header.data() + at + 2, header[at + 1]);
    at += 2 + shape.size();
    NpyArray &a = (i < header[0] ? inputs : writes).emplace_back(dtype, shape);
    broadcastBytes(a.data.data(), a.numBytes());
  }
  return llvm::Error::success();
}
#else
llvm::Error
mlir::nnx::agreeOnProgram(const CompileOptions::TensorParallel &parallel,
                          llvm::Error local,
                          const std::array<uint8_t, 20> &fingerprint) {
  if (local)
    return local;
  return makeError("tensor parallelism: this nnx was built without MPI");
}

llvm::Error mlir::nnx::shareArrays(
    const CompileOptions::TensorParallel &parallel, llvm::Error local,
    llvm::ArrayRef<NpyArray> given, llvm::ArrayRef<NpyArray> givenWrites,
    std::vector<NpyArray> &inputs, std::vector<NpyArray> &writes) {
  if (local)
    return local;
  return makeError("tensor parallelism: this nnx was built without MPI");
}
#endif
