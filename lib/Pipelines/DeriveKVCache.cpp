//===- DeriveKVCache.cpp - nnx-derive-kv-cache ----------------------------===//
//
// Prefill and decode functions with a key/value cache, derived from a plain
// causal forward (docs/Generation.md). The forward's attention cores
// (`softmax(q @ k^T ...) @ v`) are found from data flow; the pass proves
// that each is causal, that the positions are `arange(T)` (which shifts by
// the cache length) and that nothing else mixes positions, and refuses
// otherwise before anything changes.
//
//===----------------------------------------------------------------------===//
#include "nnx/Pipelines/Passes.h"

#include "nnx/Dialect/NNX/IR/NNXFnOps.h"
#include "nnx/Dialect/NNX/IR/NNXOps.h"
#include "nnx/Dialect/NNX/IR/TensorUtils.h"
#include "nnx/Support/ResolveDims.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SetVector.h"

#include <array>

#include <cmath>

namespace mlir::nnx {
#define GEN_PASS_DEF_NNXDERIVEKVCACHEPASS
#include "nnx/Pipelines/Passes.h.inc"
} // namespace mlir::nnx

using namespace mlir;
using namespace mlir::nnx;

namespace {

/// One attention core of the forward.
struct Core {
  FnSoftmaxOp softmax;
  FnMatmulOp scores, mix;
  /// The elementwise ops from the scores to the softmax.
  SmallVector<Operation *> chain;
  /// The operands of `chain` that depend on the sequence length (masks).
  SmallVector<OpOperand *> masks;
  /// Where the keys and values, as `B x kv_heads x T x head_dim` (what the
  /// cache holds), enter the path to the core (the keys' transpose,
  /// `repeat_kv`, the matmuls), and the ops of each path.
  std::array<OpOperand *, 2> uses{};
  std::array<SmallVector<Operation *, 4>, 2> paths;
};

/// The analysis and the rewrite of one function (a clone of the forward).
class Derivation {
public:
  Derivation(func::FuncOp fn, int64_t maxLength)
      : fn(fn), maxLength(maxLength), resolver(fn.getBody().front()) {}

  /// The proofs; a diagnostic on the op at fault when one fails.
  LogicalResult analyze();
  /// Rewrites the function into prefill (`decode` false: position 0, fresh
  /// caches) or decode (position and caches are arguments).
  LogicalResult rewrite(bool decode);

private:
  bool isSeqSize(Value size);
  bool isSeqDim(Value v, int64_t d);
  bool isParameter(Value v);
  /// Whether `v` is computed from the ids' values (not only their sizes)
  /// or any other non-parameter input.
  bool touchesData(Value v);
  /// Whether `v` depends on the sequence length.
  bool dependsOnSeq(Value v);
  LogicalResult findCore(FnSoftmaxOp softmax, std::optional<Core> &core);
  LogicalResult proveCausal(Core &core);
  bool isCausalWhere(FnWhereOp where, Value value);
  bool isCausalMask(Value m);
  bool isKeyBias(Value m);
  bool isBiasedCausalMask(Value m);
  LogicalResult findCached(Core &core, bool keys);
  LogicalResult checkNoMixing();
  LogicalResult checkPositions();
  LogicalResult checkTable(tensor::ExtractSliceOp slice);
  std::optional<int64_t> reducesSeq(Operation *op);
  Value cloneAtLength(Value v, Value length, OpBuilder &b);
  Value cacheUpdate(Value v, Value cache, OpBuilder &b, Value &updated);
  FailureOr<SmallVector<Value>> makeCaches(bool decode, OpBuilder &b);
  void rewriteMask(OpOperand *mask, OpBuilder &b);
  void setResults(ArrayRef<Value> updated, OpBuilder &b);

