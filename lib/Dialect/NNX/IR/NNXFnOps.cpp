//===- NNXFnOps.cpp - nnx.fn functional ops ---------------------*- C++ -*-===//
//
// One verifier and one shape function per family of ops (NNXFnOps.td calls
// them from every op of the family), the matmul canonicalization, the
// dropout folder and the guard's verifier and canonicalization.
//
//===----------------------------------------------------------------------===//
#include "nnx/Dialect/NNX/IR/NNXFnOps.h"
#include "nnx/Dialect/NNX/IR/Broadcast.h"
#include "nnx/Dialect/NNX/IR/WindowRange.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::nnx;

#include "nnx/Dialect/NNX/IR/NNXFnOpInterfaces.cpp.inc"

#define GET_OP_CLASSES
#include "nnx/Dialect/NNX/IR/NNXFnOps.cpp.inc"

void NNXDialect::registerFunctionalOps() {
  addOperations<
#define GET_OP_LIST
#include "nnx/Dialect/NNX/IR/NNXFnOps.cpp.inc"
      >();
}

#include "nnx/Dialect/NNX/IR/NNXFnEnums.cpp.inc"

//===----------------------------------------------------------------------===//
// Shared checks
//===----------------------------------------------------------------------===//

namespace {
RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

ArrayRef<int64_t> shapeOf(Value v) { return tensorType(v).getShape(); }

Type elementTypeOf(Value v) { return tensorType(v).getElementType(); }

bool isIntegerNotBool(Type t) { return isa<IntegerType>(t) && !t.isInteger(1); }

/// Fails with "<what> must be <kinds>, got <type>" unless `ok`.
LogicalResult requireElementType(Operation *op, bool ok, StringRef what,
                                 StringRef kinds, Type type) {
  if (ok)
    return success();
  return op->emitOpError() << what << " must be " << kinds << ", got " << type;
}

LogicalResult requireFloat(Operation *op, Value v, StringRef what) {
  Type t = elementTypeOf(v);
  return requireElementType(op, isa<FloatType>(t), what, "floats", t);
}

/// Fails unless `a` and `b` have the same element type.
LogicalResult requireSameElementType(Operation *op, Value a, StringRef aName,
                                     Value b, StringRef bName) {
  Type at = elementTypeOf(a), bt = elementTypeOf(b);
  if (at == bt)
    return success();
  return op->emitOpError() << aName << " has element type " << at << ", but "
                           << bName << " has " << bt;
}

/// `dim` in [-rank, rank), counted from the end when negative.
FailureOr<int64_t> normalizeDim(Operation *op, int64_t dim, int64_t rank) {
  if (dim < -rank || dim >= rank)
    return op->emitOpError()
           << "dim " << dim << " is out of range for rank " << rank;
  return dim < 0 ? dim + rank : dim;
}

/// The sizes of every dim of `v` (constants where static).
SmallVector<OpFoldResult> sizesOf(OpBuilder &b, Location loc, Value v) {
  return tensor::getMixedSizes(b, loc, v);
}

/// Reifies the dims of a broadcast result of `type` over `operands` (the
/// first `counts[i]` dims of each, or all of them when `counts` is empty).
LogicalResult reifyBroadcast(OpBuilder &b, Location loc, ValueRange operands,
                             ArrayRef<int64_t> resultShape,
                             ArrayRef<unsigned> counts,
                             SmallVectorImpl<OpFoldResult> &sizes) {
  SmallVector<ArrayRef<int64_t>> shapes;
  for (auto [i, v] : llvm::enumerate(operands))
    shapes.push_back(counts.empty() ? shapeOf(v)
                                    : shapeOf(v).take_front(counts[i]));
  for (auto [d, size] : llvm::enumerate(resultShape)) {
    if (!ShapedType::isDynamic(size)) {
      sizes.push_back(b.getIndexAttr(size));
      continue;
    }
    auto source = getBroadcastSizeSource(shapes, resultShape.size(), d);
    if (!source)
      return failure();
    sizes.push_back(
        tensor::getMixedSize(b, loc, operands[source->first], source->second));
  }
  return success();
}

/// The result's dims are the input's.
LogicalResult reifySameShape(OpBuilder &b, Operation *op,
                             ReifiedRankedShapedTypeDims &shapes) {
  shapes.push_back(sizesOf(b, op->getLoc(), op->getOperand(0)));
  return success();
}

/// The diagnostic of `op`, for the broadcast checks.
auto opError(Operation *op) {
  return [op]() { return op->emitOpError(); };
}
} // namespace

//===----------------------------------------------------------------------===//
// Binary ops and where
//===----------------------------------------------------------------------===//

