//===- AttentionCore.cpp - an attention's heads and head dims -------------===//
#include "AttentionCore.h"

using namespace mlir;
using namespace mlir::nnx;
using namespace mlir::nnx::surgery;

/// The matmul whose scores `v` is, through elementwise ops (the scale, the
/// mask, Gemma-2's soft cap), or null.
static FnMatmulOp scoresBefore(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (auto mm = dyn_cast<FnMatmulOp>(def))
      return mm;
    bool elementwise =
        isa<FnBinaryOpInterface>(def) ||
        (def->getNumOperands() == 1 && def->hasTrait<OpTrait::Elementwise>());
    if (!elementwise)
      return {};
    v = def->getOperand(0);
  }
  return {};
}

/// The matmul that mixes the values with probabilities `v` (through
/// dropout), or null.
static FnMatmulOp mixAfter(Value v) {
  for (int steps = 0; steps < 4; ++steps) {
    Value next;
    for (Operation *user : v.getUsers()) {
      if (auto mm = dyn_cast<FnMatmulOp>(user); mm && mm.getLhs() == v)
        return mm;
      auto call = dyn_cast<CallOp>(user);
      bool dropout =
          isa<FnDropoutOp>(user) ||
          (call && isa<DropoutOp>(call.resolveCalleeModule().getOperation()));
      if (dropout && !next)
        next = user->getResult(0);
    }
    if (!next)
      return {};
    v = next;
  }
  return {};
}

/// Sorts the heads axes into kv heads and the `repeat_kv` group.
static LogicalResult classifyHeads(AttentionCore &core, AxisAnalysis &a,
                                   StringRef pass) {
  Value q = core.scores.getLhs();
  int64_t rank = cast<RankedTensorType>(q.getType()).getRank();
  AxisList heads = a.leaves(q, rank - 3);
  for (Axis x : heads) {
    bool isGroup = a.expandOrigin(x) != nullptr;
    // Kv heads major, the group minor, each at most once.
    if (core.group || (!isGroup && core.kvHeads)) {
      InFlightDiagnostic diag =
          refuse(core.module, pass, "target")
          << "has query heads that are not `kv_heads x group` (" << heads.size()
          << " factors): the pass cannot tell which heads share keys";
      diag.attachNote(core.scores.getLoc()) << "the scores are computed here";
      return diag;
    }
    (isGroup ? core.group : core.kvHeads) = x;
  }
  if (heads.empty())
    return refuse(core.module, pass, "target")
           << "has one attention head (the scores' heads dim is 1)";
  // Keys with one head, broadcast by the matmul (multi-query attention):
  // every query head is in the one kv head's group.
  auto keys = cast<RankedTensorType>(core.scores.getRhs().getType());
  if (!core.group && keys.getDimSize(keys.getRank() - 3) == 1)
    std::swap(core.group, core.kvHeads);
  return success();
}

FailureOr<AttentionCore> surgery::findAttentionCore(ModelOp model,
                                                    StringRef layer,
                                                    AxisAnalysis &a,
                                                    StringRef pass) {
  FailureOr<Operation *> slot =
      lookupEditModule(model, layer, pass, "layer", "target");
  if (failed(slot))
    return failure();
  auto module = dyn_cast<CustomModuleOp>(*slot);
  if (!module || !module.getForward())
    return refuse(*slot, pass, "target")
           << "is not a custom module ('nnx.module') with a forward: only an "
              "attention module's forward shows its heads";
  if (failed(checkRefusable(module, Hooks | Aliases, pass, "target")))
    return failure();
  FailureOr<CallOp> call = getOnlyCall(module, pass, "target");
  if (failed(call))
    return failure();
  a.run(module);
  SmallVector<std::pair<FnMatmulOp, FnMatmulOp>> cores;
  for (ForwardOp forward : a.getForwards())
    forward.walk([&](FnSoftmaxOp softmax) {
      FnMatmulOp scores = scoresBefore(softmax.getInput());
      FnMatmulOp mix = mixAfter(softmax.getResult());
      if (scores && mix)
        cores.push_back({scores, mix});
    });
  if (cores.size() != 1) {
    InFlightDiagnostic diag =
        refuse(module, pass, "target")
        << "has " << cores.size()
        << " attention cores (`softmax(q @ k^T) @ v` in its forward or the "
           "forwards it calls); the pass edits exactly one";
    for (auto &[s, m] : cores)
      diag.attachNote(s.getLoc()) << "scores are computed here";
    return diag;
  }
  AttentionCore core{module, *call, cores[0].first, cores[0].second, {}, {},
                     {},     {}};
  auto rank = [](Value v) {
    return cast<RankedTensorType>(v.getType()).getRank();
  };
  if (rank(core.scores.getLhs()) < 3 || rank(core.mix.getRhs()) < 3) {
    InFlightDiagnostic diag = refuse(module, pass, "target")
                              << "computes scores without a heads dim";
    diag.attachNote(core.scores.getLoc()) << "the scores are computed here";
    return diag;
  }
  if (failed(classifyHeads(core, a, pass)))
    return failure();
  core.qkDim = a.leaves(core.scores.getLhs(), rank(core.scores.getLhs()) - 1);
  core.vDim = a.leaves(core.mix.getRhs(), rank(core.mix.getRhs()) - 1);
  return core;
}