  func::FuncOp fn;
  int64_t maxLength;
  DimResolver resolver;
  Value ids;
  std::vector<Core> cores;
  SmallVector<FnArangeOp> aranges;
  /// Tables sliced to T (`table[:T]`) and the dim sliced.
  SmallVector<std::pair<tensor::ExtractSliceOp, unsigned>> tables;
  DenseSet<Operation *> coreOps;
  DenseMap<Value, bool> dataMemo, seqMemo;
  /// Rewrite state: the cache position, the new tokens and all tokens.
  Value position, newLength, allLength;
};

bool Derivation::isParameter(Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  return arg && fn.getArgAttr(arg.getArgNumber(), "nnx.parameter");
}

bool Derivation::isSeqSize(Value size) {
  auto dim = size.getDefiningOp<tensor::DimOp>();
  std::optional<int64_t> index = dim ? dim.getConstantIndex() : std::nullopt;
  return index && isSeqDim(dim.getSource(), *index);
}

/// Whether dim `d` of `v` is the ids' dim 1. Sizes are resolved to the
/// arguments' (DimResolver); a broadcasting op's dim that no reification
/// resolves is its operands' dim (the lowering checks that they agree), and
/// so is an elementwise op's (`arith.sitofp` on tensors).
bool Derivation::isSeqDim(Value v, int64_t d) {
  if (v == ids)
    return d == 1;
  auto root = resolver.resolve(v, d).getDefiningOp<tensor::DimOp>();
  std::optional<int64_t> index = root ? root.getConstantIndex() : std::nullopt;
  if (!index)
    return false;
  if (root.getSource() == ids)
    return *index == 1;
  // A size the resolver stops at (a dim the forward reads itself).
  if (root.getSource() != v || *index != d)
    return isSeqDim(root.getSource(), *index);
  Operation *def = root.getSource().getDefiningOp();
  if (auto reshape = dyn_cast_or_null<tensor::ReshapeOp>(def))
    if (auto shape = reshape.getShape().getDefiningOp<tensor::FromElementsOp>())
      return isSeqSize(shape.getElements()[*index]);
  if (!def || !(isa<FnBinaryOpInterface, FnWhereOp>(def) ||
                def->hasTrait<OpTrait::Elementwise>()))
    return false;
  int64_t rank = cast<RankedTensorType>(root.getSource().getType()).getRank();
  for (Value operand : def->getOperands()) {
    auto type = cast<RankedTensorType>(operand.getType());
    int64_t od = *index - (rank - type.getRank());
    if (od >= 0 && type.isDynamicDim(od) && isSeqDim(operand, od))
      return true;
  }
  return false;
}

bool Derivation::touchesData(Value v) {
  if (auto it = dataMemo.find(v); it != dataMemo.end())
    return it->second;
  bool data = false;
  if (isa<BlockArgument>(v)) {
    data = !isParameter(v);
  } else if (!isa<tensor::DimOp>(v.getDefiningOp())) {
    for (Value operand : v.getDefiningOp()->getOperands())
      data |= touchesData(operand);
  }
  return dataMemo[v] = data;
}

bool Derivation::dependsOnSeq(Value v) {
  if (auto it = seqMemo.find(v); it != seqMemo.end())
    return it->second;
  bool seq = false;
  if (Operation *def = v.getDefiningOp()) {
    seq = isa<tensor::DimOp>(def) ? isSeqSize(v) : false;
    if (!isa<tensor::DimOp>(def))
      for (Value operand : def->getOperands())
        seq |= dependsOnSeq(operand);
  }
  return seqMemo[v] = seq;
}

/// The core `softmax` ends, or none (a softmax of something else).
LogicalResult Derivation::findCore(FnSoftmaxOp softmax,
                                   std::optional<Core> &core) {
  Core c;
  c.softmax = softmax;
  Value v = softmax.getInput();
  while (Operation *def = v.getDefiningOp()) {
    if (auto mm = dyn_cast<FnMatmulOp>(def)) {
      c.scores = mm;
      break;
    }
    bool elementwise =
        isa<FnBinaryOpInterface, FnWhereOp>(def) ||
        (def->getNumOperands() == 1 && def->hasTrait<OpTrait::Elementwise>());
    if (!elementwise)
      return success();
    OpOperand *next = nullptr;
    for (OpOperand &operand : def->getOpOperands()) {
      if (!touchesData(operand.get()))
        continue;
      if (next)
        return success(); // two data operands: not scores and a mask
      next = &operand;
    }
    if (!next)
      return success();
    c.chain.push_back(def);
    for (OpOperand &operand : def->getOpOperands())
      if (&operand != next && dependsOnSeq(operand.get()))
        c.masks.push_back(&operand);
    v = next->get();
  }
  if (!c.scores)
    return success();
  // The mix reads the probabilities, through casts (a bf16 model's
  // `softmax(..., dtype=float32).to(bf16)`) and dropouts that are the
  // identity (eval mode, or p = 0: HF's `attention_dropout`).
  auto passesThrough = [](Operation *user) {
    if (auto dropout = dyn_cast<FnDropoutOp>(user))
      return !dropout.getTrain() || dropout.getP().isZero();
    return user->getNumOperands() == 1 &&
           user->hasTrait<OpTrait::Elementwise>();
  };
  Value probs = softmax;
  while (probs.hasOneUse() && passesThrough(*probs.getUsers().begin()))
    probs = probs.getUsers().begin()->getResult(0);
  for (Operation *user : probs.getUsers())
    if (auto mm = dyn_cast<FnMatmulOp>(user); mm && mm.getLhs() == probs)
      c.mix = mm;
  if (!c.mix)
    return success();
  core = std::move(c);
  return success();
}

/// A splat (or dense splat constant) of a nonzero / true value.
static bool isNonzeroSplat(Value v) {
  if (auto splat = v.getDefiningOp<tensor::SplatOp>()) {
    Attribute value;
    if (!matchPattern(splat.getInput(), m_Constant(&value)))
      return false;
    if (auto i = dyn_cast<IntegerAttr>(value))
      return !i.getValue().isZero();
    if (auto f = dyn_cast<FloatAttr>(value))
      return !f.getValue().isZero();
    return false;
  }
  DenseElementsAttr dense;
  if (!matchPattern(v, m_Constant(&dense)) || !dense.isSplat())
    return false;
  if (isa<FloatType>(dense.getElementType()))
    return !dense.getSplatValue<APFloat>().isZero();
  return !dense.getSplatValue<APInt>().isZero();
}

/// A constant whose every element is the same value (splat), as a double.
static std::optional<double> splatValue(Value v) {
  if (auto splat = v.getDefiningOp<tensor::SplatOp>())
    v = splat.getInput();
  Attribute value;
  if (!matchPattern(v, m_Constant(&value)))
    return std::nullopt;
  if (auto dense = dyn_cast<DenseElementsAttr>(value)) {
    if (!dense.isSplat() || !isa<FloatType>(dense.getElementType()))
      return std::nullopt;
    return dense.getSplatValue<APFloat>().convertToDouble();
  }
  if (auto f = dyn_cast<FloatAttr>(value))
    return f.getValueAsDouble();
  return std::nullopt;
}

static bool isMinusInfinity(Value v) {
  std::optional<double> x = splatValue(v);
  return x && (std::isinf(*x) ? *x < 0 : *x <= -1e30);
}

/// The values of the parameter (a registered buffer) that `v` slices from
/// its leading rows and columns (offsets 0, unit strides), as
/// `*[..., rows, cols]`; none if `v` is not such a slice.
static std::optional<std::pair<std::vector<double>, ArrayRef<int64_t>>>
leadingSliceOfBuffer(Value v, func::FuncOp fn) {
  auto slice = v.getDefiningOp<tensor::ExtractSliceOp>();
  auto arg = slice ? dyn_cast<BlockArgument>(slice.getSource()) : nullptr;
  if (!arg || !fn.getArgAttr(arg.getArgNumber(), "nnx.parameter") ||
      !llvm::all_of(slice.getStaticOffsets(),
                    [](int64_t o) { return o == 0; }) ||
      !llvm::all_of(slice.getStaticStrides(), [](int64_t s) { return s == 1; }))
    return std::nullopt;
  unsigned first = 0;
  while (!fn.getArgAttr(first, "nnx.parameter"))
    ++first;
  auto params = fn->getAttrOfType<ArrayAttr>("nnx.parameters");
  unsigned index = arg.getArgNumber() - first;
  auto attr = params && index < params.size()
                  ? dyn_cast<ElementsAttr>(params[index])
                  : ElementsAttr();
  if (!attr || attr.getShapedType() != arg.getType())
    return std::nullopt;
  FailureOr<std::vector<double>> values = readTensor(attr);
  ArrayRef<int64_t> shape = attr.getShapedType().getShape();
  if (failed(values) || shape.size() < 2)
    return std::nullopt;
  return std::make_pair(std::move(*values), shape);
}

/// Whether `v` slices a buffer whose every `[i, j]` (the last two dims)
/// satisfies `holds(i, j, value)`.
static bool
isBufferSlice(Value v, func::FuncOp fn,
              llvm::function_ref<bool(int64_t, int64_t, double)> holds) {
  auto buffer = leadingSliceOfBuffer(v, fn);
  if (!buffer)
    return false;
  auto &[values, shape] = *buffer;
  int64_t rows = shape[shape.size() - 2], cols = shape.back();
  for (size_t n = 0; n < values.size(); ++n)
    if (!holds((n / cols) % rows, n % cols, values[n]))
      return false;
  return true;
}

/// nanoGPT's `bias[:, :, :T, :T]`: nonzero exactly where `j <= i`
/// (`torch.tril(torch.ones(L, L))`).
static bool isLowerTriangleBuffer(Value v, func::FuncOp fn) {
  return isBufferSlice(v, fn, [](int64_t i, int64_t j, double x) {
    return (x != 0.0) == (j <= i);
  });
}

/// llama2.c's `mask[:, :, :T, :T]`, added to the scores: -inf (or below
/// -1e30) where `j > i`, 0 elsewhere (`torch.triu(full(-inf), 1)`).
static bool isMinusInfinityUpperBuffer(Value v, func::FuncOp fn) {
  return isBufferSlice(v, fn, [](int64_t i, int64_t j, double x) {
    return j > i ? x <= -1e30 : x == 0.0;
  });
}

/// The `k` of a boolean mask that is true exactly where `j - i >= k` (row
/// `i`, column `j`): `triu(ones, k)`, `tril(ones, k - 1) == 0`, or a lower
/// triangle buffer `== 0` (k = 1).
static std::optional<int64_t> trueFromDiagonal(Value cond, func::FuncOp fn) {
  if (auto triu = cond.getDefiningOp<FnTriuOp>())
    if (isNonzeroSplat(triu.getInput()))
      return triu.getDiagonal();
  if (auto eq = cond.getDefiningOp<FnEqOp>()) {
    auto tril = eq.getLhs().getDefiningOp<FnTrilOp>();
    std::optional<double> zero = splatValue(eq.getRhs());
    if (tril && zero && *zero == 0.0 && isNonzeroSplat(tril.getInput()))
      return tril.getDiagonal() + 1;
    if (zero && *zero == 0.0 && isLowerTriangleBuffer(eq.getLhs(), fn))
      return 1;
  }
  return std::nullopt;
}

/// Each mask of `core` hides every later position: where(c, -inf, x) with
/// `c` true from a diagonal k <= 1, on the scores or on an additive mask.
LogicalResult Derivation::proveCausal(Core &core) {
  if (core.masks.empty()) {
    InFlightDiagnostic diag =
        core.softmax.emitError("nnx-derive-kv-cache: the attention core has "
                               "no causal mask (a bidirectional encoder): "
                               "every position attends to later ones, which "
                               "a cache cannot give");
    diag.attachNote(core.scores.getLoc()) << "the scores are computed here";
    return diag;
  }
  bool causal = false;
  for (OpOperand *mask : core.masks) {
    Value m = mask->get();
    // masked_fill on the scores themselves: the mask is its condition.
    auto masked = dyn_cast<FnWhereOp>(mask->getOwner());
    bool onScores = masked && mask->getOperandNumber() == 0;
    bool isCausal = onScores ? isCausalWhere(masked, m)
                             : isCausalMask(m) || isBiasedCausalMask(m);
    causal |= isCausal;
    if (!isCausal && !isKeyBias(m)) {
      Operation *at = m.getDefiningOp() ? m.getDefiningOp() : mask->getOwner();
      InFlightDiagnostic diag =
          at->emitError("nnx-derive-kv-cache: cannot prove this attention "
                        "mask causal (expected `where(triu(ones, k <= 1) or "
                        "tril(ones, k <= 0) == 0, -inf, ...)` over T x T, "
                        "or a buffer `triu(full(-inf), 1)[:T, :T]`, plus a "
                        "bias over the keys only)");
      diag.attachNote(core.softmax.getLoc()) << "the softmax it masks";
      return diag;
    }
  }
  if (!causal) {
    InFlightDiagnostic diag =
        core.softmax.emitError("nnx-derive-kv-cache: the attention core's "
                               "masks hide no later position (only a bias "
                               "over the keys): a bidirectional encoder");
    diag.attachNote(core.scores.getLoc()) << "the scores are computed here";
    return diag;
  }
  return success();
}

/// `where(c, -inf, x)` whose `c` is true exactly where `j - i >= k`, k <= 1,
/// and `value` (the mask) is T x T in its last two dims.
bool Derivation::isCausalWhere(FnWhereOp where, Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  int64_t rank = type.getRank();
  if (rank < 2 || !type.isDynamicDim(rank - 1) ||
      !type.isDynamicDim(rank - 2) || !isMinusInfinity(where.getA()))
    return false;
  std::optional<int64_t> k = trueFromDiagonal(where.getCond(), fn);
  return k && *k <= 1;
}

bool Derivation::isCausalMask(Value m) {
  if (auto where = m.getDefiningOp<FnWhereOp>())
    return isCausalWhere(where, m);
  // A registered buffer sliced to T x T (llama2.c).
  auto type = cast<RankedTensorType>(m.getType());
  int64_t rank = type.getRank();
  return rank >= 2 && type.isDynamicDim(rank - 1) &&
         type.isDynamicDim(rank - 2) && isSeqDim(m, rank - 1) &&
         isSeqDim(m, rank - 2) && isMinusInfinityUpperBuffer(m, fn);
}

/// A bias over the keys only (ALiBi): one row (static), the keys' dim T.
bool Derivation::isKeyBias(Value m) {
  auto type = cast<RankedTensorType>(m.getType());
  int64_t rank = type.getRank();
  return rank >= 2 && type.getDimSize(rank - 2) == 1 &&
         type.isDynamicDim(rank - 1) && !touchesData(m);
}

/// A causal mask plus a bias over the keys (Bloom: `alibi + mask`).
bool Derivation::isBiasedCausalMask(Value m) {
  auto add = m.getDefiningOp<FnAddOp>();
  if (!add)
    return false;
  Value a = add.getLhs(), b = add.getRhs();
  return (isCausalMask(a) && isKeyBias(b)) || (isCausalMask(b) && isKeyBias(a));
}

/// The keys (or values) of a core back through the keys' transpose and
/// `repeat_kv` (reshape, expand, reshape), as `B x kv_heads x T x D`.
LogicalResult Derivation::findCached(Core &core, bool keys) {
  OpOperand *use =
      keys ? &core.scores.getRhsMutable() : &core.mix.getRhsMutable();
  SmallVector<Operation *, 4> &path = core.paths[keys ? 0 : 1];
  path.push_back(use->getOwner());
  if (auto permute = use->get().getDefiningOp<FnPermuteOp>(); keys && permute) {
    ArrayRef<int64_t> p = permute.getPermutation();
    if (p.size() == 4 && p[0] == 0 && p[1] == 1 && p[2] == 3 && p[3] == 2) {
      use = &permute.getInputMutable();
      path.push_back(permute);
    }
  }
  if (auto out = use->get().getDefiningOp<FnReshapeOp>())
    if (auto expand = out.getInput().getDefiningOp<FnExpandOp>())
      if (auto in = expand.getInput().getDefiningOp<FnReshapeOp>()) {
        use = &in.getInputMutable();
        path.append({out, expand, in});
      }
  core.uses[keys ? 0 : 1] = use;
  Value v = use->get();
  auto type = cast<RankedTensorType>(v.getType());
  if (type.getRank() == 4 && type.isDynamicDim(2) && isSeqDim(v, 2))
    return success();
  Operation *at = v.getDefiningOp() ? v.getDefiningOp() : fn;
  return at->emitError("nnx-derive-kv-cache: the attention's ")
         << (keys ? "keys" : "values")
         << " are not `batch x heads x T x head_dim` (before the keys' "
            "transpose and repeat_kv): the pass cannot tell what to cache";
}

/// The dim of `op`'s operands that `op` reduces over the sequence, if any.
std::optional<int64_t> Derivation::reducesSeq(Operation *op) {
  auto seqDim = [&](Value v, int64_t d) {
    auto type = cast<RankedTensorType>(v.getType());
    if (d < 0)
      d += type.getRank();
    return type.isDynamicDim(d) && isSeqDim(v, d);
  };
  if (auto softmax = dyn_cast<FnSoftmaxOp>(op))
    if (seqDim(softmax.getInput(), softmax.getDim()))
      return softmax.getDim();
  if (auto mm = dyn_cast<FnMatmulOp>(op)) {
    int64_t k = mm.getTransposeB() ? -1 : -2;
    if (seqDim(mm.getRhs(), k))
      return k;
  }
  if (auto cumsum = dyn_cast<FnCumsumOp>(op))
    if (seqDim(cumsum.getInput(), cumsum.getDim()))
      return cumsum.getDim();
  if (isa<FnMeanOp, FnSumOp, FnAmaxOp, FnAminOp>(op)) {
    auto dims = op->getAttrOfType<DenseI64ArrayAttr>("dims");
    auto type = cast<RankedTensorType>(op->getOperand(0).getType());
    SmallVector<int64_t> all = llvm::to_vector(
        dims && !dims.empty() ? dims.asArrayRef()
                              : ArrayRef<int64_t>(llvm::to_vector(
                                    llvm::seq<int64_t>(0, type.getRank()))));
    for (int64_t d : all)
      if (seqDim(op->getOperand(0), d))
        return d;
  }
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
    auto iterators = linalgOp.getIteratorTypesArray();
    for (OpOperand *in : linalgOp.getDpsInputOperands()) {
      auto type = dyn_cast<RankedTensorType>(in->get().getType());
      if (!type)
        continue;
      AffineMap map = linalgOp.getMatchingIndexingMap(in);
      for (auto [d, expr] : llvm::enumerate(map.getResults())) {
        auto loop = dyn_cast<AffineDimExpr>(expr);
        if (loop &&
            iterators[loop.getPosition()] == utils::IteratorType::reduction &&
            seqDim(in->get(), d))
          return d;
      }
    }
  }
  return std::nullopt;
}