/// The element types `kind` accepts, or an error.
static LogicalResult verifyBinaryElementType(Operation *op, FnBinaryKind kind,
                                             Type t) {
  StringRef what = "operand element types";
  switch (kind) {
  case FnBinaryKind::div:
  case FnBinaryKind::pow:
    return requireElementType(op, isa<FloatType>(t), what, "floats", t);
  case FnBinaryKind::eq:
  case FnBinaryKind::ne:
    return requireElementType(op, isa<FloatType, IntegerType>(t), what,
                              "floats or integers", t);
  case FnBinaryKind::logical_and:
  case FnBinaryKind::logical_or:
  case FnBinaryKind::logical_xor:
    return requireElementType(op, t.isInteger(1), what, "i1", t);
  default:
    return requireElementType(op, isa<FloatType>(t) || isIntegerNotBool(t),
                              what, "floats or integers other than i1", t);
  }
}

LogicalResult mlir::nnx::verifyFnBinaryOp(Operation *op) {
  auto binary = cast<FnBinaryOpInterface>(op);
  Value lhs = binary.getLhs(), rhs = binary.getRhs();
  Value result = op->getResult(0);
  if (failed(requireSameElementType(op, lhs, "lhs", rhs, "rhs")))
    return failure();
  FnBinaryKind kind = binary.getBinaryKind();
  Type elt = elementTypeOf(lhs);
  if (failed(verifyBinaryElementType(op, kind, elt)))
    return failure();
  Type expected = isComparison(kind) || isLogical(kind)
                      ? IntegerType::get(op->getContext(), 1)
                      : elt;
  if (elementTypeOf(result) != expected)
    return op->emitOpError() << "result element type must be " << expected
                             << ", got " << elementTypeOf(result);
  return verifyBroadcast({{"lhs", shapeOf(lhs)}, {"rhs", shapeOf(rhs)}},
                         shapeOf(result), BroadcastResult::Derived,
                         opError(op));
}

LogicalResult mlir::nnx::reifyFnBinaryOp(OpBuilder &b, Operation *op,
                                         ReifiedRankedShapedTypeDims &shapes) {
  auto binary = cast<FnBinaryOpInterface>(op);
  SmallVector<OpFoldResult> sizes;
  if (failed(reifyBroadcast(b, op->getLoc(), {binary.getLhs(), binary.getRhs()},
                            shapeOf(op->getResult(0)), {}, sizes)))
    return failure();
  shapes.push_back(std::move(sizes));
  return success();
}

LogicalResult mlir::nnx::verifyFnWhereOp(Operation *op) {
  auto where = cast<FnWhereOp>(op);
  Type condType = elementTypeOf(where.getCond());
  if (failed(requireElementType(op, condType.isInteger(1),
                                "the condition's elements", "i1", condType)) ||
      failed(
          requireSameElementType(op, where.getA(), "a", where.getB(), "b")) ||
      failed(requireSameElementType(op, where.getA(), "a", where.getResult(),
                                    "the result")))
    return failure();
  return verifyBroadcast({{"cond", shapeOf(where.getCond())},
                          {"a", shapeOf(where.getA())},
                          {"b", shapeOf(where.getB())}},
                         shapeOf(where.getResult()), BroadcastResult::Derived,
                         opError(op));
}

LogicalResult mlir::nnx::reifyFnWhereOp(OpBuilder &b, Operation *op,
                                        ReifiedRankedShapedTypeDims &shapes) {
  SmallVector<OpFoldResult> sizes;
  if (failed(reifyBroadcast(b, op->getLoc(), op->getOperands(),
                            shapeOf(op->getResult(0)), {}, sizes)))
    return failure();
  shapes.push_back(std::move(sizes));
  return success();
}

//===----------------------------------------------------------------------===//
// matmul
//===----------------------------------------------------------------------===//

/// Checks that `result`'s dim `rd` is `operand`'s dim `od` (the m or n dim).
static LogicalResult requireMatmulDim(Operation *op, StringRef what,
                                      Value operand, StringRef name,
                                      unsigned od, unsigned rd) {
  int64_t want = shapeOf(operand)[od], got = shapeOf(op->getResult(0))[rd];
  if (want == got)
    return success();
  auto str = [](int64_t s) {
    return ShapedType::isDynamic(s) ? std::string("?") : std::to_string(s);
  };
  return op->emitOpError() << "result dim " << rd << " (" << what
                           << ") has size " << str(got) << ", but dim " << od
                           << " of " << name << " has size " << str(want);
}

