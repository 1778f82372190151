//===- HostTarget.h - what the host runs, for the drivers -------*- C++ -*-===//
//
// The only host and environment queries of the CPU target: the execution
// library's drivers (nnx-run, nnx-compile, the Python and C APIs) write the
// host's #nnx.target from them (CPUTarget.cpp); no pass asks the host.
//
//===----------------------------------------------------------------------===//
#ifndef NNX_EXECUTION_HOSTTARGET_H
#define NNX_EXECUTION_HOSTTARGET_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace mlir::nnx {

/// The environment variable a driver reads when no cap is given explicitly.
inline constexpr const char *kMaxISAEnv = "NNX_JIT_MAX_ISA";

/// The vector width (bits) of the cap `name`, as
/// isaVectorBits; an empty `name` reads NNX_JIT_MAX_ISA. Any other name, or
/// a cap on a host that is not x86-64, is an error.
llvm::Expected<unsigned> maxISABits(llvm::StringRef name);

/// The widest vector register of the host (512 AVX-512, 256
/// AVX2 with FMA, else 128), at most `capBits` when it is not 0.
unsigned hostVectorBits(unsigned capBits = 0);

/// Whether the host runs AVX512_BF16 (`vdpbf16ps`) under the
/// cap `capBits` (0: none; a cap below 512 bits excludes it).
bool hostHasAVX512BF16(unsigned capBits);

} // namespace mlir::nnx

#endif // NNX_EXECUTION_HOSTTARGET_H
