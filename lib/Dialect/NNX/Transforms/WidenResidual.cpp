//===- WidenResidual.cpp - grow d_model -------------------------*- C++ -*-===//
//
// Gesmundo & Maile 2023's hidden-dimension expansion. The residual stream's
// axis is found as the embeddings' dim (AxisAnalysis over the whole model);
// every tensor and type that carries it grows. New stream coordinates stay
// zero: the embeddings' new columns and the new rows of every Linear that
// writes the stream (attention's and the MLP's output projections) are
// zero. Linears that read the stream get new columns drawn from a normal
// distribution (they multiply zeros, and train).
//
// The norms over the stream are the one place the old coordinates could
// change. An RMSNorm (`x * rsqrt(mean(x*x) + eps) * g`, g a state or
// `state + c` as Gemma's) is kept exact: with d' coordinates of which d-d'
// are zero, mean' = mean * d/d', so eps becomes eps * d/d' and the gain
// g * sqrt(d/d'), and rsqrt(d/d' (mean + eps)) * g sqrt(d/d') is the old
// value. A LayerNorm cannot be kept: its mean and variance over d' are not
// those over d, and no rescaling of its gain and bias restores them.
//
//===----------------------------------------------------------------------===//
#include "ChannelGroup.h"

#include "nnx/Dialect/NNX/IR/NNXFnOps.h"
#include "nnx/Dialect/NNX/IR/StateRead.h"
#include "nnx/Dialect/NNX/IR/TensorUtils.h"
#include "nnx/Dialect/NNX/Transforms/Passes.h"
#include "nnx/Dialect/NNX/Transforms/Surgery.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include <cmath>
#include <random>

namespace mlir::nnx {
#define GEN_PASS_DEF_NNXWIDENRESIDUALPASS
#include "nnx/Dialect/NNX/Transforms/Passes.h.inc"
} // namespace mlir::nnx

using namespace mlir;
using namespace mlir::nnx;
using namespace mlir::nnx::surgery;

static constexpr llvm::StringLiteral kPass = "nnx-widen-residual";

using ResizeMap = std::map<Axis, AxisResize>;

namespace {
/// One RMSNorm over the stream: its eps constant and its gain.
struct RMSNormSite {
  arith::ConstantOp eps;
  StateOp gain;
  /// Gemma's `1 + weight`: the constant added to the state.
  double offset = 0;
};
} // namespace

/// The splat value of constant `v`, if it is one.
static std::optional<double> splatValue(Value v) {
  auto c = v.getDefiningOp<arith::ConstantOp>();
  auto dense = c ? dyn_cast<DenseFPElementsAttr>(c.getValue()) : nullptr;
  if (!dense || !dense.isSplat())
    return std::nullopt;
  return dense.getSplatValue<APFloat>().convertToDouble();
}

/// Matches `mean(x * x) + eps ... * gain` at reduction `op`; the gain is the
/// forward's one state tensor of shape (d_model), axis `stream`.
static FailureOr<RMSNormSite> matchRMSNorm(Operation *op, AxisAnalysis &a,
                                           Axis stream) {
  // The norm module: a leaf norm's, or the custom module whose forward
  // reduces.
  Operation *norm = op->getParentOfType<CustomModuleOp>();
  if (auto call = dyn_cast<CallOp>(op))
    norm = call.resolveCalleeModule().getOperation();
  auto explain = [&](const Twine &what) {
    InFlightDiagnostic diag =
        refuse(norm, kPass, "norm")
        << "normalizes over d_model and is not an RMSNorm (" << what
        << "): a LayerNorm's mean and variance over d' coordinates are not "
           "those over d, and no rescaling of its gain and bias keeps the "
           "old coordinates' values";
    diag.attachNote(op->getLoc()) << "the reduction is here";
    return diag;
  };
  auto mean = dyn_cast<FnMeanOp>(op);
  if (!mean)
    return explain(isa<CallOp>(op)
                       ? "a '" + norm->getName().getStringRef() + "' layer"
                       : "'" + op->getName().getStringRef() + "'");
  auto square = mean.getInput().getDefiningOp<FnMulOp>();
  if (!square || square.getLhs() != square.getRhs())
    return explain("a mean of something other than x * x");
  RMSNormSite site;
  for (Operation *user : mean->getUsers())
    if (auto add = dyn_cast<FnAddOp>(user))
      if (splatValue(add.getRhs()))
        site.eps = add.getRhs().getDefiningOp<arith::ConstantOp>();
  if (!site.eps || !mean->hasOneUse())
    return explain("no `mean + eps` with a constant eps");
  auto forward = op->getParentOfType<ForwardOp>();
  int gains = 0;
  forward.walk([&](StateOp state) {
    if (state->hasAttr(kStateOfAttrName))
      return; // another module's tensor, not this norm's gain
    AxisList d = a.leaves(state.getResult(), 0);
    if (cast<RankedTensorType>(state.getType()).getRank() == 1 &&
        d.size() == 1 && a.find(d[0]) == a.find(stream)) {
      site.gain = state;
      ++gains;
    }
  });
  if (gains > 1)
    return explain("several tensors of shape (d_model) in its forward");
  if (!site.gain)
    return explain("no gain tensor of its own to rescale");
  if (site.gain->hasOneUse())
    if (auto add = dyn_cast<FnAddOp>(*site.gain->getUsers().begin()))
      if (std::optional<double> c = splatValue(add.getRhs()))
        site.offset = *c;
  return site;
}