LogicalResult mlir::nnx::verifyFnMatmulOp(Operation *op) {
  auto mm = cast<FnMatmulOp>(op);
  Value lhs = mm.getLhs(), rhs = mm.getRhs(), result = mm.getResult();
  Value operands[] = {lhs, rhs, result};
  StringRef names[] = {"lhs", "rhs", "the result"};
  for (auto [v, name] : llvm::zip(operands, names))
    if (shapeOf(v).size() < 2)
      return op->emitOpError()
             << name << " must have rank >= 2, got " << v.getType();
  if (failed(requireFloat(op, lhs, "operand element types")) ||
      failed(requireSameElementType(op, lhs, "lhs", rhs, "rhs")) ||
      failed(requireSameElementType(op, lhs, "lhs", result, "the result")))
    return failure();
  unsigned lr = shapeOf(lhs).size(), rr = shapeOf(rhs).size(),
           r = shapeOf(result).size();
  bool tb = mm.getTransposeB();
  unsigned rhsK = tb ? rr - 1 : rr - 2, rhsN = tb ? rr - 2 : rr - 1;
  int64_t k1 = shapeOf(lhs)[lr - 1], k2 = shapeOf(rhs)[rhsK];
  if (!ShapedType::isDynamic(k1) && !ShapedType::isDynamic(k2) && k1 != k2)
    return op->emitOpError()
           << "contraction sizes differ: dim " << lr - 1 << " of lhs has size "
           << k1 << ", dim " << rhsK << " of rhs has size " << k2;
  if (failed(requireMatmulDim(op, "m", lhs, "lhs", lr - 2, r - 2)) ||
      failed(requireMatmulDim(op, "n", rhs, "rhs", rhsN, r - 1)))
    return failure();
  return verifyBroadcast({{"lhs batch dims", shapeOf(lhs).drop_back(2)},
                          {"rhs batch dims", shapeOf(rhs).drop_back(2)}},
                         shapeOf(result).drop_back(2), BroadcastResult::Derived,
                         opError(op));
}

LogicalResult mlir::nnx::reifyFnMatmulOp(OpBuilder &b, Operation *op,
                                         ReifiedRankedShapedTypeDims &shapes) {
  auto mm = cast<FnMatmulOp>(op);
  Location loc = op->getLoc();
  Value lhs = mm.getLhs(), rhs = mm.getRhs();
  unsigned lr = shapeOf(lhs).size(), rr = shapeOf(rhs).size();
  SmallVector<OpFoldResult> sizes;
  if (failed(reifyBroadcast(b, loc, {lhs, rhs},
                            shapeOf(mm.getResult()).drop_back(2),
                            {lr - 2, rr - 2}, sizes)))
    return failure();
  sizes.push_back(tensor::getMixedSize(b, loc, lhs, lr - 2));
  sizes.push_back(
      tensor::getMixedSize(b, loc, rhs, mm.getTransposeB() ? rr - 2 : rr - 1));
  shapes.push_back(std::move(sizes));
  return success();
}

namespace {
/// matmul(a, permute(b) swapping the last two dims) -> matmul(a, b) with
/// `transpose_b` toggled, when the permute has no other use.
struct FoldPermuteIntoMatmul : public OpRewritePattern<FnMatmulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(FnMatmulOp op,
                                PatternRewriter &rewriter) const override {
    auto permute = op.getRhs().getDefiningOp<FnPermuteOp>();
    if (!permute || !permute->hasOneUse())
      return rewriter.notifyMatchFailure(op, "rhs is no single-use permute");
    ArrayRef<int64_t> perm = permute.getPermutation();
    int64_t n = perm.size();
    for (int64_t i = 0; i < n; ++i) {
      int64_t want = i < n - 2 ? i : (i == n - 2 ? n - 1 : n - 2);
      if (perm[i] != want)
        return rewriter.notifyMatchFailure(op, "the permute does not swap "
                                               "only the last two dims");
    }
    rewriter.modifyOpInPlace(op, [&] {
      op.getRhsMutable().assign(permute.getInput());
      op.setTransposeB(!op.getTransposeB());
    });
    rewriter.eraseOp(permute);
    return success();
  }
};
} // namespace

void FnMatmulOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                             MLIRContext *context) {
  results.add<FoldPermuteIntoMatmul>(context);
}

//===----------------------------------------------------------------------===//
// reshape, expand, permute
//===----------------------------------------------------------------------===//

/// The size list against the result type: one entry per dim, `?` exactly
/// where the list has a value, the static sizes equal and not negative.
static LogicalResult verifyShapeList(Operation *op, ArrayRef<int64_t> list,
                                     ArrayRef<int64_t> result) {
  if (list.size() != result.size())
    return op->emitOpError()
           << "the size list has " << list.size()
           << " entries, but the result has rank " << result.size();
  for (auto [d, size] : llvm::enumerate(list)) {
    if (size < 0 && !ShapedType::isDynamic(size))
      return op->emitOpError() << "entry " << d << " of the size list is "
                               << size << ", a negative size";
    if (ShapedType::isDynamic(size) != ShapedType::isDynamic(result[d]))
      return op->emitOpError()
             << "result dim " << d << " must be "
             << (ShapedType::isDynamic(size) ? "dynamic" : "static")
             << ", as entry " << d << " of the size list is "
             << (ShapedType::isDynamic(size) ? "a value" : "a constant");
    if (!ShapedType::isDynamic(size) && size != result[d])
      return op->emitOpError()
             << "result dim " << d << " has size " << result[d]
             << ", but the size list says " << size;
  }
  return success();
}

