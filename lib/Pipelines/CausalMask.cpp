//===- CausalMask.cpp - which keys an attention's masks hide --------------===//
//
// An abstract interpretation of a mask's ops at one element `[..., i, j]`
// for every query position `i` and later key position `j`
// (`0 <= i < j < max-length`): each index is an affine form of `i` and `j`
// (or a free batch / head index), each number is known exactly as such a
// form (aranges) or bounded by an interval, each boolean is true, false or
// unknown. Affine forms are bounded exactly over the triangle of future
// positions: a linear function takes its extremes at the vertices.
//
//===----------------------------------------------------------------------===//
#include "CausalMask.h"

#include "nnx/Dialect/NNX/IR/NNXFnOps.h"
#include "nnx/Dialect/NNX/IR/TensorUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::nnx;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
/// What a hidden key's score is at most (added to the scores).
constexpr double kHidden = -1e4;
/// How much the scores may be scaled where a key is hidden.
constexpr double kScaleBound = 1e3;
/// How deep a mask's ops may nest.
constexpr unsigned kMaxDepth = 256;

/// `i * i + j * j + c` over the query position i and the key position j.
struct Affine {
  int64_t i = 0, j = 0, c = 0;
  bool isConstant() const { return i == 0 && j == 0; }
  Affine operator+(const Affine &o) const {
    return {i + o.i, j + o.j, c + o.c};
  }
  Affine scaled(int64_t k) const { return {i * k, j * k, c * k}; }
};

/// The index read along one dim: an affine form, or none (free: a batch or
/// head index, any value).
using Index = std::optional<Affine>;

/// A closed interval of reals; `nan` when the value may be NaN.
struct Interval {
  double lo = -kInf, hi = kInf;
  bool nan = false;
  static Interval point(double x) { return {x, x, std::isnan(x)}; }
  static Interval any() { return {-kInf, kInf, true}; }
  Interval join(const Interval &o) const {
    return {std::min(lo, o.lo), std::max(hi, o.hi), nan || o.nan};
  }
};

Interval checked(double lo, double hi, bool nan) {
  if (std::isnan(lo) || std::isnan(hi))
    return Interval::any();
  return {lo, hi, nan};
}

Interval operator+(const Interval &a, const Interval &b) {
  return checked(a.lo + b.lo, a.hi + b.hi, a.nan || b.nan);
}

Interval operator-(const Interval &a) { return {-a.hi, -a.lo, a.nan}; }

