//===- ModuleTree.cpp - dotted paths, aliases, shapes, counts ---*- C++ -*-===//
#include "nnx/Dialect/NNX/IR/ModuleTree.h"
#include "nnx/Dialect/NNX/IR/ModuleVisitor.h"
#include "nnx/Dialect/NNX/IR/NNXRecurrentOps.h"
#include "nnx/Dialect/NNX/IR/StateRead.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::nnx;

SmallVector<StringRef> mlir::nnx::splitPath(StringRef path) {
  SmallVector<StringRef> segments;
  if (!path.empty())
    path.split(segments, '.', /*MaxSplit=*/-1, /*KeepEmpty=*/true);
  return segments;
}

bool mlir::nnx::isRegisteredChild(Operation *op) {
  return isa_and_nonnull<ModuleOpInterface, AliasOp>(op);
}

bool mlir::nnx::isForwardlessContainer(Operation *op) {
  return isa_and_nonnull<ModuleListOp, ModuleDictOp>(op);
}

Operation *mlir::nnx::lookupChild(Operation *container, StringRef key) {
  if (!container || !container->hasTrait<OpTrait::SymbolTable>())
    return nullptr;
  Operation *found = SymbolTable::lookupSymbolIn(
      container, StringAttr::get(container->getContext(), key));
  return isRegisteredChild(found) ? found : nullptr;
}

ModelOp mlir::nnx::getParentModel(Operation *op) {
  if (auto model = dyn_cast_or_null<ModelOp>(op))
    return model;
  return op ? op->getParentOfType<ModelOp>() : ModelOp();
}

namespace {
/// Alias resolution that follows each alias at most once: `active` holds the
/// aliases whose resolution is under way, and meeting one of them again is a
/// cycle (recorded in `cycle`) that resolves to nothing.
struct AliasResolver {
  llvm::SmallPtrSet<Operation *, 4> active;
  AliasOp cycle;

  ModuleOpInterface followAlias(Operation *op);
  Operation *followReference(Operation *scope, SymbolRefAttr ref);
};
} // namespace

ModuleOpInterface AliasResolver::followAlias(Operation *op) {
  if (auto m = dyn_cast_or_null<ModuleOpInterface>(op))
    return m;
  auto alias = dyn_cast_or_null<AliasOp>(op);
  ModelOp model = getParentModel(alias);
  if (!alias || !model || !model.getRootModule())
    return {};
  if (!active.insert(alias).second) {
    if (!cycle)
      cycle = alias;
    return {};
  }
  Operation *target = followReference(model.getRootModule(), alias.getTarget());
  active.erase(alias);
  return dyn_cast_or_null<ModuleOpInterface>(target);
}

Operation *AliasResolver::followReference(Operation *scope, SymbolRefAttr ref) {
  Operation *current = lookupChild(scope, ref.getRootReference().getValue());
  for (FlatSymbolRefAttr nested : ref.getNestedReferences()) {
    ModuleOpInterface m = followAlias(current);
    if (!m)
      return nullptr;
    current = lookupChild(m, nested.getValue());
  }
  return current;
}

ModuleOpInterface mlir::nnx::resolveAlias(Operation *op, AliasOp *cycle) {
  AliasResolver resolver;
  ModuleOpInterface m = resolver.followAlias(op);
  if (cycle)
    *cycle = resolver.cycle;
  return m;
}

Operation *mlir::nnx::resolveReference(Operation *scope, SymbolRefAttr ref,
                                       AliasOp *cycle) {
  AliasResolver resolver;
  Operation *found = resolver.followReference(scope, ref);
  if (cycle)
    *cycle = resolver.cycle;
  return found;
}

ModuleOpInterface mlir::nnx::findContainerReachableFrom(ModuleOpInterface from,
                                                        Operation *op) {
  llvm::SmallPtrSet<Operation *, 16> seen;
  SmallVector<ModuleOpInterface> worklist{from};
  while (!worklist.empty()) {
    ModuleOpInterface m = worklist.pop_back_val();
    if (!m || !seen.insert(m).second)
      continue;
    if (m->isAncestor(op))
      return m;
    if (!m->hasTrait<OpTrait::SymbolTable>())
      continue;
    for (Operation &child : m->getRegion(0).front())
      if (isRegisteredChild(&child))
        worklist.push_back(resolveAlias(&child));
  }
  return {};
}

