//===- SizeProofs.h - bounded value-bounds proofs of sizes ------*- C++ -*-===//
//
// Proofs that two sizes are equal, for rewrites that may drop a run-time
// check or a reshape when they are. Upstream's ValueBoundsConstraintSet
// walks the backward slices of both sizes until it proves the relation or
// runs out of IR: in a forward, a dynamic size leads back through every
// layer to the function's arguments, and the presburger problem grows with
// each layer visited. Asked once per reshape, that is cubic in depth
// (MaxViT's 682 reshapes: 80 s). These proofs visit a bounded slice: what
// they cannot prove there is "not proven", never "unequal", so a caller
// keeps its check.
//
//===----------------------------------------------------------------------===//
#ifndef NNX_SUPPORT_SIZEPROOFS_H
#define NNX_SUPPORT_SIZEPROOFS_H

#include "mlir/Interfaces/ValueBoundsOpInterface.h"

namespace mlir::nnx {

/// How many values (or dims of shaped values) of the backward slices a
/// size proof visits at most.
constexpr int64_t kSizeProofBudget = 256;

/// Whether `lhs` and `rhs` are provably equal: a value-bounds proof that
/// their difference is the constant 0, over at most `budget` values of
/// their backward slices.
bool isProvablyEqual(const ValueBoundsConstraintSet::Variable &lhs,
                     const ValueBoundsConstraintSet::Variable &rhs,
                     int64_t budget = kSizeProofBudget);

} // namespace mlir::nnx

#endif // NNX_SUPPORT_SIZEPROOFS_H
