//===- LowRank.cpp - SVD truncation of a Linear or convolution --*- C++ -*-===//
#include "RecipeUtils.h"
#include "SurgeryUtils.h"

#include "nnx/Dialect/NNX/IR/TensorUtils.h"
#include "nnx/Dialect/NNX/Transforms/Passes.h"
#include "nnx/Dialect/NNX/Transforms/Surgery.h"

#include "mlir/IR/Builders.h"

#include <Eigen/SVD>
#include <cmath>

namespace mlir::nnx {
#define GEN_PASS_DEF_NNXLOWRANKPASS
#include "nnx/Dialect/NNX/Transforms/Passes.h.inc"
} // namespace mlir::nnx

using namespace mlir;
using namespace mlir::nnx;
using namespace mlir::nnx::surgery;

static constexpr llvm::StringLiteral kPass = "nnx-low-rank";

using RowMajorMatrix =
    Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

namespace {
/// W (out x in) ~ second * first, the rank-`rank` truncated SVD with sqrt(S)
/// split evenly: first is rank x in, second out x rank (row-major).
struct Factors {
  std::vector<double> first, second;
};
} // namespace

static Factors factorize(const std::vector<double> &w, int64_t out, int64_t in,
                         int64_t rank) {
  Eigen::Map<const RowMajorMatrix> wm(w.data(), out, in);
  Eigen::BDCSVD<Eigen::MatrixXd> svd(Eigen::MatrixXd(wm),
                                     Eigen::ComputeThinU | Eigen::ComputeThinV);
  Eigen::VectorXd rootS =
      svd.singularValues().head(rank).array().sqrt().matrix();
  RowMajorMatrix first =
      rootS.asDiagonal() * svd.matrixV().leftCols(rank).transpose();
  RowMajorMatrix second = svd.matrixU().leftCols(rank) * rootS.asDiagonal();
  return {std::vector<double>(first.data(), first.data() + first.size()),
          std::vector<double>(second.data(), second.data() + second.size())};
}

/// Refuses option rank outside 1..min(out, in) for a weight seen as an
/// `out x in` matrix.
static LogicalResult checkRank(Operation *target, ArrayRef<int64_t> shape,
                               int64_t out, int64_t in, int64_t rank) {
  int64_t maxRank = std::min(out, in);
  if (rank >= 1 && rank <= maxRank)
    return success();
  InFlightDiagnostic diag = refuse(target, kPass, "target") << "is ";
  llvm::interleave(shape, [&](int64_t d) { diag << d; }, [&] { diag << "x"; });
  if (shape.size() > 2)
    diag << " (a " << out << "x" << in << " matrix)";
  return diag << "; option rank=" << rank << " is outside 1.." << maxRank;
}

/// Replaces `conv` by a positional sequential of a `C_in -> rank`
/// convolution with its window and no bias, then a `rank -> C_out` 1x1
/// convolution with its bias.
template <typename ConvOp>
static void replaceConvByFactors(ConvOp conv, int64_t rank,
                                 const Factors &factors) {
  OpBuilder b(conv);
  Location loc = conv.getLoc();
  auto seq = SequentialOp::create(b, loc, conv.getSymName(), conv.getTrain(),
                                  nullptr, nullptr, nullptr, nullptr, nullptr,
                                  Keying::positional, nullptr);
  seq.getBody().emplaceBlock();
  b.setInsertionPointToStart(&seq.getBody().front());
  auto weightType = cast<ShapedType>(conv.getWeightAttr().getType());
  SmallVector<int64_t> firstShape(weightType.getShape());
  firstShape[0] = rank;
  unsigned spatial = conv.getKernelSize().size();
  SmallVector<int64_t> secondShape{weightType.getDimSize(0), rank};
  secondShape.append(spatial, 1);
  SmallVector<int64_t> ones(spatial, 1), zeros(spatial, 0);
  auto first = ConvOp::create(
      b, loc, surgery::positionalKey(0), conv.getTrain(), nullptr, nullptr,
      nullptr, nullptr, nullptr, conv.getInChannels(), rank,
      conv.getKernelSize(), conv.getStride(), conv.getPadding(),
      conv.getDilation(), /*groups=*/1,
      makeTensor(weightType.clone(firstShape), factors.first), nullptr);
  auto second = ConvOp::create(
      b, loc, surgery::positionalKey(1), conv.getTrain(), nullptr, nullptr,
      nullptr, nullptr, nullptr, rank, conv.getOutChannels(), ones, ones, zeros,
      ones, /*groups=*/1,
      makeTensor(weightType.clone(secondShape), factors.second),
      conv.getBiasAttr());
  auto source = cast<ModuleOpInterface>(conv.getOperation());
  copyRequiresGrad(source, "weight", first, "weight");
  copyRequiresGrad(source, "weight", second, "weight");
  if (conv.getBiasAttr())
    copyRequiresGrad(source, "bias", second, "bias");
  conv.erase();
}

