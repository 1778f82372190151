//===- ModuleTree.cpp - dotted paths, aliases, shapes, counts ---*- C++ -*-===//
#include "nnx/Dialect/NNX/IR/ModuleTree.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/DenseSet.h"
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

Operation *mlir::nnx::lookupChild(Operation *container, StringRef key) {
  if (!container || !container->hasTrait<OpTrait::SymbolTable>())
    return nullptr;
  return SymbolTable::lookupSymbolIn(
      container, StringAttr::get(container->getContext(), key));
}

ModelOp mlir::nnx::getParentModel(Operation *op) {
  if (auto model = dyn_cast_or_null<ModelOp>(op))
    return model;
  return op ? op->getParentOfType<ModelOp>() : ModelOp();
}

static Operation *resolveFromRoot(ModuleOpInterface root, SymbolRefAttr ref) {
  Operation *current = lookupChild(root, ref.getRootReference().getValue());
  for (FlatSymbolRefAttr nested : ref.getNestedReferences()) {
    ModuleOpInterface m = resolveAlias(current);
    if (!m)
      return nullptr;
    current = lookupChild(m, nested.getValue());
  }
  return current;
}

ModuleOpInterface mlir::nnx::resolveAlias(Operation *op) {
  if (!op)
    return {};
  if (auto m = dyn_cast<ModuleOpInterface>(op))
    return m;
  auto alias = dyn_cast<AliasOp>(op);
  ModelOp model = getParentModel(alias);
  if (!alias || !model || !model.getRootModule())
    return {};
  return dyn_cast_or_null<ModuleOpInterface>(
      resolveFromRoot(model.getRootModule(), alias.getTarget()));
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
  auto layer = dyn_cast_or_null<LayerOpInterface>(op);
  return layer &&
         layer.getFeatureDependence() == FeatureDependence::Elementwise;
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

static FeatureSignature foldSignatures(ArrayRef<Operation *> children) {
  FeatureSignature s;
  bool seenIn = false;
  for (Operation *child : children) {
    ModuleOpInterface m = resolveAlias(child);
    if (!m)
      continue;
    FeatureSignature c = getFeatureSignature(m);
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
  if (auto layer = dyn_cast<LayerOpInterface>(module))
    return layer.getFeatureSignature();
  return llvm::TypeSwitch<Operation *, FeatureSignature>(module)
      .Case([](SequentialOp op) {
        SmallVector<Operation *> children;
        for (Operation &c : op.getBody().front())
          children.push_back(&c);
        return foldSignatures(children);
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

static FailureOr<SmallVector<Type>> inferLeaf(LayerOpInterface layer,
                                              Type input,
                                              const ModuleTypeError &error) {
  auto in = dyn_cast<RankedTensorType>(input);
  if (!in || in.getRank() == 0)
    return error("needs a ranked tensor of rank >= 1 as input");
  FailureOr<Type> out = layer.inferOutputType(in, error);
  if (failed(out))
    return failure();
  return SmallVector<Type>{*out};
}

/// Threads `inputs` through `children` in order.
static FailureOr<SmallVector<Type>>
inferChain(Block &children, TypeRange inputs, std::optional<Location> loc,
           const ModuleTypeError &fail) {
  SmallVector<Type> current(inputs);
  for (Operation &child : children) {
    ModuleOpInterface m = resolveAlias(&child);
    if (!m)
      return fail("holds an alias whose target does not exist");
    FailureOr<SmallVector<Type>> next = inferForwardTypes(m, current, loc);
    if (failed(next))
      return failure();
    current = std::move(*next);
  }
  return current;
}

/// A custom module returns what its forward declares, for inputs compatible
/// with the declared ones.
static FailureOr<SmallVector<Type>>
inferCustom(CustomModuleOp custom, TypeRange inputs,
            const ModuleTypeError &fail) {
  ForwardOp fwd = custom.getForward();
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

FailureOr<SmallVector<Type>>
mlir::nnx::inferForwardTypes(Operation *module, TypeRange inputs,
                             std::optional<Location> loc) {
  ModuleTypeError fail(module, loc);
  if (auto seq = dyn_cast<SequentialOp>(module))
    return inferChain(seq.getBody().front(), inputs, loc, fail);
  if (auto ff = dyn_cast<FeedFwdOp>(module)) {
    if (inputs.size() != 1)
      return fail("takes exactly one input");
    if (ModuleListOp layers = ff.getLayers())
      return inferChain(layers.getBody().front(), inputs, loc, fail);
    return fail("has no 'layers'");
  }
  if (isa<ModuleListOp>(module))
    return fail("is a module_list, which has no forward of its own");
  if (auto custom = dyn_cast<CustomModuleOp>(module))
    return inferCustom(custom, inputs, fail);
  if (inputs.size() != 1)
    return fail("takes exactly one input, got ", inputs.size());
  auto layer = dyn_cast<LayerOpInterface>(module);
  if (!layer)
    return fail("is not a module with a forward");
  return inferLeaf(layer, inputs.front(), fail);
}
