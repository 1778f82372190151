//===- TargetISA.h - the instruction set of nnx CPU code ---*- C++ -*-===//
//
// Instruction sets and their caps (docs/Running.md, "Instruction set"),
// as data: nothing here asks the host or the environment. The code
// generation passes read the module's #nnx.target
// (nnx/Dialect/NNX/IR/Target.h); only the drivers ask what the host runs
// (lib/Execution/HostTarget.h), to write the host's target.
//
//===----------------------------------------------------------------------===//
#ifndef NNX_SUPPORT_TARGETISA_H
#define NNX_SUPPORT_TARGETISA_H

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::nnx {

/// The vector width (bits) of the instruction set `name`: "avx512" 512,
/// "avx2" 256, "sse4.2" 128 (any case), "" 0 (no cap); nullopt for any
/// other name. Asks nothing of the host or the environment.
std::optional<unsigned> isaVectorBits(llvm::StringRef name);

/// The message for an instruction-set name isaVectorBits does not know;
/// `source` says where it came from ("max-isa").
std::string unknownISAMessage(llvm::StringRef source, llvm::StringRef name);

/// The LLVM target features that keep code at `capBits` wide vectors
/// ("-avx512f" for 256, "-avx" for 128; none for 0 or 512). Clearing a
/// feature clears every feature that implies it.
std::vector<std::string> capFeatures(unsigned capBits);

} // namespace mlir::nnx

#endif // NNX_SUPPORT_TARGETISA_H