LogicalResult mlir::nnx::verifyFnShapeListOp(Operation *op) {
  Value input = op->getOperand(0), result = op->getResult(0);
  ArrayRef<int64_t> list = isa<FnReshapeOp>(op)
                               ? cast<FnReshapeOp>(op).getStaticShape()
                               : cast<FnExpandOp>(op).getStaticShape();
  int64_t values = op->getNumOperands() - 1;
  if (llvm::count_if(list, ShapedType::isDynamic) != values)
    return op->emitOpError()
           << "the size list has "
           << llvm::count_if(list, ShapedType::isDynamic)
           << " dynamic entries for " << values << " index values";
  if (failed(requireSameElementType(op, input, "the input", result,
                                    "the result")) ||
      failed(verifyShapeList(op, list, shapeOf(result))))
    return failure();
  if (isa<FnExpandOp>(op))
    return verifyBroadcast({{"the input", shapeOf(input)}}, shapeOf(result),
                           BroadcastResult::Given, opError(op));
  RankedTensorType in = tensorType(input), out = tensorType(result);
  if (in.hasStaticShape() && out.hasStaticShape() &&
      in.getNumElements() != out.getNumElements())
    return op->emitOpError()
           << "changes the element count from " << in.getNumElements() << " to "
           << out.getNumElements();
  return success();
}

LogicalResult
mlir::nnx::reifyFnShapeListOp(OpBuilder &, Operation *op,
                              ReifiedRankedShapedTypeDims &shapes) {
  if (auto reshape = dyn_cast<FnReshapeOp>(op))
    shapes.push_back(reshape.getMixedShape());
  else
    shapes.push_back(cast<FnExpandOp>(op).getMixedShape());
  return success();
}

LogicalResult mlir::nnx::verifyFnPermuteOp(Operation *op) {
  auto permute = cast<FnPermuteOp>(op);
  ArrayRef<int64_t> perm = permute.getPermutation();
  ArrayRef<int64_t> in = shapeOf(permute.getInput()),
                    out = shapeOf(permute.getResult());
  if (failed(requireSameElementType(op, permute.getInput(), "the input",
                                    permute.getResult(), "the result")))
    return failure();
  if (perm.size() != in.size() || out.size() != in.size())
    return op->emitOpError()
           << "the permutation has " << perm.size() << " entries, the input "
           << "rank " << in.size() << " and the result rank " << out.size()
           << "; all three must agree";
  SmallVector<bool> seen(in.size(), false);
  for (auto [d, p] : llvm::enumerate(perm)) {
    if (p < 0 || p >= (int64_t)in.size() || seen[p])
      return op->emitOpError() << "entry " << d << " of the permutation (" << p
                               << ") is out of range or repeated";
    seen[p] = true;
    if (out[d] != in[p])
      return op->emitOpError()
             << "result dim " << d << " must be input dim " << p << " ("
             << (ShapedType::isDynamic(in[p]) ? std::string("?")
                                              : std::to_string(in[p]))
             << "), got " << tensorType(permute.getResult());
  }
  return success();
}

LogicalResult mlir::nnx::reifyFnPermuteOp(OpBuilder &b, Operation *op,
                                          ReifiedRankedShapedTypeDims &shapes) {
  auto permute = cast<FnPermuteOp>(op);
  SmallVector<OpFoldResult> in = sizesOf(b, op->getLoc(), permute.getInput());
  shapes.push_back(llvm::map_to_vector(permute.getPermutation(),
                                       [&](int64_t p) { return in[p]; }));
  return success();
}

ParseResult mlir::nnx::parseI64List(OpAsmParser &parser,
                                    DenseI64ArrayAttr &values) {
  SmallVector<int64_t> list;
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&] {
        return parser.parseInteger(list.emplace_back());
      }))
    return failure();
  values = parser.getBuilder().getDenseI64ArrayAttr(list);
  return success();
}

void mlir::nnx::printI64List(OpAsmPrinter &printer, Operation *,
                             DenseI64ArrayAttr values) {
  printer << '[';
  llvm::interleaveComma(values.asArrayRef(), printer);
  printer << ']';
}

//===----------------------------------------------------------------------===//
// softmax, mean, sum
//===----------------------------------------------------------------------===//

LogicalResult mlir::nnx::verifyFnSoftmaxOp(Operation *op) {
  auto softmax = cast<FnSoftmaxOp>(op);
  if (failed(requireFloat(op, softmax.getInput(), "the input's elements")))
    return failure();
  return normalizeDim(op, softmax.getDim(), shapeOf(softmax.getInput()).size());
}

LogicalResult mlir::nnx::reifyFnSoftmaxOp(OpBuilder &b, Operation *op,
                                          ReifiedRankedShapedTypeDims &shapes) {
  return reifySameShape(b, op, shapes);
}

SmallVector<bool> mlir::nnx::getReductionKeptDims(ArrayRef<int64_t> dims,
                                                  int64_t rank) {
  SmallVector<bool> keep(rank, !dims.empty());
  for (int64_t d : dims)
    keep[d < 0 ? d + rank : d] = false;
  return keep;
}

/// The result shape of a reduction of `in` keeping `keep`.
static SmallVector<int64_t> reducedShape(ArrayRef<int64_t> in,
                                         ArrayRef<bool> keep, bool keepdim) {
  SmallVector<int64_t> out;
  for (auto [d, size] : llvm::enumerate(in))
    if (keep[d] || keepdim)
      out.push_back(keep[d] ? size : 1);
  return out;
}

