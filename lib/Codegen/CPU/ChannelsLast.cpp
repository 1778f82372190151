//===- ChannelsLast.cpp - convolutions and pools channels-last --*- C++ -*-===//
//
// `nnx-channels-last`: NCHW convolutions and pools become linalg's NHWC
// forms between transposes, and each transpose back to NCHW moves down
// through the elementwise generics after it until it meets the next
// conv's transpose to NHWC, and both go (see the pass description in
// Passes.td).
//
//===----------------------------------------------------------------------===//
#include "nnx/Codegen/CPU/Layouts.h"
#include "nnx/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::nnx {
#define GEN_PASS_DEF_NNXCHANNELSLASTPASS
#include "nnx/Codegen/CPU/Passes.h.inc"
} // namespace mlir::nnx

using namespace mlir;

namespace {
/// NCHW to NHWC and back, as `linalg.transpose` permutes (result dim i is
/// dim perm[i]).
constexpr int64_t kToChannelsLast[] = {0, 2, 3, 1};
constexpr int64_t kToChannelsFirst[] = {0, 3, 1, 2};

/// A tensor that is `source` permuted by `perm`.
struct Transposition {
  Value source;
  SmallVector<int64_t> perm;
};

/// `v` as a permutation of another tensor: a `linalg.transpose`, or a
/// `linalg.generic` that copies its one input read through a permutation
/// map (what this pass builds, so that elementwise fusion folds it into
/// its neighbours).
std::optional<Transposition> matchTransposition(Value v) {
  Operation *def = v.getDefiningOp();
  if (auto transpose = dyn_cast_or_null<linalg::TransposeOp>(def))
    return Transposition{transpose.getInput(),
                         llvm::to_vector(transpose.getPermutation())};
  auto generic = dyn_cast_or_null<linalg::GenericOp>(def);
  if (!generic || !generic.hasPureTensorSemantics() ||
      generic.getNumDpsInputs() != 1 || generic.getNumDpsInits() != 1 ||
      generic.getNumParallelLoops() != generic.getNumLoops())
    return std::nullopt;
  Block &body = generic.getRegion().front();
  if (body.getOperations().size() != 1 ||
      body.getTerminator()->getOperand(0) != body.getArgument(0))
    return std::nullopt;
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  if (!maps[1].isIdentity() || !maps[0].isPermutation())
    return std::nullopt;
  // Result element d is source element (d[m0], d[m1], ...): result dim i
  // is source dim perm[i] for perm the inverse of m.
  SmallVector<int64_t> m;
  for (AffineExpr e : maps[0].getResults())
    m.push_back(cast<AffineDimExpr>(e).getPosition());
  return Transposition{generic.getDpsInputs()[0], invertPermutationVector(m)};
}

/// The sizes of `v`, read where they were given: a destination-style op's
/// result is as large as its destination, an empty tensor as its sizes; a
/// `tensor.dim` only where neither says (resolving a `tensor.dim` of a
/// result later walks back through the layers before it).
SmallVector<OpFoldResult> sizesOf(OpBuilder &b, Location loc, Value v) {
  while (auto result = dyn_cast<OpResult>(v)) {
    Operation *def = result.getOwner();
    if (auto empty = dyn_cast<tensor::EmptyOp>(def))
      return empty.getMixedSizes();
    auto dps = dyn_cast<DestinationStyleOpInterface>(def);
    if (!dps)
      break;
    v = dps.getDpsInitOperand(result.getResultNumber())->get();
  }
  return tensor::getMixedSizes(b, loc, v);
}

/// `v` permuted by `perm` (result dim i is dim perm[i] of `v`), copying
/// only what has contents: the source of a transposition that `perm`
/// undoes, an empty tensor (or a fill of one) of the permuted shape, else a
/// copy by a `linalg.generic` that elementwise fusion can fold.
Value permuted(OpBuilder &b, Location loc, Value v, ArrayRef<int64_t> perm) {
  if (std::optional<Transposition> t = matchTransposition(v)) {
    // Result dim i is dim perm[i] of v, which is dim t->perm[perm[i]] of
    // the source.
    SmallVector<int64_t> composed;
    for (int64_t d : perm)
      composed.push_back(t->perm[d]);
    if (isIdentityPermutation(composed))
      return t->source;
  }
  SmallVector<OpFoldResult> sizes = sizesOf(b, loc, v), shape;
  for (int64_t d : perm)
    shape.push_back(sizes[d]);
  Type elt = getElementTypeOrSelf(v.getType());
  Value empty = tensor::EmptyOp::create(b, loc, shape, elt);
  if (v.getDefiningOp<tensor::EmptyOp>())
    return empty;
  auto fill = v.getDefiningOp<linalg::FillOp>();
  if (fill && fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>())
    return linalg::FillOp::create(b, loc, fill.getInputs(), ValueRange{empty})
        .getResult(0);
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineMap> maps{
      AffineMap::getPermutationMap(invertPermutationVector(perm), ctx),
      AffineMap::getMultiDimIdentityMap(perm.size(), ctx)};
  return linalg::GenericOp::create(
             b, loc, TypeRange{empty.getType()}, ValueRange{v},
             ValueRange{empty}, maps,
             SmallVector<utils::IteratorType>(perm.size(),
                                              utils::IteratorType::parallel),
             [](OpBuilder &bb, Location l, ValueRange args) {
               linalg::YieldOp::create(bb, l, args[0]);
             })
      .getResult(0);
}

/// A conv's or pool's input `x` (N x C x H x W) channels-last; a constant
/// padding stays a padding, of the permuted source (the conv rewrite folds
/// a zero padding of the spatial dims into its copy of the input).
Value channelsLastInput(OpBuilder &b, Location loc, Value x) {
  auto pad = x.getDefiningOp<tensor::PadOp>();
  Attribute value;
  if (!pad || pad.getNofold() ||
      !matchPattern(pad.getConstantPaddingValue(), m_Constant(&value)))
    return permuted(b, loc, x, kToChannelsLast);
  Value source = permuted(b, loc, pad.getSource(), kToChannelsLast);
  SmallVector<OpFoldResult> low, high;
  for (int64_t d : kToChannelsLast) {
    low.push_back(pad.getMixedLowPad()[d]);
    high.push_back(pad.getMixedHighPad()[d]);
  }
  Value padding = arith::ConstantOp::create(b, loc, cast<TypedAttr>(value));
  return tensor::PadOp::create(b, loc, /*resultType=*/Type(), source, low, high,
                               padding)
      .getResult();
}

/// `op` (an NCHW conv or pool on tensors) as `NhwcOp` between transposes:
/// its input and destination permuted to NHWC, its second input (filter or
/// window) by `secondInput`, its result permuted back.
template <typename NhwcOp>
void rewriteChannelsLast(
    RewriterBase &rewriter, linalg::LinalgOp op,
    function_ref<Value(OpBuilder &, Location, Value)> secondInput) {
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  Value x = channelsLastInput(rewriter, loc, op.getDpsInputs()[0]);
  Value second = secondInput(rewriter, loc, op.getDpsInputs()[1]);
  Value init = permuted(rewriter, loc, op.getDpsInits()[0], kToChannelsLast);
  auto nhwc = NhwcOp::create(rewriter, loc, TypeRange{init.getType()},
                             ValueRange{x, second}, ValueRange{init},
                             op->getAttr("strides"), op->getAttr("dilations"));
  rewriter.replaceOp(
      op, permuted(rewriter, loc, nhwc->getResult(0), kToChannelsFirst));
}

/// `t` (N x H x W x (G D)) split into N x H x W x G x D.
Value splitGroups(OpBuilder &b, Location loc, Value t, int64_t groups) {
  auto type = cast<RankedTensorType>(t.getType());
  SmallVector<int64_t> shape(type.getShape());
  int64_t c = shape.back();
  shape.back() = groups;
  shape.push_back(c / groups);
  SmallVector<OpFoldResult> sizes = sizesOf(b, loc, t);
  sizes.back() = b.getIndexAttr(groups);
  sizes.push_back(b.getIndexAttr(c / groups));
  return tensor::ExpandShapeOp::create(
      b, loc, type.clone(shape), t,
      ArrayRef<ReassociationIndices>{{0}, {1}, {2}, {3, 4}}, sizes);
}

/// A grouped conv (`linalg.conv_2d_ngchw_gfchw`, its channels split into
/// groups by nnx-build-forward) as `linalg.conv_2d_nhwgc_gfhwc`: input and
/// destination merged, permuted to NHWC and split again; the filter
/// permuted to G x Fg x kh x kw x Cg; the result merged, permuted back and
/// split.
void rewriteGroupedChannelsLast(RewriterBase &rewriter,
                                linalg::Conv2DNgchwGfchwOp op) {
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  int64_t groups =
      cast<RankedTensorType>(op.getInputs()[1].getType()).getDimSize(0);
  Value x = splitGroups(
      rewriter, loc,
      channelsLastInput(rewriter, loc,
                        nnx::mergeGroups(rewriter, loc, op.getInputs()[0])),
      groups);
  Value init =
      splitGroups(rewriter, loc,
                  permuted(rewriter, loc,
                           nnx::mergeGroups(rewriter, loc, op.getOutputs()[0]),
                           kToChannelsLast),
                  groups);
  Value filter =
      nnx::permuteTensor(rewriter, loc, op.getInputs()[1], {0, 1, 3, 4, 2});
  auto nhwgc = linalg::Conv2DNhwgcGfhwcOp::create(
      rewriter, loc, TypeRange{init.getType()}, ValueRange{x, filter},
      ValueRange{init}, op.getStrides(), op.getDilations());
  Value merged = rewriter.createOrFold<tensor::CollapseShapeOp>(
      loc, nhwgc.getResult(0),
      ArrayRef<ReassociationIndices>{{0}, {1}, {2}, {3, 4}});
  Value back = permuted(rewriter, loc, merged, kToChannelsFirst);
  auto type = cast<RankedTensorType>(op.getResult(0).getType());
  SmallVector<OpFoldResult> sizes = sizesOf(rewriter, loc, op.getOutputs()[0]);
  rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(
      op, type, back, ArrayRef<ReassociationIndices>{{0}, {1, 2}, {3}, {4}},
      sizes);
}

/// Every NCHW conv (groups 1, grouped or depthwise) and pool of `func`
/// channels-last.
void convertConvsAndPools(func::FuncOp func) {
  SmallVector<linalg::LinalgOp> ops;
  func.walk([&](linalg::LinalgOp op) {
    if (op.hasPureTensorSemantics() &&
        isa<linalg::Conv2DNchwFchwOp, linalg::Conv2DNgchwGfchwOp,
            linalg::DepthwiseConv2DNchwChwOp, linalg::PoolingNchwMaxOp,
            linalg::PoolingNchwSumOp>(op))
      ops.push_back(op);
  });
  IRRewriter rewriter(func.getContext());
  auto filter = [](ArrayRef<int64_t> perm) {
    return [perm](OpBuilder &b, Location loc, Value w) {
      return nnx::permuteTensor(b, loc, w, perm);
    };
  };
  auto window = [](OpBuilder &, Location, Value w) { return w; };
  for (linalg::LinalgOp op : ops) {
    if (auto grouped = dyn_cast<linalg::Conv2DNgchwGfchwOp>(*op))
      rewriteGroupedChannelsLast(rewriter, grouped);
    else if (isa<linalg::Conv2DNchwFchwOp>(op))
      rewriteChannelsLast<linalg::Conv2DNhwcHwcfOp>(rewriter, op,
                                                    filter({2, 3, 1, 0}));
    else if (isa<linalg::DepthwiseConv2DNchwChwOp>(op))
      rewriteChannelsLast<linalg::DepthwiseConv2DNhwcHwcOp>(rewriter, op,
                                                            filter({1, 2, 0}));
    else if (isa<linalg::PoolingNchwMaxOp>(op))
      rewriteChannelsLast<linalg::PoolingNhwcMaxOp>(rewriter, op, window);
    else
      rewriteChannelsLast<linalg::PoolingNhwcSumOp>(rewriter, op, window);
  }
}

/// An elementwise generic that reads a transposition through the identity
/// map computes in the transposition's source layout instead: its loops
/// are permuted so that it reads the source as it is (its other operands
/// through permuted maps), and its result is transposed back after it,
/// where the next generic takes the transposition on, or the next conv's
/// permutation to NHWC cancels it.
struct SinkTransposition : public OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics() || op.getNumDpsInits() != 1 ||
        op.getNumParallelLoops() != op.getNumLoops() ||
        op.hasIndexSemantics() || matchTransposition(op.getResult(0)) ||
        !op.getMatchingIndexingMap(op.getDpsInitOperand(0)).isIdentity())
      return rewriter.notifyMatchFailure(
          op, "not an elementwise generic with an identity result map");
    OpOperand *read = nullptr;
    std::optional<Transposition> t;
    for (OpOperand *in : op.getDpsInputOperands()) {
      if (!op.getMatchingIndexingMap(in).isIdentity())
        continue;
      t = matchTransposition(in->get());
      if (t && !isIdentityPermutation(t->perm)) {
        read = in;
        break;
      }
    }
    if (!read)
      return rewriter.notifyMatchFailure(op, "reads no transposition");
    // New loops e; old loop k is e[perm[k]].
    MLIRContext *ctx = op.getContext();
    SmallVector<AffineExpr> oldLoops;
    for (int64_t d : t->perm)
      oldLoops.push_back(getAffineDimExpr(d, ctx));
    AffineMap substitution = AffineMap::get(t->perm.size(), 0, oldLoops, ctx);
    SmallVector<Value> inputs;
    SmallVector<AffineMap> maps;
    for (OpOperand *in : op.getDpsInputOperands()) {
      inputs.push_back(in == read ? t->source : in->get());
      maps.push_back(
          in == read ? AffineMap::getMultiDimIdentityMap(t->perm.size(), ctx)
                     : op.getMatchingIndexingMap(in).compose(substitution));
    }
    maps.push_back(AffineMap::getMultiDimIdentityMap(t->perm.size(), ctx));
    Location loc = op.getLoc();
    OpOperand *initOperand = op.getDpsInitOperand(0);
    Value init = op.payloadUsesValueFromOperand(initOperand)
                     ? permuted(rewriter, loc, initOperand->get(),
                                invertPermutationVector(t->perm))
                     : tensor::EmptyOp::create(
                           rewriter, loc, sizesOf(rewriter, loc, t->source),
                           getElementTypeOrSelf(op.getResult(0).getType()));
    auto moved = linalg::GenericOp::create(
        rewriter, loc, TypeRange{init.getType()}, inputs, ValueRange{init},
        maps, op.getIteratorTypesArray());
    rewriter.inlineRegionBefore(op.getRegion(), moved.getRegion(),
                                moved.getRegion().begin());
    rewriter.replaceOp(op,
                       permuted(rewriter, loc, moved.getResult(0), t->perm));
    return success();
  }
};

