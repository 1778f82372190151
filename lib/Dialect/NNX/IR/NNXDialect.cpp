//===- NNXDialect.cpp - nnx dialect -----------------------------*- C++ -*-===//
#include "nnx/Dialect/NNX/IR/NNXDialect.h"
#include "nnx/Dialect/NNX/IR/Compatibility.h"
#include "nnx/Dialect/NNX/IR/NNXOps.h"
#include "nnx/Dialect/NNX/IR/NNXRecurrentOps.h"
#include "nnx/Dialect/NNX/IR/StateRead.h"
#include "nnx/Dialect/NNX/IR/Weights.h"
#include "nnx/Support/SafeTensors.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::nnx;

#include "nnx/Dialect/NNX/IR/NNXDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "nnx/Dialect/NNX/IR/NNXAttrs.cpp.inc"

void NNXDialect::initialize() {
  weightsFiles = std::make_unique<WeightsFileCache>();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "nnx/Dialect/NNX/IR/NNXAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "nnx/Dialect/NNX/IR/NNXOps.cpp.inc"
      >();
  registerFunctionalOps();
  registerRecurrentOps(*this);
  addNNXBytecodeInterface(*this);
}

//===----------------------------------------------------------------------===//
// Discardable attributes
//===----------------------------------------------------------------------===//

LogicalResult ProbeAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                StringAttr name, ProbePoint, int64_t index,
                                ProbeKind) {
  if (!name || name.getValue().empty())
    return emitError() << "a probe needs a non-empty name";
  if (index < 0)
    return emitError() << "probe '" << name.getValue() << "' has index "
                       << index << ", which is negative";
  return success();
}

LogicalResult
ExternalTensorAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                           ShapedType type, StringRef key, ArrayAttr slices) {
  if (key.empty())
    return emitError() << "an external tensor needs a non-empty key";
  if (!type.hasStaticShape())
    return emitError() << "external tensor '" << key
                       << "' needs a static shape, got " << type;
  if (!slices)
    return success();
  if (static_cast<int64_t>(slices.size()) != type.getRank())
    return emitError() << "external tensor '" << key << "' has "
                       << slices.size() << " slice entries for " << type
                       << " (one per dim: " << type.getRank() << ")";
  for (auto [dim, entry] : llvm::enumerate(slices)) {
    auto runs = dyn_cast<DenseI64ArrayAttr>(entry);
    if (!runs)
      return emitError() << "external tensor '" << key << "': slice entry "
                         << dim << " is " << entry
                         << ", not an array<i64> of runs";
    ArrayRef<int64_t> values = runs.asArrayRef();
    if (values.empty())
      continue;
    if (values.size() % 2 != 0)
      return emitError() << "external tensor '" << key << "': slice entry "
                         << dim << " has " << values.size()
                         << " values, not pairs (start, length)";
    int64_t total = 0;
    for (size_t i = 0; i < values.size(); i += 2) {
      int64_t start = values[i], length = values[i + 1];
      if (start < 0 || length <= 0)
        return emitError() << "external tensor '" << key << "': dim " << dim
                           << " has the run (start " << start << ", length "
                           << length << "); starts are >= 0 and lengths > 0";
      if (llvm::AddOverflow(total, length, total))
        return emitError() << "external tensor '" << key << "': dim " << dim
                           << "'s run lengths overflow";
    }
    if (total != type.getDimSize(dim))
      return emitError() << "external tensor '" << key << "': dim " << dim
                         << "'s runs take " << total
                         << " elements, but the type's dim is "
                         << type.getDimSize(dim);
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Recipes
//===----------------------------------------------------------------------===//

// Targets and config are kept as written (nnx-validate-recipe names each
// malformed entry); the verifiers check only what makes the attribute
// unusable as data.
LogicalResult RecipeOpAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                   StringAttr id, int64_t, ArrayAttr targets,
                                   DictionaryAttr config, ArrayAttr shapes) {
  if (!id || !targets || !config)
    return emitError() << "a recipe operation needs an id, targets and config";
  if (!shapes)
    return success();
  if (shapes.size() != targets.size())
    return emitError() << "recipe operation '" << id.getValue() << "' records "
                       << shapes.size() << " shapes for " << targets.size()
                       << " targets";
  for (Attribute shape : shapes) {
    auto type = dyn_cast<TypeAttr>(shape);
    if (!type || !isa<RankedTensorType>(type.getValue()))
      return emitError() << "recipe operation '" << id.getValue()
                         << "' records a shape that is not a tensor type: "
                         << shape;
  }
  return success();
}

LogicalResult RecipeAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 Materialization, int64_t materialized,
                                 ArrayAttr operations) {
  if (!operations)
    return emitError() << "a recipe needs a list of operations";
  for (auto [i, op] : llvm::enumerate(operations))
    if (!isa<RecipeOpAttr>(op))
      return emitError() << "recipe operation " << i
                         << " is not an #nnx.recipe_op: " << op;
  if (materialized < 0 || materialized > (int64_t)operations.size())
    return emitError() << "a recipe of " << operations.size()
                       << " operations cannot have " << materialized
                       << " materialized";
  for (auto [i, op] : llvm::enumerate(operations))
    if ((int64_t)i < materialized && !cast<RecipeOpAttr>(op).getShapes())
      return emitError() << "materialized recipe operation " << i
                         << " records no target shapes";
  return success();
}

