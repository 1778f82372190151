//===- FuzzSupport.h - what the nnx tools do with an input, for fuzzing ---===//
//
// The libFuzzer harnesses of fuzz/ feed their input through the same steps
// nnx-opt and nnx-run apply before any pass runs (InputGuard.h): the text
// checks, a parse and verify contained in a CrashRecoveryContext, and the
// dense data check of bytecode. Nothing here hides a bug of nnx: a crash the
// context contains while parsing text (whose known MLIR crashes the checks
// refuse first) is reported as a finding.
//
//===----------------------------------------------------------------------===//
#ifndef NNX_FUZZ_FUZZSUPPORT_H
#define NNX_FUZZ_FUZZSUPPORT_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include "llvm/ADT/StringRef.h"

#include <memory>
#include <string>

namespace nnxfuzz {

/// A context with the dialects nnx-opt registers, single-threaded, whose
/// diagnostics are rendered (as the tools would) and dropped.
std::unique_ptr<mlir::MLIRContext> makeContext();

/// How parseInput ended.
enum class ParseOutcome { Parsed, Refused, ContainedCrash };

/// Parses and verifies `bytes` the way nnx-opt does before its passes:
/// checkParserInput, the parse and verification in a CrashRecoveryContext,
/// then checkDenseElementsData for bytecode. `module` is set when Parsed.
ParseOutcome parseInput(mlir::MLIRContext &context, llvm::StringRef bytes,
                        mlir::OwningOpRef<mlir::ModuleOp> &module);

/// The textual form nnx-opt writes for `op`.
std::string printOp(mlir::Operation *op);

/// Reports a finding of a harness on stderr and aborts (libFuzzer saves the
/// input).
[[noreturn]] void fail(llvm::StringRef harness, llvm::StringRef what);

/// `relative` (a path in the source tree) made absolute.
std::string sourcePath(llvm::StringRef relative);

} // namespace nnxfuzz

#endif // NNX_FUZZ_FUZZSUPPORT_H