/// An insertion of a transposition into a transposition by the same
/// permutation (or into an empty tensor or a fill of one) inserts the
/// sources instead, and the result is transposed after it: a
/// concatenation of convs' results (DenseNet's) stays in their layout, and
/// the permutation moves on to its readers.
struct SinkTranspositionThroughInsert
    : public OpRewritePattern<tensor::InsertSliceOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::InsertSliceOp op,
                                PatternRewriter &rewriter) const override {
    std::optional<Transposition> source = matchTransposition(op.getSource());
    if (!source || isIdentityPermutation(source->perm) ||
        op.getSourceType().getRank() != op.getType().getRank() ||
        !llvm::all_of(op.getMixedStrides(), isOneInteger))
      return rewriter.notifyMatchFailure(
          op, "not an unreduced, unit-stride insertion of a transposition");
    Value dest = op.getDest();
    std::optional<Transposition> into = matchTransposition(dest);
    bool fresh = dest.getDefiningOp<tensor::EmptyOp>() ||
                 dest.getDefiningOp<linalg::FillOp>();
    if (!fresh && (!into || into->perm != source->perm))
      return rewriter.notifyMatchFailure(
          op, "its destination is not permuted the same way");
    // Dim k of the insertion is dim perm[k] of the sources.
    ArrayRef<int64_t> perm = source->perm;
    SmallVector<int64_t> inverse = invertPermutationVector(perm);
    SmallVector<OpFoldResult> offsets = op.getMixedOffsets(),
                              sizes = op.getMixedSizes(), at, extent;
    for (int64_t d : inverse) {
      at.push_back(offsets[d]);
      extent.push_back(sizes[d]);
    }
    Location loc = op.getLoc();
    Value base = fresh ? permuted(rewriter, loc, dest, inverse) : into->source;
    Value inserted = tensor::InsertSliceOp::create(
        rewriter, loc, source->source, base, at, extent,
        SmallVector<OpFoldResult>(at.size(), rewriter.getIndexAttr(1)));
    rewriter.replaceOp(op, permuted(rewriter, loc, inserted, perm));
    return success();
  }
};

