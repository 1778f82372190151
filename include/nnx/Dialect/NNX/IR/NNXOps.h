//===- NNXOps.h - nnx operations --------------------------------*- C++ -*-===//
#ifndef NNX_DIALECT_NNX_IR_NNXOPS_H
#define NNX_DIALECT_NNX_IR_NNXOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/RegionKindInterface.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "nnx/Dialect/NNX/IR/NNXDialect.h"

#include "nnx/Dialect/NNX/IR/NNXEnums.h.inc"

namespace mlir::nnx::detail {
/// Checks the attributes every module carries (requires_grad, hooks,
/// parametrizations, pruned name tensors the module has).
LogicalResult verifyModuleOpInterface(Operation *op);
} // namespace mlir::nnx::detail

#include "nnx/Dialect/NNX/IR/NNXInterfaces.h.inc"

namespace mlir::nnx {
class ReturnOp;
class ModuleListOp;
class ForwardOp;
} // namespace mlir::nnx

#define GET_OP_CLASSES
#include "nnx/Dialect/NNX/IR/NNXOps.h.inc"

namespace mlir::nnx {
/// Name of the discardable attribute that labels an op inside a forward
/// region for tracing paths (`source.<label>.output`).
inline constexpr llvm::StringLiteral kSourceAttrName = "nnx.source";
} // namespace mlir::nnx

#endif // NNX_DIALECT_NNX_IR_NNXOPS_H
