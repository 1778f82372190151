//===- RecipeUtils.h - what the recipe passes share -------------*- C++ -*-===//
//
// Base descriptors (describe a tree, build one back), the structural edits
// of the two recipe operations (shared by materialization and the
// shapes-only replay of a rebuild), and the checks of recorded operations.
//
//===----------------------------------------------------------------------===//
#ifndef NNX_LIB_DIALECT_NNX_TRANSFORMS_RECIPEUTILS_H
#define NNX_LIB_DIALECT_NNX_TRANSFORMS_RECIPEUTILS_H

#include "nnx/Dialect/NNX/IR/NNXOps.h"

#include "mlir/IR/OwningOpRef.h"
#include <functional>
#include <random>

namespace mlir::nnx::recipe {

inline constexpr llvm::StringLiteral kLora = "lora";
inline constexpr llvm::StringLiteral kLowRank = "low_rank";
/// The one version of each operation.
inline constexpr int64_t kVersion = 1;

/// The descriptor entries (#nnx.module_desc) of the tree under `root`, in
/// pre-order: attributes without the key, tensors replaced by their types.
ArrayAttr describe(ModuleOpInterface root);

/// Makes the tensor `name` of the module being built at `path`.
using TensorFill =
    std::function<ElementsAttr(llvm::StringRef path, OperationName kind,
                               llvm::StringRef name, RankedTensorType type)>;
/// A zero tensor of `type` (a splat).
ElementsAttr zeroTensor(RankedTensorType type);
/// Zeros (a splat): the placeholder of a shapes-only build.
TensorFill zeroFill();
/// Seeded random tensors: PyTorch's default initialisations (uniform
/// +-1/sqrt(in) for projections, ones/zeros for norms and statistics).
TensorFill randomFill(std::mt19937_64 &rng);

/// A detached model with `model`'s name, inputs and attributes whose tree is
/// built from `model`'s base descriptor with tensors from `fill`. Custom
/// modules take the forward of the first module of the same class in
/// `model` (the registered class's code). Emits an error (prefixed with
/// `pass`) when the descriptor cannot be built.
FailureOr<OwningOpRef<ModelOp>> buildBase(ModelOp model, const TensorFill &fill,
                                          llvm::StringRef pass);

/// Reads a recipe operation's options; `error` describes the first problem.
struct OpOptions {
  int64_t rank = 0; // lora: r; low_rank: rank
  double alpha = 0;
};
FailureOr<OpOptions> readOptions(RecipeOpAttr op, std::string &error);
/// Empty when `op`'s id and version are known, else why not.
std::string checkKnown(RecipeOpAttr op);

/// Replaces the Linear `target` by an `nnx.lora` wrapping it: base weight and
/// bias frozen, adapters `a` (r x in) and `b` (out x r), `alpha`.
LoraOp wrapLora(LinearOp target, ElementsAttr a, ElementsAttr b, double alpha);
/// Replaces the Linear `target` by a positional sequential of two Linears,
/// `first` (k x in) and `second` (out x k, with the target's bias); flags
/// and mode carried over.
void replaceByFactors(LinearOp target, ElementsAttr first, ElementsAttr second);

/// Replays the first `count` operations of `recipe` on `model` as shapes
/// (zero tensors): LoRA wrappers and two-Linear factors of the recorded
/// shapes. Emits an error naming the operation on a target that is missing,
/// not a Linear, or not of the recorded shape.
LogicalResult replayShapes(ModelOp model, RecipeAttr recipe, int64_t count,
                           llvm::StringRef pass);

/// Emits one error per difference between `live` and `expected`
/// (descriptors of the same model), at the live module where there is one
/// (else at `model`): `what` says what the expected tree is, `hint` what to
/// do about it. Failure iff any.
LogicalResult reportDifferences(ModelOp model, ArrayAttr live,
                                ArrayAttr expected, llvm::StringRef pass,
                                const llvm::Twine &what, llvm::StringRef hint);

/// Visits `op` (at `path`) and the registered children below it, pre-order.
void walkTree(Operation *op, llvm::StringRef path,
              llvm::function_ref<void(Operation *, llvm::StringRef)> visit);

/// The registered op (module or alias) at each dotted path under `root`.
llvm::StringMap<Operation *> indexTree(ModuleOpInterface root);

/// The model's recipe with operation `index` replaced by `op`.
RecipeAttr withOperation(RecipeAttr recipe, int64_t index, RecipeOpAttr op);

} // namespace mlir::nnx::recipe

#endif // NNX_LIB_DIALECT_NNX_TRANSFORMS_RECIPEUTILS_H