/// A transposition of a transposition: one (none when they cancel).
struct ComposeTranspositions : public OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    std::optional<Transposition> outer = matchTransposition(op.getResult(0));
    std::optional<Transposition> inner =
        outer ? matchTransposition(outer->source) : std::nullopt;
    if (!inner)
      return rewriter.notifyMatchFailure(op, "not two transpositions");
    SmallVector<int64_t> composed;
    for (int64_t d : outer->perm)
      composed.push_back(inner->perm[d]);
    rewriter.replaceOp(
        op, isIdentityPermutation(composed)
                ? inner->source
                : permuted(rewriter, op.getLoc(), inner->source, composed));
    return success();
  }
};

struct NNXChannelsLastPass
    : public mlir::nnx::impl::NNXChannelsLastPassBase<NNXChannelsLastPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    convertConvsAndPools(func);
    RewritePatternSet patterns(&getContext());
    patterns.add<SinkTransposition, SinkTranspositionThroughInsert,
                 ComposeTranspositions>(&getContext());
    // A grouped conv's result, split into groups and merged again.
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns,
                                                         &getContext());
    // Top-down: a permutation moves down through a chain in one sweep.
    // Without region simplification, which walks the whole function.
    GreedyRewriteConfig config;
    config.setUseTopDownTraversal().setRegionSimplificationLevel(
        GreedySimplifyRegionLevel::Disabled);
    if (failed(applyPatternsGreedily(func, std::move(patterns), config))) {
      func.emitError("nnx-channels-last: the transposes did not settle");
      return signalPassFailure();
    }
    if (failed(resolveResultSizes(func)))
      return signalPassFailure();
  }

  /// The sizes the rewrites read (`tensor.dim` of an op's result) in terms
  /// of that op's operands: a size read is a use that would keep
  /// elementwise fusion from fusing a producer. Only those sizes are
  /// visited (the patterns over the whole function cost 0.37 s on
  /// ResNet-50).
  LogicalResult resolveResultSizes(func::FuncOp func) {
    SmallVector<Operation *> sizes;
    func.walk([&](tensor::DimOp dim) {
      if (dim.getSource().getDefiningOp())
        sizes.push_back(dim);
    });
    RewritePatternSet patterns(&getContext());
    memref::populateResolveRankedShapedTypeResultDimsPatterns(patterns);
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
    return applyOpPatternsGreedily(sizes, std::move(patterns), config);
  }
};
} // namespace