Operation *mlir::nnx::lookupRegistered(ModuleOpInterface root, StringRef path,
                                       unsigned *failedSegment) {
  Operation *current = root;
  for (auto [i, segment] : llvm::enumerate(splitPath(path))) {
    Operation *child = lookupChild(resolveAlias(current), segment);
    if (!child) {
      if (failedSegment)
        *failedSegment = i;
      return nullptr;
    }
    current = child;
  }
  return current;
}

FailureOr<ModuleOpInterface>
mlir::nnx::lookupModule(ModelOp model, StringRef path, std::string *whyNot) {
  ModuleOpInterface root = model.getRootModule();
  unsigned failed = 0;
  Operation *found = root ? lookupRegistered(root, path, &failed) : nullptr;
  if (!found) {
    if (whyNot) {
      SmallVector<StringRef> segs = splitPath(path);
      std::string parent = llvm::join(ArrayRef(segs).take_front(failed), ".");
      *whyNot = (Twine("no module '") +
                 (failed < segs.size() ? segs[failed] : "") + "' in " +
                 (parent.empty() ? Twine("the root module")
                                 : Twine("'") + parent + "'") +
                 " (path '" + path + "', segment " + Twine(failed) + ")")
                    .str();
    }
    return failure();
  }
  ModuleOpInterface module = resolveAlias(found);
  if (!module) {
    if (whyNot)
      *whyNot = ("alias at '" + path + "' names no module").str();
    return failure();
  }
  return module;
}

std::string mlir::nnx::getModulePath(Operation *op) {
  SmallVector<StringRef> keys;
  for (Operation *cur = op; cur && !isa<ModelOp>(cur);
       cur = cur->getParentOp()) {
    if (isa<ModelOp>(cur->getParentOp() ? cur->getParentOp() : cur))
      break; // the root module's own key is not part of paths
    if (!isRegisteredChild(cur))
      continue; // ops of a forward, the forward itself
    if (auto name =
            cur->getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName()))
      keys.push_back(name.getValue());
  }
  std::reverse(keys.begin(), keys.end());
  return llvm::join(keys, ".");
}

SmallVector<AliasOp> mlir::nnx::getAliasesOf(ModuleOpInterface module) {
  SmallVector<AliasOp> aliases;
  ModelOp model = getParentModel(module);
  if (!model)
    return aliases;
  model.walk([&](AliasOp alias) {
    if (resolveAlias(alias) == module)
      aliases.push_back(alias);
  });
  return aliases;
}

SmallVector<AliasOp> mlir::nnx::getAliasesReaching(ModuleOpInterface module) {
  SmallVector<AliasOp> aliases;
  ModelOp model = getParentModel(module);
  if (!model)
    return aliases;
  llvm::SmallPtrSet<Operation *, 8> reachers;
  for (Operation *cur = module; cur && cur != model; cur = cur->getParentOp())
    if (isa<ModuleOpInterface>(cur))
      reachers.insert(cur);
  model.walk([&](AliasOp alias) {
    if (ModuleOpInterface target = resolveAlias(alias))
      if (reachers.contains(target))
        aliases.push_back(alias);
  });
  return aliases;
}

static std::optional<int64_t>
countParameters(Operation *op, llvm::DenseSet<Operation *> &seen) {
  ModuleOpInterface m = resolveAlias(op);
  if (!m || !seen.insert(m).second)
    return 0;
  std::optional<int64_t> n = m.getOwnParameterCount();
  if (n && m->hasTrait<OpTrait::SymbolTable>())
    for (Operation &child : m->getRegion(0).front()) {
      std::optional<int64_t> c = countParameters(&child, seen);
      if (!c || llvm::AddOverflow(*n, *c, *n))
        return std::nullopt;
    }
  return n;
}

std::optional<int64_t> mlir::nnx::getParameterCount(ModuleOpInterface module) {
  llvm::DenseSet<Operation *> seen;
  return countParameters(module, seen);
}

std::optional<FeatureDependence>
mlir::nnx::getFeatureDependence(Operation *op) {
  if (auto layer = dyn_cast_or_null<LayerOpInterface>(op))
    return layer.getFeatureDependence();
  return std::nullopt;
}

