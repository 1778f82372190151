//===- ShapeCheckText.h - the error of a failed shape check -----*- C++ -*-===//
//
// One wording for a place where the compiled forward assumes two argument
// sizes agree (`@forward_shape_checks`) and a call's do not, shared by the
// JIT's CompiledModel::validate and the tables nnx-compile writes for the
// C runtime:
//
//   input 1: dimension 1 is 5, expected 4 (as dimension 1 of input 0:
//   'linalg.generic' (add_0) at m.mlir:5:8 runs both in one loop)
//
//===----------------------------------------------------------------------===//
#ifndef NNX_LIB_EXECUTION_SHAPECHECKTEXT_H
#define NNX_LIB_EXECUTION_SHAPECHECKTEXT_H

#include "nnx/Execution/CompiledModel.h"

#include <string>

namespace mlir::nnx {

struct ShapeCheckText {
  /// The error, with "{given}" and "{expected}" where the sizes go.
  std::string text;
  /// Whether the expected size is the second of the pair the shape
  /// function returns (the check was turned round to name a caller's array).
  bool swapped = false;
  /// The forward argument whose array the error names (an input or a write
  /// probe: the caller's), or -1 when it names an operand or a parameter.
  int64_t blamed = -1;
};

/// The wording of `check` for a forward of these inputs, parameters and
/// write probes: it names an array the caller gave where one of the two
/// sizes is one.
ShapeCheckText describeShapeCheck(ShapeCheck check,
                                  llvm::ArrayRef<TensorSpec> inputs,
                                  llvm::ArrayRef<TensorSpec> parameters,
                                  llvm::ArrayRef<TensorSpec> writeProbes);

} // namespace mlir::nnx

#endif // NNX_LIB_EXECUTION_SHAPECHECKTEXT_H
