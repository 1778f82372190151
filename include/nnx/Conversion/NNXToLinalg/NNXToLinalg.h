//===- NNXToLinalg.h - structure level to forward level ---------*- C++ -*-===//
//
// The C++ API of `nnx-build-forward`, usable without the pass manager.
//
//===----------------------------------------------------------------------===//
#ifndef NNX_CONVERSION_NNXTOLINALG_NNXTOLINALG_H
#define NNX_CONVERSION_NNXTOLINALG_NNXTOLINALG_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "nnx/Dialect/NNX/IR/NNXOps.h"

namespace mlir::nnx {

/// `x` reshaped to `type` with sizes `sizes` by the reassociation `groups`
/// (a collapse or an expansion). One whose group holds more than one
/// dynamic dim (batch and sequence) is a `tensor.reshape` with a shape
/// operand instead: MLIR 22.1's `expand-strided-metadata` crashes on a
/// `memref.expand_shape` of two dynamic dims (llvm-project #186830).
Value reshapeTensor(OpBuilder &b, Location loc, Value x, RankedTensorType type,
                    ArrayRef<ReassociationIndices> groups,
                    ArrayRef<OpFoldResult> sizes);

/// How a built forward gets the model's parameters and buffers.
enum class ParameterMode {
  /// As arguments after the inputs, listed by the function's
  /// `nnx.parameters` / `nnx.parameter_names`: the compiled code does not
  /// depend on the weights' values, and the runner binds the stored bytes.
  Arguments,
  /// As `arith.constant`s (inline tensors only): a self-contained function,
  /// e.g. for a test `main` that calls it.
  Constants,
};

/// How nnx-build-forward builds a forward (its pass options).
struct ForwardOptions {
  ParameterMode parameters = ParameterMode::Arguments;
  /// Whether the forward checks its indices at run time (an embedding's ids
  /// within the table): the first bad position and index of each check are
  /// extra results after the outputs, described by `nnx.index_checks`.
  /// Off, a bad id is clamped into the table (no error).
  bool checkIndices = true;
  /// What bf16 and f16 ops compute in: "f32" (PyTorch's CPU semantics:
  /// each op reads its narrow operands, computes and accumulates in f32 and
  /// rounds its result once) or "storage" (in the tensors' own type, each
  /// arithmetic step rounded). Recorded on the forward as `nnx.accumulate`.
  std::string accumulate = "f32";
};

/// Builds `func.func @<funcName>` (on tensors, `llvm.emit_c_interface`) that
/// computes the forward of `model`, inserted right before `model` in its
/// parent block. The model itself is left in place. On failure a diagnostic
/// has been emitted on the offending module and nothing was created.
FailureOr<func::FuncOp> buildForward(ModelOp model, StringRef funcName,
                                     const ForwardOptions &options = {});

/// What `nnx-build-forward` does: replaces every `nnx.model` under `root` by
/// its forward function (`@forward` for a single model, `@<model>_forward`
/// otherwise). On failure nothing is changed.
LogicalResult buildAllForwards(Operation *root,
                               const ForwardOptions &options = {});

/// The name `nnx-build-forward` gives the function of `model` when the
/// module holds `numModels` models.
std::string getForwardFuncName(ModelOp model, unsigned numModels);

} // namespace mlir::nnx

#endif // NNX_CONVERSION_NNXTOLINALG_NNXTOLINALG_H