bool mlir::nnx::isElementwiseModule(Operation *op) {
  return getFeatureDependence(op) == FeatureDependence::Elementwise;
}

//===----------------------------------------------------------------------===//
// Feature signatures
//===----------------------------------------------------------------------===//

FeatureSignature FeatureSignature::compose(const FeatureSignature &first,
                                           const FeatureSignature &second) {
  FeatureSignature s;
  s.integerInput = first.integerInput;
  for (unsigned axis = 0; axis < NumAxes; ++axis) {
    const Effect &a = first.out[axis], &b = second.out[axis];
    // `second`'s requirement is one on the input where `first` keeps the
    // axis; where `first` sets it, it is checked between the two.
    s.in[axis] = first.in[axis];
    if (!s.in[axis] && a.kind == Effect::Keeps)
      s.in[axis] = second.in[axis];
    s.out[axis] = b.kind == Effect::Keeps ? a : b;
  }
  return s;
}

FeatureSignature mlir::nnx::getDependenceSignature(FeatureDependence d) {
  switch (d) {
  case FeatureDependence::Elementwise:
  case FeatureDependence::Normalizing:
  case FeatureDependence::Mixing:
    return FeatureSignature::keepsShape();
  case FeatureDependence::PerChannel: {
    FeatureSignature s = FeatureSignature::keepsShape();
    s.out[FeatureSignature::Last] = FeatureSignature::Effect::unknown();
    return s;
  }
  case FeatureDependence::Projecting:
    return FeatureSignature::opaque();
  }
  llvm_unreachable("unknown FeatureDependence");
}

/// Modules whose signature is being computed: a sequential that contains
/// itself through an alias (rejected by the alias verifier) is cut there.
using ActiveSet = llvm::SmallPtrSetImpl<Operation *>;

static FeatureSignature signatureOf(Operation *module, ActiveSet &active);

static FeatureSignature foldSignatures(ArrayRef<Operation *> children,
                                       ActiveSet &active) {
  FeatureSignature s = FeatureSignature::keepsShape();
  bool first = true;
  for (Operation *child : children) {
    ModuleOpInterface m = resolveAlias(child);
    if (!m)
      continue;
    FeatureSignature c = signatureOf(m, active);
    s = first ? c : FeatureSignature::compose(s, c);
    first = false;
  }
  return s;
}

FeatureSignature mlir::nnx::getFeatureSignature(Operation *module) {
  llvm::SmallPtrSet<Operation *, 8> active;
  return signatureOf(module, active);
}

static FeatureSignature signatureOfKind(Operation *module, ActiveSet &active);

static FeatureSignature signatureOf(Operation *module, ActiveSet &active) {
  if (!active.insert(module).second)
    return FeatureSignature::opaque();
  FeatureSignature s = signatureOfKind(module, active);
  active.erase(module);
  return s;
}

/// The static size of dim `d` of `t` (negative: from the end), if any.
static std::optional<int64_t> staticDim(Type t, int64_t d) {
  auto rt = dyn_cast<RankedTensorType>(t);
  if (!rt || d >= rt.getRank() || -d > rt.getRank())
    return std::nullopt;
  if (d < 0)
    d += rt.getRank();
  if (rt.isDynamicDim(d))
    return std::nullopt;
  return rt.getDimSize(d);
}

/// A custom module's sizes, read off its forward's types, which state
/// exactly what it takes and returns: the last dim and, from rank 2, dim 1.
/// A forward of several inputs or results, or none, fixes nothing the chain
/// can use.
static FeatureSignature customSignature(CustomModuleOp op) {
  FeatureSignature s = FeatureSignature::opaque();
  ForwardOp fwd = op.getForward();
  if (!fwd)
    return s;
  FunctionType ft = fwd.getFunctionType();
  if (ft.getNumInputs() == 1) {
    Type in = ft.getInput(0);
    s.integerInput = isa<IntegerType>(getElementTypeOrSelf(in));
    if (!s.integerInput) {
      s.in[FeatureSignature::Last] = staticDim(in, -1);
      s.in[FeatureSignature::Channel] = staticDim(in, 1);
    }
  }
  if (ft.getNumResults() == 1 &&
      isa<FloatType>(getElementTypeOrSelf(ft.getResult(0)))) {
    Type out = ft.getResult(0);
    s.out[FeatureSignature::Last] =
        FeatureSignature::Effect::sets(staticDim(out, -1));
    s.out[FeatureSignature::Channel] =
        FeatureSignature::Effect::sets(staticDim(out, 1));
  }
  return s;
}

