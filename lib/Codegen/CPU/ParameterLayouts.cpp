//===- ParameterLayouts.cpp - operands in the register tiles' layout ------===//
//
// B of A * B^T matmuls as K x N, and parameter arguments asked for in the
// layouts their readers permute them to (see Layouts.h).
//
//===----------------------------------------------------------------------===//
#include "nnx/Codegen/CPU/Layouts.h"
#include "nnx/Dialect/NNX/IR/NNXOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"

#include <cstring>

using namespace mlir;

DenseElementsAttr mlir::nnx::permuteDense(DenseElementsAttr w,
                                          ArrayRef<int64_t> perm) {
  auto type = cast<RankedTensorType>(w.getType());
  ArrayRef<int64_t> shape = type.getShape();
  size_t rank = shape.size();
  SmallVector<int64_t> outShape, inStrides(rank, 1), strides;
  for (size_t d = rank; d-- > 1;)
    inStrides[d - 1] = inStrides[d] * shape[d];
  for (int64_t d : perm) {
    outShape.push_back(shape[d]);
    strides.push_back(inStrides[d]);
  }
  auto newType = RankedTensorType::get(outShape, type.getElementType());
  if (w.isSplat())
    return w.resizeSplat(newType);
  // The source element of each result element, in result order.
  int64_t total = type.getNumElements();
  SmallVector<int64_t> from(total), index(rank, 0);
  for (int64_t o = 0, base = 0; o < total; ++o) {
    from[o] = base;
    for (size_t d = rank; d-- > 0;) {
      base += strides[d];
      if (++index[d] < outShape[d])
        break;
      base -= strides[d] * outShape[d];
      index[d] = 0;
    }
  }
  unsigned bits = type.getElementTypeBitWidth();
  if (bits % 8 == 0) {
    size_t eb = bits / 8;
    ArrayRef<char> raw = w.getRawData();
    std::vector<char> out(raw.size());
    for (int64_t o = 0; o < total; ++o)
      std::memcpy(&out[o * eb], &raw[from[o] * eb], eb);
    return DenseElementsAttr::getFromRawBuffer(newType, out);
  }
  SmallVector<Attribute> vals(w.getValues<Attribute>()), out(total);
  for (int64_t o = 0; o < total; ++o)
    out[o] = vals[from[o]];
  return DenseElementsAttr::get(newType, out);
}

Value mlir::nnx::permuteTensor(OpBuilder &b, Location loc, Value t,
                               ArrayRef<int64_t> perm) {
  DenseElementsAttr dense;
  if (matchPattern(t, m_Constant(&dense)))
    return arith::ConstantOp::create(b, loc, permuteDense(dense, perm));
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, t), out;
  for (int64_t d : perm)
    out.push_back(sizes[d]);
  Value init =
      tensor::EmptyOp::create(b, loc, out, getElementTypeOrSelf(t.getType()));
  return linalg::TransposeOp::create(b, loc, t, init, perm).getResult()[0];
}

SmallVector<AffineMap> mlir::nnx::transposedBMatmulMaps(MLIRContext *ctx) {
  AffineExpr m, n, k;
  bindDims(ctx, m, n, k);
  auto map = [&](AffineExpr r, AffineExpr c) {
    return AffineMap::get(3, 0, {r, c}, ctx);
  };
  return {map(m, k), map(n, k), map(m, n)};
}

