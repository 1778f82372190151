//===- TensorParallel.cpp - one rank's part of a tensor-parallel model ----===//
//
// Megatron-style tensor parallelism as a structure-level edit: rank R keeps
// block R of every attention module's heads and of every MLP's units, the
// way nnx-prune keeps a subset (the same dim provenance and consumer
// proofs), and the Linears that read a split input sum their products over
// the ranks (`nnx.partial_sum`, lowered to `shard.all_reduce`). Every check
// of every split runs before the first edit.
//
//===----------------------------------------------------------------------===//
#include "AttentionCore.h"
#include "UnitEdit.h"

#include "nnx/Dialect/NNX/IR/ModuleTree.h"
#include "nnx/Dialect/NNX/IR/TensorUtils.h"
#include "nnx/Dialect/NNX/Transforms/Passes.h"
#include "nnx/Dialect/NNX/Transforms/Surgery.h"

#include <numeric>

namespace mlir::nnx {
#define GEN_PASS_DEF_NNXSHARDTENSORPARALLELPASS
#include "nnx/Dialect/NNX/Transforms/Passes.h.inc"
} // namespace mlir::nnx

using namespace mlir;
using namespace mlir::nnx;
using namespace mlir::nnx::surgery;

static constexpr llvm::StringLiteral kPass = "nnx-shard-tensor-parallel";
using ResizeMap = std::map<Axis, AxisResize>;
using DimSource = SmallVector<SmallVector<int64_t>>;

//===----------------------------------------------------------------------===//
// Tensors
//===----------------------------------------------------------------------===//

/// Indices `[rank * n / ranks, (rank + 1) * n / ranks)`.
static SmallVector<int64_t> rankBlock(int64_t n, int64_t ranks, int64_t rank) {
  SmallVector<int64_t> out(n / ranks);
  std::iota(out.begin(), out.end(), rank * (n / ranks));
  return out;
}

/// Checks that `op`'s tensor `name` can be sliced: a file's tensor always
/// can, an inline one must be readable.
static LogicalResult checkSliceable(Operation *op, StringRef name,
                                    ElementsAttr attr) {
  if (!attr || isa<ExternalTensorAttr>(attr) || succeeded(readTensor(attr)))
    return success();
  return refuse(op, kPass, "split layer")
         << "has tensor '" << name
         << "' whose data is unavailable (an unloaded dense_resource or a "
            "non-float type)";
}

/// Keeps, along dim `dim` of `op`'s tensor `name`, the indices `kept`.
static void keepAlong(Operation *op, StringRef name, unsigned dim,
                      ArrayRef<int64_t> kept) {
  auto attr = op->getAttrOfType<ElementsAttr>(name);
  if (!attr)
    return;
  auto type = cast<ShapedType>(attr.getType());
  DimSource source;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    SmallVector<int64_t> all(type.getDimSize(d));
    std::iota(all.begin(), all.end(), 0);
    source.push_back(d == dim ? SmallVector<int64_t>(kept) : all);
  }
  replaceTensor(op, name, keepIndices(attr, source));
}

static void markPartialSum(Operation *linear, int64_t ranks) {
  MLIRContext *ctx = linear->getContext();
  linear->setAttr(
      "nnx.partial_sum",
      DictionaryAttr::get(
          ctx, {NamedAttribute(
                   StringAttr::get(ctx, "ranks"),
                   IntegerAttr::get(IntegerType::get(ctx, 64), ranks))}));
}

//===----------------------------------------------------------------------===//
// Probes
//===----------------------------------------------------------------------===//

/// Calls `fn(probe, value)` for each probe on `op` (its own `nnx.probes`,
/// and for a call those of the module it runs).
static void forEachProbe(Operation *op,
                         function_ref<void(ProbeAttr, Value)> fn) {
  auto visit = [&](Operation *carrier) {
    auto probes = carrier->getAttrOfType<ArrayAttr>("nnx.probes");
    if (!probes)
      return;
    for (auto p : probes.getAsRange<ProbeAttr>()) {
      bool in = p.getPoint() == ProbePoint::input;
      unsigned n = in ? op->getNumOperands() : op->getNumResults();
      if (p.getIndex() >= 0 && p.getIndex() < n)
        fn(p, in ? op->getOperand(p.getIndex()) : op->getResult(p.getIndex()));
    }
  };
  visit(op);
  if (auto call = dyn_cast<CallOp>(op))
    if (Operation *m = call.resolveCalleeModule().getOperation())
      visit(m);
}

