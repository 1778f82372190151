//===- RecipeUtils.cpp - descriptors, replay, recipe operations -*- C++ -*-===//
#include "RecipeUtils.h"
#include "SurgeryUtils.h"

#include "nnx/Dialect/NNX/IR/ModuleTree.h"
#include "nnx/Dialect/NNX/IR/StateRead.h"
#include "nnx/Dialect/NNX/IR/TensorUtils.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringSet.h"

#include <cmath>

using namespace mlir;
using namespace mlir::nnx;
using namespace mlir::nnx::recipe;

static std::string joinPath(StringRef parent, StringRef key) {
  return parent.empty() ? key.str() : (parent + "." + key).str();
}

/// `attr` with every tensor replaced by its type.
static Attribute stripTensors(Attribute attr) {
  MLIRContext *ctx = attr.getContext();
  if (auto tensor = dyn_cast<ElementsAttr>(attr))
    return TypeAttr::get(tensor.getType());
  if (auto dict = dyn_cast<DictionaryAttr>(attr)) {
    NamedAttrList entries;
    for (NamedAttribute entry : dict)
      entries.append(entry.getName(), stripTensors(entry.getValue()));
    return entries.getDictionary(ctx);
  }
  return attr;
}

void recipe::walkTree(Operation *op, StringRef path,
                      function_ref<void(Operation *, StringRef)> visit) {
  visit(op, path);
  if (!isa<ModuleOpInterface>(op) || op->getNumRegions() != 1 ||
      op->getRegion(0).empty())
    return;
  for (Operation &child : op->getRegion(0).front())
    if (isRegisteredChild(&child))
      walkTree(&child, joinPath(path, SymbolTable::getSymbolName(&child)),
               visit);
}

ArrayAttr recipe::describe(ModuleOpInterface root) {
  MLIRContext *ctx = root->getContext();
  SmallVector<Attribute> entries;
  walkTree(root, "", [&](Operation *op, StringRef path) {
    NamedAttrList attrs;
    for (NamedAttribute attr : op->getAttrDictionary()) {
      // The key is the path; `merged` is a state of the adapter, not
      // structure (a rebuild loads it with the tensors).
      if (attr.getName() == SymbolTable::getSymbolAttrName() ||
          (isa<LoraOp>(op) && attr.getName() == "merged"))
        continue;
      attrs.append(attr.getName(), stripTensors(attr.getValue()));
    }
    entries.push_back(
        ModuleDescAttr::get(ctx, StringAttr::get(ctx, path),
                            StringAttr::get(ctx, op->getName().getStringRef()),
                            attrs.getDictionary(ctx)));
  });
  return ArrayAttr::get(ctx, entries);
}

llvm::StringMap<Operation *> recipe::indexTree(ModuleOpInterface root) {
  llvm::StringMap<Operation *> index;
  if (root)
    walkTree(root, "",
             [&](Operation *op, StringRef path) { index[path] = op; });
  return index;
}

ElementsAttr recipe::zeroTensor(RankedTensorType type) {
  Type elt = type.getElementType();
  Attribute zero = isa<FloatType>(elt) ? Attribute(FloatAttr::get(elt, 0.0))
                                       : Attribute(IntegerAttr::get(elt, 0));
  return cast<ElementsAttr>(DenseElementsAttr::get(type, zero));
}

TensorFill recipe::zeroFill() {
  return [](StringRef, OperationName, StringRef, RankedTensorType type) {
    return zeroTensor(type);
  };
}

/// The layers PyTorch initializes as norms: weight 1 and bias 0.
static bool isNormKind(OperationName kind) {
  auto *layer = kind.getInterface<LayerOpInterface>();
  return layer && layer->initializesAsNorm();
}

TensorFill recipe::randomFill(std::mt19937_64 &rng) {
  return [&rng](StringRef, OperationName kind, StringRef name,
                RankedTensorType type) -> ElementsAttr {
    bool norm = isNormKind(kind);
    if (!isa<FloatType>(type.getElementType()) || name == "running_mean" ||
        (norm && name == "bias"))
      return zeroTensor(type);
    int64_t count = type.getNumElements();
    if (name == "running_var" || norm)
      return makeTensor(type, std::vector<double>(count, 1.0));
    int64_t fanIn =
        type.getRank() >= 2 ? type.getDimSize(1) : std::max<int64_t>(1, count);
    double bound = 1.0 / std::sqrt((double)std::max<int64_t>(1, fanIn));
    std::uniform_real_distribution<double> dist(-bound, bound);
    std::vector<double> values(count);
    for (double &v : values)
      v = dist(rng);
    return makeTensor(type, values);
  };
}

