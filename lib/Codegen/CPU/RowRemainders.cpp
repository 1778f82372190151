//===- RowRemainders.cpp - dynamic row remainders as static blocks -*- C++
//-*-=//
//
// Between the cache and the register stage of the matmul schedule: a
// matmul of fewer rows than a register tile, with a dynamic M, becomes
// loops over static blocks of 4, 2 and 1 rows, each register-tiled and
// vectorized like a main tile.
//
// Before the cache stage, the column remainders: a matmul whose static N
// would leave a partial cache tile or a register tile of a width that is
// not a power of two becomes one matmul per column block of whole tiles
// and of powers of two.
//
//===----------------------------------------------------------------------===//
#include "MatmulSchedule.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace mlir;

/// Rewrites `mm`, a matmul of `rows` (dynamic, fewer than a register tile)
/// rows, as loops over static row blocks of each size in `blocks`
/// (descending powers of two, the last 1): first as many blocks of the
/// first size as fit, then of the next, so that every matmul left has a
/// static M and gets full register tiles.
static void splitRows(RewriterBase &rewriter, linalg::MatmulOp mm,
                      ArrayRef<int64_t> blocks) {
  Location loc = mm.getLoc();
  rewriter.setInsertionPoint(mm);
  Value a = mm.getDpsInputOperand(0)->get(),
        b = mm.getDpsInputOperand(1)->get();
  Value c = mm.getDpsInits()[0];
  auto cType = cast<RankedTensorType>(c.getType());
  Value rows = tensor::DimOp::create(rewriter, loc, c, 0);
  Value lo = arith::ConstantIndexOp::create(rewriter, loc, 0);
  for (int64_t block : blocks) {
    // [lo, hi): the rows left, rounded down to whole blocks.
    Value step = arith::ConstantIndexOp::create(rewriter, loc, block);
    Value left = arith::SubIOp::create(rewriter, loc, rows, lo);
    Value whole = arith::MulIOp::create(
        rewriter, loc, arith::DivUIOp::create(rewriter, loc, left, step), step);
    Value hi = arith::AddIOp::create(rewriter, loc, lo, whole);
    auto loop = scf::ForOp::create(
        rewriter, loc, lo, hi, step, ValueRange{c},
        [&](OpBuilder &bb, Location l, Value iv, ValueRange acc) {
          auto slice = [&](Value v, int64_t cols) {
            OpFoldResult zero = bb.getIndexAttr(0), one = bb.getIndexAttr(1);
            return tensor::ExtractSliceOp::create(
                bb, l,
                RankedTensorType::get({block, cols}, cType.getElementType()), v,
                ArrayRef<OpFoldResult>{iv, zero},
                ArrayRef<OpFoldResult>{bb.getIndexAttr(block),
                                       bb.getIndexAttr(cols)},
                ArrayRef<OpFoldResult>{one, one});
          };
          int64_t k = cast<RankedTensorType>(a.getType()).getDimSize(1);
          int64_t n = cType.getDimSize(1);
          Value accBlock = slice(acc[0], n);
          auto tile = linalg::MatmulOp::create(
              bb, l, TypeRange{accBlock.getType()}, ValueRange{slice(a, k), b},
              ValueRange{accBlock});
          Value out = tensor::InsertSliceOp::create(
              bb, l, tile.getResult(0), acc[0],
              ArrayRef<OpFoldResult>{iv, bb.getIndexAttr(0)},
              ArrayRef<OpFoldResult>{bb.getIndexAttr(block),
                                     bb.getIndexAttr(n)},
              ArrayRef<OpFoldResult>{bb.getIndexAttr(1), bb.getIndexAttr(1)});
          scf::YieldOp::create(bb, l, out);
        });
    c = loop.getResult(0);
    lo = hi;
  }
  rewriter.replaceOp(mm, c);
}

/// The M remainders phase 1 left (matmuls on tensors whose M is dynamic
/// and provably below `regM`, with static K and N) become loops over
/// static row blocks (splitRows): 4, 2, then 1 rows for a 6-row register
/// tile. Tiling such a remainder again in the transform dialect left
/// dynamic tiles (peeling cannot prove the blocks full), which is why this
/// is C++.
void nnx::splitRowRemainders(Operation *root, int64_t regM) {
  SmallVector<int64_t> blocks;
  for (int64_t block = llvm::PowerOf2Ceil(regM) / 2; block >= 1; block /= 2)
    blocks.push_back(block);
  SmallVector<linalg::MatmulOp> remainders;
  root->walk([&](linalg::MatmulOp mm) {
    if (!mm.hasPureTensorSemantics() || mm.getDpsInits().size() != 1)
      return;
    auto a =
        dyn_cast<RankedTensorType>(mm.getDpsInputOperand(0)->get().getType());
    auto c = dyn_cast<RankedTensorType>(mm.getDpsInits()[0].getType());
    // One element type throughout: the new matmuls need no cast semantics.
    Type b = getElementTypeOrSelf(mm.getDpsInputOperand(1)->get().getType());
    if (!a || !c || a.getElementType() != c.getElementType() ||
        b != c.getElementType() || !c.isDynamicDim(0) || a.isDynamicDim(1) ||
        c.isDynamicDim(1) ||
        mm.getIndexingMapsArray() != mm.getDefaultIndexingMaps(mm.getContext()))
      return;
    FailureOr<int64_t> bound = ValueBoundsConstraintSet::computeConstantBound(
        presburger::BoundType::UB,
        ValueBoundsConstraintSet::Variable(mm.getDpsInits()[0], 0),
        /*stopCondition=*/nullptr, /*closedUB=*/true);
    if (succeeded(bound) && *bound < regM)
      remainders.push_back(mm);
  });
  IRRewriter rewriter(root->getContext());
  for (linalg::MatmulOp mm : remainders)
    splitRows(rewriter, mm, blocks);
}

