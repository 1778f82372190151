//===- ExpandEmbedding.cpp - grow an embedding table ------------*- C++ -*-===//
#include "SurgeryUtils.h"

#include "nnx/Dialect/NNX/IR/StateRead.h"
#include "nnx/Dialect/NNX/IR/TensorUtils.h"
#include "nnx/Dialect/NNX/Transforms/Passes.h"
#include "nnx/Dialect/NNX/Transforms/Surgery.h"

namespace mlir::nnx {
#define GEN_PASS_DEF_NNXEXPANDEMBEDDINGPASS
#include "nnx/Dialect/NNX/Transforms/Passes.h.inc"
} // namespace mlir::nnx

using namespace mlir;
using namespace mlir::nnx;
using namespace mlir::nnx::surgery;

static constexpr llvm::StringLiteral kPass = "nnx-expand-embedding";

std::optional<EmbeddingInit> mlir::nnx::parseEmbeddingInit(StringRef name) {
  if (name == "zeros")
    return EmbeddingInit::Zeros;
  if (name == "copy_mean")
    return EmbeddingInit::CopyMean;
  return std::nullopt;
}

LogicalResult mlir::nnx::expandEmbedding(ModelOp model, StringRef layer,
                                         int64_t num, EmbeddingInit init) {
  // Check everything first.
  FailureOr<Operation *> slot = lookupEditSlot(model, layer, kPass, "layer");
  if (failed(slot))
    return failure();
  auto emb = dyn_cast_or_null<EmbeddingOp>(resolveAlias(*slot).getOperation());
  if (!emb)
    return refuse(*slot, kPass, "target") << "is not an 'nnx.embedding'";
  if (failed(checkRefusable(emb, Subclass | Hooks | Parametrizations | Pruned,
                            kPass, "target")))
    return failure();
  // A forward reading the weight directly (a head tied by
  // `F.linear(x, self.wte.weight)`) would see it resized under it.
  if (SmallVector<StateOp> reads = getOutsideStateReads(emb); !reads.empty()) {
    InFlightDiagnostic diag =
        refuse(emb, kPass, "target")
        << "has its weight read directly by the forward of '"
        << getDisplayPath(reads.front()->getParentOfType<CustomModuleOp>())
        << "'; growing the vocabulary would resize the tensor under that read";
    for (StateOp read : reads)
      diag.attachNote(read.getLoc()) << "read here";
    return diag;
  }
  auto type = cast<ShapedType>(emb.getWeight().getType());
  int64_t old = type.getDimSize(0), dim = type.getDimSize(1);
  if (num < old)
    return refuse(emb, kPass, "target")
           << "has " << old << " rows; option num=" << num
           << " would shrink it (only growing keeps every original id)";
  // (At least one column: frozen_rows has `num` entries of its own.)
  if (failed(checkHoldable(
          emb, {num, std::max<int64_t>(dim, 1)}, kPass, "target",
          "option num=" + Twine(num) + " would grow its weight to")))
    return failure();
  FailureOr<std::vector<double>> w =
      readTensorOrRefuse(emb, emb.getWeight(), "weight", kPass, "target");
  if (failed(w))
    return failure();

  std::vector<double> fill(dim, 0.0);
  if (init == EmbeddingInit::CopyMean && old > 0) {
    for (int64_t r = 0; r < old; ++r)
      for (int64_t c = 0; c < dim; ++c)
        fill[c] += (*w)[r * dim + c];
    for (double &v : fill)
      v /= static_cast<double>(old);
  }
  // Float -> double -> float is exact, so the original rows stay
  // bit-identical.
  std::vector<double> values(*w);
  values.reserve(num * dim);
  for (int64_t r = old; r < num; ++r)
    values.insert(values.end(), fill.begin(), fill.end());
  SmallVector<bool> frozen(num, false);
  std::fill(frozen.begin(), frozen.begin() + old, true);

  // Mutate in place: flags and mode live on the op and stay.
  replaceTensor(emb, "weight", makeTensor(type.clone({num, dim}), values));
  emb.setFrozenRowsAttr(DenseBoolArrayAttr::get(emb.getContext(), frozen));
  if (std::optional<int64_t> pad = emb.getPaddingIdx(); pad && *pad < 0)
    emb.setPaddingIdx(old + *pad); // keep naming the same row
  return success();
}

namespace {
struct NNXExpandEmbeddingPass
    : public mlir::nnx::impl::NNXExpandEmbeddingPassBase<
          NNXExpandEmbeddingPass> {
  using Base::Base;
  void runOnOperation() override {
    std::optional<EmbeddingInit> kind = parseEmbeddingInit(init);
    if (!kind) {
      getOperation().emitError() << kPass << ": option init='" << init
                                 << "' is not one of 'zeros', 'copy_mean'";
      return signalPassFailure();
    }
    if (failed(expandEmbedding(getOperation(), layer, num, *kind)))
      signalPassFailure();
  }
};
} // namespace