/// Refuses probe `p` at `op`, which reads a value split across the ranks.
static LogicalResult refuseSplitProbe(Operation *op, ProbeAttr p,
                                      StringRef what) {
  return emitModuleError(op)
         << kPass << ": probe '" << p.getName().getValue() << "' reads " << what
         << ", which is split across the ranks; gathering it to rank 0 needs "
            "an all_gather, which the lowering does not provide (probe a "
            "value after the output or down projection instead)";
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

/// True if `m` has a Linear child and its forward, or the forward of a
/// Linear-free custom module it calls, has a softmax: an attention module.
static bool isAttentionModule(CustomModuleOp m) {
  if (!m.getForward() ||
      llvm::none_of(m->getRegion(0).front().getOperations(),
                    [](Operation &op) { return isa<LinearOp>(op); }))
    return false;
  bool found = false;
  m.getForward().walk([&](Operation *op) {
    if (isa<FnSoftmaxOp>(op))
      found = true;
    auto call = dyn_cast<CallOp>(op);
    auto callee = call ? dyn_cast_or_null<CustomModuleOp>(
                             call.resolveCalleeModule().getOperation())
                       : CustomModuleOp();
    if (!callee || !callee.getForward() || callee == m)
      return;
    bool linearFree = true;
    callee.walk([&](LinearOp) { linearFree = false; });
    if (linearFree)
      callee.getForward().walk([&](FnSoftmaxOp) { found = true; });
  });
  return found;
}

namespace {
/// One attention module's split, checked.
struct AttentionSplit {
  std::unique_ptr<AxisAnalysis> analysis;
  AttentionCore core;
  ResizeMap resize;
  SmallVector<Operation *> rowParallel;
};

/// One MLP pair's split, checked.
struct MLPSplit {
  Operation *target;
  ConsumerChain chain;
  int64_t units;
};
} // namespace

/// True if a static dim of `v` has a resized axis.
static bool isSplit(AxisAnalysis &a, Value v, const ResizeMap &resize) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type)
    return false;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (!type.isDynamicDim(d) && llvm::any_of(a.leaves(v, d), [&](Axis x) {
          return a.isResized(x, resize);
        }))
      return true;
  return false;
}

/// The Linears of `s` that read split heads (the output projection), after
/// refusing a Linear that would both read and write them.
static LogicalResult findRowParallel(AttentionSplit &s) {
  AxisAnalysis &a = *s.analysis;
  auto touched = [&](const AxisList &d) {
    return llvm::any_of(a.leaves(d),
                        [&](Axis x) { return a.isResized(x, s.resize); });
  };
  for (const TensorSite &t : a.getTensors()) {
    if (!isa<LinearOp>(t.op) || t.name != "weight" || t.dims.size() != 2 ||
        !touched(t.dims[1]))
      continue;
    if (touched(t.dims[0]))
      return refuse(t.op, kPass, "Linear")
             << "both reads and writes the heads of '"
             << getDisplayPath(s.core.module)
             << "' that a rank keeps: no single sum over the ranks "
                "recovers its output";
    s.rowParallel.push_back(t.op);
  }
  return success();
}

static LogicalResult checkAttentionProbes(AttentionSplit &s) {
  for (ForwardOp forward : s.analysis->getForwards()) {
    LogicalResult result = success();
    forward.walk([&](Operation *op) {
      forEachProbe(op, [&](ProbeAttr p, Value v) {
        if (succeeded(result) && isSplit(*s.analysis, v, s.resize))
          result = refuseSplitProbe(op, p, "a value with the heads dim");
      });
    });
    if (failed(result))
      return failure();
  }
  return success();
}

