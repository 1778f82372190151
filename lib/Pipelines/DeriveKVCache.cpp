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

#include "CausalMask.h"

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
#include "mlir/Interfaces/SideEffectInterfaces.h"
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
  /// Whether the cached keys / values enter as `B x T x kv_heads x D`
  /// (llama2.c), the cache holding them transposed.
  std::array<bool, 2> transposed{};
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
  bool isIdsLength(Value size);
  Value rootSize(Value size, unsigned depth = 0);
  bool sameSize(Value a, Value b);
  bool isSeqDim(Value v, int64_t d);
  bool isParameter(Value v);
  /// Whether `v` is computed from the ids' values (not only their sizes)
  /// or any other non-parameter input.
  bool touchesData(Value v);
  /// Whether `v` depends on the sequence length.
  bool dependsOnSeq(Value v);
  bool keepsPositions(Operation *op);
  LogicalResult findCore(FnSoftmaxOp softmax, std::optional<Core> &core);
  LogicalResult findCached(Core &core, bool keys);
  LogicalResult checkNoMixing();
  LogicalResult checkPositions();
  LogicalResult checkTable(tensor::ExtractSliceOp slice);
  std::optional<int64_t> reducesSeq(Operation *op);
  Value cloneAtLength(Value v, Value length, OpBuilder &b);
  Value cacheUpdate(Value v, Value cache, bool transposed, OpBuilder &b,
                    Value &updated);
  FailureOr<SmallVector<Value>> makeCaches(bool decode, OpBuilder &b);
  void rewriteMask(OpOperand *mask, OpBuilder &b);
  void seqSizes(Operation *op, bool lastOnly,
                SmallVectorImpl<OpOperand *> &sizes);
  void guardAllPositions(ArrayRef<FnGuardOp> guards, OpBuilder &b);
  void setResults(ArrayRef<Value> updated, OpBuilder &b);

  func::FuncOp fn;
  int64_t maxLength;
  DimResolver resolver;
  Value ids;
  std::vector<Core> cores;
  SmallVector<FnArangeOp> aranges;
  /// Tables sliced to T (`table[:T]`) and the dim sliced.
  SmallVector<std::pair<tensor::ExtractSliceOp, unsigned>> tables;
  /// Tables sliced to T and indexed by positions (`table[:T][positions]`).
  SmallVector<tensor::ExtractSliceOp> indexedTables;
  DenseSet<Operation *> coreOps;
  DenseMap<Value, bool> dataMemo, seqMemo;
  /// Rewrite state: the cache position, the new tokens and all tokens.
  Value position, newLength, allLength;
};

bool Derivation::isParameter(Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  return arg && fn.getArgAttr(arg.getArgNumber(), "nnx.parameter");
}

/// Whether `size` is the ids' dim 1, T.
bool Derivation::isIdsLength(Value size) {
  auto dim = size.getDefiningOp<tensor::DimOp>();
  return dim && dim.getSource() == ids && dim.getConstantIndex() == 1;
}

/// The size `size` derives from: resolved (DimResolver), then through what
/// no reification describes: an arange's length, a `tensor.reshape` to
/// `from_elements` sizes, an elementwise op's operands (a dynamic dim does
/// not broadcast, so they agree; one that derives from T is preferred).
Value Derivation::rootSize(Value size, unsigned depth) {
  auto dim = size.getDefiningOp<tensor::DimOp>();
  std::optional<int64_t> index = dim ? dim.getConstantIndex() : std::nullopt;
  if (!index || depth > 64 || isIdsLength(size))
    return size;
  Value resolved = resolver.resolve(dim.getSource(), *index);
  if (resolved != size)
    return rootSize(resolved, depth + 1);
  Operation *def = dim.getSource().getDefiningOp();
  if (auto arange = dyn_cast_or_null<FnArangeOp>(def))
    return rootSize(arange.getN(), depth + 1);
  if (auto reshape = dyn_cast_or_null<tensor::ReshapeOp>(def))
    if (auto shape = reshape.getShape().getDefiningOp<tensor::FromElementsOp>())
      return rootSize(shape.getElements()[*index], depth + 1);
  if (!def || !(isa<FnBinaryOpInterface, FnWhereOp>(def) ||
                def->hasTrait<OpTrait::Elementwise>()))
    return size;
  int64_t rank = cast<RankedTensorType>(dim.getSource().getType()).getRank();
  Value first;
  for (Value operand : def->getOperands()) {
    auto type = dyn_cast<RankedTensorType>(operand.getType());
    int64_t od = type ? *index - (rank - type.getRank()) : -1;
    if (od < 0 || !type.isDynamicDim(od))
      continue;
    Value root = rootSize(resolver.resolve(operand, od), depth + 1);
    if (isIdsLength(root))
      return root;
    if (!first)
      first = root;
  }
  return first ? first : size;
}