static FeatureSignature signatureOfKind(Operation *module, ActiveSet &active) {
  if (auto layer = dyn_cast<LayerOpInterface>(module))
    return layer.getFeatureSignature();
  if (auto seq = dyn_cast<SequentialOp>(module)) {
    SmallVector<Operation *> children;
    for (Operation &c : seq.getBody().front())
      children.push_back(&c);
    return foldSignatures(children, active);
  }
  if (auto ff = dyn_cast<FeedFwdOp>(module))
    return FeatureSignature::projecting(FeatureSignature::Last,
                                        ff.getInputDim(), ff.getOutputDim());
  if (auto cnn = dyn_cast<ConvNNOp>(module))
    // Channels in (no size to chain), the fcs' features out.
    return FeatureSignature::projecting(FeatureSignature::Last, std::nullopt,
                                        cnn.getOutputDim());
  if (auto custom = dyn_cast<CustomModuleOp>(module))
    return customSignature(custom);
  return FeatureSignature::opaque();
}

//===----------------------------------------------------------------------===//
// Forward type function
//===----------------------------------------------------------------------===//

/// A one-input, one-result layer's forward types.
static FailureOr<SmallVector<Type>>
inferSingleOutputTypes(LayerOpInterface layer, TypeRange inputs,
                       const ModuleTypeError &error) {
  if (inputs.size() != 1)
    return error("takes exactly one input, got ", inputs.size());
  auto in = dyn_cast<RankedTensorType>(inputs.front());
  if (!in || in.getRank() == 0)
    return error("needs a ranked tensor of rank >= 1 as input");
  FailureOr<Type> out = layer.inferOutputType(in, error);
  if (failed(out))
    return failure();
  return SmallVector<Type>{*out};
}

/// A custom module returns what its forward declares, for inputs compatible
/// with the declared ones.
static FailureOr<SmallVector<Type>> inferCustom(CustomModuleOp custom,
                                                TypeRange inputs,
                                                const ModuleTypeError &fail) {
  ForwardOp fwd = custom.getForward();
  if (!fwd && isUncalledModule(custom))
    return fail("is marked 'nnx.uncalled': the model's forward never called "
                "it when it was exported, so it has no forward to run");
  if (!fwd)
    return fail("has no 'nnx.forward'");
  FunctionType ft = fwd.getFunctionType();
  if (ft.getNumInputs() != inputs.size())
    return fail("takes ", ft.getNumInputs(), " inputs, got ", inputs.size());
  for (auto [want, got] : llvm::zip(ft.getInputs(), inputs))
    if (failed(verifyCompatibleShape(want, got)) ||
        getElementTypeOrSelf(want) != getElementTypeOrSelf(got))
      return fail("takes ", want, ", got ", got);
  return SmallVector<Type>(ft.getResults());
}

