//===- AttentionCore.h - an attention's heads and head dims -----*- C++ -*-===//
//
// What nnx-grow-attention and nnx-prune's `heads=` share: the attention
// module's one core (`softmax(q k^T ...) v`, found in its forward or the
// forwards it calls), and which axes (AxisAnalysis) are its kv heads, its
// query heads per kv head (the `repeat_kv` expand's group) and its head
// dims.
//
//===----------------------------------------------------------------------===//
#ifndef NNX_LIB_DIALECT_NNX_TRANSFORMS_ATTENTIONCORE_H
#define NNX_LIB_DIALECT_NNX_TRANSFORMS_ATTENTIONCORE_H

#include "AxisAnalysis.h"

#include "nnx/Dialect/NNX/IR/NNXFnOps.h"

namespace mlir::nnx::surgery {

struct AttentionCore {
  CustomModuleOp module;
  CallOp call;
  /// `q @ k^T` (the scores) and `p @ v`.
  FnMatmulOp scores, mix;
  /// The kv heads (absent: one kv head) and the group (absent: no
  /// `repeat_kv`, every query head has its own kv head).
  std::optional<Axis> kvHeads, group;
  /// The axes of the query/key head dim and of the value head dim.
  AxisList qkDim, vDim;

  int64_t numHeads(AxisAnalysis &a) const {
    return (kvHeads ? a.size(*kvHeads) : 1) * (group ? a.size(*group) : 1);
  }
};

/// Analyzes the attention module at `layer` (a custom module run by one
/// call) and finds its core; refuses anything else.
FailureOr<AttentionCore> findAttentionCore(ModelOp model, llvm::StringRef layer,
                                           AxisAnalysis &analysis,
                                           llvm::StringRef pass);

} // namespace mlir::nnx::surgery

#endif // NNX_LIB_DIALECT_NNX_TRANSFORMS_ATTENTIONCORE_H