LogicalResult
BaseDescriptorAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                           StringAttr root, ArrayAttr modules) {
  if (!root || root.getValue().empty())
    return emitError() << "a base descriptor needs the root module's key";
  if (!modules || modules.empty())
    return emitError() << "a base descriptor needs at least the root module";
  for (auto [i, m] : llvm::enumerate(modules))
    if (!isa<ModuleDescAttr>(m))
      return emitError() << "base descriptor entry " << i
                         << " is not an #nnx.module_desc: " << m;
  if (!cast<ModuleDescAttr>(modules[0]).getPath().getValue().empty())
    return emitError() << "the first base descriptor entry must be the root "
                          "module (path \"\")";
  return success();
}

/// `attr` is an array whose elements are all `T`; else an error naming
/// `what` the elements must be.
template <typename T>
static LogicalResult verifyArrayOf(Operation *op, NamedAttribute attr,
                                   StringRef what) {
  auto array = dyn_cast<ArrayAttr>(attr.getValue());
  if (!array || !llvm::all_of(array, [](Attribute a) { return isa<T>(a); }))
    return op->emitOpError()
           << "'" << attr.getName().getValue() << "' must be an array of "
           << what << ", got " << attr.getValue();
  return success();
}

/// `nnx.output_names` / `nnx.input_names`: strings, one per result /
/// argument of the nnx.forward it is on.
static LogicalResult verifyForwardNames(Operation *op, NamedAttribute attr) {
  auto forward = dyn_cast<ForwardOp>(op);
  if (!forward)
    return op->emitOpError() << "'" << attr.getName().getValue()
                             << "' must be on an 'nnx.forward'";
  if (failed(verifyArrayOf<StringAttr>(op, attr, "strings")))
    return failure();
  bool results = attr.getName() == kOutputNamesAttrName;
  FunctionType type = forward.getFunctionType();
  size_t names = cast<ArrayAttr>(attr.getValue()).size();
  size_t count = results ? type.getNumResults() : type.getNumInputs();
  StringRef what = results ? "results" : "arguments";
  if (names != count)
    return op->emitOpError()
           << "'" << attr.getName().getValue() << "' names " << names << " "
           << what << ", but the forward has " << count;
  return success();
}

/// `nnx.in_place`: the index of an operand of `op`.
static LogicalResult verifyInPlace(Operation *op, NamedAttribute attr) {
  auto index = dyn_cast<IntegerAttr>(attr.getValue());
  if (!index)
    return op->emitOpError() << "'" << attr.getName().getValue()
                             << "' must be an integer operand index";
  int64_t i = index.getInt();
  if (i < 0 || i >= (int64_t)op->getNumOperands() || op->getNumResults() == 0)
    return op->emitOpError()
           << "'" << attr.getName().getValue() << "' = " << i
           << " names no operand of this op (it has " << op->getNumOperands()
           << " operands and " << op->getNumResults() << " results)";
  return success();
}

/// `nnx.parameter_layouts`: each entry a permutation of its rank.
static LogicalResult verifyParameterLayouts(Operation *op,
                                            NamedAttribute attr) {
  auto dict = dyn_cast<DictionaryAttr>(attr.getValue());
  if (!dict)
    return op->emitOpError() << "'" << attr.getName().getValue()
                             << "' must be a dictionary of permutations";
  for (NamedAttribute entry : dict) {
    auto perm = dyn_cast<DenseI64ArrayAttr>(entry.getValue());
    if (auto view = dyn_cast<DictionaryAttr>(entry.getValue())) {
      auto shape = view.getAs<DenseI64ArrayAttr>("shape");
      perm = view.getAs<DenseI64ArrayAttr>("permutation");
      if (!shape || !perm || shape.size() != perm.size() ||
          llvm::any_of(shape.asArrayRef(), [](int64_t d) { return d < 0; }))
        return op->emitOpError()
               << "'" << attr.getName().getValue() << "': the layout of '"
               << entry.getName().getValue()
               << "' must be {shape = array<i64: ...>, permutation = "
                  "array<i64: ...>} of one rank, got "
               << entry.getValue();
    }
    SmallVector<int64_t> sorted(perm ? perm.asArrayRef() : ArrayRef<int64_t>());
    llvm::sort(sorted);
    bool isPermutation =
        perm && llvm::equal(sorted, llvm::seq<int64_t>(0, sorted.size()));
    if (!isPermutation)
      return op->emitOpError()
             << "'" << attr.getName().getValue() << "': the layout of '"
             << entry.getName().getValue()
             << "' must be a permutation (array<i64: ...>), got "
             << entry.getValue();
  }
  return success();
}