/// The residual stream's axis: the one axis of every embedding's dim.
static FailureOr<Axis> findStream(AxisAnalysis &a, ModelOp model) {
  std::optional<Axis> stream;
  for (const TensorSite &t : a.getTensors()) {
    if (!isa<EmbeddingOp>(t.op))
      continue;
    AxisList d = a.leaves(t.dims[1]);
    if (d.size() != 1 || (stream && a.find(*stream) != a.find(d[0])))
      return refuse(t.op, kPass, "embedding")
             << "does not write the one residual stream the other embeddings "
                "write";
    stream = a.find(d[0]);
  }
  if (!stream)
    return model.emitError()
           << kPass << ": model '@" << model.getSymName()
           << "' has no embedding called in its forward: there is no "
              "residual stream to widen";
  return *stream;
}

/// Rescales each RMSNorm: eps * d/d', gain g * sqrt(d/d') (g = state +
/// offset); new gain entries sqrt(d/d') - offset.
static void rescaleNorms(MutableArrayRef<RMSNormSite> norms, int64_t d,
                         int64_t width,
                         llvm::DenseMap<Operation *, double> &newGain) {
  double ratio = static_cast<double>(d) / static_cast<double>(width);
  double c = std::sqrt(ratio);
  for (RMSNormSite &n : norms) {
    double eps = *splatValue(n.eps.getResult());
    auto type = cast<ShapedType>(n.eps.getType());
    n.eps.setValueAttr(makeTensor(type, {eps * ratio}));
    CustomModuleOp module = n.gain.getModule();
    ElementsAttr old = module.getTensor(n.gain.getName());
    std::vector<double> g = *readTensor(old);
    for (double &x : g)
      x = (x + n.offset) * c - n.offset;
    setStateTensor(module, n.gain.getName(),
                   makeTensor(cast<ShapedType>(old.getType()), g));
    newGain[module] = c - n.offset;
  }
}

LogicalResult mlir::nnx::widenResidual(ModelOp model, int64_t width,
                                       uint64_t seed) {
  if (failed(refuseRecipeModel(model, kPass)))
    return failure();
  FailureOr<CustomModuleOp> root = findRootModule(
      model, kPass,
      "(an exported transformer): the stream is found in its forward");
  if (failed(root))
    return failure();
  AxisAnalysis a(kPass);
  a.run(*root);
  FailureOr<Axis> stream = findStream(a, model);
  if (failed(stream))
    return failure();
  int64_t d = a.size(*stream);
  if (width <= d)
    return model.emitError()
           << kPass << ": the residual stream has d_model = " << d
           << "; option width=" << width << " must be larger";
  ResizeMap resize;
  resize[*stream] = AxisResize::grow(width);
  SmallVector<RMSNormSite> norms;
  for (Operation *op : a.reductionsOver(resize)) {
    FailureOr<RMSNormSite> n = matchRMSNorm(op, a, *stream);
    if (failed(n))
      return failure();
    norms.push_back(*n);
    a.allowReduction(op);
  }
  if (failed(a.checkEdit(resize, CallOp(), *root)))
    return failure();
  llvm::DenseMap<Operation *, double> newGain;
  rescaleNorms(norms, d, width, newGain);
  WeightDraws draws(seed);
  auto fill = [&](const TensorSite &t, ArrayRef<int64_t> index,
                  ArrayRef<bool> isNew) -> std::optional<double> {
    if (t.isState) {
      auto it = newGain.find(t.op);
      return it == newGain.end() ? std::nullopt
                                 : std::optional<double>(it->second);
    }
    if (isa<EmbeddingOp>(t.op) || t.name != "weight" || isNew[0])
      return 0.0; // stream coordinates, biases, rows writing the stream
    if (!isa<LinearOp>(t.op))
      return std::nullopt;
    return draws.draw(t.op);
  };
  a.applyEdit(resize, CallOp(), fill);
  return success();
}

namespace {
struct NNXWidenResidualPass
    : public mlir::nnx::impl::NNXWidenResidualPassBase<NNXWidenResidualPass> {
  using Base::Base;
  void runOnOperation() override {
    if (failed(widenResidual(getOperation(), width, seed)))
      signalPassFailure();
  }
};
} // namespace
