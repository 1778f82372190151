//===- LowRank.cpp - SVD truncation of a Linear -----------------*- C++ -*-===//
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

LogicalResult mlir::nnx::lowRank(ModelOp model, StringRef layer, int64_t rank) {
  if (failed(refuseRecipeModel(model, kPass)))
    return failure();
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
    return refuse(*slot, kPass, "target") << "is not an 'nnx.linear'";
  if (failed(checkRefusable(target, AllRebuildProperties, kPass, "target")))
    return failure();
  if (auto list = dyn_cast<ModuleListOp>(target->getParentOp()))
    if (auto ff = dyn_cast<FeedFwdOp>(list->getParentOp())) {
      InFlightDiagnostic diag =
          refuse(target, kPass, "target")
          << "is a layer of feed_fwd '" << getDisplayPath(ff)
          << "', whose params cannot describe a factorization (record it as "
             "a low_rank recipe instead)";
      diag.attachNote(ff.getLoc()) << "feed_fwd is here";
      return diag;
    }
  auto weightType = cast<ShapedType>(target.getWeightAttr().getType());
  int64_t out = weightType.getDimSize(0), in = weightType.getDimSize(1);
  int64_t maxRank = std::min(out, in);
  if (rank < 1 || rank > maxRank)
    return refuse(target, kPass, "target")
           << "is " << out << "x" << in << "; option rank=" << rank
           << " is outside 1.." << maxRank;
  FailureOr<std::vector<double>> w = readTensorOrRefuse(
      target, target.getWeightAttr(), "weight", kPass, "target");
  if (failed(w))
    return failure();

  // W = U S V^T; keep the top `rank` triplets, splitting sqrt(S) evenly.
  Eigen::Map<const RowMajorMatrix> wm(w->data(), out, in);
  Eigen::BDCSVD<Eigen::MatrixXd> svd(Eigen::MatrixXd(wm),
                                     Eigen::ComputeThinU | Eigen::ComputeThinV);
  Eigen::VectorXd rootS =
      svd.singularValues().head(rank).array().sqrt().matrix();
  RowMajorMatrix first =
      rootS.asDiagonal() * svd.matrixV().leftCols(rank).transpose(); // k x in
  RowMajorMatrix second =
      svd.matrixU().leftCols(rank) * rootS.asDiagonal(); // out x k
  std::vector<double> firstValues(first.data(), first.data() + first.size());
  std::vector<double> secondValues(second.data(),
                                   second.data() + second.size());
  recipe::replaceByFactors(
      target, makeTensor(weightType.clone({rank, in}), firstValues),
      makeTensor(weightType.clone({out, rank}), secondValues));
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