Interval operator*(const Interval &a, const Interval &b) {
  double lo = kInf, hi = -kInf;
  for (double x : {a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi}) {
    if (std::isnan(x)) // 0 * inf
      return Interval::any();
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  return {lo, hi, a.nan || b.nan};
}

Interval divide(const Interval &a, const Interval &b) {
  if (b.lo <= 0 && b.hi >= 0)
    return Interval::any();
  return a * Interval{1 / b.hi, 1 / b.lo, b.nan};
}

enum class Tri { False, True, Unknown };

Tri join(Tri a, Tri b) { return a == b ? a : Tri::Unknown; }

/// One element of a mask's value, over every future position.
struct Abstract {
  /// A boolean (i1): `truth`; otherwise a number: `exact` or `range`.
  bool isTruth = false;
  Tri truth = Tri::Unknown;
  std::optional<Affine> exact;
  Interval range;

  static Abstract ofTruth(Tri t) {
    Abstract a;
    a.isTruth = true;
    a.truth = t;
    return a;
  }
  /// A number within `r`; exactly known when `r` is one integer.
  static Abstract ofRange(Interval r) {
    Abstract a;
    a.range = r;
    if (r.lo == r.hi && !r.nan && std::abs(r.lo) < 0x1p53 &&
        std::trunc(r.lo) == r.lo)
      a.exact = Affine{0, 0, static_cast<int64_t>(r.lo)};
    return a;
  }
};

/// The values of a number or boolean tensor attribute, as doubles.
FailureOr<std::vector<double>> readNumbers(ElementsAttr attr) {
  if (isa<FloatType>(attr.getElementType()))
    return readTensor(attr);
  // A boolean blob holds a byte per element (as numpy writes it).
  if (auto blob = dyn_cast<DenseResourceElementsAttr>(attr);
      blob && attr.getElementType().isInteger(1)) {
    AsmResourceBlob *data = blob.getRawHandle().getBlob();
    if (!data || static_cast<int64_t>(data->getData().size()) !=
                     attr.getShapedType().getNumElements())
      return failure();
    std::vector<double> out;
    for (char byte : data->getData())
      out.push_back(byte != 0);
    return out;
  }
  DenseElementsAttr dense = toDenseElements(attr);
  if (!dense || !isa<IntegerType>(dense.getElementType()))
    return failure();
  bool isTruth = dense.getElementType().isInteger(1);
  std::vector<double> out;
  out.reserve(dense.getNumElements());
  for (const APInt &v : dense.getValues<APInt>())
    out.push_back(
        static_cast<double>(isTruth ? v.getZExtValue() : v.getSExtValue()));
  return out;
}

/// Reads mask values at elements of the future positions.
class MaskReader {
public:
  MaskReader(func::FuncOp fn, int64_t maxLength, SizeOf sizeOf)
      : fn(fn), length(std::max<int64_t>(maxLength, 2)), isSizeOf(sizeOf) {}

  /// `v`'s element at `at` (one index per dim), over every future
  /// position; on failure `blame` and `why` say what could not be read.
  FailureOr<Abstract> read(Value v, ArrayRef<Index> at);

  /// `at`, an index of `result`, as read from `operand` (broadcast from
  /// the right: an operand's static 1 reads index 0).
  static SmallVector<Index> broadcast(Value operand, Value result,
                                      ArrayRef<Index> at);
  /// A number's value as a number (a boolean is 0 or 1).
  Abstract number(const Abstract &a) const;
  Interval bounds(const Affine &a) const;
  Tri compare(FnBinaryKind kind, const Abstract &a, const Abstract &b) const;
  /// A value as a condition: a boolean, or a number `!= 0`.
  Tri truthOf(const Abstract &a) const;

  Operation *blame = nullptr;
  std::string why;

private:
  FailureOr<Abstract> fail(Operation *op, const Twine &reason) {
    blame = op;
    why = reason.str();
    return failure();
  }
  FailureOr<Abstract> readOp(Operation *op, Value v, ArrayRef<Index> at);
  FailureOr<Abstract> readArgument(BlockArgument arg, ArrayRef<Index> at);
  FailureOr<Abstract> readValues(ElementsAttr values, ArrayRef<Index> at,
                                 Operation *where);
  FailureOr<Abstract> readSplat(tensor::SplatOp splat);
  FailureOr<Abstract> readReshape(FnReshapeOp reshape, ArrayRef<Index> at);
  FailureOr<Abstract> readSlice(tensor::ExtractSliceOp slice,
                                ArrayRef<Index> at);
  FailureOr<Abstract> readBinary(FnBinaryOpInterface op, ArrayRef<Index> at);
  FailureOr<Abstract> readWhere(FnWhereOp where, ArrayRef<Index> at);
  FailureOr<Abstract> readTriangle(Operation *op, int64_t diagonal, bool lower,
                                   ArrayRef<Index> at);
  FailureOr<Abstract> readCast(Operation *op, ArrayRef<Index> at);
  bool feasible(ArrayRef<int64_t> element, ArrayRef<Index> at) const;

  func::FuncOp fn;
  int64_t length;
  SizeOf isSizeOf;
  unsigned depth = 0;
};

Interval MaskReader::bounds(const Affine &a) const {
  // The triangle 0 <= i < j <= L - 1 has the vertices (0, 1), (0, L - 1)
  // and (L - 2, L - 1).
  double lo = kInf, hi = -kInf;
  for (auto [i, j] : {std::pair<int64_t, int64_t>{0, 1},
                      {0, length - 1},
                      {length - 2, length - 1}}) {
    double x = static_cast<double>(a.i * i + a.j * j + a.c);
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  return {lo, hi, false};
}

Abstract MaskReader::number(const Abstract &a) const {
  if (!a.isTruth)
    return a;
  Abstract n;
  if (a.truth != Tri::Unknown)
    n.exact = Affine{0, 0, a.truth == Tri::True ? 1 : 0};
  n.range = n.exact ? bounds(*n.exact) : Interval{0, 1, false};
  return n;
}

Tri MaskReader::compare(FnBinaryKind kind, const Abstract &x,
                        const Abstract &y) const {
  Abstract a = number(x), b = number(y);
  Interval d = a.exact && b.exact ? bounds(*a.exact + b.exact->scaled(-1))
                                  : a.range + -b.range;
  if (d.nan)
    return Tri::Unknown;
  auto decide = [](bool yes, bool no) {
    return yes ? Tri::True : no ? Tri::False : Tri::Unknown;
  };
  switch (kind) {
  case FnBinaryKind::lt:
    return decide(d.hi < 0, d.lo >= 0);
  case FnBinaryKind::le:
    return decide(d.hi <= 0, d.lo > 0);
  case FnBinaryKind::gt:
    return decide(d.lo > 0, d.hi <= 0);
  case FnBinaryKind::ge:
    return decide(d.lo >= 0, d.hi < 0);
  case FnBinaryKind::eq:
    return decide(d.lo == 0 && d.hi == 0, d.lo > 0 || d.hi < 0);
  case FnBinaryKind::ne:
    return decide(d.lo > 0 || d.hi < 0, d.lo == 0 && d.hi == 0);
  default:
    return Tri::Unknown;
  }
}

Tri MaskReader::truthOf(const Abstract &a) const {
  if (a.isTruth)
    return a.truth;
  Abstract zero;
  zero.exact = Affine{};
  zero.range = Interval::point(0);
  return compare(FnBinaryKind::ne, a, zero);
}

SmallVector<Index> MaskReader::broadcast(Value operand, Value result,
                                         ArrayRef<Index> at) {
  auto in = cast<RankedTensorType>(operand.getType());
  auto out = cast<RankedTensorType>(result.getType());
  int64_t shift = out.getRank() - in.getRank();
  SmallVector<Index> index;
  for (int64_t d = 0; d < in.getRank(); ++d)
    index.push_back(in.getDimSize(d) == 1 ? Index(Affine{}) : at[d + shift]);
  return index;
}

FailureOr<Abstract> MaskReader::read(Value v, ArrayRef<Index> at) {
  if (depth >= kMaxDepth)
    return fail(v.getDefiningOp() ? v.getDefiningOp() : fn.getOperation(),
                "its ops nest more than " + Twine(kMaxDepth) + " deep");
  ++depth;
  FailureOr<Abstract> result = isa<BlockArgument>(v)
                                   ? readArgument(cast<BlockArgument>(v), at)
                                   : readOp(v.getDefiningOp(), v, at);
  --depth;
  return result;
}

FailureOr<Abstract> MaskReader::readArgument(BlockArgument arg,
                                             ArrayRef<Index> at) {
  unsigned n = arg.getArgNumber();
  if (!fn.getArgAttr(n, "nnx.parameter"))
    return fail(fn,
                "it reads the argument #" + Twine(n) + ", not only positions");
  unsigned first = 0;
  while (!fn.getArgAttr(first, "nnx.parameter"))
    ++first;
  auto params = fn->getAttrOfType<ArrayAttr>("nnx.parameters");
  auto values = params && n - first < params.size()
                    ? dyn_cast<ElementsAttr>(params[n - first])
                    : ElementsAttr();
  if (!values || values.getShapedType() != arg.getType())
    return fail(fn, "the values of parameter #" + Twine(n) +
                        " are not in the IR (`nnx.parameters`)");
  return readValues(values, at, fn);
}

/// Whether some future position reads `element` of a tensor at `at`: the
/// dims indexed by `i + a` and by `j + b` fix i and j, which must be in
/// range; other forms are taken as feasible (a bound, not a proof).
bool MaskReader::feasible(ArrayRef<int64_t> element, ArrayRef<Index> at) const {
  std::optional<int64_t> i, j;
  for (auto [p, index] : llvm::zip(element, at)) {
    if (!index)
      continue;
    if (index->isConstant()) {
      if (p != index->c)
        return false;
      continue;
    }
    std::optional<int64_t> &fixed = index->j == 0 ? i : j;
    if (std::abs(index->i + index->j) != 1 || (index->i && index->j))
      continue;
    int64_t value = (p - index->c) / (index->i + index->j);
    if (fixed && *fixed != value)
      return false;
    fixed = value;
  }
  if (i && (*i < 0 || *i > length - 2))
    return false;
  if (j && (*j < 1 || *j > length - 1))
    return false;
  return !(i && j && *i >= *j);
}

FailureOr<Abstract> MaskReader::readValues(ElementsAttr values,
                                           ArrayRef<Index> at,
                                           Operation *where) {
  FailureOr<std::vector<double>> data = readNumbers(values);
  if (failed(data))
    return fail(where, "its values cannot be read");
  ArrayRef<int64_t> shape = values.getShapedType().getShape();
  bool isTruth = values.getElementType().isInteger(1);
  std::optional<Interval> range;
  SmallVector<int64_t> element(shape.size(), 0);
  for (double x : *data) {
    if (feasible(element, at))
      range = range ? range->join(Interval::point(x)) : Interval::point(x);
    for (int64_t d = shape.size() - 1; d >= 0; --d) {
      if (++element[d] < shape[d])
        break;
      element[d] = 0;
    }
  }
  if (!range) // no future position reads it: nothing is known
    return isTruth ? Abstract::ofTruth(Tri::Unknown)
                   : Abstract::ofRange(Interval::any());
  if (isTruth)
    return Abstract::ofTruth(range->lo != 0   ? Tri::True
                             : range->hi == 0 ? Tri::False
                                              : Tri::Unknown);
  return Abstract::ofRange(*range);
}

FailureOr<Abstract> MaskReader::readSplat(tensor::SplatOp splat) {
  Attribute value;
  if (!matchPattern(splat.getInput(), m_Constant(&value)))
    return fail(splat, "it fills a tensor with a value that is not a "
                       "constant");
  if (auto i = dyn_cast<IntegerAttr>(value)) {
    if (i.getType().isInteger(1))
      return Abstract::ofTruth(i.getValue().isZero() ? Tri::False : Tri::True);
    Abstract a;
    a.exact = Affine{0, 0, i.getValue().getSExtValue()};
    a.range = bounds(*a.exact);
    return a;
  }
  if (auto f = dyn_cast<FloatAttr>(value))
    return Abstract::ofRange(Interval::point(f.getValueAsDouble()));
  return fail(splat, "it fills a tensor with a value that is not a number");
}

FailureOr<Abstract> MaskReader::readReshape(FnReshapeOp reshape,
                                            ArrayRef<Index> at) {
  // Only an (un)squeeze: the dims other than static 1s match in order.
  auto in = cast<RankedTensorType>(reshape.getInput().getType());
  auto out = cast<RankedTensorType>(reshape.getType());
  auto kept = [](RankedTensorType t) {
    SmallVector<int64_t> dims;
    for (int64_t d = 0; d < t.getRank(); ++d)
      if (t.getDimSize(d) != 1)
        dims.push_back(d);
    return dims;
  };
  SmallVector<int64_t> inDims = kept(in), outDims = kept(out);
  SmallVector<OpFoldResult> sizes = reshape.getMixedShape();
  bool squeeze = inDims.size() == outDims.size();
  for (auto [di, dout] : llvm::zip(inDims, outDims)) {
    if (!squeeze)
      break;
    if (in.isDynamicDim(di) != out.isDynamicDim(dout))
      squeeze = false;
    else if (!in.isDynamicDim(di))
      squeeze = in.getDimSize(di) == out.getDimSize(dout);
    else if (auto size = dyn_cast<Value>(sizes[dout]))
      squeeze = isSizeOf(size, reshape.getInput(), di);
  }
  if (!squeeze)
    return fail(reshape, "a reshape other than an (un)squeeze moves its "
                         "elements");
  SmallVector<Index> index(in.getRank(), Affine{});
  for (auto [di, dout] : llvm::zip(inDims, outDims))
    index[di] = at[dout];
  return read(reshape.getInput(), index);
}

FailureOr<Abstract> MaskReader::readSlice(tensor::ExtractSliceOp slice,
                                          ArrayRef<Index> at) {
  if (slice.getSourceType().getRank() != slice.getType().getRank())
    return fail(slice, "a rank-reducing slice");
  SmallVector<Index> index;
  for (auto [d, offset] : llvm::enumerate(slice.getMixedOffsets())) {
    std::optional<int64_t> o = getConstantIntValue(offset);
    std::optional<int64_t> s = getConstantIntValue(slice.getMixedStrides()[d]);
    if (!o || !s)
      return fail(slice, "a slice at a run-time offset or stride (a "
                         "function of the sequence length, not only of "
                         "the positions)");
    index.push_back(at[d] ? Index(at[d]->scaled(*s) + Affine{0, 0, *o})
                          : Index());
  }
  return read(slice.getSource(), index);
}

FailureOr<Abstract> MaskReader::readBinary(FnBinaryOpInterface op,
                                           ArrayRef<Index> at) {
  Value result = op->getResult(0);
  FailureOr<Abstract> a = read(op.getLhs(), broadcast(op.getLhs(), result, at));
  if (failed(a))
    return failure();
  FailureOr<Abstract> b = read(op.getRhs(), broadcast(op.getRhs(), result, at));
  if (failed(b))
    return failure();
  FnBinaryKind kind = op.getBinaryKind();
  if (isComparison(kind))
    return Abstract::ofTruth(compare(kind, *a, *b));
  if (isLogical(kind)) {
    Tri p = truthOf(*a), q = truthOf(*b);
    auto is = [&](Tri t) { return p == t || q == t; };
    if (kind == FnBinaryKind::logical_and)
      return Abstract::ofTruth(is(Tri::False)     ? Tri::False
                               : is(Tri::Unknown) ? Tri::Unknown
                                                  : Tri::True);
    if (kind == FnBinaryKind::logical_or)
      return Abstract::ofTruth(is(Tri::True)      ? Tri::True
                               : is(Tri::Unknown) ? Tri::Unknown
                                                  : Tri::False);
    return Abstract::ofTruth(is(Tri::Unknown) ? Tri::Unknown
                             : p != q         ? Tri::True
                                              : Tri::False);
  }
  Abstract x = number(*a), y = number(*b), r;
  switch (kind) {
  case FnBinaryKind::add:
  case FnBinaryKind::sub: {
    bool minus = kind == FnBinaryKind::sub;
    if (x.exact && y.exact)
      r.exact = *x.exact + y.exact->scaled(minus ? -1 : 1);
    r.range = x.range + (minus ? -y.range : y.range);
    break;
  }
  case FnBinaryKind::mul:
    if (x.exact && y.exact && (x.exact->isConstant() || y.exact->isConstant()))
      r.exact = x.exact->isConstant() ? y.exact->scaled(x.exact->c)
                                      : x.exact->scaled(y.exact->c);
    r.range = x.range * y.range;
    break;
  case FnBinaryKind::div:
    r.range = divide(x.range, y.range);
    break;
  case FnBinaryKind::maximum:
  case FnBinaryKind::minimum: {
    bool max = kind == FnBinaryKind::maximum;
    auto pick = [&](double p, double q) {
      return max ? std::max(p, q) : std::min(p, q);
    };
    r.range = {pick(x.range.lo, y.range.lo), pick(x.range.hi, y.range.hi),
               x.range.nan || y.range.nan};
    break;
  }
  default:
    return fail(op, "`" + op->getName().getStringRef() +
                        "` is not read by the proof");
  }
  if (r.exact)
    r.range = bounds(*r.exact);
  return r;
}

FailureOr<Abstract> MaskReader::readWhere(FnWhereOp where, ArrayRef<Index> at) {
  Value result = where.getResult();
  // Every operand is read (each must be a function of positions), then
  // the one the condition picks.
  FailureOr<Abstract> c =
      read(where.getCond(), broadcast(where.getCond(), result, at));
  if (failed(c))
    return failure();
  FailureOr<Abstract> a =
      read(where.getA(), broadcast(where.getA(), result, at));
  if (failed(a))
    return failure();
  FailureOr<Abstract> b =
      read(where.getB(), broadcast(where.getB(), result, at));
  if (failed(b))
    return failure();
  Tri t = truthOf(*c);
  if (t == Tri::True)
    return *a;
  if (t == Tri::False)
    return *b;
  if (a->isTruth && b->isTruth)
    return Abstract::ofTruth(join(a->truth, b->truth));
  Abstract x = number(*a), y = number(*b);
  return Abstract::ofRange(x.range.join(y.range));
}

FailureOr<Abstract> MaskReader::readTriangle(Operation *op, int64_t diagonal,
                                             bool lower, ArrayRef<Index> at) {
  FailureOr<Abstract> kept = read(op->getOperand(0), at);
  if (failed(kept))
    return failure();
  // Kept where `col - row <= diagonal` (tril) or `>= diagonal` (triu).
  Index row = at[at.size() - 2], col = at.back();
  Tri keep = Tri::Unknown;
  if (row && col) {
    Abstract d;
    d.exact = *col + row->scaled(-1);
    d.range = bounds(*d.exact);
    Abstract k;
    k.exact = Affine{0, 0, diagonal};
    k.range = bounds(*k.exact);
    keep = compare(lower ? FnBinaryKind::le : FnBinaryKind::ge, d, k);
  }
  Abstract zero = kept->isTruth ? Abstract::ofTruth(Tri::False)
                                : Abstract::ofRange(Interval::point(0));
  if (keep == Tri::True)
    return *kept;
  if (keep == Tri::False)
    return zero;
  if (kept->isTruth)
    return Abstract::ofTruth(join(kept->truth, Tri::False));
  return Abstract::ofRange(number(*kept).range.join(zero.range));
}

FailureOr<Abstract> MaskReader::readCast(Operation *op, ArrayRef<Index> at) {
  FailureOr<Abstract> in = read(op->getOperand(0), at);
  if (failed(in))
    return failure();
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  if (type.getElementType().isInteger(1)) {
    if (in->isTruth)
      return *in;
    return fail(op, "a cast to a boolean is not read by the proof");
  }
  Abstract n = number(*in);
  if (isa<arith::NegFOp>(op)) {
    if (n.exact)
      n.exact = n.exact->scaled(-1);
    n.range = -n.range;
    return n;
  }
  if (isa<arith::FPToSIOp, arith::FPToUIOp>(op) && !n.exact)
    n.range = {std::floor(n.range.lo), std::ceil(n.range.hi), n.range.nan};
  return n;
}

FailureOr<Abstract> MaskReader::readOp(Operation *op, Value v,
                                       ArrayRef<Index> at) {
  if (auto constant = dyn_cast<arith::ConstantOp>(op))
    if (auto values = dyn_cast<ElementsAttr>(constant.getValue()))
      return readValues(values, at, op);
  if (auto splat = dyn_cast<tensor::SplatOp>(op))
    return readSplat(splat);
  if (isa<FnArangeOp>(op)) {
    if (!at[0])
      return Abstract::ofRange({0, kInf, false});
    Abstract a;
    a.exact = at[0];
    a.range = bounds(*at[0]);
    return a;
  }
  if (auto reshape = dyn_cast<FnReshapeOp>(op))
    return readReshape(reshape, at);
  if (auto expand = dyn_cast<FnExpandOp>(op))
    return read(expand.getInput(), broadcast(expand.getInput(), v, at));
  if (auto permute = dyn_cast<FnPermuteOp>(op)) {
    SmallVector<Index> index(at.size());
    for (auto [k, p] : llvm::enumerate(permute.getPermutation()))
      index[p] = at[k];
    return read(permute.getInput(), index);
  }
  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op))
    return readSlice(slice, at);
  if (auto binary = dyn_cast<FnBinaryOpInterface>(op))
    return readBinary(binary, at);
  if (auto where = dyn_cast<FnWhereOp>(op))
    return readWhere(where, at);
  if (auto tril = dyn_cast<FnTrilOp>(op))
    return readTriangle(op, tril.getDiagonal(), /*lower=*/true, at);
  if (auto triu = dyn_cast<FnTriuOp>(op))
    return readTriangle(op, triu.getDiagonal(), /*lower=*/false, at);
  if (isa<arith::SIToFPOp, arith::UIToFPOp, arith::ExtFOp, arith::TruncFOp,
          arith::ExtSIOp, arith::ExtUIOp, arith::TruncIOp, arith::IndexCastOp,
          arith::FPToSIOp, arith::FPToUIOp, arith::NegFOp>(op))
    return readCast(op, at);
  return fail(op, "`" + op->getName().getStringRef() +
                      "` is not read by the proof");
}

