//===- CausalMask.h - which keys an attention's masks hide ------*- C++ -*-===//
//
// nnx-derive-kv-cache's causality proof. A model writes its attention mask
// in many ways (`triu(full(-inf), 1)`, `tril(ones) == 0`, HF's
// `full(min) * (arange(T) > arange(T).view(-1, 1))`, `masked_fill` with
// aranges compared, a registered buffer sliced per call, sliding windows,
// ALiBi added to it); rather than match each, the proof reads the mask's
// ops as a function of the query position `i` and the key position `j`
// (abstract interpretation over `0 <= i < j < max-length`) and checks what
// reaches the softmax there.
//
//===----------------------------------------------------------------------===//
#ifndef NNX_LIB_PIPELINES_CAUSALMASK_H
#define NNX_LIB_PIPELINES_CAUSALMASK_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::nnx {

/// Whether `size` (an index) is dim `d` of `v`.
using SizeOf = llvm::function_ref<bool(Value size, Value v, int64_t d)>;

/// Proves that an attention core hides every later key. `chain` holds the
/// ops from the scores (`scores`, the first op's operand) to the softmax's
/// input, in order: elementwise ops with the scores as one operand, and
/// reshapes that keep the last two dims. Every other operand of the chain
/// (the masks) must be a function of the positions alone, the same at
/// every sequence length: computed from `arange`s, constants, parameters
/// (registered buffers, read through their `nnx.parameters` values) and
/// slices of them at constant offsets, by elementwise ops, broadcasts,
/// `(un)squeeze` reshapes, permutations and `tril` / `triu`. At every
/// element `[..., i, j]` with `0 <= i < j < maxLength`, what reaches the
/// softmax must be hidden: `a * scores + b` with `|a| <= 1e3` and
/// `b <= -1e4` (exp underflows to 0 in float32 unless the scores spread by
/// more than 9.9e3), or a constant `b` (a `where` that drops the scores).
///
/// Fails with a diagnostic: on the op at fault when a mask is not such a
/// function, or on `softmax` (with a note at the scores) when a later key
/// may stay visible. `hasMask` tells the bidirectional encoder (no mask at
/// all) apart in the message. `isSizeOf` matches a reshape's sizes to its
/// input's (only an (un)squeeze is read).
LogicalResult proveCausal(func::FuncOp fn, Value scores,
                          ArrayRef<Operation *> chain, Operation *softmax,
                          bool hasMask, int64_t maxLength, SizeOf isSizeOf);

} // namespace mlir::nnx

#endif // NNX_LIB_PIPELINES_CAUSALMASK_H