/// The `dims` and `keepdim` of a mean, sum, amax or amin.
static std::pair<ArrayRef<int64_t>, bool> getReduction(Operation *op) {
  auto get = [](auto reduce) -> std::pair<ArrayRef<int64_t>, bool> {
    return {reduce.getDims(), reduce.getKeepdim()};
  };
  if (auto mean = dyn_cast<FnMeanOp>(op))
    return get(mean);
  if (auto amax = dyn_cast<FnAmaxOp>(op))
    return get(amax);
  if (auto amin = dyn_cast<FnAminOp>(op))
    return get(amin);
  return get(cast<FnSumOp>(op));
}

LogicalResult mlir::nnx::verifyFnReduceOp(Operation *op) {
  bool mean = isa<FnMeanOp>(op);
  auto [dims, keepdim] = getReduction(op);
  Value input = op->getOperand(0), result = op->getResult(0);
  Type elt = elementTypeOf(input);
  if (failed(requireElementType(
          op, isa<FloatType>(elt) || (!mean && isIntegerNotBool(elt)),
          "the input's elements",
          mean ? "floats"
               : "floats or integers other "
                 "than i1",
          elt)) ||
      failed(
          requireSameElementType(op, input, "the input", result, "the result")))
    return failure();
  int64_t rank = shapeOf(input).size();
  SmallVector<bool> reduced(rank, false);
  for (int64_t d : dims) {
    FailureOr<int64_t> dim = normalizeDim(op, d, rank);
    if (failed(dim))
      return failure();
    if (reduced[*dim])
      return op->emitOpError() << "dim " << d << " is reduced twice";
    reduced[*dim] = true;
  }
  SmallVector<int64_t> expected =
      reducedShape(shapeOf(input), getReductionKeptDims(dims, rank), keepdim);
  if (ArrayRef<int64_t>(expected) != shapeOf(result))
    return op->emitOpError()
           << "result type must be " << RankedTensorType::get(expected, elt)
           << ", got " << result.getType();
  return success();
}

LogicalResult mlir::nnx::reifyFnReduceOp(OpBuilder &b, Operation *op,
                                         ReifiedRankedShapedTypeDims &shapes) {
  auto [dims, keepdim] = getReduction(op);
  Value input = op->getOperand(0);
  SmallVector<bool> keep = getReductionKeptDims(dims, shapeOf(input).size());
  SmallVector<OpFoldResult> sizes;
  for (auto [d, size] : llvm::enumerate(sizesOf(b, op->getLoc(), input)))
    if (keep[d] || keepdim)
      sizes.push_back(keep[d] ? size : b.getIndexAttr(1));
  shapes.push_back(std::move(sizes));
  return success();
}

//===----------------------------------------------------------------------===//
// Activations, dropout
//===----------------------------------------------------------------------===//

LogicalResult mlir::nnx::verifyFnActivationOp(Operation *op) {
  Type elt = elementTypeOf(op->getOperand(0));
  if (isa<FnReluOp>(op))
    return requireElementType(op, isa<FloatType>(elt) || isIntegerNotBool(elt),
                              "the input's elements",
                              "floats or integers other than i1", elt);
  return requireElementType(op, isa<FloatType>(elt), "the input's elements",
                            "floats", elt);
}

LogicalResult
mlir::nnx::reifyFnActivationOp(OpBuilder &b, Operation *op,
                               ReifiedRankedShapedTypeDims &shapes) {
  return reifySameShape(b, op, shapes);
}

LogicalResult mlir::nnx::verifyFnDropoutOp(Operation *op) {
  auto dropout = cast<FnDropoutOp>(op);
  double p = dropout.getP().convertToDouble();
  if (!(p >= 0.0 && p <= 1.0))
    return op->emitOpError() << "p must be in [0, 1], got " << p;
  return requireFloat(op, dropout.getInput(), "the input's elements");
}

LogicalResult mlir::nnx::reifyFnDropoutOp(OpBuilder &b, Operation *op,
                                          ReifiedRankedShapedTypeDims &shapes) {
  return reifySameShape(b, op, shapes);
}

OpFoldResult FnDropoutOp::fold(FoldAdaptor) {
  if (!getTrain() || getP().isZero())
    return getInput();
  return {};
}

//===----------------------------------------------------------------------===//
// Factories
//===----------------------------------------------------------------------===//

LogicalResult mlir::nnx::verifyFnArangeOp(Operation *op) {
  auto arange = cast<FnArangeOp>(op);
  RankedTensorType type = tensorType(arange.getResult());
  Type elt = type.getElementType();
  if (type.getRank() != 1)
    return op->emitOpError() << "result must have rank 1, got " << type;
  if (failed(requireElementType(
          op, isa<FloatType>(elt) || isIntegerNotBool(elt),
          "the result's elements", "floats or integers other than i1", elt)))
    return failure();
  APInt n;
  if (!type.isDynamicDim(0) && matchPattern(arange.getN(), m_ConstantInt(&n)) &&
      n.getSExtValue() != type.getDimSize(0))
    return op->emitOpError() << "result has size " << type.getDimSize(0)
                             << ", but n is " << n.getSExtValue();
  return success();
}