/// The widths `n` columns are split into so that no cache tile (`cacheN`)
/// is partial and no register tile (`regN`) is a width that is not a power
/// of two: the whole cache tiles, the whole register tiles of the rest, then
/// what is left as descending powers of two (168 of 128 and 64: 128, 32 and
/// 8). Empty when `n` needs no split.
static SmallVector<int64_t> columnPieces(int64_t n, int64_t cacheN,
                                         int64_t regN) {
  int64_t rest = n % cacheN, left = rest % regN;
  bool partialCache = n > cacheN && rest != 0;
  if (!partialCache && (left == 0 || llvm::isPowerOf2_64(left)))
    return {};
  SmallVector<int64_t> pieces;
  if (n > rest)
    pieces.push_back(n - rest);
  if (rest > left)
    pieces.push_back(rest - left);
  for (int64_t w = static_cast<int64_t>(
           llvm::bit_floor(static_cast<uint64_t>(std::max<int64_t>(left, 1))));
       left > 0; w /= 2)
    if (left >= w) {
      pieces.push_back(w);
      left -= w;
    }
  return pieces;
}

/// Rewrites `mm` as one matmul per column block of `pieces` (widths, in
/// order): B's and C's columns sliced, each product inserted back.
static void splitColumns(RewriterBase &rewriter, linalg::MatmulOp mm,
                         ArrayRef<int64_t> pieces) {
  Location loc = mm.getLoc();
  rewriter.setInsertionPoint(mm);
  Value a = mm.getDpsInputOperand(0)->get(),
        b = mm.getDpsInputOperand(1)->get();
  Value c = mm.getDpsInits()[0];
  Type elt = getElementTypeOrSelf(c.getType());
  OpFoldResult k = tensor::getMixedSize(rewriter, loc, b, 0),
               m = tensor::getMixedSize(rewriter, loc, c, 0),
               zero = rewriter.getIndexAttr(0), one = rewriter.getIndexAttr(1);
  auto typeOf = [&](OpFoldResult rows, int64_t cols) {
    std::optional<int64_t> r = getConstantIntValue(rows);
    return RankedTensorType::get({r ? *r : ShapedType::kDynamic, cols}, elt);
  };
  int64_t offset = 0;
  for (int64_t width : pieces) {
    SmallVector<OpFoldResult> at{zero, rewriter.getIndexAttr(offset)},
        bSizes{k, rewriter.getIndexAttr(width)},
        cSizes{m, rewriter.getIndexAttr(width)}, strides{one, one};
    Value bCols = tensor::ExtractSliceOp::create(
        rewriter, loc, typeOf(k, width), b, at, bSizes, strides);
    Value cCols = tensor::ExtractSliceOp::create(
        rewriter, loc, typeOf(m, width), c, at, cSizes, strides);
    Value product =
        linalg::MatmulOp::create(rewriter, loc, TypeRange{cCols.getType()},
                                 ValueRange{a, bCols}, cCols)
            .getResult(0);
    c = tensor::InsertSliceOp::create(rewriter, loc, product, c, at, cSizes,
                                      strides);
    offset += width;
  }
  rewriter.replaceOp(mm, c);
}

/// Before the cache stage: a matmul on tensors whose static N would leave
/// a partial cache tile or a register tile whose width is not a power of
/// two becomes one matmul per column block (columnPieces). A partial N
/// cache tile is dynamic (not vectorized: scalar code), and a register tile
/// 48 or 24 wide falls off a cliff in LLVM (a RegNet group of 48 channels:
/// 42 ms against 2.0 ms as 32 + 16).
void nnx::splitColumnRemainders(Operation *root, int64_t cacheN, int64_t regN) {
  SmallVector<std::pair<linalg::MatmulOp, SmallVector<int64_t>>> splits;
  root->walk([&](linalg::MatmulOp mm) {
    if (!mm.hasPureTensorSemantics() || mm.getDpsInits().size() != 1)
      return;
    auto c = dyn_cast<RankedTensorType>(mm.getDpsInits()[0].getType());
    Type a = getElementTypeOrSelf(mm.getDpsInputOperand(0)->get().getType()),
         b = getElementTypeOrSelf(mm.getDpsInputOperand(1)->get().getType());
    if (!c || a != c.getElementType() || b != c.getElementType() ||
        c.isDynamicDim(1) ||
        mm.getIndexingMapsArray() != mm.getDefaultIndexingMaps(mm.getContext()))
      return;
    SmallVector<int64_t> pieces = columnPieces(c.getDimSize(1), cacheN, regN);
    if (!pieces.empty())
      splits.push_back({mm, pieces});
  });
  IRRewriter rewriter(root->getContext());
  for (auto &[mm, pieces] : splits)
    splitColumns(rewriter, mm, pieces);
}
