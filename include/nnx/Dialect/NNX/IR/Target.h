//===- Target.h - the CPU a module's code is generated for ------*- C++ -*-===//
//
// The module's `nnx.target` (#nnx.target, NNXAttrs.td): what the CPU code
// generation passes read instead of querying the host. Only drivers query
// the host (nnx/Support/TargetISA.h) and write what they find here.
//
//===----------------------------------------------------------------------===//
#ifndef NNX_DIALECT_NNX_IR_TARGET_H
#define NNX_DIALECT_NNX_IR_TARGET_H

#include "nnx/Dialect/NNX/IR/NNXOps.h"

#include "mlir/IR/BuiltinOps.h"

namespace mlir::nnx {

/// The vector width of the default target.
inline constexpr unsigned kDefaultTargetVectorBits = 128;

/// The target of a module without `nnx.target`: 128-bit vectors, no
/// AVX512_BF16, the code generator's own CPU and features. Every x86-64 and
/// AArch64 CPU runs it; nothing about the host is asked.
TargetAttr getDefaultTarget(MLIRContext *context);

/// The `nnx.target` of `module`, else the default target.
TargetAttr getModuleTarget(ModuleOp module);

/// `target` within an instruction set of `capBits`-bit vectors (0: no cap):
/// `vector_bits` at most `capBits`, no AVX512_BF16 below 512 bits, and the
/// features that clear the wider sets (capFeatures) added to `features`.
TargetAttr capTarget(TargetAttr target, unsigned capBits);

} // namespace mlir::nnx

#endif // NNX_DIALECT_NNX_IR_TARGET_H