/// Whether two sizes are the same: one root, equal constants, or the same
/// dim of one tensor.
bool Derivation::sameSize(Value a, Value b) {
  a = rootSize(a);
  b = rootSize(b);
  if (a == b)
    return true;
  std::optional<int64_t> ca = getConstantIntValue(a);
  std::optional<int64_t> cb = getConstantIntValue(b);
  if (ca || cb)
    return ca == cb;
  auto da = a.getDefiningOp<tensor::DimOp>();
  auto db = b.getDefiningOp<tensor::DimOp>();
  return da && db && da.getSource() == db.getSource() &&
         da.getConstantIndex() &&
         da.getConstantIndex() == db.getConstantIndex();
}

bool Derivation::isSeqSize(Value size) { return isIdsLength(rootSize(size)); }

/// Whether dim `d` of `v` is the ids' dim 1 (rootSize).
bool Derivation::isSeqDim(Value v, int64_t d) {
  return v == ids ? d == 1 : isSeqSize(resolver.resolve(v, d));
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

/// A reshape of scores that regroups only their leading dims (GPT-NeoX's
/// `baddbmm` scores, `(B * H) x T x T`, viewed as `B x H x T x T`): the
/// last two dims are the sequence's, before and after.
bool Derivation::keepsPositions(Operation *op) {
  auto reshape = dyn_cast<FnReshapeOp>(op);
  if (!reshape)
    return false;
  auto lastTwo = [&](Value v) {
    auto type = cast<RankedTensorType>(v.getType());
    int64_t rank = type.getRank();
    return rank >= 3 && type.isDynamicDim(rank - 1) &&
           type.isDynamicDim(rank - 2) && isSeqDim(v, rank - 1) &&
           isSeqDim(v, rank - 2);
  };
  return lastTwo(reshape.getInput()) && lastTwo(reshape.getResult());
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
    if (!elementwise && !keepsPositions(def))
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
      if (&operand != next && isa<RankedTensorType>(operand.get().getType()) &&
          dependsOnSeq(operand.get()))
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

/// The keys (or values) of a core back through the keys' transpose and
/// `repeat_kv` (reshape, expand, reshape), as `B x kv_heads x T x D`.
LogicalResult Derivation::findCached(Core &core, bool keys) {
  OpOperand *use =
      keys ? &core.scores.getRhsMutable() : &core.mix.getRhsMutable();
  SmallVector<Operation *, 4> &path = core.paths[keys ? 0 : 1];
  path.push_back(use->getOwner());
  if (auto permute = use->get().getDefiningOp<FnPermuteOp>(); keys && permute) {
    // The keys' transpose: the last two dims swapped.
    ArrayRef<int64_t> p = permute.getPermutation();
    int64_t n = p.size();
    bool transpose = n >= 2 && p[n - 2] == n - 1 && p[n - 1] == n - 2;
    for (int64_t d = 0; d + 2 < n; ++d)
      transpose &= p[d] == d;
    if (transpose) {
      use = &permute.getInputMutable();
      path.push_back(permute);
    }
  }
  // `B x H x T x D` with the heads merged into the batch (GPT-NeoX).
  if (auto merged = use->get().getDefiningOp<FnReshapeOp>()) {
    auto in = cast<RankedTensorType>(merged.getInput().getType());
    auto out = cast<RankedTensorType>(merged.getType());
    if (in.getRank() == 4 && out.getRank() == 3 && in.isDynamicDim(2) &&
        out.isDynamicDim(1) && !in.isDynamicDim(3) &&
        in.getDimSize(3) == out.getDimSize(2) && isSeqDim(merged, 1)) {
      use = &merged.getInputMutable();
      path.push_back(merged);
    }
  }
  // `repeat_kv`: reshape, expand, reshape.
  auto repeatKV = [&](OpOperand *&at) {
    auto out = at->get().getDefiningOp<FnReshapeOp>();
    auto expand = out ? out.getInput().getDefiningOp<FnExpandOp>() : nullptr;
    auto in = expand ? expand.getInput().getDefiningOp<FnReshapeOp>() : nullptr;
    if (!in)
      return false;
    at = &in.getInputMutable();
    path.append({out, expand, in});
    return true;
  };
  bool &transposed = core.transposed[keys ? 0 : 1];
  if (!repeatKV(use)) {
    // llama2.c repeats the kv heads of `B x T x kv_heads x D` and then
    // transposes to `B x heads x T x D`: the cache holds the kv heads,
    // transposed.
    auto toHeads = use->get().getDefiningOp<FnPermuteOp>();
    OpOperand *inner = toHeads ? &toHeads.getInputMutable() : nullptr;
    size_t before = path.size();
    if (toHeads && toHeads.getPermutation() == ArrayRef<int64_t>{0, 2, 1, 3} &&
        repeatKV(inner) &&
        llvm::all_of(ArrayRef(path).drop_front(before), [&](Operation *op) {
          return isSeqDim(op->getResult(0), 1);
        })) {
      path.insert(path.begin() + before, toHeads);
      use = inner;
      transposed = true;
    } else {
      path.resize(before);
    }
  }
  core.uses[keys ? 0 : 1] = use;
  Value v = use->get();
  auto type = cast<RankedTensorType>(v.getType());
  int64_t seq = transposed ? 1 : 2;
  if (type.getRank() == 4 && type.isDynamicDim(seq) && isSeqDim(v, seq))
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
/// the queries): decode reads `table[position:position + Tn]`, recorded in
/// `tables`. Or every read of it is an `index_select` along that dim by
/// indices computed from positions, not data (HF's `cos_cached[:T]
/// [position_ids]`): decode reads `table[:position + Tn]`, recorded in
/// `indexedTables`. Refused otherwise.
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
  // Indexed by positions (`cos_cached[:T][position_ids]`, HF's rotary
  // tables): each row is read by its position, wherever it is; decode
  // reads `table[:position + Tn]`.
  auto byPosition = [&](Operation *user) {
    auto select = dyn_cast<FnIndexSelectOp>(user);
    return select && select.getInput() == slice.getResult() &&
           static_cast<int64_t>(select.getDim()) ==
               static_cast<int64_t>(*seqDim) &&
           !touchesData(select.getIndex());
  };
  if (shiftable && llvm::all_of(slice->getUsers(), [&](Operation *user) {
        return isa<tensor::DimOp>(user) || byPosition(user);
      })) {
    indexedTables.push_back(slice);
    return success();
  }
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
    SmallVector<Operation *> chain(llvm::reverse(core->chain));
    auto isSizeOf = [&](Value size, Value v, int64_t d) {
      return sameSize(size, resolver.resolve(v, d));
    };
    if (failed(proveCausal(fn, core->scores, chain, core->softmax,
                           !core->masks.empty(), maxLength, isSizeOf)))
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

/// `v` with dims 1 and 2 swapped (`B x T x H x D` <-> `B x H x T x D`).
static Value swapHeadsAndPositions(Value v, OpBuilder &b) {
  auto type = cast<RankedTensorType>(v.getType());
  ArrayRef<int64_t> shape = type.getShape();
  auto swapped = RankedTensorType::get({shape[0], shape[2], shape[1], shape[3]},
                                       type.getElementType());
  return FnPermuteOp::create(b, v.getLoc(), swapped, v,
                             ArrayRef<int64_t>{0, 2, 1, 3});
}

/// Writes `v` (`B x H x Tn x D`, or `B x Tn x H x D` when `transposed`)
/// into `cache` (`B x H x L x D`) at the position; returns all the cached
/// rows (`B x H x (position + Tn) x D`, or transposed as `v`) and sets
/// `updated`.
Value Derivation::cacheUpdate(Value v, Value cache, bool transposed,
                              OpBuilder &b, Value &updated) {
  Location loc = v.getLoc();
  if (transposed)
    v = swapHeadsAndPositions(v, b);
  auto type = cast<RankedTensorType>(v.getType());
  auto idx = [&](int64_t i) -> OpFoldResult { return b.getIndexAttr(i); };
  Value batch = tensor::DimOp::create(b, loc, v, 0);
  OpFoldResult heads = idx(type.getDimSize(1)), dim = idx(type.getDimSize(3));
  SmallVector<OpFoldResult> ones(4, idx(1));
  updated = tensor::InsertSliceOp::create(b, loc, v, cache,
                                          {idx(0), idx(0), position, idx(0)},
                                          {batch, heads, newLength, dim}, ones);
  Value all = tensor::ExtractSliceOp::create(
      b, loc, type, updated, {idx(0), idx(0), idx(0), idx(0)},
      {batch, heads, allLength, dim}, ones);
  return transposed ? swapHeadsAndPositions(all, b) : all;
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
  auto cacheType = [&](const Core &core, unsigned j) {
    auto t = cast<RankedTensorType>(core.uses[j]->get().getType());
    int64_t heads = t.getDimSize(core.transposed[j] ? 2 : 1);
    return RankedTensorType::get(
        {t.getDimSize(0), heads, maxLength, t.getDimSize(3)},
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
      for (unsigned j : {0u, 1u}) {
        if (failed(fn.insertArgument(at, cacheType(core, j), {}, loc)))
          return failure();
        caches.push_back(body.getArgument(at++));
      }
  } else {
    position = arith::ConstantIndexOp::create(b, loc, 0);
    Value batch = tensor::DimOp::create(b, loc, ids, 0);
    for (Core &core : cores)
      for (unsigned j : {0u, 1u}) {
        RankedTensorType t = cacheType(core, j);
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

/// The shape entries of `op` (a reshape or expand) at the dims where the
/// forward has T, appended to `sizes`: all positions in decode. `lastOnly`:
/// only the last dim's (the keys' of scores; the queries' stay Tn).
void Derivation::seqSizes(Operation *op, bool lastOnly,
                          SmallVectorImpl<OpOperand *> &sizes) {
  ArrayRef<int64_t> shape;
  MutableArrayRef<OpOperand> operands;
  if (auto reshape = dyn_cast<FnReshapeOp>(op)) {
    shape = reshape.getStaticShape();
    operands = reshape.getShapeMutable();
  } else if (auto expand = dyn_cast<FnExpandOp>(op)) {
    shape = expand.getStaticShape();
    operands = expand.getShapeMutable();
  } else {
    return;
  }
  int64_t rank = shape.size();
  unsigned next = 0;
  for (int64_t d = 0; d < rank; ++d) {
    if (!ShapedType::isDynamic(shape[d]))
      continue;
    OpOperand &size = operands[next++];
    if ((!lastOnly || d == rank - 1) && isSeqDim(op->getResult(0), d))
      sizes.push_back(&size);
  }
}

/// The guards of Python's decisions on the sequence length (`if T > n:`)
/// hold for the whole sequence a decode stands for: they read all
/// positions.
void Derivation::guardAllPositions(ArrayRef<FnGuardOp> guards, OpBuilder &b) {
  for (FnGuardOp guard : guards) {
    if (llvm::none_of(guard->getOperands(),
                      [&](Value v) { return dependsOnSeq(v); }))
      continue;
    b.setInsertionPoint(guard);
    IRMapping map;
    for (Value operand : guard->getOperands())
      map.map(operand, cloneAtLength(operand, allLength, b));
    b.clone(*guard, map);
    guard.erase();
  }
}

LogicalResult Derivation::rewrite(bool decode) {
  OpBuilder b(fn.getContext());
  b.setInsertionPointToStart(&fn.getBody().front());
  SmallVector<FnGuardOp> guards(fn.getOps<FnGuardOp>());
  // The caches' paths and the scores read all rows (`repeat_kv`'s
  // reshapes, a view of the scores): their sizes along the sequence,
  // found before anything changes.
  SmallVector<OpOperand *> allRows;
  for (Core &core : cores) {
    for (auto &path : core.paths)
      for (Operation *op : path)
        seqSizes(op, /*lastOnly=*/false, allRows);
    for (Operation *op : core.chain)
      seqSizes(op, /*lastOnly=*/true, allRows);
  }
  FailureOr<SmallVector<Value>> caches = makeCaches(decode, b);
  if (failed(caches))
    return failure();
  if (decode)
    guardAllPositions(guards, b);
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
  for (OpOperand *size : allRows)
    size->set(allLength);
  // Tables indexed by positions: table[:position + T].
  for (tensor::ExtractSliceOp slice : indexedTables) {
    b.setInsertionPoint(slice);
    slice.replaceAllUsesWith(cloneAtLength(slice.getResult(), allLength, b));
    slice.erase();
  }
  SmallVector<Value> updated;
  for (auto [i, core] : llvm::enumerate(cores)) {
    for (auto [j, use] : llvm::enumerate(core.uses)) {
      Value v = use->get();
      b.setInsertionPointAfterValue(v);
      Value cacheUpdated;
      Value all = cacheUpdate(v, (*caches)[2 * i + j], core.transposed[j], b,
                              cacheUpdated);
      use->set(all);
      updated.push_back(cacheUpdated);
    }
  }
  setResults(updated, b);
  // What the rewrite replaced (the masks at T, their slices at sizes that
  // no longer hold) goes.
  Block &body = fn.getBody().front();
  for (Operation &op :
       llvm::make_early_inc_range(llvm::reverse(body.getOperations())))
    if (isOpTriviallyDead(&op))
      op.erase();
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
