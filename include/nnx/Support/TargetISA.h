//===- TargetISA.h - the instruction set of nnx CPU code ---*- C++ -*-===//
//
// The host's widest vector registers, optionally capped below the host's
// (docs/Running.md, "Instruction set"): `max-isa=avx2` of nnx-cpu-pipeline,
// or the NNX_JIT_MAX_ISA environment variable when the option is not given.
// The cap reaches both the matmul schedule's tile table and the code LLVM
// emits (the `target_features` of every function), so an AVX-512 host runs
// the AVX2 tiles with AVX2 instructions.
//
//===----------------------------------------------------------------------===//
#ifndef NNX_SUPPORT_TARGETISA_H
#define NNX_SUPPORT_TARGETISA_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace mlir::nnx {

/// The environment variable read when no cap is given explicitly.
inline constexpr const char *kMaxISAEnv = "NNX_JIT_MAX_ISA";

/// The vector width (bits) of the cap `name`: "avx512" 512, "avx2" 256,
/// "sse4.2" 128, "" 0 (no cap). An empty `name` reads NNX_JIT_MAX_ISA. Any
/// other name, or a cap on a host that is not x86-64, is an error.
llvm::Expected<unsigned> maxISABits(llvm::StringRef name);

/// The widest vector register of the host (512 AVX-512, 256 AVX2 with FMA,
/// else 128), at most `capBits` when it is not 0.
unsigned hostVectorBits(unsigned capBits = 0);

/// The LLVM target features that keep code at `capBits` wide vectors
/// ("-avx512f" for 256, "-avx" for 128; none for 0 or 512). Clearing a
/// feature clears every feature that implies it.
/// Whether the host runs AVX512_BF16 (`vdpbf16ps`) under the cap `capBits`
/// (0: none; a cap below 512 bits excludes it).
bool hostHasAVX512BF16(unsigned capBits);

std::vector<std::string> capFeatures(unsigned capBits);

} // namespace mlir::nnx

#endif // NNX_SUPPORT_TARGETISA_H