LogicalResult mlir::nnx::reifyFnArangeOp(OpBuilder &b, Operation *op,
                                         ReifiedRankedShapedTypeDims &shapes) {
  auto arange = cast<FnArangeOp>(op);
  RankedTensorType type = tensorType(arange.getResult());
  OpFoldResult size = type.isDynamicDim(0)
                          ? OpFoldResult(arange.getN())
                          : OpFoldResult(b.getIndexAttr(type.getDimSize(0)));
  shapes.push_back({size});
  return success();
}

LogicalResult mlir::nnx::verifyFnTriangleOp(Operation *op) {
  Type type = op->getOperand(0).getType();
  if (cast<RankedTensorType>(type).getRank() < 2)
    return op->emitOpError() << "input must have rank >= 2, got " << type;
  return success();
}

LogicalResult
mlir::nnx::reifyFnTriangleOp(OpBuilder &b, Operation *op,
                             ReifiedRankedShapedTypeDims &shapes) {
  return reifySameShape(b, op, shapes);
}

//===----------------------------------------------------------------------===//
// gather, index_select, topk, cumsum
//===----------------------------------------------------------------------===//

/// Fails unless the elements of `index` are i64 or i32.
static LogicalResult requireIndexElements(Operation *op, Value index) {
  Type t = elementTypeOf(index);
  return requireElementType(op, t.isInteger(64) || t.isInteger(32),
                            "the index's elements", "i64 or i32", t);
}

/// Fails unless `v` (named `what`) has type `tensor<shape x elt>`.
static LogicalResult requireType(Operation *op, Value v, StringRef what,
                                 ArrayRef<int64_t> shape, Type elt) {
  auto expected = RankedTensorType::get(shape, elt);
  if (v.getType() == expected)
    return success();
  return op->emitOpError() << what << " type must be " << expected << ", got "
                           << v.getType();
}

/// `shape` with dim `dim` replaced by `size`.
static SmallVector<int64_t> withDim(ArrayRef<int64_t> shape, int64_t dim,
                                    int64_t size) {
  SmallVector<int64_t> out(shape);
  out[dim] = size;
  return out;
}

LogicalResult mlir::nnx::verifyFnGatherOp(Operation *op) {
  auto gather = cast<FnGatherOp>(op);
  Value input = gather.getInput(), index = gather.getIndex();
  ArrayRef<int64_t> in = shapeOf(input), idx = shapeOf(index);
  if (failed(requireIndexElements(op, index)))
    return failure();
  if (idx.size() != in.size())
    return op->emitOpError() << "the index must have the input's rank "
                             << in.size() << ", got " << index.getType();
  FailureOr<int64_t> dim = normalizeDim(op, gather.getDim(), in.size());
  if (failed(dim) || failed(requireType(op, gather.getResult(), "result", idx,
                                        elementTypeOf(input))))
    return failure();
  for (auto [d, pair] : llvm::enumerate(llvm::zip(idx, in))) {
    auto [i, n] = pair;
    if ((int64_t)d == *dim || ShapedType::isDynamic(i) ||
        ShapedType::isDynamic(n) || i <= n)
      continue;
    return op->emitOpError() << "dim " << d << " of the index has size " << i
                             << ", larger than the input's " << n;
  }
  return success();
}

LogicalResult mlir::nnx::reifyFnGatherOp(OpBuilder &b, Operation *op,
                                         ReifiedRankedShapedTypeDims &shapes) {
  shapes.push_back(sizesOf(b, op->getLoc(), cast<FnGatherOp>(op).getIndex()));
  return success();
}

LogicalResult mlir::nnx::verifyFnIndexSelectOp(Operation *op) {
  auto select = cast<FnIndexSelectOp>(op);
  Value input = select.getInput(), index = select.getIndex();
  if (failed(requireIndexElements(op, index)))
    return failure();
  if (shapeOf(index).size() != 1)
    return op->emitOpError()
           << "the index must have rank 1, got " << index.getType();
  ArrayRef<int64_t> in = shapeOf(input);
  FailureOr<int64_t> dim = normalizeDim(op, select.getDim(), in.size());
  if (failed(dim))
    return failure();
  return requireType(op, select.getResult(), "result",
                     withDim(in, *dim, shapeOf(index)[0]),
                     elementTypeOf(input));
}

LogicalResult
mlir::nnx::reifyFnIndexSelectOp(OpBuilder &b, Operation *op,
                                ReifiedRankedShapedTypeDims &shapes) {
  auto select = cast<FnIndexSelectOp>(op);
  Location loc = op->getLoc();
  SmallVector<OpFoldResult> sizes = sizesOf(b, loc, select.getInput());
  int64_t rank = sizes.size(), dim = select.getDim();
  sizes[dim < 0 ? dim + rank : dim] =
      tensor::getMixedSize(b, loc, select.getIndex(), 0);
  shapes.push_back(std::move(sizes));
  return success();
}