/// `attr` with every tensor type (as `stripTensors` wrote it) replaced by a
/// tensor from `fill`.
static Attribute fillTensors(Attribute attr, StringRef path, OperationName kind,
                             StringRef name, const TensorFill &fill) {
  if (auto type = dyn_cast<TypeAttr>(attr))
    if (auto tensor = dyn_cast<RankedTensorType>(type.getValue()))
      return fill(path, kind, name, tensor);
  if (auto dict = dyn_cast<DictionaryAttr>(attr)) {
    NamedAttrList entries;
    for (NamedAttribute entry : dict)
      entries.append(entry.getName(),
                     fillTensors(entry.getValue(), path, kind,
                                 entry.getName().strref(), fill));
    return entries.getDictionary(attr.getContext());
  }
  return attr;
}

/// Creates the module of `desc` (key `key`) at the end of `block`.
static FailureOr<Operation *> buildEntry(ModuleDescAttr desc, StringRef key,
                                         Block *block, Location loc,
                                         const TensorFill &fill) {
  MLIRContext *ctx = desc.getContext();
  std::optional<RegisteredOperationName> name =
      RegisteredOperationName::lookup(desc.getKind().getValue(), ctx);
  if (!name)
    return failure();
  OperationState state(loc, *name);
  state.addAttribute(SymbolTable::getSymbolAttrName(),
                     StringAttr::get(ctx, key));
  for (NamedAttribute attr : desc.getAttributes())
    state.addAttribute(attr.getName(),
                       fillTensors(attr.getValue(), desc.getPath(), *name,
                                   attr.getName(), fill));
  if (name->hasTrait<OpTrait::SymbolTable>())
    state.addRegion()->emplaceBlock();
  Operation *op = Operation::create(state);
  block->push_back(op);
  return op;
}

/// Gives every custom module of `built` the forward of the first module of
/// its class in `model`.
static LogicalResult addForwards(ModelOp built, ModelOp model, StringRef pass) {
  SmallVector<CustomModuleOp> customs;
  built.walk([&](CustomModuleOp m) { customs.push_back(m); });
  for (CustomModuleOp m : customs) {
    if (isUncalledModule(m))
      continue; // never called: it has no forward
    CustomModuleOp source;
    model.walk([&](CustomModuleOp candidate) {
      if (!source && candidate.getClassName() == m.getClassName() &&
          candidate.getForward())
        source = candidate;
    });
    if (!source)
      return model.emitError()
             << pass << ": base module '" << getModulePath(m) << "' of class '"
             << m.getClassName()
             << "': no module of that class in the model provides its "
                "forward, so the descriptor cannot rebuild it (use the "
                "surgery passes directly)";
    m.getBody().front().push_back(source.getForward()->clone());
  }
  return success();
}

FailureOr<OwningOpRef<ModelOp>>
recipe::buildBase(ModelOp model, const TensorFill &fill, StringRef pass) {
  BaseDescriptorAttr base = model.getBaseAttr();
  OwningOpRef<ModelOp> out(cast<ModelOp>(model->cloneWithoutRegions()));
  out->getBody().emplaceBlock();
  llvm::StringMap<Operation *> live = indexTree(model.getRootModule());
  llvm::StringMap<Operation *> built;
  for (Attribute entry : base.getModules()) {
    auto desc = cast<ModuleDescAttr>(entry);
    StringRef path = desc.getPath().getValue();
    size_t dot = path.rfind('.');
    StringRef parent = dot == StringRef::npos ? "" : path.take_front(dot);
    StringRef key = dot == StringRef::npos ? path : path.drop_front(dot + 1);
    Block *block = &out->getBody().front();
    if (path.empty()) {
      key = base.getRoot().getValue();
    } else {
      Operation *container = built.lookup(parent);
      if (!container || container->getNumRegions() != 1)
        return model.emitError() << pass << ": base descriptor entry '" << path
                                 << "' has no container '" << parent << "'";
      block = &container->getRegion(0).front();
    }
    Operation *at = live.lookup(path);
    FailureOr<Operation *> op =
        buildEntry(desc, key, block, at ? at->getLoc() : model.getLoc(), fill);
    if (failed(op))
      return model.emitError()
             << pass << ": base descriptor entry '" << path
             << "' has unknown kind '" << desc.getKind().getValue() << "'";
    built[path] = *op;
  }
  if (failed(addForwards(*out, model, pass)))
    return failure();
  if (failed(verify(*out)))
    return model.emitError()
           << pass << ": the base descriptor does not describe a valid model";
  return out;
}

std::string recipe::checkKnown(RecipeOpAttr op) {
  StringRef id = op.getId().getValue();
  if (id != kLora && id != kLowRank)
    return ("unknown operation '" + id + "' (known: lora, low_rank)").str();
  if (op.getVersion() != kVersion)
    return ("unknown version " + Twine(op.getVersion()) + " of '" + id +
            "' (known: " + Twine(kVersion) + ")")
        .str();
  return "";
}