/// The scores as they reach the softmax at a later key: `scale * scores +
/// offset`, or `lost` once an op makes that unknown.
struct Scores {
  Interval scale = Interval::point(1), offset = Interval::point(0);
  bool lost = false;

  bool hidden() const {
    return !lost && !offset.nan && !scale.nan && offset.hi <= kHidden &&
           scale.lo >= -kScaleBound && scale.hi <= kScaleBound;
  }
  void apply(FnBinaryKind kind, const Abstract &m, bool scoresFirst) {
    switch (kind) {
    case FnBinaryKind::add:
      offset = offset + m.range;
      return;
    case FnBinaryKind::sub:
      if (scoresFirst) {
        offset = offset + -m.range;
      } else {
        scale = -scale;
        offset = m.range + -offset;
      }
      return;
    case FnBinaryKind::mul:
      scale = scale * m.range;
      offset = offset * m.range;
      return;
    case FnBinaryKind::div:
      if (scoresFirst) {
        scale = divide(scale, m.range);
        offset = divide(offset, m.range);
        return;
      }
      lost = true;
      return;
    default:
      lost = true;
    }
  }
};

/// The index of an element of a scores-shaped value: `[..., i, j]`.
SmallVector<Index> positionIndex(Value v) {
  int64_t rank = cast<RankedTensorType>(v.getType()).getRank();
  SmallVector<Index> at(rank);
  if (rank >= 2) {
    at[rank - 2] = Affine{1, 0, 0};
    at[rank - 1] = Affine{0, 1, 0};
  }
  return at;
}

} // namespace

