//===- SurgeryUtils.cpp - logic the surgery passes share --------*- C++ -*-===//
#include "SurgeryUtils.h"

#include "nnx/Dialect/NNX/IR/StateRead.h"
#include "nnx/Dialect/NNX/IR/TensorUtils.h"
#include "nnx/Dialect/NNX/IR/Weights.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MathExtras.h"

#include <iterator>

using namespace mlir;
using namespace mlir::nnx;
using namespace mlir::nnx::surgery;

InFlightDiagnostic surgery::refuse(Operation *op, StringRef pass,
                                   StringRef role) {
  InFlightDiagnostic diag = op->emitError();
  diag << pass << ": " << role << " '" << getDisplayPath(op) << "' ("
       << op->getName() << ") ";
  return diag;
}

FailureOr<Operation *> surgery::lookupSlot(ModelOp model, StringRef path,
                                           StringRef pass, StringRef option) {
  if (path.empty())
    return model.emitError() << pass << ": option '" << option
                             << "' is required (a dotted module path)";
  ModuleOpInterface root = model.getRootModule();
  if (!root)
    return model.emitError() << pass << ": model has no root module";
  if (Operation *found = lookupRegistered(root, path))
    return found;
  std::string why;
  (void)lookupModule(model, path, &why);
  return model.emitError() << pass << ": option " << option << "='" << path
                           << "': " << why;
}

static std::string joinStrings(ArrayAttr attr) {
  SmallVector<StringRef> names;
  for (Attribute a : attr)
    if (auto s = dyn_cast<StringAttr>(a))
      names.push_back(s.getValue());
  return llvm::join(names, ", ");
}

/// Refuses `m` if an `nnx.alias` names it or a module that contains it: the
/// module is then reachable under more than one path.
static LogicalResult checkNotAliased(ModuleOpInterface m, StringRef pass,
                                     StringRef role) {
  SmallVector<AliasOp> aliases = getAliasesReaching(m);
  if (aliases.empty())
    return success();
  InFlightDiagnostic diag = refuse(m, pass, role);
  auto ancestor =
      llvm::find_if(aliases, [&](AliasOp a) { return resolveAlias(a) != m; });
  if (ancestor == aliases.end())
    diag << "is registered under more than one path (" << aliases.size() + 1
         << " slots)";
  else
    diag << "is reachable under more than one path: its container '"
         << getDisplayPath(resolveAlias(*ancestor))
         << "' is also registered as '" << getDisplayPath(*ancestor) << "'";
  diag << "; the edit would have to change one object seen from several "
          "places";
  for (AliasOp alias : aliases) {
    ModuleOpInterface target = resolveAlias(alias);
    if (target == m)
      diag.attachNote(alias.getLoc())
          << "also registered here as '" << getDisplayPath(alias) << "'";
    else
      diag.attachNote(alias.getLoc())
          << "container '" << getDisplayPath(target)
          << "' also registered here as '" << getDisplayPath(alias) << "'";
  }
  return diag;
}

/// Refuses `m` if a forward outside it reads one of its tensors (or one of a
/// module inside it) directly: the edit would resize, retype or remove the
/// tensor under that read.
static LogicalResult checkNotReadElsewhere(Operation *m, StringRef pass,
                                           StringRef role) {
  SmallVector<StateOp> reads = getOutsideStateReads(m);
  if (reads.empty())
    return success();
  StateOp first = reads.front();
  Operation *owner = getStateOwner(first);
  InFlightDiagnostic diag = refuse(m, pass, role);
  diag << "has tensor '" << first.getName() << "'";
  if (owner != m)
    diag << " (of '" << getDisplayPath(owner) << "')";
  diag << " read directly by the forward of '"
       << getDisplayPath(first->getParentOfType<CustomModuleOp>()) << "'";
  if (auto source = first->getAttrOfType<StringAttr>(kSourceAttrName))
    diag << " (" << source.getValue() << ")";
  diag << "; the edit would change the tensor under that read";
  for (StateOp read : reads)
    diag.attachNote(read.getLoc()) << "read here";
  return diag;
}