namespace {

/// The schedule's register tiles read B as K x N rows. A `linalg.matmul`
/// computing A * B^T (a Linear's weight as nnx-build-forward emits it, N x K)
/// gets B transposed once: into a new constant when B is one (at compile
/// time), else by a `linalg.transpose` ahead of the matmul (which
/// foldParameterPermutations removes when B is a parameter argument).
struct MatmulToDefaultLayout : public OpRewritePattern<linalg::MatmulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::MatmulOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics() ||
        op.getIndexingMapsArray() !=
            nnx::transposedBMatmulMaps(op.getContext()))
      return rewriter.notifyMatchFailure(op, "not A * B^T on tensors");
    Location loc = op.getLoc();
    Value b = op.getDpsInputOperand(1)->get();
    DenseElementsAttr dense;
    Value kn;
    if (matchPattern(b, m_Constant(&dense))) {
      kn = arith::ConstantOp::create(rewriter, loc,
                                     nnx::permuteDense(dense, {1, 0}));
    } else {
      SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(rewriter, loc, b);
      std::swap(sizes[0], sizes[1]);
      Value init = tensor::EmptyOp::create(rewriter, loc, sizes,
                                           getElementTypeOrSelf(b.getType()));
      kn = linalg::TransposeOp::create(rewriter, loc, b, init,
                                       ArrayRef<int64_t>{1, 0})
               .getResult()[0];
    }
    rewriter.replaceOpWithNewOp<linalg::MatmulOp>(
        op, op.getResultTypes(),
        ValueRange{op.getDpsInputOperand(0)->get(), kn}, op.getDpsInits());
    return success();
  }
};

/// A static `tensor.expand_shape` of a transpose's sole use as the
/// transpose of the expanded input: the split moves ahead of the
/// permutation, so that a parameter read as split-then-permuted (the bf16
/// pairs of a convolution's HWCF weight) is one layout of it.
struct ExpandShapeOfTranspose : public OpRewritePattern<tensor::ExpandShapeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::ExpandShapeOp expand,
                                PatternRewriter &rewriter) const override {
    auto transpose = expand.getSrc().getDefiningOp<linalg::TransposeOp>();
    if (!transpose || !transpose.hasPureTensorSemantics() ||
        !transpose->getResult(0).hasOneUse() ||
        !expand.getResultType().hasStaticShape())
      return rewriter.notifyMatchFailure(expand, "not a static split of a "
                                                 "transpose used once");
    ArrayRef<int64_t> perm = transpose.getPermutation();
    SmallVector<ReassociationIndices> groups = expand.getReassociationIndices();
    ArrayRef<int64_t> split = expand.getResultType().getShape();
    // Input dim perm[i] splits as result dim i does; the groups of the
    // input in its own dim order.
    SmallVector<int64_t> inverse = invertPermutationVector(perm);
    SmallVector<ReassociationIndices> inGroups;
    SmallVector<int64_t> inShape, firstOf(perm.size());
    for (int64_t j = 0, e = perm.size(); j < e; ++j) {
      firstOf[j] = inShape.size();
      ReassociationIndices group;
      for (int64_t d : groups[inverse[j]]) {
        group.push_back(inShape.size());
        inShape.push_back(split[d]);
      }
      inGroups.push_back(group);
    }
    SmallVector<int64_t> newPerm;
    for (auto [i, group] : llvm::enumerate(groups))
      for (size_t q = 0; q < group.size(); ++q)
        newPerm.push_back(firstOf[perm[i]] + q);
    Location loc = expand.getLoc();
    Type element = expand.getResultType().getElementType();
    Value view = tensor::ExpandShapeOp::create(
        rewriter, loc, RankedTensorType::get(inShape, element),
        transpose.getInput(), inGroups);
    Value init = tensor::EmptyOp::create(rewriter, loc, split, element);
    rewriter.replaceOpWithNewOp<linalg::TransposeOp>(expand, view, init,
                                                     newPerm);
    return success();
  }
};

/// A transpose of a transpose used once as one transpose.
struct ComposeTransposes : public OpRewritePattern<linalg::TransposeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::TransposeOp outer,
                                PatternRewriter &rewriter) const override {
    auto inner = outer.getInput().getDefiningOp<linalg::TransposeOp>();
    if (!inner || !outer.hasPureTensorSemantics() ||
        !inner.hasPureTensorSemantics() || !inner->getResult(0).hasOneUse())
      return rewriter.notifyMatchFailure(outer, "not a transpose of one");
    // Result dim i is the inner result's dim outer[i], the input's dim
    // inner[outer[i]].
    SmallVector<int64_t> perm;
    for (int64_t d : outer.getPermutation())
      perm.push_back(inner.getPermutation()[d]);
    rewriter.replaceOpWithNewOp<linalg::TransposeOp>(outer, inner.getInput(),
                                                     outer.getInit(), perm);
    return success();
  }
};

} // namespace

