//===- StateRead.h - module tensors read by a forward ----------*- C++ -*-===//
//
// `nnx.state` reads a tensor of the enclosing `nnx.module`; with `nnx.of`
// (a reference below that module, like an `nnx.call` callee) it reads a
// tensor of one of its descendants instead, as PyTorch code reads
// `self.q_proj.bias` or `self.wte.weight` directly. Surgery that resizes,
// retypes or removes such a tensor must see the read: these helpers find the
// reads of a module's tensors.
//
// `nnx.uncalled` marks an `nnx.module` that the model's forward never calls
// (torchvision's StochasticDepth on a block without a residual, GoogLeNet's
// auxiliary heads in eval): it is kept with its children and tensors, and
// has no `nnx.forward`. `nnx.entry` names the method a root's forward was
// exported from.
//
//===----------------------------------------------------------------------===//

#ifndef NNX_DIALECT_NNX_IR_STATEREAD_H
#define NNX_DIALECT_NNX_IR_STATEREAD_H

#include "nnx/Dialect/NNX/IR/NNXOps.h"

#include "llvm/ADT/SmallVector.h"

namespace mlir::nnx {

/// The discardable attribute naming the module an `nnx.state` reads from.
inline constexpr llvm::StringLiteral kStateOfAttrName = "nnx.of";
/// The discardable unit attribute of an `nnx.module` never called.
inline constexpr llvm::StringLiteral kUncalledAttrName = "nnx.uncalled";
/// The discardable string attribute of the root's `nnx.forward` naming the
/// PyTorch method it was exported from, when that is not `forward` (a
/// two-tower model's `encode_image`).
inline constexpr llvm::StringLiteral kEntryAttrName = "nnx.entry";

/// The module whose tensor `state` reads: the enclosing `nnx.module`, or the
/// module its `nnx.of` names below it (aliases followed). Null if none.
Operation *getStateOwner(StateOp state);

/// The tensor `name` of `module`: a layer's tensor attribute, else an entry of
/// its `state` dictionary. Null if it has none.
ElementsAttr getModuleTensor(Operation *module, llvm::StringRef name);

/// The `nnx.state` ops of the model that read, through `nnx.of`, a tensor of
/// `module` or of a module inside it, from a forward outside `module`.
llvm::SmallVector<StateOp> getOutsideStateReads(Operation *module);

/// Whether `op` is an `nnx.module` marked `nnx.uncalled`.
bool isUncalledModule(Operation *op);

} // namespace mlir::nnx

#endif // NNX_DIALECT_NNX_IR_STATEREAD_H
