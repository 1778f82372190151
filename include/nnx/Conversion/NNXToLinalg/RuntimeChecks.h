//===- RuntimeChecks.h - checks the compiled code makes at run time -*- C++
//-*-//
//
// Sizes the compiler cannot check (a dynamic dim that must equal another, a
// slice that must lie inside its source) are checked by the compiled code,
// torch-mlir's `cf.assert` in spirit, but carrying both sizes: a failed
// check calls the runtime's
//
//   void nnxRuntimeFail(const char *message, int64_t a, int64_t b);
//
// which never returns to the compiled code. `message` names the op, its
// source label and location, and what must hold, with "{0}" and "{1}"
// standing for `a` and `b`. In IR (before bufferization; O(1) scalar code
// beside the op, outside its loops):
//
//   %bad = arith.cmpi ne, %k0, %k1 : index
//   scf.if %bad {
//     %m = llvm.mlir.addressof @__nnx_check_1f2e3d : !llvm.ptr
//     %a = arith.index_cast %k0 : index to i64
//     %b = arith.index_cast %k1 : index to i64
//     func.call @nnxRuntimeFail(%m, %a, %b) : (!llvm.ptr, i64, i64) -> ()
//   }
//
// The execution library provides the function to the JIT (it unwinds to
// the caller of the forward, which returns an error); an object file needs
// it from its host program.
//
//===----------------------------------------------------------------------===//
#ifndef NNX_CONVERSION_NNXTOLINALG_RUNTIMECHECKS_H
#define NNX_CONVERSION_NNXTOLINALG_RUNTIMECHECKS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace mlir::nnx {

/// The function a failed run-time check calls.
inline constexpr llvm::StringLiteral kRuntimeFailFuncName = "nnxRuntimeFail";

/// "'nnx.fn.matmul' (matmul_0) at model.mlir:5:8": the op, its source label
/// (`nnx.source` or a NameLoc) and its file location, as far as known.
std::string describeCheckedOp(Operation *op);

/// Emits, at `b`'s insertion point, a check that `lhs pred rhs` (index or
/// integer values) holds, calling kRuntimeFailFuncName with `message`
/// ("{0}" is lhs, "{1}" rhs) where it does not. Declares the function and
/// the message's global in the enclosing module. Nothing is emitted when
/// both are constants for which the predicate holds.
void emitRuntimeCheck(OpBuilder &b, Location loc, arith::CmpIPredicate pred,
                      Value lhs, Value rhs, StringRef message);

/// As emitRuntimeCheck, for a condition computed by the caller: fails with
/// `message` ("{0}" is `lhs`, "{1}" `rhs`: index or integer values) where
/// the i1 `bad` holds.
void emitRuntimeFailureIf(OpBuilder &b, Location loc, Value bad, Value lhs,
                          Value rhs, StringRef message);

} // namespace mlir::nnx

#endif // NNX_CONVERSION_NNXTOLINALG_RUNTIMECHECKS_H