/// Refuses a layer of a stock net: the params describe every layer as one
/// Linear or convolution, so a factorized pair has no description.
static LogicalResult refuseStockNetLayer(Operation *target) {
  StockNetOpInterface net = getStockNetOf(target);
  if (!net)
    return success();
  InFlightDiagnostic diag =
      refuse(target, kPass, "target")
      << "is a layer of " << describeStockNet(net)
      << ", whose params cannot describe a factorization (record it as a "
         "low_rank recipe instead)";
  diag.attachNote(net.getLoc()) << net->getName().stripDialect() << " is here";
  return diag;
}

/// The spatial/channel factorization of a groups-1 convolution: its weight
/// as an `out_channels x (in_channels * taps)` matrix, truncated by SVD.
static LogicalResult lowRankConv(ConvLayerOpInterface conv, int64_t rank) {
  if (failed(checkRefusable(conv, AllRebuildProperties, kPass, "target")) ||
      failed(refuseStockNetLayer(conv)))
    return failure();
  if (conv.getGroupCount() != 1)
    return refuse(conv, kPass, "target")
           << "has groups = " << conv.getGroupCount()
           << ": its weight is not one matrix over every input channel; only "
              "a convolution with groups = 1 factorizes";
  ElementsAttr weight = conv.getWeightTensor();
  auto weightType = cast<ShapedType>(weight.getType());
  int64_t out = weightType.getDimSize(0);
  int64_t in = out ? weightType.getNumElements() / out : 0;
  if (failed(checkRank(conv, weightType.getShape(), out, in, rank)))
    return failure();
  FailureOr<std::vector<double>> w =
      readTensorOrRefuse(conv, weight, "weight", kPass, "target");
  if (failed(w))
    return failure();
  Factors factors = factorize(*w, out, in, rank);
  if (auto conv2d = dyn_cast<Conv2dOp>(conv.getOperation()))
    replaceConvByFactors(conv2d, rank, factors);
  else
    replaceConvByFactors(cast<Conv1dOp>(conv.getOperation()), rank, factors);
  return success();
}

LogicalResult mlir::nnx::lowRank(ModelOp model, StringRef layer, int64_t rank) {
  FailureOr<Operation *> slot = lookupEditSlot(model, layer, kPass, "layer");
  if (failed(slot))
    return failure();
  if (auto conv = dyn_cast<ConvLayerOpInterface>(*slot))
    return lowRankConv(conv, rank);
  return lowRankUnrecorded(model, layer, rank);
}

LogicalResult surgery::lowRankUnrecorded(ModelOp model, StringRef layer,
                                         int64_t rank) {
  // Check everything first.
  FailureOr<Operation *> slot = lookupSlot(model, layer, kPass, "layer");
  if (failed(slot))
    return failure();
  if (auto alias = dyn_cast<AliasOp>(*slot))
    return refuseAliasSlot(alias, kPass, "target");
  auto target = dyn_cast<LinearOp>(*slot);
  if (!target)
    return refuse(*slot, kPass, "target")
           << "is not an 'nnx.linear' or a convolution";
  if (failed(checkRefusable(target, AllRebuildProperties, kPass, "target")) ||
      failed(refuseStockNetLayer(target)))
    return failure();
  auto weightType = cast<ShapedType>(target.getWeightAttr().getType());
  int64_t out = weightType.getDimSize(0), in = weightType.getDimSize(1);
  if (failed(checkRank(target, weightType.getShape(), out, in, rank)))
    return failure();
  FailureOr<std::vector<double>> w = readTensorOrRefuse(
      target, target.getWeightAttr(), "weight", kPass, "target");
  if (failed(w))
    return failure();
  Factors factors = factorize(*w, out, in, rank);
  recipe::replaceByFactors(
      target, makeTensor(weightType.clone({rank, in}), factors.first),
      makeTensor(weightType.clone({out, rank}), factors.second));
  return success();
}

namespace {
struct NNXLowRankPass
    : public mlir::nnx::impl::NNXLowRankPassBase<NNXLowRankPass> {
  using Base::Base;
  void runOnOperation() override {
    if (failed(lowRank(getOperation(), layer, rank)))
      signalPassFailure();
  }
};
} // namespace