static FailureOr<AttentionSplit> planAttention(ModelOp model, CustomModuleOp m,
                                               int64_t ranks, int64_t rank) {
  AttentionSplit s;
  s.analysis = std::make_unique<AxisAnalysis>(kPass);
  AxisAnalysis &a = *s.analysis;
  FailureOr<AttentionCore> core =
      findAttentionCore(model, getModulePath(m), a, kPass);
  if (failed(core))
    return failure();
  s.core = *core;
  // As nnx-prune heads=: whole kv groups, or query heads under one kv head.
  Axis unit = a.find(core->kvHeads ? *core->kvHeads : *core->group);
  bool gqa = core->kvHeads && core->group;
  int64_t units = a.size(unit);
  if (units % ranks != 0)
    return refuse(m, kPass, "attention module")
           << "has " << units << (gqa ? " kv heads" : " heads") << ", which "
           << ranks << " ranks cannot split evenly (each rank keeps whole "
           << (gqa ? "kv groups" : "heads") << ")";
  s.resize[unit] = AxisResize::keep(rankBlock(units, ranks, rank));
  if (failed(a.checkEdit(s.resize, core->call, m)) ||
      failed(findRowParallel(s)) || failed(checkAttentionProbes(s)))
    return failure();
  for (const TensorSite &t : a.getTensors())
    if (!t.isState &&
        failed(checkSliceable(t.op, t.name,
                              t.op->getAttrOfType<ElementsAttr>(t.name))))
      return failure();
  return s;
}

static void applyAttention(AttentionSplit &s, int64_t ranks) {
  s.analysis->applyKeepEdit(s.resize, s.core.call,
                            [](const TensorSite &, ElementsAttr attr,
                               ArrayRef<SmallVector<int64_t>> source) {
                              return keepIndices(attr, source);
                            });
  for (Operation *op : s.rowParallel)
    markPartialSum(op, ranks);
}

//===----------------------------------------------------------------------===//
// MLPs
//===----------------------------------------------------------------------===//

/// The consumer chain of `target` if it is the first Linear of an MLP pair
/// (its units feed one Linear directly or through elementwise modules), or
/// nullopt. Failures to prove the chain are not errors here: such a Linear
/// stays whole.
static std::optional<ConsumerChain> findMLPChain(Operation *target) {
  ScopedDiagnosticHandler quiet(target->getContext(),
                                [](Diagnostic &) { return success(); });
  FailureOr<ConsumerChain> chain = findConsumer(target, false, kPass);
  if (failed(chain) || !isa<LinearOp>(chain->consumer) ||
      chain->columnsPerUnit != 1 || !chain->batchNorms.empty())
    return std::nullopt;
  return std::move(*chain);
}

/// Refuses a probe on the units between `s.target` and its consumer.
static LogicalResult checkMLPProbes(const MLPSplit &s) {
  auto refuseModuleProbes = [&](Operation *m, std::optional<ProbePoint> point) {
    auto probes = m->getAttrOfType<ArrayAttr>("nnx.probes");
    if (!probes)
      return success();
    for (auto p : probes.getAsRange<ProbeAttr>())
      if (!point || p.getPoint() == *point)
        return refuseSplitProbe(m, p, "an MLP's hidden units");
    return success();
  };
  SmallVector<Operation *> writers(s.chain.siblings);
  writers.push_back(s.target);
  for (Operation *m : writers)
    if (failed(refuseModuleProbes(m, ProbePoint::output)))
      return failure();
  for (Operation *m : s.chain.path)
    if (failed(refuseModuleProbes(m, std::nullopt)))
      return failure();
  if (failed(refuseModuleProbes(s.chain.consumer, ProbePoint::input)))
    return failure();
  llvm::DenseSet<Value> units(s.chain.unitValues.begin(),
                              s.chain.unitValues.end());
  for (Value v : s.chain.unitValues)
    for (Operation *user : v.getUsers()) {
      LogicalResult result = success();
      forEachProbe(user, [&](ProbeAttr p, Value probed) {
        if (succeeded(result) && units.contains(probed))
          result = refuseSplitProbe(user, p, "an MLP's hidden units");
      });
      if (failed(result))
        return failure();
    }
  return success();
}

static LogicalResult checkMLP(const MLPSplit &s, int64_t ranks) {
  if (s.units % ranks != 0)
    return refuse(s.target, kPass, "MLP Linear")
           << "has " << s.units << " units (feeding '"
           << getDisplayPath(s.chain.consumer) << "'), which " << ranks
           << " ranks cannot split evenly";
  SmallVector<Operation *> layers(s.chain.siblings);
  layers.push_back(s.target);
  layers.push_back(s.chain.consumer);
  for (Operation *op : layers)
    for (StringRef name : {"weight", "bias"})
      if (failed(
              checkSliceable(op, name, op->getAttrOfType<ElementsAttr>(name))))
        return failure();
  return checkMLPProbes(s);
}

