//===- Broadcast.cpp - the broadcasting rule of the nnx.fn ops ------------===//
#include "nnx/Dialect/NNX/IR/Broadcast.h"

#include "mlir/IR/BuiltinTypeInterfaces.h"

using namespace mlir;
using namespace mlir::nnx;

/// "?" or the size.
static std::string sizeStr(int64_t size) {
  return ShapedType::isDynamic(size) ? "?" : std::to_string(size);
}

bool mlir::nnx::isBroadcastDim(int64_t operandSize, int64_t resultSize) {
  return operandSize == 1 && resultSize != 1;
}

/// Checks the operand dims aligned with result dim `d` against it, and (in
/// Derived mode) that the result dim is what they determine.
static LogicalResult
verifyBroadcastDim(ArrayRef<BroadcastOperand> operands,
                   ArrayRef<int64_t> result, unsigned d, BroadcastResult mode,
                   function_ref<InFlightDiagnostic()> emitError) {
  int64_t r = result[d];
  bool anyDynamic = false;
  std::optional<int64_t> fixed; // a static operand size that is not 1
  for (const BroadcastOperand &operand : operands) {
    int64_t offset = (int64_t)result.size() - (int64_t)operand.shape.size();
    if ((int64_t)d < offset)
      continue;
    unsigned od = d - offset;
    int64_t s = operand.shape[od];
    if (ShapedType::isDynamic(s)) {
      anyDynamic = true;
      continue;
    }
    if (s != 1)
      fixed = s;
    if (isBroadcastDim(s, r) || s == r)
      continue;
    if (!emitError)
      return failure();
    return emitError() << "dim " << od << " of " << operand.name << " has size "
                       << s << ", which does not broadcast "
                       << "to size " << sizeStr(r) << " of result dim " << d;
  }
  if (mode == BroadcastResult::Given)
    return success();
  // What the operands determine: a static size other than 1, else `?` if
  // some dim is dynamic, else 1.
  int64_t derived = fixed ? *fixed : anyDynamic ? ShapedType::kDynamic : 1;
  if (derived == r)
    return success();
  if (!emitError)
    return failure();
  return emitError() << "result dim " << d << " has size " << sizeStr(r)
                     << ", but the operands determine size "
                     << sizeStr(derived);
}

LogicalResult
mlir::nnx::verifyBroadcast(ArrayRef<BroadcastOperand> operands,
                           ArrayRef<int64_t> result, BroadcastResult mode,
                           function_ref<InFlightDiagnostic()> emitError) {
  size_t maxRank = 0;
  for (const BroadcastOperand &operand : operands) {
    maxRank = std::max(maxRank, operand.shape.size());
    if (operand.shape.size() <= result.size())
      continue;
    if (!emitError)
      return failure();
    return emitError() << operand.name << " has rank " << operand.shape.size()
                       << ", more than the result's " << result.size();
  }
  if (mode == BroadcastResult::Derived && result.size() != maxRank) {
    if (!emitError)
      return failure();
    return emitError() << "result has rank " << result.size()
                       << ", but the largest operand rank is " << maxRank;
  }
  for (unsigned d = 0, e = result.size(); d < e; ++d)
    if (failed(verifyBroadcastDim(operands, result, d, mode, emitError)))
      return failure();
  return success();
}

SmallVector<AffineExpr>
mlir::nnx::getBroadcastExprs(ArrayRef<int64_t> operandShape,
                             ArrayRef<int64_t> resultShape,
                             MLIRContext *context) {
  SmallVector<AffineExpr> exprs;
  unsigned offset = resultShape.size() - operandShape.size();
  for (auto [od, s] : llvm::enumerate(operandShape)) {
    unsigned d = od + offset;
    exprs.push_back(isBroadcastDim(s, resultShape[d])
                        ? getAffineConstantExpr(0, context)
                        : getAffineDimExpr(d, context));
  }
  return exprs;
}

std::optional<std::pair<unsigned, unsigned>>
mlir::nnx::getBroadcastSizeSource(ArrayRef<ArrayRef<int64_t>> shapes,
                                  unsigned resultRank, unsigned dim) {
  for (auto [i, shape] : llvm::enumerate(shapes)) {
    int64_t offset = (int64_t)resultRank - (int64_t)shape.size();
    if ((int64_t)dim < offset)
      continue;
    unsigned od = dim - offset;
    if (ShapedType::isDynamic(shape[od]))
      return std::make_pair((unsigned)i, od);
  }
  return std::nullopt;
}