/// Nothing but the attention cores reduces over the sequence.
LogicalResult Derivation::checkNoMixing() {
  WalkResult walk = fn.walk([&](Operation *op) {
    if (coreOps.contains(op) ||
        !isa<FnSoftmaxOp, FnMatmulOp, FnCumsumOp, FnMeanOp, FnSumOp, FnAmaxOp,
             FnAminOp, linalg::LinalgOp>(op))
      return WalkResult::advance();
    std::optional<int64_t> dim = reducesSeq(op);
    if (!dim)
      return WalkResult::advance();
    op->emitError("nnx-derive-kv-cache: this op mixes positions (it reduces "
                  "dim ")
        << *dim
        << ", the sequence, outside an attention core, as a norm over the "
           "sequence does): a cached decode cannot compute it";
    return WalkResult::interrupt();
  });
  return failure(walk.wasInterrupted());
}

/// Every `arange` of a run-time length counts the sequence's positions.
LogicalResult Derivation::checkPositions() {
  WalkResult walk = fn.walk([&](FnArangeOp arange) {
    if (matchPattern(arange.getN(), m_Constant()))
      return WalkResult::advance();
    if (isSeqSize(arange.getN())) {
      aranges.push_back(arange);
      return WalkResult::advance();
    }
    arange.emitError("nnx-derive-kv-cache: cannot shift these positions by "
                     "the cache length: the arange's length is not the "
                     "sequence length T");
    return WalkResult::interrupt();
  });
  if (walk.wasInterrupted())
    return failure();
  // A table (not data) sliced to T outside the masks holds positions that
  // only an arange would shift (llama2.c's `freqs_cos[:T]`).
  DenseSet<Operation *> inMasks;
  SmallVector<Value> work;
  for (Core &core : cores)
    for (OpOperand *mask : core.masks)
      work.push_back(mask->get());
  // (A size is not a mask's data: the ops before a dim are not in it.)
  while (!work.empty())
    if (Operation *def = work.pop_back_val().getDefiningOp();
        def && inMasks.insert(def).second && !isa<tensor::DimOp>(def))
      llvm::append_range(work, def->getOperands());
  walk = fn.walk([&](tensor::ExtractSliceOp slice) {
    if (inMasks.contains(slice) || touchesData(slice.getSource()))
      return WalkResult::advance();
    return failed(checkTable(slice)) ? WalkResult::interrupt()
                                     : WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

/// A slice of a table (not data) outside the masks whose sizes depend on T
/// must be `table[:T]` along one dim, each position's row read by that
/// position alone (llama2.c's `freqs_cos[:T]`, reshaped and multiplied with
/// the queries): decode reads `table[position:position + Tn]`. Recorded in
/// `tables`; refused otherwise.
LogicalResult Derivation::checkTable(tensor::ExtractSliceOp slice) {
  std::optional<unsigned> seqDim;
  bool shiftable = true;
  for (auto [d, size] : llvm::enumerate(slice.getMixedSizes())) {
    auto v = dyn_cast<Value>(size);
    if (!v || !dependsOnSeq(v))
      continue;
    shiftable &= !seqDim && isSeqSize(v) &&
                 isConstantIntValue(slice.getMixedOffsets()[d], 0) &&
                 isConstantIntValue(slice.getMixedStrides()[d], 1);
    seqDim = d;
  }
  if (!seqDim)
    return success();
  // Row by row into the data: through reshapes and elementwise ops of
  // tables, until an elementwise op meets data.
  Operation *at = nullptr;
  SmallVector<Value> work{slice.getResult()};
  while (shiftable && !work.empty()) {
    for (Operation *user : work.pop_back_val().getUsers()) {
      bool elementwise = isa<FnBinaryOpInterface, FnWhereOp>(user) ||
                         user->hasTrait<OpTrait::Elementwise>();
      if (isa<tensor::DimOp>(user) ||
          (elementwise && touchesData(user->getResult(0))))
        continue;
      if (elementwise || isa<FnReshapeOp>(user)) {
        work.push_back(user->getResult(0));
        continue;
      }
      at = user;
      shiftable = false;
      break;
    }
  }
  if (shiftable) {
    tables.push_back({slice, *seqDim});
    return success();
  }
  InFlightDiagnostic diag =
      slice.emitError("nnx-derive-kv-cache: cannot shift these positions by "
                      "the cache length: a table sliced to the sequence "
                      "length T shifts only as `table[:T]` along one dim "
                      "whose rows reach the data one per position (through "
                      "reshapes and elementwise ops)");
  if (at)
    diag.attachNote(at->getLoc()) << "its rows are read here";
  return diag;
}

LogicalResult Derivation::analyze() {
  Block &body = fn.getBody().front();
  auto idsType = body.getNumArguments()
                     ? dyn_cast<RankedTensorType>(body.getArgument(0).getType())
                     : RankedTensorType();
  if (!idsType || idsType.getRank() != 2 ||
      !isa<IntegerType>(idsType.getElementType()) || !idsType.isDynamicDim(1))
    return fn.emitError("nnx-derive-kv-cache: the forward's first input is "
                        "not token ids (`tensor<B x ? x i64>`)");
  ids = body.getArgument(0);
  SmallVector<FnSoftmaxOp> softmaxes;
  fn.walk([&](FnSoftmaxOp s) { softmaxes.push_back(s); });
  for (FnSoftmaxOp softmax : softmaxes) {
    std::optional<Core> core;
    if (failed(findCore(softmax, core)))
      return failure();
    if (!core)
      continue;
    if (failed(proveCausal(*core)))
      return failure();
    if (failed(findCached(*core, true)) || failed(findCached(*core, false)))
      return failure();
    for (Operation *op :
         {core->softmax.getOperation(), core->scores.getOperation(),
          core->mix.getOperation()})
      coreOps.insert(op);
    cores.push_back(std::move(*core));
  }
  // The index checks reduce over the ids (the first bad position); they
  // only report errors.
  // (Read probes' results come after them.)
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  auto reads = fn->getAttrOfType<ArrayAttr>(kReadProbesAttrName);
  if (auto checks = fn->getAttrOfType<ArrayAttr>("nnx.index_checks"))
    for (Value v : ret.getOperands()
                       .drop_back(reads ? reads.size() : 0)
                       .take_back(2 * checks.size()))
      if (Operation *def = v.getDefiningOp())
        coreOps.insert(def);
  if (cores.empty())
    return fn.emitError("nnx-derive-kv-cache: the forward has no attention "
                        "core (`softmax(q @ k^T ...) @ v`): nothing to cache");
  return failure(failed(checkNoMixing()) || failed(checkPositions()));
}

/// `v` (computed from constants and the sequence length) computed again for
/// the sequence length `length`: its ops that depend on T are cloned with T
/// replaced by `length`.
Value Derivation::cloneAtLength(Value v, Value length, OpBuilder &b) {
  SetVector<Operation *> slice;
  SmallVector<Value> work{v};
  while (!work.empty()) {
    Value x = work.pop_back_val();
    Operation *def = x.getDefiningOp();
    if (!def || !dependsOnSeq(x) || slice.contains(def))
      continue;
    slice.insert(def);
    if (!isa<tensor::DimOp>(def))
      llvm::append_range(work, def->getOperands());
  }
  IRMapping map;
  SmallVector<Operation *> ordered(slice.begin(), slice.end());
  llvm::sort(ordered,
             [](Operation *a, Operation *c) { return a->isBeforeInBlock(c); });
  for (Operation *op : ordered) {
    if (isa<tensor::DimOp>(op))
      map.map(op->getResult(0), length);
    else
      b.clone(*op, map);
  }
  return map.lookupOrDefault(v);
}

/// Writes `v` (`B x H x Tn x D`) into `cache` at the position; returns all
/// the cached rows (`B x H x (position + Tn) x D`) and sets `updated`.
Value Derivation::cacheUpdate(Value v, Value cache, OpBuilder &b,
                              Value &updated) {
  Location loc = v.getLoc();
  auto type = cast<RankedTensorType>(v.getType());
  auto idx = [&](int64_t i) -> OpFoldResult { return b.getIndexAttr(i); };
  Value batch = tensor::DimOp::create(b, loc, v, 0);
  OpFoldResult heads = idx(type.getDimSize(1)), dim = idx(type.getDimSize(3));
  SmallVector<OpFoldResult> ones(4, idx(1));
  updated = tensor::InsertSliceOp::create(b, loc, v, cache,
                                          {idx(0), idx(0), position, idx(0)},
                                          {batch, heads, newLength, dim}, ones);
  return tensor::ExtractSliceOp::create(b, loc, type, updated,
                                        {idx(0), idx(0), idx(0), idx(0)},
                                        {batch, heads, allLength, dim}, ones);
}

/// The caches: arguments after the inputs with the position before them
/// (decode), or zero-filled tensors (prefill); sets the position and the
/// lengths, and guards the cache's bound.
FailureOr<SmallVector<Value>> Derivation::makeCaches(bool decode,
                                                     OpBuilder &b) {
  Block &body = fn.getBody().front();
  Location loc = fn.getLoc();
  unsigned at = 0;
  while (at < fn.getNumArguments() && !isParameter(body.getArgument(at)))
    ++at;
  auto cacheType = [&](Value v) {
    auto t = cast<RankedTensorType>(v.getType());
    return RankedTensorType::get(
        {t.getDimSize(0), t.getDimSize(1), maxLength, t.getDimSize(3)},
        t.getElementType());
  };
  SmallVector<Value> caches;
  if (decode) {
    auto i64 = RankedTensorType::get({}, b.getI64Type());
    if (failed(fn.insertArgument(at, i64, {}, loc)))
      return failure();
    Value scalar =
        tensor::ExtractOp::create(b, loc, body.getArgument(at++), ValueRange{});
    position = arith::IndexCastOp::create(b, loc, b.getIndexType(), scalar);
    for (Core &core : cores)
      for (OpOperand *use : core.uses) {
        if (failed(fn.insertArgument(at, cacheType(use->get()), {}, loc)))
          return failure();
        caches.push_back(body.getArgument(at++));
      }
  } else {
    position = arith::ConstantIndexOp::create(b, loc, 0);
    Value batch = tensor::DimOp::create(b, loc, ids, 0);
    for (Core &core : cores)
      for (OpOperand *use : core.uses) {
        RankedTensorType t = cacheType(use->get());
        Value empty = tensor::EmptyOp::create(
            b, loc, t, t.isDynamicDim(0) ? ValueRange{batch} : ValueRange{});
        Value zero = arith::ConstantOp::create(
            b, loc, b.getZeroAttr(t.getElementType()));
        caches.push_back(
            linalg::FillOp::create(b, loc, zero, empty).getResult(0));
      }
  }
  newLength = tensor::DimOp::create(b, loc, ids, 1);
  allLength = arith::AddIOp::create(b, loc, position, newLength);
  Value limit = arith::ConstantIndexOp::create(b, loc, maxLength);
  FnGuardOp::create(b, loc, arith::CmpIPredicate::sle, allLength, limit,
                    "nnx-derive-kv-cache: the cache holds " +
                        std::to_string(maxLength) +
                        " positions; this call needs {0}");
  return caches;
}

/// The mask `mask` holds: computed for all positions, its rows of the new
/// ones kept.
void Derivation::rewriteMask(OpOperand *mask, OpBuilder &b) {
  auto idx = [&](int64_t i) -> OpFoldResult { return b.getIndexAttr(i); };
  Location loc = mask->getOwner()->getLoc();
  b.setInsertionPoint(mask->getOwner());
  Value full = cloneAtLength(mask->get(), allLength, b);
  auto type = cast<RankedTensorType>(mask->get().getType());
  int64_t rank = type.getRank();
  SmallVector<OpFoldResult> offsets(rank, idx(0)), sizes, strides(rank, idx(1));
  for (int64_t d = 0; d < rank; ++d)
    sizes.push_back(
        type.isDynamicDim(d)
            ? OpFoldResult(tensor::DimOp::create(b, loc, full, d).getResult())
            : idx(type.getDimSize(d)));
  // A bias over the keys has one row for every query.
  if (type.isDynamicDim(rank - 2)) {
    offsets[rank - 2] = position;
    sizes[rank - 2] = newLength;
  }
  mask->set(tensor::ExtractSliceOp::create(b, loc, type, full, offsets, sizes,
                                           strides));
}

/// The results: the outputs, the updated caches, then the index checks and
/// the read probes.
void Derivation::setResults(ArrayRef<Value> updated, OpBuilder &b) {
  Block &body = fn.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  auto checks = fn->getAttrOfType<ArrayAttr>("nnx.index_checks");
  auto reads = fn->getAttrOfType<ArrayAttr>(kReadProbesAttrName);
  unsigned outputs = ret.getNumOperands() - (checks ? 2 * checks.size() : 0) -
                     (reads ? reads.size() : 0);
  SmallVector<Value> results(ret.getOperands().take_front(outputs));
  llvm::append_range(results, updated);
  llvm::append_range(results, ret.getOperands().drop_front(outputs));
  b.setInsertionPoint(ret);
  func::ReturnOp::create(b, ret.getLoc(), results);
  ret.erase();
  fn.setType(FunctionType::get(fn.getContext(), body.getArgumentTypes(),
                               ValueRange(results).getTypes()));
}

LogicalResult Derivation::rewrite(bool decode) {
  OpBuilder b(fn.getContext());
  b.setInsertionPointToStart(&fn.getBody().front());
  FailureOr<SmallVector<Value>> caches = makeCaches(decode, b);
  if (failed(caches))
    return failure();
  // The masks first: their clones count all positions (ALiBi's arange).
  for (Core &core : cores)
    for (OpOperand *mask : core.masks)
      rewriteMask(mask, b);
  // Positions: arange(position + T)[position:].
  for (FnArangeOp arange : aranges) {
    b.setInsertionPoint(arange);
    auto all =
        FnArangeOp::create(b, arange.getLoc(), arange.getType(), allLength);
    Value shifted = tensor::ExtractSliceOp::create(
        b, arange.getLoc(), arange.getType(), all, {position}, {newLength},
        {b.getIndexAttr(1)});
    arange.replaceAllUsesWith(shifted);
  }
  // Tables: table[position:position + T].
  for (auto [slice, d] : tables) {
    SmallVector<OpFoldResult> offsets = slice.getMixedOffsets();
    offsets[d] = position;
    b.setInsertionPoint(slice);
    slice.replaceAllUsesWith(tensor::ExtractSliceOp::create(
                                 b, slice.getLoc(), slice.getType(),
                                 slice.getSource(), offsets,
                                 slice.getMixedSizes(), slice.getMixedStrides())
                                 .getResult());
    slice.erase();
  }
  SmallVector<Value> updated;
  for (auto [i, core] : llvm::enumerate(cores)) {
    for (auto [j, use] : llvm::enumerate(core.uses)) {
      Value v = use->get();
      b.setInsertionPointAfterValue(v);
      Value cacheUpdated;
      Value all = cacheUpdate(v, (*caches)[2 * i + j], b, cacheUpdated);
      // The path reads all rows, its sizes too (`repeat_kv`'s reshapes).
      use->set(all);
      auto onPath = [&](Operation *u) {
        return llvm::is_contained(core.paths[j], u);
      };
      for (Operation *user : llvm::to_vector(v.getUsers()))
        if (isa<tensor::DimOp>(user) && !user->use_empty() &&
            llvm::all_of(user->getUsers(), onPath))
          user->setOperand(0, all);
      updated.push_back(cacheUpdated);
    }
  }
  setResults(updated, b);
  return success();
}

struct NNXDeriveKVCachePass
    : public mlir::nnx::impl::NNXDeriveKVCachePassBase<NNXDeriveKVCachePass> {
  using NNXDeriveKVCachePassBase::NNXDeriveKVCachePassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto forward = module.lookupSymbol<func::FuncOp>("forward");
    if (!forward || forward.isExternal()) {
      module.emitError("nnx-derive-kv-cache: the module holds no "
                       "func.func @forward with a body (run nnx-build-forward "
                       "first)");
      return signalPassFailure();
    }
    if (maxLength <= 0) {
      module.emitError("nnx-derive-kv-cache: max-length must be positive, "
                       "got ")
          << static_cast<int64_t>(maxLength);
      return signalPassFailure();
    }
    for (StringRef name : {"prefill", "decode"})
      if (Operation *clash = module.lookupSymbol(name)) {
        clash->emitError("nnx-derive-kv-cache: the module holds @")
            << name << " already";
        return signalPassFailure();
      }
    // Both functions are derived (and proved) on clones; nothing changes
    // when a proof fails.
    SmallVector<func::FuncOp> made;
    for (bool decode : {false, true}) {
      func::FuncOp fn = forward.clone();
      fn.setSymName(decode ? "decode" : "prefill");
      Derivation derivation(fn, static_cast<int64_t>(maxLength));
      if (failed(derivation.analyze()) || failed(derivation.rewrite(decode))) {
        fn.erase();
        for (func::FuncOp f : made)
          f.erase();
        return signalPassFailure();
      }
      made.push_back(fn);
    }
    OpBuilder b(forward);
    b.setInsertionPointAfter(forward);
    for (func::FuncOp fn : made)
      b.insert(fn);
  }
};

} // namespace