void mlir::nnx::populateMatmulToDefaultLayoutPatterns(
    RewritePatternSet &patterns) {
  patterns.add<MatmulToDefaultLayout>(patterns.getContext());
}

void mlir::nnx::populateLayoutAlgebraPatterns(RewritePatternSet &patterns) {
  patterns.add<ExpandShapeOfTranspose, ComposeTransposes>(
      patterns.getContext());
}

/// The permutation every use of `arg` reads it through, if they all are
/// `linalg.transpose` ops on tensors of one permutation.
static std::optional<SmallVector<int64_t>> soleTransposition(Value arg) {
  std::optional<SmallVector<int64_t>> perm;
  for (Operation *user : arg.getUsers()) {
    auto transpose = dyn_cast<linalg::TransposeOp>(user);
    if (!transpose || !transpose.hasPureTensorSemantics() ||
        transpose.getInput() != arg)
      return std::nullopt;
    ArrayRef<int64_t> p = transpose.getPermutation();
    if (perm && ArrayRef<int64_t>(*perm) != p)
      return std::nullopt;
    perm = SmallVector<int64_t>(p);
  }
  return perm;
}

/// The static split a parameter argument's sole reader views it as, when
/// that is a `tensor.expand_shape` read only by one `linalg.transpose`
/// (the bf16 kernels' pairs of K); the transpose in `transpose`.
static std::optional<SmallVector<int64_t>>
soleSplitTransposition(Value arg, linalg::TransposeOp &transpose) {
  if (!arg.hasOneUse())
    return std::nullopt;
  auto expand = dyn_cast<tensor::ExpandShapeOp>(*arg.getUsers().begin());
  if (!expand || !expand.getResultType().hasStaticShape() ||
      !expand.getResult().hasOneUse())
    return std::nullopt;
  transpose = dyn_cast<linalg::TransposeOp>(*expand->getUsers().begin());
  if (!transpose || !transpose.hasPureTensorSemantics() ||
      transpose.getInput() != expand.getResult())
    return std::nullopt;
  return SmallVector<int64_t>(expand.getResultType().getShape());
}

/// Asks for `arg` (parameter `name`) in the layout its split-and-transpose
/// reader reads, recording {shape, permutation} in `layouts`.
static bool foldSplitTransposition(BlockArgument arg, StringAttr name,
                                   NamedAttrList &layouts,
                                   SmallVectorImpl<Type> &argTypes) {
  linalg::TransposeOp transpose;
  std::optional<SmallVector<int64_t>> shape =
      soleSplitTransposition(arg, transpose);
  if (!shape)
    return false;
  MLIRContext *ctx = arg.getContext();
  Builder b(ctx);
  NamedAttribute entries[] = {
      b.getNamedAttr("permutation",
                     DenseI64ArrayAttr::get(ctx, transpose.getPermutation())),
      b.getNamedAttr("shape", DenseI64ArrayAttr::get(ctx, *shape))};
  layouts.set(name, b.getDictionaryAttr(entries));
  Operation *expand = *arg.getUsers().begin();
  Type permuted = transpose->getResult(0).getType();
  arg.setType(permuted);
  argTypes[arg.getArgNumber()] = permuted;
  transpose->getResult(0).replaceAllUsesWith(arg);
  transpose->erase();
  expand->erase();
  return true;
}

