//===- CompileCache.h - the entries of the compile cache --------*- C++ -*-===//
//
// The compile cache (--cache-dir, NNX_CACHE_DIR; docs/Running.md) is a
// directory of entries of two kinds:
//
// - objects, `<key>.nnxobj` (ModelJIT.cpp): machine code, keyed by the LLVM
//   IR before optimization and what else decides the machine code. A hit
//   skips LLVM's optimizer and code generator.
// - lowerings, `<key>.nnxlow`: keyed by the forward-level program (the
//   module nnx-prepare-forward leaves, printed with its locations, which
//   run-time errors quote, but without the parameters' tensors and the
//   weights file's path, which the lowered code takes as arguments and never
//   reads), the target and its pipeline's options, the host machine, and
//   the builds of the code that lowers it (nnx's, MLIR's and LLVM's
//   libraries, by their ELF build IDs). An entry holds the key of the
//   object and the layouts the lowered forward asks of its parameters. A
//   hit skips the target pipeline too: a model compiled before loads in the
//   time it takes to parse it.
//
// Every entry is a magic word, the SHA-256 of its payload, then the
// payload; it is written to a temporary file and renamed into place, so
// compiles running concurrently never see half an entry, and a truncated
// or changed entry is a miss (then compiled again and replaced), never
// loaded.
//
//===----------------------------------------------------------------------===//
#ifndef NNX_LIB_EXECUTION_COMPILECACHE_H
#define NNX_LIB_EXECUTION_COMPILECACHE_H

#include "mlir/IR/BuiltinOps.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <memory>
#include <optional>
#include <string>

namespace mlir::nnx {

/// The path of entry `key` of kind `extension` ("nnxobj") in `dir`.
std::string cacheEntryPath(llvm::StringRef dir, llvm::StringRef key,
                           llvm::StringRef extension);

/// The payload of the entry at `path`, or null when there is none or it is
/// not whole (cut short, changed, or of another kind than `magic`).
std::unique_ptr<llvm::MemoryBuffer> readCacheEntry(llvm::StringRef path,
                                                   llvm::StringRef magic);

/// Writes `payload` as the entry at `path` (in `dir`, created if absent).
llvm::Error writeCacheEntry(llvm::StringRef dir, llvm::StringRef path,
                            llvm::StringRef magic, llvm::StringRef payload);

/// What a lowering's key is made of besides the program.
struct LoweringKeyParts {
  /// The target's name and its pipeline's options.
  std::string target, pipelineOptions;
  /// The host machine as the JIT compiles for it (describeHostMachine).
  std::string machine;
};

/// The key of the lowering of `module` (forward level) in hex, or nothing
/// when the builds that lower it cannot be identified (then only objects
/// are cached).
std::optional<std::string> loweringCacheKey(ModuleOp module,
                                            const LoweringKeyParts &parts);

/// A lowering entry: the key of its object, and the forward's
/// `nnx.parameter_layouts` as printed (empty: none).
struct LoweringEntry {
  std::string objectKey;
  std::string layouts;
};

std::optional<LoweringEntry> readLoweringEntry(llvm::StringRef dir,
                                               llvm::StringRef key);
llvm::Error writeLoweringEntry(llvm::StringRef dir, llvm::StringRef key,
                               const LoweringEntry &entry);

} // namespace mlir::nnx

#endif // NNX_LIB_EXECUTION_COMPILECACHE_H