namespace {
/// The forward type function, one case per module kind. `active` holds the
/// sequentials being typed, so one that contains itself through an alias
/// (rejected by the alias verifier) fails instead of recursing forever.
class TypeInference
    : public ModuleVisitor<TypeInference, FailureOr<SmallVector<Type>>,
                           TypeRange> {
public:
  explicit TypeInference(std::optional<Location> loc) : loc(loc) {}

  FailureOr<SmallVector<Type>> infer(Operation *module, TypeRange inputs) {
    return dispatchModuleVisitor(module, inputs);
  }

  FailureOr<SmallVector<Type>> visit(SequentialOp seq, TypeRange inputs) {
    ModuleTypeError fail(seq, loc);
    if (!active.insert(seq).second)
      return fail("contains itself through an alias");
    FailureOr<SmallVector<Type>> out =
        chain(seq.getBody().front(), inputs, fail);
    active.erase(seq);
    return out;
  }

  FailureOr<SmallVector<Type>> visit(FeedFwdOp ff, TypeRange inputs) {
    ModuleTypeError fail(ff, loc);
    if (inputs.size() != 1)
      return fail("takes exactly one input");
    if (ModuleListOp layers = ff.getLayers())
      return chain(layers.getBody().front(), inputs, fail);
    return fail("has no 'layers'");
  }

  FailureOr<SmallVector<Type>> visit(ConvNNOp cnn, TypeRange inputs) {
    ModuleTypeError fail(cnn, loc);
    if (inputs.size() != 1)
      return fail("takes exactly one input");
    ModuleListOp blocks = cnn.getLayers(), fcs = cnn.getFcs();
    if (!blocks || !fcs)
      return fail("has no 'layers' or no 'fcs'");
    auto in = dyn_cast<RankedTensorType>(inputs.front());
    if (!in || in.getRank() != 4)
      return fail("takes (N, C, H, W) input, got ", inputs.front());
    SmallVector<Type> current{in};
    for (auto [i, block] : llvm::enumerate(blocks.getBody().front())) {
      FailureOr<SmallVector<Type>> next = infer(&block, current);
      if (failed(next))
        return failure();
      current = std::move(*next);
      int64_t pool = cnn.poolFor(i);
      if (pool <= 1)
        continue;
      auto t = cast<RankedTensorType>(current.front());
      SmallVector<int64_t> shape(t.getShape());
      Window w{pool, pool, 0, 1, false};
      for (unsigned d = 2; d < 4; ++d) {
        shape[d] = w.outputSize(shape[d]);
        if (shape[d] == 0)
          return fail("max-pools block ", i, "'s output of ", Type(t),
                      " with a kernel of ", pool, ", larger than dim ", d);
      }
      current = {t.clone(shape)};
    }
    // The global average pool and the flatten.
    auto t = cast<RankedTensorType>(current.front());
    current = {t.clone({t.getDimSize(0), t.getDimSize(1)})};
    return chain(fcs.getBody().front(), current, fail);
  }

  FailureOr<SmallVector<Type>> visit(ModuleListOp list, TypeRange) {
    return ModuleTypeError(list, loc)(
        "is a module_list, which has no forward of its own");
  }

  FailureOr<SmallVector<Type>> visit(ModuleDictOp dict, TypeRange) {
    return ModuleTypeError(dict, loc)(
        "is a module_dict, which has no forward of its own");
  }

  FailureOr<SmallVector<Type>> visit(CustomModuleOp custom, TypeRange inputs) {
    return inferCustom(custom, inputs, ModuleTypeError(custom, loc));
  }

  FailureOr<SmallVector<Type>> visitLayer(LayerOpInterface layer,
                                          TypeRange inputs) {
    ModuleTypeError fail(layer, loc);
    if (auto recurrent =
            dyn_cast<RecurrentLayerOpInterface>(layer.getOperation()))
      return recurrent.inferOutputTypes(inputs, fail);
    return inferSingleOutputTypes(layer, inputs, fail);
  }

  FailureOr<SmallVector<Type>> visitNotAModule(Operation *op, TypeRange) {
    return ModuleTypeError(op, loc)("is not a module with a forward");
  }

private:
  /// Threads `inputs` through `children` in order.
  FailureOr<SmallVector<Type>> chain(Block &children, TypeRange inputs,
                                     const ModuleTypeError &fail) {
    SmallVector<Type> current(inputs);
    for (Operation &child : children) {
      ModuleOpInterface m = resolveAlias(&child);
      if (!m)
        return fail("holds an alias whose target does not exist");
      FailureOr<SmallVector<Type>> next = infer(m, current);
      if (failed(next))
        return failure();
      current = std::move(*next);
    }
    return current;
  }

  std::optional<Location> loc;
  llvm::SmallPtrSet<Operation *, 8> active;
};
} // namespace

FailureOr<SmallVector<Type>>
mlir::nnx::inferForwardTypes(Operation *module, TypeRange inputs,
                             std::optional<Location> loc) {
  return TypeInference(loc).infer(module, inputs);
}

std::string mlir::nnx::getDisplayPath(Operation *op) {
  std::string path = getModulePath(op);
  return path.empty() ? std::string("<root>") : path;
}

InFlightDiagnostic mlir::nnx::emitModuleError(Operation *op) {
  InFlightDiagnostic diag = op->emitOpError();
  if (!getParentModel(op))
    return diag;
  if (isa<ModuleOpInterface>(op) || isa<AliasOp>(op))
    diag << "at '" << getDisplayPath(op) << "': ";
  else
    diag << "in the forward of '" << getDisplayPath(op) << "': ";
  return diag;
}