LogicalResult surgery::checkRefusable(Operation *op, unsigned properties,
                                      StringRef pass, StringRef role) {
  auto m = dyn_cast<ModuleOpInterface>(op);
  if (!m)
    return success();
  if (properties & Subclass)
    if (StringAttr cls = m.getSubclassAttr())
      return refuse(op, pass, role)
             << "is a subclass ('" << cls.getValue()
             << "') with its own forward, which a rebuilt plain module would "
                "drop";
  if (properties & Hooks)
    if (ArrayAttr hooks = m.getHooksAttr(); hooks && !hooks.empty())
      return refuse(op, pass, role)
             << "has hooks (" << joinStrings(hooks)
             << "), which the edit would bypass or drop; remove them first";
  if (properties & Parametrizations)
    if (DictionaryAttr p = m.getParametrizationsAttr(); p && !p.empty()) {
      NamedAttribute first = *p.begin();
      return refuse(op, pass, role)
             << "has a '" << cast<StringAttr>(first.getValue()).getValue()
             << "' parametrization on '" << first.getName().getValue()
             << "', which a rebuilt plain module would drop; remove it first "
                "(remove_parametrizations)";
    }
  if (properties & Pruned)
    if (ArrayAttr pruned = m.getPrunedAttr(); pruned && !pruned.empty())
      return refuse(op, pass, role)
             << "has an unbaked prune mask on '" << joinStrings(pruned)
             << "', which a rebuilt plain module would drop; bake it first "
                "(prune.remove)";
  if (properties & Lazy)
    if (auto layer = dyn_cast<LayerOpInterface>(op);
        layer && layer.isUninitialized())
      return refuse(op, pass, role)
             << "is an uninitialized lazy layer with no weights to edit";
  if (properties & OwnState)
    if (!m.getParameterNames().empty() || !m.getBufferNames().empty())
      return refuse(op, pass, role)
             << "has parameters or buffers of its own ('"
             << llvm::join(m.getParameterNames(), "', '")
             << "'), which a rebuild as a plain container would drop";
  if (properties & Called) {
    CallOp caller;
    if (ModelOp model = getParentModel(op))
      model.walk([&](CallOp call) {
        if (!caller && call.resolveCalleeModule() == op)
          caller = call;
      });
    if (caller) {
      InFlightDiagnostic diag =
          refuse(op, pass, role)
          << "is also run by an 'nnx.call' outside its container's order; "
             "the edit would change what that call computes";
      diag.attachNote(caller.getLoc()) << "call is here";
      return diag;
    }
  }
  // `Aliases`: the module is reached from another place, under a second
  // path or through a direct read of one of its tensors.
  if (properties & Aliases) {
    if (failed(checkNotReadElsewhere(m, pass, role)))
      return failure();
    return checkNotAliased(m, pass, role);
  }
  return success();
}

LogicalResult surgery::refuseAliasSlot(AliasOp alias, StringRef pass,
                                       StringRef role) {
  InFlightDiagnostic diag =
      refuse(alias, pass, role)
      << "registers module " << alias.getTarget()
      << " under a second path; the edit would have to change one object seen "
         "from several places";
  if (ModuleOpInterface target = resolveAlias(alias))
    diag.attachNote(target.getLoc()) << "the module is registered here";
  return diag;
}

Operation *surgery::walkSiblings(Operation *slot, bool forward,
                                 function_ref<bool(Operation *)> stop) {
  for (Operation *cur = forward ? slot->getNextNode() : slot->getPrevNode();
       cur; cur = forward ? cur->getNextNode() : cur->getPrevNode()) {
    if (!isa<ModuleOpInterface, AliasOp>(cur))
      continue;
    if (stop(cur))
      return cur;
  }
  return nullptr;
}

bool surgery::isNormModule(Operation *op) {
  return getFeatureDependence(op) == FeatureDependence::Normalizing;
}

bool surgery::isWidthDependent(Operation *op) {
  std::optional<FeatureDependence> dep = getFeatureDependence(op);
  return dep == FeatureDependence::Normalizing ||
         dep == FeatureDependence::Mixing;
}

//===----------------------------------------------------------------------===//
// References
//===----------------------------------------------------------------------===//

static SymbolRefAttr pathToRef(MLIRContext *ctx, StringRef path) {
  SmallVector<StringRef> segs = splitPath(path);
  SmallVector<FlatSymbolRefAttr> nested;
  for (StringRef s : ArrayRef(segs).drop_front())
    nested.push_back(FlatSymbolRefAttr::get(ctx, s));
  return SymbolRefAttr::get(StringAttr::get(ctx, segs.front()), nested);
}

ReferenceSnapshot::ReferenceSnapshot(ModelOp model) {
  model.walk([&](Operation *op) {
    if (auto alias = dyn_cast<AliasOp>(op))
      aliases.push_back({alias, resolveAlias(alias)});
    else if (auto call = dyn_cast<CallOp>(op))
      calls.push_back({call, call.resolveCalleeModule()});
  });
}

