//===- Compatibility.h - what earlier versions wrote ------------*- C++ -*-===//
//
// A model saved as `.mlir` or `.mlirbc` is data its users keep, so the nnx
// dialect reads what earlier versions wrote (docs/Dialect.md,
// "Compatibility"; the files of test/Dialect/NNX/compat/ hold it to that):
//
// - Bytecode carries the dialect's version (kNNXDialectVersion). A file
//   written by a newer version is refused by name; an older one is read and
//   upgraded.
// - Every nnx op stores its attributes in bytecode as one dictionary, so an
//   op that gains, loses or retypes an attribute still reads old files.
// - upgradeLegacyAttributes rewrites the spellings earlier versions wrote
//   (GELU's `approximate = "tanh"`, FeedFwd's `activation = "relu"`) to
//   today's; the text parsers of those ops and the bytecode reader of every
//   op call it, so a change of syntax adds a case there and old files keep
//   their meaning.
//
//===----------------------------------------------------------------------===//
#ifndef NNX_DIALECT_NNX_IR_COMPATIBILITY_H
#define NNX_DIALECT_NNX_IR_COMPATIBILITY_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OperationSupport.h"

namespace mlir {
class DialectBytecodeReader;
class DialectBytecodeWriter;
namespace nnx {
class NNXDialect;

/// The version of the nnx dialect this build writes into bytecode. History:
///   1  the first versioned format (attributes as dictionaries); the text
///      spellings of before the enum attributes still read.
/// Bump it when what is written changes, and make upgradeLegacyAttributes
/// (or NNXBytecodeInterface::upgradeFromVersion) read the old form.
inline constexpr uint64_t kNNXDialectVersion = 1;

/// Rewrites, in place, the attributes of an `opName` op that an earlier
/// version spelled differently into today's form. Fails, with a diagnostic
/// from `emitError` naming the attribute and the values it takes, when an
/// old spelling holds a value that never was valid.
LogicalResult
upgradeLegacyAttributes(OperationName opName, NamedAttrList &attrs,
                        function_ref<InFlightDiagnostic()> emitError);

/// Adds the bytecode interface (version, upgrades) to the dialect.
void addNNXBytecodeInterface(NNXDialect &dialect);

} // namespace nnx
} // namespace mlir

#endif // NNX_DIALECT_NNX_IR_COMPATIBILITY_H
