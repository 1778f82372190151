//===- PassBase.td - the ODS base of every nnx pass --------*- tablegen -*-===//
#ifndef NNX_SUPPORT_PASSBASE_TD
#define NNX_SUPPORT_PASSBASE_TD

include "mlir/Pass/PassBase.td"

// An mlir::OperationPass that refuses an option given twice
// (nnx/Support/PassOptions.h).
class NNX_Pass<string passArg, string operation = "">
  : PassBase<passArg, "::mlir::nnx::NNXOperationPass<" # operation # ">">;

#endif // NNX_SUPPORT_PASSBASE_TD
