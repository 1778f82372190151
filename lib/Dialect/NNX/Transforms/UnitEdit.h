//===- UnitEdit.h - nnx-widen's and nnx-prune's shared edit -----*- C++ -*-===//
//
// Widening and pruning are one edit: unit j of the new layer is unit
// `source[j]` of the old one. The target's (and its siblings') rows are
// gathered, the consumer's columns are gathered (and, when widening by
// copies, divided by each unit's replication count), and every size that
// describes the units follows.
//
//===----------------------------------------------------------------------===//
#ifndef NNX_LIB_DIALECT_NNX_TRANSFORMS_UNITEDIT_H
#define NNX_LIB_DIALECT_NNX_TRANSFORMS_UNITEDIT_H

#include "SurgeryUtils.h"

namespace mlir::nnx::surgery {

/// The units a widened or pruned layer keeps: unit j is old unit
/// `source[j]`, which `count[source[j]]` new units share.
struct UnitMap {
  std::vector<int64_t> source, count;
};

/// How the consumer's columns of the new units are written.
enum class ConsumerColumns {
  /// Each column divided by its unit's count: Net2Net copies.
  Rescale,
  /// Old units' columns kept, new units' (j >= old width) zero.
  ZeroNew,
};

/// A tensor whose dim 0 (or, for a consumer, dim 1) is split into units.
struct UnitTensor {
  Operation *op;
  llvm::StringRef name;
  ElementsAttr attr;
  std::vector<double> values;
};

/// Everything a unit edit reads, checked before anything changes.
struct UnitPlan {
  Operation *target;
  ConsumerChain chain;
  /// The target's and siblings' weight and bias: dim 0 holds the units.
  llvm::SmallVector<UnitTensor> rows;
  /// The consumer's weight: dim 1 holds units x columnsPerUnit.
  UnitTensor consumer;
  /// Batch norms on the path, with their entries per unit.
  llvm::SmallVector<std::pair<UnitTensor, int64_t>> statistics;
};

/// Checks that the tensors with `width` units can be held, then reads them.
FailureOr<UnitPlan> planUnitEdit(Operation *target, int64_t width,
                                 ConsumerChain chain, llvm::StringRef pass,
                                 const llvm::Twine &option);

/// Writes the edited tensors and the sizes that describe them.
void applyUnitEdit(const UnitPlan &plan, const UnitMap &map,
                   ConsumerColumns columns);

/// The target of a unit edit at `layer`, checked as every one is: the
/// model carries no recipe, the slot is no alias, and it is a Linear or a
/// groups-1 convolution with at least one unit and nothing a rebuild would
/// drop.
FailureOr<Operation *> lookupUnitTarget(ModelOp model, llvm::StringRef layer,
                                        llvm::StringRef pass);

/// The consumer of `target` (findConsumer) and the check that no call runs
/// it outside its container's order (a custom forward's walk checks calls
/// itself).
FailureOr<ConsumerChain> findUnitConsumer(Operation *target,
                                          bool throughBatchNorm,
                                          llvm::StringRef pass);

/// Widening: unit j < n is unit j, unit j >= n copies unit rng() % n of
/// `std::mt19937_64(seed)` (the same on every platform).
UnitMap chooseUnits(int64_t oldWidth, int64_t width, uint64_t seed);

/// The importance of each of `units` units read from the .npy file at
/// `path`: one finite float per unit, else a refusal on `target`.
FailureOr<std::vector<double>> readImportance(Operation *target,
                                              llvm::StringRef path,
                                              int64_t units,
                                              llvm::StringRef pass);

/// Pruning: the `keep` units of largest `score` (ties: the lower index), in
/// their order.
UnitMap keepUnits(const std::vector<double> &score, int64_t keep);

} // namespace mlir::nnx::surgery

#endif // NNX_LIB_DIALECT_NNX_TRANSFORMS_UNITEDIT_H