/// The layout `chain` (a user of `arg`) reads `arg` in, if it is one the
/// element reads can follow: a 2-D transpose, or the bf16 pairs' static
/// expand_shape (N x K/2 x 2) then transpose [1, 0, 2]. The ops of the chain
/// in `ops` (in order), its result in `result`.
static bool matchLayoutChain(Operation *chain,
                             SmallVectorImpl<Operation *> &ops, Value &result,
                             bool &pairs) {
  auto transpose = dyn_cast<linalg::TransposeOp>(chain);
  pairs = false;
  if (!transpose) {
    auto expand = dyn_cast<tensor::ExpandShapeOp>(chain);
    if (!expand || !expand.getResultType().hasStaticShape() ||
        expand.getResultType().getRank() != 3 ||
        expand.getResultType().getDimSize(2) != 2 ||
        !expand.getResult().hasOneUse())
      return false;
    transpose = dyn_cast<linalg::TransposeOp>(*expand->getUsers().begin());
    if (!transpose || transpose.getPermutation() != ArrayRef<int64_t>{1, 0, 2})
      return false;
    ops.push_back(expand);
    pairs = true;
  } else if (transpose.getPermutation() != ArrayRef<int64_t>{1, 0}) {
    return false;
  }
  auto init = transpose.getInit().getDefiningOp<tensor::EmptyOp>();
  if (!transpose.hasPureTensorSemantics() || !init ||
      init->getNumOperands() != 0)
    return false;
  ops.insert(ops.begin(), init);
  ops.push_back(transpose);
  result = transpose->getResult(0);
  return true;
}

/// A parameter read by one matmul layout (a transpose, or the bf16 pairs)
/// and by element reads (`tensor.extract`: an embedding whose table is tied
/// to an LM head) has its reads follow the layout: the argument is then
/// asked for in that layout at bind time, instead of a copy of the whole
/// table per call. The chain moves to the function's entry so that it
/// dominates every read.
static void retargetElementReads(BlockArgument arg) {
  SmallVector<tensor::ExtractOp> reads;
  Operation *chain = nullptr;
  for (Operation *user : arg.getUsers()) {
    auto read = dyn_cast<tensor::ExtractOp>(user);
    if (read && read.getTensor() == arg) {
      reads.push_back(read);
      continue;
    }
    if (chain && chain != user)
      return;
    chain = user;
  }
  SmallVector<Operation *> ops;
  Value packed;
  bool pairs;
  if (reads.empty() || !chain || !matchLayoutChain(chain, ops, packed, pairs))
    return;
  Block &entry = arg.getOwner()->getParent()->front();
  for (Operation *op : llvm::reverse(ops))
    op->moveBefore(&entry, entry.begin());
  for (tensor::ExtractOp read : reads) {
    OpBuilder b(read);
    Location loc = read.getLoc();
    Value row = read.getIndices()[0], col = read.getIndices()[1];
    SmallVector<Value> at{col, row};
    if (pairs) {
      Value two = arith::ConstantIndexOp::create(b, loc, 2);
      at = {arith::DivUIOp::create(b, loc, col, two), row,
            arith::RemUIOp::create(b, loc, col, two)};
    }
    read->replaceAllUsesWith(
        tensor::ExtractOp::create(b, loc, packed, at)->getResults());
    read->erase();
  }
}

void mlir::nnx::foldParameterPermutations(func::FuncOp func) {
  if (func.isExternal())
    return;
  MLIRContext *ctx = func.getContext();
  NamedAttrList layouts;
  if (auto existing =
          func->getAttrOfType<DictionaryAttr>(nnx::kParameterLayoutsAttrName))
    layouts.append(existing.getValue());
  SmallVector<Type> argTypes(func.getArgumentTypes());
  for (BlockArgument arg : func.getArguments()) {
    auto name = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                  nnx::kParameterArgAttrName);
    if (!name || arg.use_empty() || layouts.get(name))
      continue;
    retargetElementReads(arg);
    if (foldSplitTransposition(arg, name, layouts, argTypes))
      continue;
    std::optional<SmallVector<int64_t>> perm = soleTransposition(arg);
    if (!perm)
      continue;
    Type permuted = (*arg.getUsers().begin())->getResult(0).getType();
    arg.setType(permuted);
    argTypes[arg.getArgNumber()] = permuted;
    layouts.set(name, DenseI64ArrayAttr::get(ctx, *perm));
    for (Operation *user : llvm::make_early_inc_range(arg.getUsers())) {
      user->getResult(0).replaceAllUsesWith(arg);
      user->erase();
    }
  }
  if (layouts.empty())
    return;
  func.setFunctionType(
      FunctionType::get(ctx, argTypes, func.getFunctionType().getResults()));
  func->setAttr(nnx::kParameterLayoutsAttrName, layouts.getDictionary(ctx));
}

