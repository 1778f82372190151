//===- ModuleTree.cpp - dotted paths, aliases, shapes, counts ---*- C++ -*-===//
#include "nnx/Dialect/NNX/IR/ModuleTree.h"

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

FailureOr<ModuleOpInterface> mlir::nnx::lookupModule(ModelOp model,
                                                     StringRef path,
                                                     std::string *whyNot) {
  ModuleOpInterface root = model.getRootModule();
  unsigned failed = 0;
  Operation *found = root ? lookupRegistered(root, path, &failed) : nullptr;
  if (!found) {
    if (whyNot) {
      SmallVector<StringRef> segs = splitPath(path);
      std::string parent = llvm::join(ArrayRef(segs).take_front(failed), ".");
      *whyNot = (Twine("no module '") + (failed < segs.size() ? segs[failed] : "") +
                 "' in " +
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
    if (auto name = cur->getAttrOfType<StringAttr>(
            SymbolTable::getSymbolAttrName()))
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

static int64_t countParameters(Operation *op,
                               llvm::DenseSet<Operation *> &seen) {
  ModuleOpInterface m = resolveAlias(op);
  if (!m || !seen.insert(m).second)
    return 0;
  int64_t n = m.getOwnParameterCount();
  if (m->hasTrait<OpTrait::SymbolTable>())
    for (Operation &child : m->getRegion(0).front())
      n += countParameters(&child, seen);
  return n;
}

int64_t mlir::nnx::getParameterCount(ModuleOpInterface module) {
  llvm::DenseSet<Operation *> seen;
  return countParameters(module, seen);
}

bool mlir::nnx::isElementwiseModule(Operation *op) {
  return isa<ReLUOp, GELUOp, TanhOp, SigmoidOp, SiLUOp, LeakyReLUOp, DropoutOp,
             IdentityOp>(op);
}

//===----------------------------------------------------------------------===//
// Feature signatures
//===----------------------------------------------------------------------===//

static std::optional<int64_t> staticLastDim(Type t) {
  auto rt = dyn_cast<RankedTensorType>(t);
  if (!rt || rt.getRank() == 0 || rt.isDynamicDim(rt.getRank() - 1))
    return std::nullopt;
  return rt.getDimSize(rt.getRank() - 1);
}

/// Modules whose signature is being computed: a sequential that contains
/// itself through an alias (rejected by the alias verifier) is cut there.
using ActiveSet = llvm::SmallPtrSetImpl<Operation *>;

static FeatureSignature signatureOf(Operation *module, ActiveSet &active);

static FeatureSignature foldSignatures(ArrayRef<Operation *> children,
                                       ActiveSet &active) {
  FeatureSignature s;
  bool seenIn = false;
  for (Operation *child : children) {
    ModuleOpInterface m = resolveAlias(child);
    if (!m)
      continue;
    FeatureSignature c = signatureOf(m, active);
    if (!seenIn && (c.in || c.integerInput || c.out)) {
      s.in = c.in;
      s.integerInput = c.integerInput;
      seenIn = true;
    }
    if (c.out)
      s.out = c.out;
    else if (c.in)
      s.out = c.in;
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
    return FeatureSignature();
  FeatureSignature s = signatureOfKind(module, active);
  active.erase(module);
  return s;
}

static FeatureSignature signatureOfKind(Operation *module, ActiveSet &active) {
  return llvm::TypeSwitch<Operation *, FeatureSignature>(module)
      .Case([](LinearOp op) {
        FeatureSignature s;
        if (op.getWeightAttr())
          s.in = op.getInFeatures();
        if (op.getOutFeaturesCount() != ShapedType::kDynamic)
          s.out = op.getOutFeaturesCount();
        return s;
      })
      .Case([](EmbeddingOp op) {
        FeatureSignature s;
        s.integerInput = true;
        s.out = cast<ShapedType>(op.getWeight().getType()).getDimSize(1);
        return s;
      })
      .Case<LayerNormOp, RMSNormOp>([](auto op) {
        FeatureSignature s;
        s.in = s.out = op.getNormalizedShape().back();
        return s;
      })
      .Case([](BatchNormOp op) {
        FeatureSignature s;
        s.in = s.out =
            cast<ShapedType>(op.getRunningMean().getType()).getDimSize(0);
        return s;
      })
      .Case([&](SequentialOp op) {
        SmallVector<Operation *> children;
        for (Operation &c : op.getBody().front())
          children.push_back(&c);
        return foldSignatures(children, active);
      })
      .Case([](FeedFwdOp op) {
        FeatureSignature s;
        s.in = op.getInputDim();
        s.out = op.getOutputDim();
        return s;
      })
      .Case([](CustomModuleOp op) {
        FeatureSignature s;
        ForwardOp fwd = op.getForward();
        if (!fwd)
          return s;
        FunctionType ft = fwd.getFunctionType();
        if (ft.getNumInputs() == 1) {
          s.integerInput = isa<IntegerType>(getElementTypeOrSelf(ft.getInput(0)));
          if (!s.integerInput)
            s.in = staticLastDim(ft.getInput(0));
        }
        if (ft.getNumResults() == 1)
          s.out = staticLastDim(ft.getResult(0));
        return s;
      })
      .Default([](Operation *) { return FeatureSignature(); });
}

//===----------------------------------------------------------------------===//
// Forward type function
//===----------------------------------------------------------------------===//

namespace {
/// Emits "module 'path' (op) ..." errors at an optional location.
struct TypeChecker {
  Operation *module;
  std::optional<Location> loc;

  LogicalResult fail(const Twine &msg) const {
    if (!loc)
      return failure();
    std::string path = getModulePath(module);
    InFlightDiagnostic diag = emitError(*loc)
                              << "module '" << (path.empty() ? "<root>" : path)
                              << "' (" << module->getName() << ") " << msg;
    if (*loc != module->getLoc())
      diag.attachNote(module->getLoc()) << "module defined here";
    return diag;
  }
};
} // namespace

static FailureOr<SmallVector<Type>> inferLeaf(Operation *op, Type input,
                                              const TypeChecker &tc) {
  auto in = dyn_cast<RankedTensorType>(input);
  if (!in || in.getRank() == 0)
    return tc.fail("needs a ranked tensor of rank >= 1 as input"), failure();
  Type elt = in.getElementType();
  int64_t last = in.getDimSize(in.getRank() - 1);
  auto needFloat = [&](Type expected) -> LogicalResult {
    if (!isa<FloatType>(elt))
      return tc.fail("takes float tensors, got " + llvm::Twine("") +
                     [&] {
                       std::string s;
                       llvm::raw_string_ostream os(s);
                       os << input;
                       return s;
                     }());
    if (expected && expected != elt) {
      std::string s;
      llvm::raw_string_ostream os(s);
      os << "has " << expected << " parameters but gets " << elt << " input";
      return tc.fail(s);
    }
    return success();
  };
  auto featureMismatch = [&](int64_t want) -> LogicalResult {
    if (last != ShapedType::kDynamic && last != want)
      return tc.fail("expects " + Twine(want) + " input features, got " +
                     Twine(last));
    return success();
  };
  auto eltOf = [](ElementsAttr a) {
    return a ? cast<ShapedType>(a.getType()).getElementType() : Type();
  };
  auto same = [&]() -> FailureOr<SmallVector<Type>> {
    return SmallVector<Type>{input};
  };

  return llvm::TypeSwitch<Operation *, FailureOr<SmallVector<Type>>>(op)
      .Case([&](LinearOp lin) -> FailureOr<SmallVector<Type>> {
        if (lin.getLazy())
          return tc.fail("is an uninitialized lazy layer and has no forward"),
                 failure();
        if (failed(needFloat(eltOf(lin.getWeightAttr()))) ||
            failed(featureMismatch(lin.getInFeatures())))
          return failure();
        SmallVector<int64_t> shape(in.getShape());
        shape.back() = lin.getOutFeaturesCount();
        return SmallVector<Type>{RankedTensorType::get(shape, elt)};
      })
      .Case([&](EmbeddingOp emb) -> FailureOr<SmallVector<Type>> {
        if (!isa<IntegerType>(elt))
          return tc.fail("takes integer ids"), failure();
        auto wt = cast<ShapedType>(emb.getWeight().getType());
        SmallVector<int64_t> shape(in.getShape());
        shape.push_back(wt.getDimSize(1));
        return SmallVector<Type>{
            RankedTensorType::get(shape, wt.getElementType())};
      })
      .Case<LayerNormOp, RMSNormOp>([&](auto norm) -> FailureOr<SmallVector<Type>> {
        ArrayRef<int64_t> ns = norm.getNormalizedShape();
        if (failed(needFloat(eltOf(norm.getWeightAttr()))))
          return failure();
        if ((int64_t)ns.size() > in.getRank())
          return tc.fail("normalizes more dimensions than the input has"),
                 failure();
        for (auto [i, d] : llvm::enumerate(ns)) {
          int64_t got = in.getDimSize(in.getRank() - ns.size() + i);
          if (got != ShapedType::kDynamic && got != d)
            return tc.fail("normalized_shape does not match the input's "
                           "trailing dimensions"),
                   failure();
        }
        return same();
      })
      .Case([&](BatchNormOp bn) -> FailureOr<SmallVector<Type>> {
        if (failed(needFloat(eltOf(bn.getRunningMean()))))
          return failure();
        if (in.getRank() != 2 && in.getRank() != 3)
          return tc.fail("takes (N, C) or (N, C, L) input"), failure();
        int64_t c = in.getDimSize(1);
        int64_t n = cast<ShapedType>(bn.getRunningMean().getType()).getDimSize(0);
        if (c != ShapedType::kDynamic && c != n)
          return tc.fail("expects " + Twine(n) + " channels, got " + Twine(c)),
                 failure();
        return same();
      })
      .Case([&](SoftmaxOp sm) -> FailureOr<SmallVector<Type>> {
        if (failed(needFloat(Type())))
          return failure();
        int64_t dim = sm.getDim();
        if (dim < -in.getRank() || dim >= in.getRank())
          return tc.fail("dim " + Twine(dim) + " is out of range for rank " +
                         Twine(in.getRank())),
                 failure();
        return same();
      })
      .Default([&](Operation *) -> FailureOr<SmallVector<Type>> {
        if (failed(needFloat(Type())))
          return failure();
        return same();
      });
}

static FailureOr<SmallVector<Type>> inferTypes(Operation *module,
                                               TypeRange inputs,
                                               std::optional<Location> loc,
                                               ActiveSet &active);

/// A sequential applies its children in order; `active` holds the
/// sequentials being typed, so one that contains itself through an alias
/// (rejected by the alias verifier) fails instead of recursing forever.
static FailureOr<SmallVector<Type>> inferSequential(SequentialOp seq,
                                                    TypeRange inputs,
                                                    std::optional<Location> loc,
                                                    ActiveSet &active) {
  TypeChecker tc{seq, loc};
  if (!active.insert(seq).second)
    return tc.fail("contains itself through an alias");
  SmallVector<Type> current(inputs);
  for (Operation &child : seq.getBody().front()) {
    ModuleOpInterface m = resolveAlias(&child);
    if (!m)
      return tc.fail("holds an alias whose target does not exist");
    FailureOr<SmallVector<Type>> next = inferTypes(m, current, loc, active);
    if (failed(next))
      return failure();
    current = std::move(*next);
  }
  active.erase(seq);
  return current;
}

FailureOr<SmallVector<Type>>
mlir::nnx::inferForwardTypes(Operation *module, TypeRange inputs,
                             std::optional<Location> loc) {
  llvm::SmallPtrSet<Operation *, 8> active;
  return inferTypes(module, inputs, loc, active);
}

static FailureOr<SmallVector<Type>> inferTypes(Operation *module,
                                               TypeRange inputs,
                                               std::optional<Location> loc,
                                               ActiveSet &active) {
  TypeChecker tc{module, loc};
  if (auto seq = dyn_cast<SequentialOp>(module))
    return inferSequential(seq, inputs, loc, active);
  if (auto ff = dyn_cast<FeedFwdOp>(module)) {
    if (inputs.size() != 1)
      return tc.fail("takes exactly one input"), failure();
    SmallVector<Type> current(inputs);
    ModuleListOp layers = ff.getLayers();
    if (!layers)
      return tc.fail("has no 'layers'"), failure();
    for (Operation &layer : layers.getBody().front()) {
      FailureOr<SmallVector<Type>> next =
          inferTypes(&layer, current, loc, active);
      if (failed(next))
        return failure();
      current = std::move(*next);
    }
    return current;
  }
  if (isa<ModuleListOp>(module))
    return tc.fail("is a module_list, which has no forward of its own"),
           failure();
  if (auto custom = dyn_cast<CustomModuleOp>(module)) {
    ForwardOp fwd = custom.getForward();
    if (!fwd)
      return tc.fail("has no 'nnx.forward'"), failure();
    FunctionType ft = fwd.getFunctionType();
    if (ft.getNumInputs() != inputs.size())
      return tc.fail("takes " + Twine(ft.getNumInputs()) + " inputs, got " +
                     Twine(inputs.size())),
             failure();
    for (auto [want, got] : llvm::zip(ft.getInputs(), inputs))
      if (failed(verifyCompatibleShape(want, got)) ||
          getElementTypeOrSelf(want) != getElementTypeOrSelf(got)) {
        std::string s;
        llvm::raw_string_ostream os(s);
        os << "takes " << want << ", got " << got;
        return tc.fail(s), failure();
      }
    return SmallVector<Type>(ft.getResults());
  }
  if (inputs.size() != 1)
    return tc.fail("takes exactly one input, got " + Twine(inputs.size())),
           failure();
  return inferLeaf(module, inputs.front(), tc);
}