LogicalResult mlir::nnx::verifyFnTopkOp(Operation *op) {
  auto topk = cast<FnTopkOp>(op);
  Value input = topk.getInput();
  Type elt = elementTypeOf(input);
  if (failed(requireElementType(
          op, isa<FloatType>(elt) || isIntegerNotBool(elt),
          "the input's elements", "floats or integers other than i1", elt)))
    return failure();
  ArrayRef<int64_t> in = shapeOf(input);
  FailureOr<int64_t> dim = normalizeDim(op, topk.getDim(), in.size());
  if (failed(dim))
    return failure();
  int64_t k = topk.getK();
  if (k < 0)
    return op->emitOpError() << "k must not be negative, got " << k;
  if (!ShapedType::isDynamic(in[*dim]) && k > in[*dim])
    return op->emitOpError() << "k (" << k << ") is larger than dim " << *dim
                             << " of the input (" << in[*dim] << ")";
  SmallVector<int64_t> shape = withDim(in, *dim, k);
  if (failed(requireType(op, topk.getValues(), "the values'", shape, elt)))
    return failure();
  return requireType(op, topk.getIndices(), "the indices'", shape,
                     IntegerType::get(op->getContext(), 64));
}

LogicalResult mlir::nnx::reifyFnTopkOp(OpBuilder &b, Operation *op,
                                       ReifiedRankedShapedTypeDims &shapes) {
  auto topk = cast<FnTopkOp>(op);
  SmallVector<OpFoldResult> sizes = sizesOf(b, op->getLoc(), topk.getInput());
  int64_t rank = sizes.size(), dim = topk.getDim();
  sizes[dim < 0 ? dim + rank : dim] = b.getIndexAttr(topk.getK());
  shapes.push_back(sizes);
  shapes.push_back(std::move(sizes));
  return success();
}

LogicalResult mlir::nnx::verifyFnCumsumOp(Operation *op) {
  auto cumsum = cast<FnCumsumOp>(op);
  Type elt = elementTypeOf(cumsum.getInput());
  if (failed(requireElementType(
          op, isa<FloatType>(elt) || isIntegerNotBool(elt),
          "the input's elements", "floats or integers other than i1", elt)))
    return failure();
  return normalizeDim(op, cumsum.getDim(), shapeOf(cumsum.getInput()).size());
}