/// The ops that read `arg` in another layout, init first (the ops to clone
/// at a call site, in order), if its uses are one such chain or transposes
/// of one permutation with static empty inits; the value read in `read`.
static SmallVector<Operation *> getLayoutReads(BlockArgument arg,
                                               SmallVectorImpl<Value> &reads) {
  linalg::TransposeOp transpose;
  SmallVector<linalg::TransposeOp> transposes;
  if (soleSplitTransposition(arg, transpose)) {
    transposes.push_back(transpose);
  } else if (soleTransposition(arg)) {
    for (Operation *user : arg.getUsers())
      transposes.push_back(cast<linalg::TransposeOp>(user));
  }
  SmallVector<Operation *> chain;
  if (transposes.empty())
    return chain;
  transpose = transposes.front();
  auto init = transpose.getInit().getDefiningOp<tensor::EmptyOp>();
  if (!init || init->getNumOperands() != 0)
    return chain;
  chain.push_back(init);
  if (transpose.getInput() != arg)
    chain.push_back(transpose.getInput().getDefiningOp());
  chain.push_back(transpose);
  for (linalg::TransposeOp t : transposes)
    reads.push_back(t->getResult(0));
  return chain;
}

/// Moves the layout chain of `kernel`'s argument `index` to `calls`.
static void hoistArgumentLayout(func::FuncOp kernel, unsigned index,
                                ArrayRef<func::CallOp> calls) {
  BlockArgument arg = kernel.getArgument(index);
  SmallVector<Value> reads;
  SmallVector<Operation *> chain = getLayoutReads(arg, reads);
  if (chain.empty())
    return;
  for (func::CallOp call : calls) {
    OpBuilder b(call);
    IRMapping mapping;
    mapping.map(arg, call.getOperand(index));
    Operation *last = nullptr;
    for (Operation *op : chain)
      last = b.clone(*op, mapping);
    call->setOperand(index, last->getResult(0));
  }
  Type permuted = reads.front().getType();
  for (Value read : reads) {
    Operation *transpose = read.getDefiningOp();
    Value init = cast<linalg::TransposeOp>(transpose).getInit();
    read.replaceAllUsesWith(arg);
    transpose->erase();
    if (Operation *def = init.getDefiningOp(); def && def->use_empty())
      def->erase();
  }
  for (Operation *user : llvm::make_early_inc_range(arg.getUsers()))
    if (user->use_empty())
      user->erase();
  arg.setType(permuted);
  SmallVector<Type> inputs(kernel.getArgumentTypes());
  inputs[index] = permuted;
  kernel.setFunctionType(
      FunctionType::get(kernel.getContext(), inputs, kernel.getResultTypes()));
}

void mlir::nnx::hoistKernelArgumentLayouts(ModuleOp module) {
  SymbolTableCollection tables;
  SymbolUserMap users(tables, module);
  for (auto kernel : module.getOps<func::FuncOp>()) {
    if (kernel.isExternal() || !kernel.isPrivate())
      continue;
    SmallVector<func::CallOp> calls;
    bool onlyCalls = true;
    for (Operation *user : users.getUsers(kernel)) {
      auto call = dyn_cast<func::CallOp>(user);
      onlyCalls &= call && call.getCallee() == kernel.getSymName();
      if (call)
        calls.push_back(call);
    }
    if (!onlyCalls || calls.empty())
      continue;
    for (unsigned i = 0, e = kernel.getNumArguments(); i < e; ++i)
      hoistArgumentLayout(kernel, i, calls);
  }
}