/// Option `key` of `config`: a positive integer.
static std::optional<int64_t> positiveInt(DictionaryAttr config, StringRef key,
                                          std::string &error) {
  auto value = dyn_cast_or_null<IntegerAttr>(config.get(key));
  if (value && value.getType().isSignlessInteger() && value.getInt() >= 1)
    return value.getInt();
  llvm::raw_string_ostream os(error);
  os << "option '" << key << "' must be a positive integer, got ";
  if (Attribute a = config.get(key))
    os << a;
  else
    os << "nothing";
  return std::nullopt;
}

FailureOr<OpOptions> recipe::readOptions(RecipeOpAttr op, std::string &error) {
  bool lora = op.getId().getValue() == kLora;
  DictionaryAttr config = op.getConfig();
  for (NamedAttribute entry : config) {
    StringRef key = entry.getName();
    if (lora ? (key != "r" && key != "alpha") : key != "rank") {
      error = ("unknown option '" + key +
               "' (known: " + (lora ? "r, alpha" : "rank") + ")")
                  .str();
      return failure();
    }
  }
  OpOptions options;
  std::optional<int64_t> rank = positiveInt(config, lora ? "r" : "rank", error);
  if (!rank)
    return failure();
  options.rank = *rank;
  if (!lora)
    return options;
  auto alpha = dyn_cast_or_null<FloatAttr>(config.get("alpha"));
  if (!alpha || !std::isfinite(alpha.getValueAsDouble())) {
    llvm::raw_string_ostream os(error);
    os << "option 'alpha' must be a finite float, got ";
    if (Attribute a = config.get("alpha"))
      os << a;
    else
      os << "nothing";
    return failure();
  }
  options.alpha = alpha.getValueAsDouble();
  return options;
}

LoraOp recipe::wrapLora(LinearOp target, ElementsAttr a, ElementsAttr b,
                        double alpha) {
  OpBuilder builder(target);
  auto lora = LoraOp::create(
      builder, target.getLoc(), target.getSymNameAttr(), target.getTrainAttr(),
      nullptr, nullptr, nullptr, nullptr, nullptr, target.getWeightAttr(),
      target.getBiasAttr(), a, b, builder.getF64FloatAttr(alpha), nullptr);
  // The base layer is frozen: only the adapter trains.
  surgery::setRequiresGrad(lora, "weight", false);
  if (target.getBiasAttr())
    surgery::setRequiresGrad(lora, "bias", false);
  for (NamedAttribute attr : target->getDiscardableAttrs())
    lora->setAttr(attr.getName(), attr.getValue());
  target.erase();
  return lora;
}

void recipe::replaceByFactors(LinearOp target, ElementsAttr first,
                              ElementsAttr second) {
  OpBuilder b(target);
  Location loc = target.getLoc();
  auto seq = SequentialOp::create(
      b, loc, target.getSymName(), target.getTrain(), nullptr, nullptr, nullptr,
      nullptr, nullptr, Keying::positional, nullptr);
  seq.getBody().emplaceBlock();
  b.setInsertionPointToStart(&seq.getBody().front());
  auto lin0 = LinearOp::create(b, loc, surgery::positionalKey(0),
                               target.getTrain(), nullptr, nullptr, nullptr,
                               nullptr, nullptr, first, nullptr,
                               /*lazy=*/false, nullptr);
  auto lin1 = LinearOp::create(b, loc, surgery::positionalKey(1),
                               target.getTrain(), nullptr, nullptr, nullptr,
                               nullptr, nullptr, second, target.getBiasAttr(),
                               /*lazy=*/false, nullptr);
  auto source = cast<ModuleOpInterface>(target.getOperation());
  surgery::copyRequiresGrad(source, "weight", lin0, "weight");
  surgery::copyRequiresGrad(source, "weight", lin1, "weight");
  if (target.getBiasAttr())
    surgery::copyRequiresGrad(source, "bias", lin1, "bias");
  target.erase();
}

/// Replays operation `index` (`op`, options `options`) as shapes.
static LogicalResult replayOne(ModelOp model, int64_t index, RecipeOpAttr op,
                               const OpOptions &options, StringRef pass) {
  for (auto [j, t] : llvm::enumerate(op.getTargets())) {
    StringRef path = cast<StringAttr>(t).getValue();
    auto recorded =
        cast<RankedTensorType>(cast<TypeAttr>(op.getShapes()[j]).getValue());
    auto lin = dyn_cast_or_null<LinearOp>(
        lookupRegistered(model.getRootModule(), path));
    auto diag = [&]() {
      return model.emitError()
             << pass << ": operation " << index << " ('"
             << op.getId().getValue() << "'), target '" << path << "': ";
    };
    if (!lin || !lin.getWeightAttr())
      return diag() << "the replay finds no initialized Linear there";
    if (lin.getWeightAttr().getType() != recorded)
      return diag() << "was recorded with weight " << recorded
                    << ", the replay finds " << lin.getWeightAttr().getType();
    int64_t out = recorded.getDimSize(0), in = recorded.getDimSize(1);
    int64_t k = options.rank;
    ElementsAttr first = zeroTensor(recorded.clone({k, in}));
    ElementsAttr second = zeroTensor(recorded.clone({out, k}));
    if (op.getId().getValue() == kLora)
      wrapLora(lin, first, second, options.alpha);
    else
      replaceByFactors(lin, first, second);
  }
  return success();
}