/// An array of dictionaries each of which `isValid` accepts; the error says
/// what an entry must be (`expected`).
static LogicalResult
verifyArrayOfDictionaries(Operation *op, NamedAttribute attr,
                          function_ref<bool(DictionaryAttr)> isValid,
                          StringRef expected) {
  auto array = dyn_cast<ArrayAttr>(attr.getValue());
  if (!array)
    return op->emitOpError() << "'" << attr.getName().getValue()
                             << "' must be an array of dictionaries";
  for (auto [i, a] : llvm::enumerate(array)) {
    auto d = dyn_cast<DictionaryAttr>(a);
    if (!d || !isValid(d))
      return op->emitOpError() << "'" << attr.getName().getValue() << "' entry "
                               << i << " must be " << expected << ", got " << a;
  }
  return success();
}

/// `nnx.index_checks`: dictionaries with string `layer` and `op`, a
/// positive i64 `bound` and optionally an i64 `input` >= 0.
static LogicalResult verifyIndexChecks(Operation *op, NamedAttribute attr) {
  auto isValid = [](DictionaryAttr d) {
    auto bound = d.getAs<IntegerAttr>("bound");
    auto input = d.getAs<IntegerAttr>("input");
    return d.getAs<StringAttr>("layer") && d.getAs<StringAttr>("op") && bound &&
           bound.getInt() > 0 &&
           (!d.get("input") || (input && input.getInt() >= 0));
  };
  return verifyArrayOfDictionaries(
      op, attr, isValid,
      "{layer = \"...\", op = \"...\", bound = N > 0 [, input = K >= 0]}");
}

/// `nnx.shape_checks`: {op = "...", operand, dim, source_operand,
/// source_dim >= 0, argument, source_argument >= -1}.
static LogicalResult verifyShapeChecks(Operation *op, NamedAttribute attr) {
  auto isValid = [](DictionaryAttr d) {
    auto atLeast = [&](StringRef key, int64_t min) {
      auto v = d.getAs<IntegerAttr>(key);
      return v && v.getInt() >= min;
    };
    return d.getAs<StringAttr>("op") && atLeast("operand", 0) &&
           atLeast("dim", 0) && atLeast("source_operand", 0) &&
           atLeast("source_dim", 0) && atLeast("argument", -1) &&
           atLeast("source_argument", -1);
  };
  return verifyArrayOfDictionaries(
      op, attr, isValid,
      "{op = \"...\", operand, dim, source_operand, source_dim >= 0, "
      "argument, source_argument >= -1}");
}

/// The ranks N of a tensor-parallel attribute `name` = {ranks = N : i64}
/// (N >= 2), with `rank = R : i64` (0 <= R < N) too when `withRank`, and no
/// other entries; otherwise an error at `loc` when given.
static FailureOr<int64_t> readRanks(Attribute value, StringRef name,
                                    bool withRank,
                                    std::optional<Location> loc) {
  auto dict = dyn_cast<DictionaryAttr>(value);
  auto i64 = [&](StringRef key) {
    auto v = dict ? dict.getAs<IntegerAttr>(key) : IntegerAttr();
    return v && v.getType().isSignlessInteger(64) ? std::optional(v.getInt())
                                                  : std::nullopt;
  };
  std::optional<int64_t> ranks = i64("ranks");
  std::optional<int64_t> rank =
      withRank ? i64("rank") : std::optional<int64_t>(0);
  if (ranks && *ranks >= 2 && rank && *rank >= 0 && *rank < *ranks &&
      dict.size() == (withRank ? 2u : 1u))
    return *ranks;
  if (loc)
    emitError(*loc) << "'" << name << "' must be "
                    << (withRank ? "{ranks = N : i64, rank = R : i64} with "
                                   "N >= 2 and 0 <= R < N"
                                 : "{ranks = N : i64} with N >= 2")
                    << ", got " << value;
  return failure();
}

