//===- SizeProofs.cpp - bounded value-bounds proofs of sizes -------------===//
#include "nnx/Support/SizeProofs.h"

#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/AffineMap.h"

using namespace mlir;

bool mlir::nnx::isProvablyEqual(const ValueBoundsConstraintSet::Variable &lhs,
                                const ValueBoundsConstraintSet::Variable &rhs,
                                int64_t budget) {
  using Variable = ValueBoundsConstraintSet::Variable;
  MLIRContext *context = lhs.getContext();
  AffineExpr d0, d1;
  bindDims(context, d0, d1);
  Variable difference(AffineMap::get(2, 0, d0 - d1, context),
                      ArrayRef<Variable>{lhs, rhs});
  int64_t visited = 0;
  FailureOr<int64_t> delta = ValueBoundsConstraintSet::computeConstantBound(
      presburger::BoundType::EQ, difference,
      [&](Value, std::optional<int64_t>, ValueBoundsConstraintSet &) {
        return ++visited > budget;
      });
  return succeeded(delta) && *delta == 0;
}
