//===- InputGuard.h - inputs checked before MLIR parses them ---*- C++ -*-===//
//
// What the parsers nnx hands its inputs to would crash on, refused with an
// error before they run, or contained when they do crash (issue 13; the limits
// and the upstream bugs are listed in docs/Reliability.md):
// - nesting deep enough to overflow the stack of MLIR's recursive text parser,
//   or of llvm::json::parse;
// - `array<index: ...>`, on which MLIR 22.1's dense array parser dereferences
//   a null pointer (llvm/llvm-project#179045);
// - bytecode whose attribute and type offset table has a group with more
//   entries than the table, which MLIR 22.1's reader writes past its heap
//   block (AttrTypeReader::initialize);
// - anything else MLIR 22.1's parsers crash on, corrupted bytecode above all:
//   run in a CrashRecoveryContext, reported as an error naming the file.
//
//===----------------------------------------------------------------------===//
#ifndef NNX_SUPPORT_INPUTGUARD_H
#define NNX_SUPPORT_INPUTGUARD_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/LogicalResult.h"

#include <cstddef>
#include <optional>

namespace llvm {
class MemoryBuffer;
class SourceMgr;
class raw_ostream;
} // namespace llvm

namespace mlir::nnx {

/// The deepest nesting of brackets (`{`, `[`, `(`, `<` together) accepted in
/// textual IR: each level costs MLIR's recursive parser a few stack frames,
/// and 1,000 levels stay far below the default 8 MiB stack (10,000 overflow
/// it).
inline constexpr size_t kMaxIRNestingDepth = 1000;

/// The deepest nesting of arrays and objects accepted in a JSON file that
/// nnx reads (llvm::json::parse recurses once per level).
inline constexpr size_t kMaxJsonNestingDepth = 256;

/// Checks `buffer` before MLIR parses it, printing an error to `os`. Text:
/// nesting deeper than kMaxIRNestingDepth and `array<index: ...>` are errors,
/// with their location. Bytecode: a group of the attribute and type offset
/// table with more entries than are left in the table (MLIR 22.1's reader
/// writes them past the table, corrupting the heap: no crash to contain);
/// everything else is left to the reader (and to runParserContained).
llvm::LogicalResult checkParserInput(const llvm::MemoryBuffer &buffer,
                                     llvm::raw_ostream &os);

/// Whether `buffer` holds MLIR bytecode rather than text.
bool isBytecodeBuffer(const llvm::MemoryBuffer &buffer);

/// Prints the error for a crash of MLIR's parser or bytecode reader on
/// `buffer`: the file, and that an upstream bug was contained.
void reportParserCrash(const llvm::MemoryBuffer &buffer, llvm::raw_ostream &os);

/// Runs `fn` in a llvm::CrashRecoveryContext. Returns false when it crashed
/// (a signal, or a fatal error that aborts); its stack was then unwound
/// without destructors, so the caller reports the crash and exits.
bool runRecoveringCrash(llvm::function_ref<void()> fn);

/// Runs `parse`, which parses `buffer`, under runRecoveringCrash; a crash is
/// reported to `os` through reportParserCrash and makes it fail.
llvm::LogicalResult runParserContained(const llvm::MemoryBuffer &buffer,
                                       llvm::function_ref<void()> parse,
                                       llvm::raw_ostream &os);

/// Bounds the memory and the time a bytecode read may take, for the object's
/// lifetime (or until release()). Memory: lowers the process's address-space
/// limit (RLIMIT_AS) to what it maps now plus getBytecodeReadBudget().
/// MLIR 22.1's bytecode reader sizes a region's value list from a count in
/// the file without checking it against the bytes left: a corrupted count
/// made it allocate gigabytes for tens of seconds. Under the limit the
/// allocation fails at once, and the failure is contained like any crash of
/// the reader. In ASan builds (whose shadow memory needs the address space)
/// the budget bounds the heap ASan's allocator has handed out instead: an
/// allocation of 64 KiB or more that takes it past what was held plus the
/// budget unwinds the read the same way (MSan and TSan builds set no memory
/// limit). Time: getBytecodeReadSeconds() (or `milliseconds`); a read still
/// running then is ended by SIGALRM as a crash of the reader is (the
/// CrashRecoveryContext of runParserContained unwinds it, and
/// bytecodeReadTimedOut() says so): cyclic attribute and type references in
/// a corrupted file made MLIR 22.1's reader recurse for minutes. A signal
/// that finds the read inside the C library or the allocator waits for it
/// to leave them (a millisecond at a time): unwinding malloc corrupted the
/// heap. Both are no-ops for text.
class BytecodeReadLimits {
public:
  explicit BytecodeReadLimits(
      const llvm::MemoryBuffer &buffer,
      std::optional<uint64_t> milliseconds = std::nullopt);
  ~BytecodeReadLimits() { release(); }
  BytecodeReadLimits(const BytecodeReadLimits &) = delete;
  BytecodeReadLimits &operator=(const BytecodeReadLimits &) = delete;
  /// Restores the limit the process had.
  void release();
  /// Whether a memory limit is in effect now.
  bool isActive() const { return active; }
  /// Whether this build sets memory limits at all (not in MSan and TSan
  /// builds).
  static bool isSupported();
  /// Whether the memory limit is the process's address space (RLIMIT_AS);
  /// else (ASan builds) it is the sanitizer allocator's heap.
  static bool limitsAddressSpace();

private:
  bool active = false;
  bool timed = false;
  [[maybe_unused]] uint64_t savedSoftLimit = 0; // not in ASan builds
};

/// The seconds a bytecode read of `fileBytes` may take: 5 plus one per MiB.
unsigned getBytecodeReadSeconds(uint64_t fileBytes);

/// Whether the last read under BytecodeReadLimits was ended by its time
/// limit.
bool bytecodeReadTimedOut();

/// What a bytecode read of `fileBytes` may add to the process's address
/// space: 32 times the file (inline weights, the IR's objects), at least
/// 4 GiB.
uint64_t getBytecodeReadBudget(uint64_t fileBytes);

/// Parses the main buffer of `sourceMgr` (text or bytecode) into a module
/// of `context` with every guard the tools have: checkParserInput first, a
/// read under BytecodeReadLimits, the parse contained by
/// runParserContained, then (for bytecode) checkDenseElementsData before
/// the verifier. A file that is one `module` is that module; anything else
/// is wrapped in one. Diagnostics go to the context's handlers, the guards'
/// reports to `os`. Null on failure; `crashed`, when given, says whether
/// MLIR's parser crashed (then the context may hold what the parse had
/// built half-way: a long-lived process should not destroy it).
OwningOpRef<ModuleOp> parseGuarded(llvm::SourceMgr &sourceMgr,
                                   MLIRContext *context, llvm::raw_ostream &os,
                                   bool *crashed = nullptr);

/// Checks that every dense int or float elements attribute under `root`
/// holds as many bytes as its type needs. MLIR 22.1's bytecode reader accepts
/// corrupted ones, and whatever reads their elements (the printer first) then
/// reads out of bounds. The error is emitted at the op's location, without
/// the op (printing it would read the attribute).
llvm::LogicalResult checkDenseElementsData(mlir::Operation *root);

/// The offset of the first `[` or `{` of `text` that opens a level deeper
/// than `limit`, or nullopt; strings are skipped the way a JSON parser reads
/// them, without recursion.
std::optional<size_t> findJsonDepthOverflow(llvm::StringRef text, size_t limit);

} // namespace mlir::nnx

#endif // NNX_SUPPORT_INPUTGUARD_H