FailureOr<int64_t> mlir::nnx::getPartialSumRanks(Operation *op,
                                                 std::optional<Location> loc) {
  Attribute value = op->getAttr(kPartialSumAttrName);
  if (!value)
    return 0;
  if (!isa<LinearOp>(op)) {
    if (loc)
      emitError(*loc) << "'" << kPartialSumAttrName
                      << "' must be on an 'nnx.linear', not on '"
                      << op->getName() << "'";
    return failure();
  }
  return readRanks(value, kPartialSumAttrName, /*withRank=*/false, loc);
}

LogicalResult NNXDialect::verifyOperationAttribute(Operation *op,
                                                   NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == kPartialSumAttrName)
    return getPartialSumRanks(op, op->getLoc());
  if (name == kTensorParallelAttrName) {
    if (!isa<ModelOp>(op))
      return op->emitOpError() << "'" << name << "' must be on an 'nnx.model'";
    return readRanks(attr.getValue(), name, /*withRank=*/true, op->getLoc());
  }
  if (name == kProbesAttrName)
    return verifyArrayOf<ProbeAttr>(op, attr, "#nnx.probe");
  if (name == kKwargsAttrName || name == kReadProbesAttrName ||
      name == kWriteProbesAttrName || name == kParameterNamesAttrName ||
      name == kBuffersAttrName)
    return verifyArrayOf<StringAttr>(op, attr, "strings");
  if (name == kParameterLayoutsAttrName)
    return verifyParameterLayouts(op, attr);
  if (name == kOutputNamesAttrName || name == kInputNamesAttrName)
    return verifyForwardNames(op, attr);
  if (name == kParametersAttrName)
    return verifyArrayOf<ElementsAttr>(op, attr, "tensor attributes");
  if (name == kInPlaceAttrName)
    return verifyInPlace(op, attr);
  if (name == kIndexChecksAttrName)
    return verifyIndexChecks(op, attr);
  if (name == kShapeChecksAttrName)
    return verifyShapeChecks(op, attr);
  if (name == kBaseAttrName || name == kRecipeAttrName) {
    bool right = name == kBaseAttrName
                     ? isa<BaseDescriptorAttr>(attr.getValue())
                     : isa<RecipeAttr>(attr.getValue());
    if (!isa<ModelOp>(op) || !right)
      return op->emitOpError()
             << "'" << name << "' must be "
             << (name == kBaseAttrName ? "an #nnx.base" : "an #nnx.recipe")
             << " on an 'nnx.model'";
    return success();
  }
  if (name == kAccumulateAttrName) {
    auto mode = dyn_cast<StringAttr>(attr.getValue());
    if (!mode || (mode.getValue() != "f32" && mode.getValue() != "storage"))
      return op->emitOpError()
             << "'" << name << "' must be \"f32\" or \"storage\", got "
             << attr.getValue();
    return success();
  }
  if (name == kStateOfAttrName) {
    if (!isa<StateOp>(op) || !isa<SymbolRefAttr>(attr.getValue()))
      return op->emitOpError()
             << "'" << name << "' must be a module reference on an 'nnx.state'";
    return success();
  }
  if (name == kEntryAttrName) {
    if (!isa<ForwardOp>(op) || !isa<StringAttr>(attr.getValue()))
      return op->emitOpError()
             << "'" << name << "' must be a string on an 'nnx.forward'";
    return success();
  }
  if (name == kUncalledAttrName) {
    if (!isa<CustomModuleOp>(op) || !isa<UnitAttr>(attr.getValue()))
      return op->emitOpError()
             << "'" << name << "' must be a unit attribute on an 'nnx.module'";
    return success();
  }
  if (name == kTargetAttrName) {
    if (!isa<ModuleOp>(op) || !isa<TargetAttr>(attr.getValue()))
      return op->emitOpError()
             << "'" << name << "' must be an #nnx.target on a builtin.module";
    return success();
  }
  if (name == kSourceAttrName || name == kWeightsAttrName) {
    if (!isa<StringAttr>(attr.getValue()))
      return op->emitOpError() << "'" << name << "' must be a string";
    return success();
  }
  return op->emitOpError()
         << "'" << name
         << "' is not an attribute of the nnx dialect "
            "(known: nnx.probes, nnx.source, nnx.kwargs, nnx.output_names, "
            "nnx.input_names, nnx.in_place, nnx.read_probes, "
            "nnx.write_probes, nnx.parameters, "
            "nnx.parameter_names, nnx.weights, "
            "nnx.parameter_layouts, nnx.index_checks, nnx.base, "
            "nnx.recipe, nnx.buffers, nnx.accumulate, nnx.partial_sum, "
            "nnx.tensor_parallel, nnx.target, nnx.of, nnx.uncalled, "
            "nnx.entry)";
}