void ReferenceSnapshot::retarget() {
  for (auto [alias, target] : aliases) {
    if (!target || resolveAlias(alias) == target)
      continue;
    alias.setTargetAttr(pathToRef(alias.getContext(), getModulePath(target)));
  }
  for (auto [call, callee] : calls) {
    if (!callee || call.resolveCalleeModule() == callee)
      continue;
    auto scope = call->getParentOfType<CustomModuleOp>();
    std::string scopePath = getModulePath(scope);
    std::string calleePath = getModulePath(callee);
    StringRef rel = calleePath;
    if (!scopePath.empty()) {
      if (!rel.consume_front(scopePath + "."))
        continue; // reached through an alias elsewhere: leave as is
    }
    call.setCalleeAttr(pathToRef(call.getContext(), rel));
  }
}

//===----------------------------------------------------------------------===//
// Tensors, flags, modes
//===----------------------------------------------------------------------===//

LogicalResult surgery::checkHoldable(Operation *op, ArrayRef<int64_t> shape,
                                     StringRef pass, StringRef role,
                                     const Twine &what) {
  if (llvm::is_contained(shape, 0))
    return success();
  int64_t bytes = sizeof(double);
  bool overflow = false;
  for (int64_t dim : shape)
    overflow = overflow || dim < 0 || llvm::MulOverflow(bytes, dim, bytes);
  if (!overflow && static_cast<uint64_t>(bytes) <= kMaxExpandedTensorBytes)
    return success();
  InFlightDiagnostic diag = refuse(op, pass, role) << what << " ";
  llvm::interleave(shape, [&](int64_t d) { diag << d; }, [&] { diag << "x"; });
  if (overflow)
    diag << ", whose size overflows 64 bits";
  else
    diag << ", which takes " << bytes << " bytes as doubles";
  return diag << "; a surgery pass holds at most "
              << (kMaxExpandedTensorBytes >> 30)
              << " GiB per tensor (kMaxExpandedTensorBytes)";
}

FailureOr<std::vector<double>>
surgery::readTensorOrRefuse(Operation *op, ElementsAttr attr, StringRef name,
                            StringRef pass, StringRef role) {
  auto type = cast<ShapedType>(attr.getType());
  if (failed(checkHoldable(op, type.getShape(), pass, role,
                           "has tensor '" + name + "' of")))
    return failure();
  if (isa<ExternalTensorAttr>(attr)) {
    // In the weights file: a missing file or tensor is its own diagnostic.
    FailureOr<TensorData> data =
        getTensorData(attr, getEnclosingWeightsPath(op), op->getLoc(),
                      "tensor '" + name + "' of '" + getModulePath(op) + "'");
    if (failed(data))
      return failure();
    FailureOr<std::vector<double>> values =
        decodeFloatTensor(data->bytes, type);
    if (failed(values))
      return refuse(op, pass, role)
             << "has tensor '" << name << "' of a non-float type";
    return values;
  }
  FailureOr<std::vector<double>> values = readTensor(attr);
  if (failed(values))
    return refuse(op, pass, role)
           << "has tensor '" << name
           << "' whose data is unavailable (an unloaded dense_resource or a "
              "non-float type)";
  return values;
}

void surgery::setRequiresGrad(Operation *op, StringRef name, bool value) {
  auto m = cast<ModuleOpInterface>(op);
  NamedAttrList entries;
  if (DictionaryAttr d = m.getRequiresGradAttr())
    entries.append(d.getValue());
  entries.erase(name);
  if (!value)
    entries.set(name, BoolAttr::get(op->getContext(), false));
  if (entries.empty())
    op->removeAttr("requires_grad");
  else
    op->setAttr("requires_grad", entries.getDictionary(op->getContext()));
}

void surgery::copyRequiresGrad(ModuleOpInterface source, StringRef fromName,
                               Operation *replacement, StringRef toName) {
  setRequiresGrad(replacement, toName, source.requiresGrad(fromName));
}

void surgery::copyMode(Operation *from, Operation *to) {
  if (cast<ModuleOpInterface>(from).getTrain())
    to->setAttr("train", UnitAttr::get(to->getContext()));
  else
    to->removeAttr("train");
}

void surgery::replaceTensor(Operation *op, StringRef name, ElementsAttr value) {
  op->setAttr(name, value);
}

