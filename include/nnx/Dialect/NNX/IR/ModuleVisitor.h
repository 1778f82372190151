//===- ModuleVisitor.h - exhaustive dispatch over module kinds --*- C++ -*-===//
//
// Where code must treat each kind of module differently (the structure walk
// of nnx-build-forward, the forward type function), it derives from
// ModuleVisitor, as CIRCT's CombVisitor: every container kind has its own
// `visit` overload and every leaf layer is one `visitLayer` through
// LayerOpInterface. There are no defaults, so a visitor that forgets a
// container kind does not compile, and a new leaf layer needs no case at all.
//
//===----------------------------------------------------------------------===//
#ifndef NNX_DIALECT_NNX_IR_MODULEVISITOR_H
#define NNX_DIALECT_NNX_IR_MODULEVISITOR_H

#include "nnx/Dialect/NNX/IR/NNXOps.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::nnx {

template <typename ConcreteType, typename ResultType = void,
          typename... ExtraArgs>
class ModuleVisitor {
public:
  /// Calls the concrete visitor's `visit(SequentialOp)`,
  /// `visit(FeedFwdOp)`, `visit(ConvNNOp)`, `visit(ModuleListOp)`,
  /// `visit(ModuleDictOp)`,
  /// `visit(CustomModuleOp)` or
  /// `visitLayer(LayerOpInterface)`; anything else (not a module) goes to
  /// `visitNotAModule(Operation *)`.
  ResultType dispatchModuleVisitor(Operation *op, ExtraArgs... args) {
    auto *self = static_cast<ConcreteType *>(this);
    return llvm::TypeSwitch<Operation *, ResultType>(op)
        .template Case<SequentialOp, FeedFwdOp, ConvNNOp, ModuleListOp,
                       ModuleDictOp, CustomModuleOp>(
            [&](auto container) { return self->visit(container, args...); })
        .template Case<LayerOpInterface>(
            [&](auto layer) { return self->visitLayer(layer, args...); })
        .Default([&](Operation *other) {
          return self->visitNotAModule(other, args...);
        });
  }
};

} // namespace mlir::nnx

#endif // NNX_DIALECT_NNX_IR_MODULEVISITOR_H