LogicalResult mlir::nnx::reifyFnCumsumOp(OpBuilder &b, Operation *op,
                                         ReifiedRankedShapedTypeDims &shapes) {
  return reifySameShape(b, op, shapes);
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

Window FnMaxPool2dOp::getWindow(unsigned i) {
  return {getKernelSize()[i], getStride()[i], getPadding()[i], getDilation()[i],
          getCeilMode()};
}

Window FnAvgPool2dOp::getWindow(unsigned i) {
  return {getKernelSize()[i], getStride()[i], getPadding()[i], 1,
          getCeilMode()};
}

/// `values` (the attribute `name`) holds two sizes (H, W), each at least
/// `min`.
static LogicalResult requireSpatialSizes(Operation *op,
                                         ArrayRef<int64_t> values,
                                         StringRef name, int64_t min) {
  if (values.size() == 2 &&
      llvm::all_of(values, [&](int64_t v) { return v >= min; }))
    return success();
  return op->emitOpError() << "'" << name
                           << "' must be two sizes (H, W), each at least "
                           << min;
}

/// The window of spatial dim `i` of a max or average pool.
static Window poolWindow(Operation *op, unsigned i) {
  if (auto max = dyn_cast<FnMaxPool2dOp>(op))
    return max.getWindow(i);
  return cast<FnAvgPool2dOp>(op).getWindow(i);
}

/// A float N x C x H x W input.
static LogicalResult requireImageInput(Operation *op) {
  RankedTensorType type = tensorType(op->getOperand(0));
  if (type.getRank() != 4)
    return op->emitOpError() << "takes (N, C, H, W) input, got " << type;
  return requireFloat(op, op->getOperand(0), "the input's elements");
}

LogicalResult mlir::nnx::verifyFnPool2dOp(Operation *op) {
  auto kernel = op->getAttrOfType<DenseI64ArrayAttr>("kernel_size");
  auto padding = op->getAttrOfType<DenseI64ArrayAttr>("padding");
  if (failed(requireSpatialSizes(op, kernel, "kernel_size", 1)) ||
      failed(requireSpatialSizes(
          op, op->getAttrOfType<DenseI64ArrayAttr>("stride"), "stride", 1)) ||
      failed(requireSpatialSizes(op, padding, "padding", 0)))
    return failure();
  if (auto max = dyn_cast<FnMaxPool2dOp>(op))
    if (failed(requireSpatialSizes(op, max.getDilation(), "dilation", 1)))
      return failure();
  for (unsigned i = 0; i < 2; ++i)
    if (padding[i] > kernel[i] / 2)
      return op->emitOpError()
             << "padding " << padding[i] << " in dim " << 2 + i
             << " is more than half the kernel size " << kernel[i];
  if (failed(requireImageInput(op)))
    return failure();
  ArrayRef<int64_t> in = shapeOf(op->getOperand(0));
  SmallVector<int64_t> shape{in[0], in[1]};
  for (unsigned i = 0; i < 2; ++i) {
    Window w = poolWindow(op, i);
    auto emit = [&] { return op->emitOpError(); };
    if (failed(verifyWindowRange(w, emit, 2 + i)) ||
        failed(verifyWindowedSize(in[2 + i], emit, 2 + i)))
      return failure();
    int64_t size = w.outputSize(in[2 + i]);
    if (size == 0)
      return op->emitOpError()
             << "has a window (" << w.span()
             << ") larger than the padded input (" << in[2 + i] << " + 2 * "
             << w.padding << " in dim " << 2 + i << ")";
    shape.push_back(size);
  }
  return requireType(op, op->getResult(0), "result", shape,
                     elementTypeOf(op->getOperand(0)));
}

LogicalResult mlir::nnx::reifyFnPool2dOp(OpBuilder &b, Operation *op,
                                         ReifiedRankedShapedTypeDims &shapes) {
  Location loc = op->getLoc();
  Value x = op->getOperand(0);
  SmallVector<OpFoldResult> sizes = sizesOf(b, loc, x);
  ArrayRef<int64_t> out = shapeOf(op->getResult(0));
  for (unsigned i = 0; i < 2; ++i)
    sizes[2 + i] = ShapedType::isDynamic(out[2 + i])
                       ? OpFoldResult(poolWindow(op, i).outputSize(
                             b, loc, tensor::DimOp::create(b, loc, x, 2 + i)))
                       : OpFoldResult(b.getIndexAttr(out[2 + i]));
  shapes.push_back(std::move(sizes));
  return success();
}

LogicalResult mlir::nnx::verifyFnAdaptiveAvgPool2dOp(Operation *op) {
  auto pool = cast<FnAdaptiveAvgPool2dOp>(op);
  ArrayRef<int64_t> out = pool.getOutputSize();
  if (failed(requireSpatialSizes(op, out, "output_size", 1)) ||
      failed(requireImageInput(op)))
    return failure();
  ArrayRef<int64_t> in = shapeOf(pool.getInput());
  // Static sizes pool by PyTorch's windows, whatever they are; a dynamic
  // one must be a multiple of the output (checked at run time).
  bool mixed = ShapedType::isDynamic(in[2]) != ShapedType::isDynamic(in[3]);
  for (unsigned i = 0; mixed && i < 2; ++i)
    if (!ShapedType::isDynamic(in[2 + i]) && in[2 + i] % out[i])
      return op->emitOpError()
             << "needs an input size that is a multiple of the output size "
                "where the other spatial size is dynamic, got "
             << in[2 + i] << " for " << out[i] << " in dim " << 2 + i;
  return requireType(op, pool.getResult(), "result",
                     {in[0], in[1], out[0], out[1]},
                     elementTypeOf(pool.getInput()));
}

LogicalResult
mlir::nnx::reifyFnAdaptiveAvgPool2dOp(OpBuilder &b, Operation *op,
                                      ReifiedRankedShapedTypeDims &shapes) {
  auto pool = cast<FnAdaptiveAvgPool2dOp>(op);
  SmallVector<OpFoldResult> sizes = sizesOf(b, op->getLoc(), pool.getInput());
  sizes[2] = b.getIndexAttr(pool.getOutputSize()[0]);
  sizes[3] = b.getIndexAttr(pool.getOutputSize()[1]);
  shapes.push_back(std::move(sizes));
  return success();
}

//===----------------------------------------------------------------------===//
// guard
//===----------------------------------------------------------------------===//

LogicalResult FnGuardOp::verify() {
  if (getMessage().empty())
    return emitOpError("needs a message saying what the export assumed");
  return success();
}

/// Whether the guard `op` holds in every run: its operands are one value
/// (for a reflexive predicate) or constants for which the predicate holds.
static bool guardHoldsStatically(FnGuardOp op) {
  arith::CmpIPredicate pred = op.getPredicate();
  if (op.getLhs() == op.getRhs())
    return llvm::is_contained(
        {arith::CmpIPredicate::eq, arith::CmpIPredicate::sle,
         arith::CmpIPredicate::sge, arith::CmpIPredicate::ule,
         arith::CmpIPredicate::uge},
        pred);
  APInt lhs, rhs;
  return matchPattern(op.getLhs(), m_ConstantInt(&lhs)) &&
         matchPattern(op.getRhs(), m_ConstantInt(&rhs)) &&
         arith::applyCmpPredicate(pred, lhs, rhs);
}

namespace {
/// Erases a guard that holds in every run. One that fails on constants is
/// kept: every call then fails with its message.
struct EraseGuardThatHolds : public OpRewritePattern<FnGuardOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(FnGuardOp op,
                                PatternRewriter &rewriter) const override {
    if (!guardHoldsStatically(op))
      return rewriter.notifyMatchFailure(op, "may fail at run time");
    rewriter.eraseOp(op);
    return success();
  }
};
} // namespace

void FnGuardOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                            MLIRContext *context) {
  results.add<EraseGuardThatHolds>(context);
}
