//===- ShapeCheckText.cpp - the error of a failed shape check -------------===//
#include "ShapeCheckText.h"

using namespace mlir;
using namespace mlir::nnx;

ShapeCheckText mlir::nnx::describeShapeCheck(ShapeCheck c,
                                             ArrayRef<TensorSpec> inputs,
                                             ArrayRef<TensorSpec> parameters,
                                             ArrayRef<TensorSpec> writeProbes) {
  ShapeCheckText result;
  if (c.argument < 0 && c.sourceArgument >= 0) {
    std::swap(c.argument, c.sourceArgument);
    std::swap(c.operand, c.sourceOperand);
    std::swap(c.dim, c.sourceDim);
    result.swapped = true;
  }
  // What argument `arg` is, and whether the caller gave its array; for
  // another operand of the op, "operand <n>".
  auto describe = [&](int64_t arg,
                      unsigned operand) -> std::pair<std::string, bool> {
    size_t a = static_cast<size_t>(arg);
    if (arg < 0)
      return {"operand " + std::to_string(operand), false};
    if (a < inputs.size())
      return {inputs[a].name, true};
    if (a < inputs.size() + parameters.size())
      return {"parameter '" + parameters[a - inputs.size()].name + "'", false};
    return {"write probe '" +
                writeProbes[a - inputs.size() - parameters.size()].name + "'",
            true};
  };
  auto [name, given] = describe(c.argument, c.operand);
  std::string as = "as dimension " + std::to_string(c.sourceDim) + " of " +
                   describe(c.sourceArgument, c.sourceOperand).first;
  std::string dim = std::to_string(c.dim);
  if (given) {
    result.blamed = c.argument;
    result.text = name + ": dimension " + dim +
                  " is {given}, expected {expected} (" + as + ": " + c.op +
                  " runs both in one loop)";
  } else {
    result.text = "the arguments' shapes disagree in " + c.op + ": dimension " +
                  dim + " of " + name + " is {given}, expected {expected} (" +
                  as + ", in one loop)";
  }
  return result;
}