LogicalResult surgery::refuseRecipeModel(ModelOp model, StringRef pass) {
  RecipeAttr recipe = model.getRecipeAttr();
  if (!recipe)
    return success();
  return model.emitError()
         << pass << ": model '@" << model.getSymName() << "' carries a recipe ("
         << recipe.getOperations().size()
         << " operations); unrecorded surgery would make its topology differ "
            "from base + recipe, so no checkpoint could rebuild it (record "
            "the edit as a recipe operation instead)";
}

int64_t surgery::positionInBlock(Operation *op) {
  return std::distance(op->getBlock()->begin(), op->getIterator());
}

std::string surgery::positionalKey(int64_t i) { return std::to_string(i); }

void surgery::shiftPositionalKeys(Operation *slot, int64_t shift) {
  SmallVector<Operation *> later;
  for (Operation *op = slot->getNextNode(); op; op = op->getNextNode())
    later.push_back(op);
  int64_t first = positionInBlock(slot) + 1;
  auto rename = [&](int64_t i) {
    SymbolTable::setSymbolName(later[i], positionalKey(first + i + shift));
  };
  // Growing keys are renamed last first, shrinking ones first first, so
  // that keys never collide.
  if (shift > 0)
    for (int64_t i = later.size() - 1; i >= 0; --i)
      rename(i);
  else
    for (int64_t i = 0, e = later.size(); i < e; ++i)
      rename(i);
}

StockNetOpInterface surgery::getStockNetOf(Operation *slot) {
  Operation *list = slot->getParentOp();
  if (!isa_and_nonnull<ModuleListOp>(list))
    return {};
  auto net = dyn_cast_or_null<StockNetOpInterface>(list->getParentOp());
  if (!net || !net.getLayerIndex(slot))
    return {};
  return net;
}

std::string surgery::getSlotName(Operation *slot) {
  return (SymbolTable::getSymbolName(slot->getParentOp()).getValue() + "." +
          SymbolTable::getSymbolName(slot).getValue())
      .str();
}

std::string surgery::describeStockNet(StockNetOpInterface net) {
  return (net->getName().stripDialect() + " '" + getDisplayPath(net) + "'")
      .str();
}

//===----------------------------------------------------------------------===//
// Calls
//===----------------------------------------------------------------------===//

FailureOr<CallOp> surgery::getOnlyCall(Operation *module, StringRef pass,
                                       StringRef role) {
  SmallVector<CallOp> calls;
  if (ModelOp model = getParentModel(module))
    model.walk([&](CallOp call) {
      if (call.resolveCalleeModule() == module)
        calls.push_back(call);
    });
  if (calls.empty())
    return refuse(module, pass, role)
           << "is never run by an 'nnx.call' in its module's forward: there "
              "is no data flow to prove";
  if (calls.size() == 1)
    return calls.front();
  InFlightDiagnostic diag =
      refuse(module, pass, role)
      << "is run by " << calls.size()
      << " 'nnx.call's: the edit would change what each of them computes";
  for (CallOp call : calls)
    diag.attachNote(call.getLoc()) << "call is here";
  return diag;
}

FailureOr<CallOp> surgery::getChainCall(Operation *module, StringRef pass,
                                        StringRef role, StringRef why) {
  FailureOr<CallOp> call = getOnlyCall(module, pass, role);
  if (failed(call))
    return failure();
  if (call->getNumOperands() != 0 && call->getNumResults() != 0 &&
      call->getResult(0).getType() == call->getOperand(0).getType())
    return call;
  InFlightDiagnostic diag =
      refuse(module, pass, role)
      << "does not return a value of its first input's type: " << why;
  diag.attachNote(call->getLoc()) << "call is here";
  return diag;
}

FailureOr<Operation *> surgery::lookupEditSlot(ModelOp model, StringRef path,
                                               StringRef pass,
                                               StringRef option) {
  if (failed(refuseRecipeModel(model, pass)))
    return failure();
  return lookupSlot(model, path, pass, option);
}

FailureOr<Operation *> surgery::lookupEditModule(ModelOp model, StringRef path,
                                                 StringRef pass,
                                                 StringRef option,
                                                 StringRef role) {
  FailureOr<Operation *> slot = lookupEditSlot(model, path, pass, option);
  if (failed(slot))
    return failure();
  if (auto alias = dyn_cast<AliasOp>(*slot))
    return refuseAliasSlot(alias, pass, role);
  return *slot;
}