LogicalResult mlir::nnx::proveCausal(func::FuncOp fn, Value scores,
                                     ArrayRef<Operation *> chain,
                                     Operation *softmax, bool hasMask,
                                     int64_t maxLength, SizeOf isSizeOf) {
  MaskReader reader(fn, maxLength, isSizeOf);
  Scores state;
  Value x = scores;
  for (Operation *op : chain) {
    Value result = op->getResult(0);
    SmallVector<Index> at = positionIndex(result);
    // The other operands: every one is read, whatever the op.
    SmallVector<Abstract> others;
    for (Value operand : op->getOperands()) {
      if (operand == x || !isa<RankedTensorType>(operand.getType()))
        continue;
      FailureOr<Abstract> m =
          reader.read(operand, MaskReader::broadcast(operand, result, at));
      if (failed(m)) {
        InFlightDiagnostic diag =
            reader.blame->emitError(
                "nnx-derive-kv-cache: cannot read this attention mask as a "
                "function of the query and key positions alone: ")
            << reader.why;
        diag.attachNote(softmax->getLoc()) << "the softmax it masks";
        return diag;
      }
      others.push_back(*m);
    }
    if (auto binary = dyn_cast<FnBinaryOpInterface>(op)) {
      // (`x op x` is a function of the scores alone: unknown.)
      if (others.size() == 1)
        state.apply(binary.getBinaryKind(), reader.number(others[0]),
                    binary.getLhs() == x);
      else
        state.lost = true;
    } else if (auto where = dyn_cast<FnWhereOp>(op)) {
      if (where.getCond() == x || others.size() != 2) {
        state.lost = true;
      } else {
        // Where the condition holds, `a` is picked.
        Tri keep = reader.truthOf(others[0]);
        if (where.getB() == x && keep != Tri::Unknown)
          keep = keep == Tri::True ? Tri::False : Tri::True;
        Scores dropped{Interval::point(0), reader.number(others[1]).range,
                       false};
        if (keep == Tri::False)
          state = dropped;
        else if (keep == Tri::Unknown)
          state = {state.scale.join(dropped.scale),
                   state.offset.join(dropped.offset), state.lost};
      }
    } else if (!isa<FnReshapeOp, arith::ExtFOp, arith::TruncFOp>(op)) {
      state.lost = true;
    }
    x = result;
  }
  if (state.hidden())
    return success();
  InFlightDiagnostic diag =
      hasMask ? softmax->emitError(
                    "nnx-derive-kv-cache: cannot prove this attention causal: "
                    "its masks leave a later key (j > i) visible to query i "
                    "(hidden means -1e4 or less added to the scores, or a "
                    "`where` that replaces them by such a value)")
              : softmax->emitError(
                    "nnx-derive-kv-cache: the attention core has no causal "
                    "mask (a bidirectional encoder): every position attends "
                    "to later ones, which a cache cannot give");
  Operation *scoresOp = scores.getDefiningOp();
  diag.attachNote(scoresOp ? scoresOp->getLoc() : fn.getLoc())
      << "the scores are computed here";
  return diag;
}