static void applyMLP(const MLPSplit &s, int64_t ranks, int64_t rank) {
  SmallVector<int64_t> kept = rankBlock(s.units, ranks, rank);
  int64_t width = kept.size();
  SmallVector<Operation *> writers(s.chain.siblings);
  writers.push_back(s.target);
  for (Operation *op : writers) {
    keepAlong(op, "weight", 0, kept);
    keepAlong(op, "bias", 0, kept);
    if (auto lin = dyn_cast<LinearOp>(op); lin && lin.getOutFeatures())
      lin.setOutFeatures(width);
  }
  keepAlong(s.chain.consumer, "weight", 1, kept);
  if (s.chain.hiddenIndex)
    cast<StockNetOpInterface>(s.chain.container)
        .setSiteWidth(*s.chain.hiddenIndex, width);
  setUnitCount(s.chain, width);
  markPartialSum(s.chain.consumer, ranks);
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

/// Finds and checks every split of `model`: attention modules first, then
/// MLP pairs among the Linears outside them.
static LogicalResult planSplits(ModelOp model, int64_t ranks, int64_t rank,
                                std::vector<AttentionSplit> &attention,
                                std::vector<MLPSplit> &mlps) {
  SmallVector<CustomModuleOp> modules;
  model.walk([&](CustomModuleOp m) {
    if (isAttentionModule(m))
      modules.push_back(m);
  });
  for (CustomModuleOp m : modules) {
    FailureOr<AttentionSplit> s = planAttention(model, m, ranks, rank);
    if (failed(s))
      return failure();
    attention.push_back(std::move(*s));
  }
  llvm::DenseSet<Operation *> claimed;
  SmallVector<LinearOp> linears;
  model.walk([&](LinearOp lin) { linears.push_back(lin); });
  for (LinearOp lin : linears) {
    bool inAttention = llvm::any_of(
        modules, [&](CustomModuleOp m) { return m->isAncestor(lin); });
    if (inAttention || claimed.contains(lin))
      continue;
    std::optional<ConsumerChain> chain = findMLPChain(lin);
    if (!chain || claimed.contains(chain->consumer))
      continue;
    MLPSplit s{lin, std::move(*chain), getUnitCount(lin)};
    if (failed(checkMLP(s, ranks)))
      return failure();
    claimed.insert(lin);
    claimed.insert(s.chain.consumer);
    claimed.insert(s.chain.siblings.begin(), s.chain.siblings.end());
    mlps.push_back(std::move(s));
  }
  return success();
}

LogicalResult mlir::nnx::shardTensorParallel(ModelOp model, int64_t ranks,
                                             int64_t rank) {
  if (ranks < 2 || rank < 0 || rank >= ranks)
    return model.emitError()
           << kPass << ": options ranks=" << ranks << " rank=" << rank
           << ": ranks must be >= 2 and rank in 0.." << ranks - 1;
  if (model->hasAttr("nnx.tensor_parallel"))
    return model.emitError()
           << kPass << ": the model is already split for tensor parallelism ("
           << model->getAttr("nnx.tensor_parallel") << ")";
  std::vector<AttentionSplit> attention;
  std::vector<MLPSplit> mlps;
  if (failed(planSplits(model, ranks, rank, attention, mlps)))
    return failure();
  if (attention.empty() && mlps.empty())
    return model.emitError()
           << kPass
           << ": the model has no attention module and no MLP pair (a Linear "
              "feeding a Linear) to split; on "
           << ranks << " ranks every rank would do all the work";
  for (AttentionSplit &s : attention)
    applyAttention(s, ranks);
  for (const MLPSplit &s : mlps)
    applyMLP(s, ranks, rank);
  MLIRContext *ctx = model.getContext();
  Type i64 = IntegerType::get(ctx, 64);
  model->setAttr(
      "nnx.tensor_parallel",
      DictionaryAttr::get(ctx, {NamedAttribute(StringAttr::get(ctx, "rank"),
                                               IntegerAttr::get(i64, rank)),
                                NamedAttribute(StringAttr::get(ctx, "ranks"),
                                               IntegerAttr::get(i64, ranks))}));
  return success();
}

namespace {
struct NNXShardTensorParallelPass
    : public mlir::nnx::impl::NNXShardTensorParallelPassBase<
          NNXShardTensorParallelPass> {
  using Base::Base;
  void runOnOperation() override {
    if (failed(shardTensorParallel(getOperation(), ranks, rank)))
      signalPassFailure();
  }
};
} // namespace
