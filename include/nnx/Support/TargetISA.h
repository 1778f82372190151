//===- TargetISA.h - the instruction set of nnx CPU code ---*- C++ -*-===//
//
// Instruction-set caps (docs/Running.md, "Instruction set") and what the
// host runs. The code generation passes never ask the host: they read the
// module's #nnx.target (nnx/Dialect/NNX/IR/Target.h). The host queries
// here (maxISABits with its NNX_JIT_MAX_ISA fallback, hostVectorBits,
// hostHasAVX512BF16) are for drivers, which write the host's target: the
// execution library's CPU target (nnx-run, nnx-compile, the Python and C
// APIs).
//
//===----------------------------------------------------------------------===//
#ifndef NNX_SUPPORT_TARGETISA_H
#define NNX_SUPPORT_TARGETISA_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::nnx {

/// The environment variable a driver reads when no cap is given explicitly.
inline constexpr const char *kMaxISAEnv = "NNX_JIT_MAX_ISA";

/// The vector width (bits) of the instruction set `name`: "avx512" 512,
/// "avx2" 256, "sse4.2" 128 (any case), "" 0 (no cap); nullopt for any
/// other name. Asks nothing of the host or the environment.
std::optional<unsigned> isaVectorBits(llvm::StringRef name);

/// The message for an instruction-set name isaVectorBits does not know;
/// `source` says where it came from ("max-isa").
std::string unknownISAMessage(llvm::StringRef source, llvm::StringRef name);

/// Drivers only. The vector width (bits) of the cap `name`, as
/// isaVectorBits; an empty `name` reads NNX_JIT_MAX_ISA. Any other name, or
/// a cap on a host that is not x86-64, is an error.
llvm::Expected<unsigned> maxISABits(llvm::StringRef name);

/// Drivers only. The widest vector register of the host (512 AVX-512, 256
/// AVX2 with FMA, else 128), at most `capBits` when it is not 0.
unsigned hostVectorBits(unsigned capBits = 0);

/// Drivers only. Whether the host runs AVX512_BF16 (`vdpbf16ps`) under the
/// cap `capBits` (0: none; a cap below 512 bits excludes it).
bool hostHasAVX512BF16(unsigned capBits);

/// The LLVM target features that keep code at `capBits` wide vectors
/// ("-avx512f" for 256, "-avx" for 128; none for 0 or 512). Clearing a
/// feature clears every feature that implies it.
std::vector<std::string> capFeatures(unsigned capBits);

} // namespace mlir::nnx

#endif // NNX_SUPPORT_TARGETISA_H