LogicalResult recipe::replayShapes(ModelOp model, RecipeAttr recipe,
                                   int64_t count, StringRef pass) {
  for (int64_t i = 0; i < count; ++i) {
    auto op = cast<RecipeOpAttr>(recipe.getOperations()[i]);
    std::string why = checkKnown(op);
    FailureOr<OpOptions> options = failure();
    if (why.empty())
      options = readOptions(op, why);
    if (failed(options))
      return model.emitError() << pass << ": recorded operation " << i << " ('"
                               << op.getId().getValue() << "'): " << why;
    if (failed(replayOne(model, i, op, *options, pass)))
      return failure();
  }
  return success();
}

/// The first attribute in which `a` and `b` differ, described.
static std::string describeDifference(ModuleDescAttr live,
                                      ModuleDescAttr expected) {
  std::string out;
  llvm::raw_string_ostream os(out);
  if (live.getKind() != expected.getKind()) {
    os << "it is " << live.getKind().getValue() << ", expected "
       << expected.getKind().getValue();
    return out;
  }
  llvm::StringSet<> names;
  for (NamedAttribute a : live.getAttributes())
    names.insert(a.getName());
  for (NamedAttribute a : expected.getAttributes())
    names.insert(a.getName());
  SmallVector<StringRef> sorted(names.keys());
  llvm::sort(sorted);
  for (StringRef name : sorted) {
    Attribute l = live.getAttributes().get(name);
    Attribute e = expected.getAttributes().get(name);
    if (l == e)
      continue;
    os << "its '" << name << "' is ";
    l ? (void)(os << l) : (void)(os << "absent");
    os << ", expected ";
    e ? (void)(os << e) : (void)(os << "absent");
    return out;
  }
  return out;
}

LogicalResult recipe::reportDifferences(ModelOp model, ArrayAttr live,
                                        ArrayAttr expected, StringRef pass,
                                        const Twine &what, StringRef hint) {
  llvm::StringMap<Operation *> ops = indexTree(model.getRootModule());
  llvm::StringMap<ModuleDescAttr> expectedByPath, liveByPath;
  for (Attribute e : expected)
    expectedByPath[cast<ModuleDescAttr>(e).getPath()] = cast<ModuleDescAttr>(e);
  bool differs = false;
  for (Attribute l : live) {
    auto desc = cast<ModuleDescAttr>(l);
    StringRef path = desc.getPath().getValue();
    liveByPath[path] = desc;
    Operation *at = ops.lookup(path);
    Location loc = at ? at->getLoc() : model.getLoc();
    ModuleDescAttr exp = expectedByPath.lookup(path);
    if (exp == desc)
      continue;
    differs = true;
    std::string display = path.empty() ? "<root>" : path.str();
    if (!exp)
      emitError(loc) << pass << ": module '" << display << "' ("
                     << desc.getKind().getValue() << ") is not part of " << what
                     << "; " << hint;
    else
      emitError(loc) << pass << ": module '" << display << "' differs from "
                     << what << ": " << describeDifference(desc, exp) << "; "
                     << hint;
  }
  for (Attribute e : expected) {
    auto desc = cast<ModuleDescAttr>(e);
    if (liveByPath.count(desc.getPath()))
      continue;
    differs = true;
    emitError(model.getLoc())
        << pass << ": module '" << desc.getPath().getValue() << "' ("
        << desc.getKind().getValue() << ") of " << what << " is missing; "
        << hint;
  }
  if (!differs && live != expected) {
    differs = true;
    emitError(model.getLoc())
        << pass << ": the registration order differs from " << what << "; "
        << hint;
  }
  return failure(differs);
}

RecipeAttr recipe::withOperation(RecipeAttr recipe, int64_t index,
                                 RecipeOpAttr op) {
  SmallVector<Attribute> ops(recipe.getOperations().getValue());
  ops[index] = op;
  return RecipeAttr::get(recipe.getContext(), recipe.getMaterialization(),
                         recipe.getMaterialized(),
                         ArrayAttr::get(recipe.getContext(), ops));
}
