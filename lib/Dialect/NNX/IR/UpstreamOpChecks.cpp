//===- UpstreamOpChecks.cpp - what nnx checks of upstream ops -------------===//
#include "nnx/Dialect/NNX/IR/UpstreamOpChecks.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;

/// A constant dimension index of `source` (a `tensor.dim` or `memref.dim`
/// operand) outside [0, rank).
static LogicalResult verifyDimIndex(Operation *op, Value source, Value index) {
  auto type = dyn_cast<ShapedType>(source.getType());
  APInt value;
  if (!type || !type.hasRank() || !matchPattern(index, m_ConstantInt(&value)))
    return success();
  int64_t d = value.getSExtValue();
  if (d >= 0 && d < type.getRank())
    return success();
  return op->emitOpError("index ")
         << d << " is out of range for a source of rank " << type.getRank()
         << " (valid: 0 to " << type.getRank() - 1 << ")";
}

/// A static stride below 1 or a static offset below 0 of a slice.
static LogicalResult verifySliceSteps(OffsetSizeAndStrideOpInterface slice) {
  Operation *op = slice.getOperation();
  for (auto [d, stride] : llvm::enumerate(slice.getStaticStrides()))
    if (!ShapedType::isDynamic(stride) && stride < 1)
      return op->emitOpError("stride ")
             << stride << " of dimension " << d
             << " is not positive (a slice steps forward, at least 1)";
  for (auto [d, offset] : llvm::enumerate(slice.getStaticOffsets()))
    if (!ShapedType::isDynamic(offset) && offset < 0)
      return op->emitOpError("offset ")
             << offset << " of dimension " << d << " is negative";
  return success();
}

LogicalResult mlir::nnx::verifyUpstreamOp(Operation *op) {
  if (auto dim = dyn_cast<tensor::DimOp>(op))
    return verifyDimIndex(op, dim.getSource(), dim.getIndex());
  // memref.dim by name: the IR library does not depend on memref.
  if (op->getName().getStringRef() == "memref.dim" && op->getNumOperands() == 2)
    return verifyDimIndex(op, op->getOperand(0), op->getOperand(1));
  if (isa<tensor::ExtractSliceOp, tensor::InsertSliceOp>(op) ||
      op->getName().getStringRef() == "memref.subview")
    if (auto slice = dyn_cast<OffsetSizeAndStrideOpInterface>(op))
      return verifySliceSteps(slice);
  return success();
}
