//===- NNXOps.cpp - nnx operations: verifiers and syntax --------*- C++ -*-===//
#include "nnx/Dialect/NNX/IR/NNXOps.h"
#include "nnx/Dialect/NNX/IR/Compatibility.h"
#include "nnx/Dialect/NNX/IR/ModuleTree.h"
#include "nnx/Dialect/NNX/IR/StateRead.h"
#include "nnx/Dialect/NNX/IR/UpstreamOpChecks.h"
#include "nnx/Dialect/NNX/IR/Weights.h"
#include "nnx/Dialect/NNX/IR/WindowRange.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/FunctionImplementation.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Format.h"

#include <cmath>

using namespace mlir;
using namespace mlir::nnx;

#include "nnx/Dialect/NNX/IR/NNXEnums.cpp.inc"
#include "nnx/Dialect/NNX/IR/NNXInterfaces.cpp.inc"

//===----------------------------------------------------------------------===//
// Shared helpers
//===----------------------------------------------------------------------===//

/// "0.5", "1.5": shortest readable form of a probability for diagnostics.
static std::string formatProbability(double p) {
  std::string s;
  llvm::raw_string_ostream(s) << llvm::format("%g", p);
  return s;
}

/// Inside an `nnx.module` the key `forward` names the module's `nnx.forward`,
/// so no child may use it.
static LogicalResult verifyKeyNotReserved(Operation *op) {
  auto key = op->getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName());
  if (!key || key.getValue() != ForwardOp::getForwardSymbolName() ||
      !isa_and_nonnull<CustomModuleOp>(op->getParentOp()))
    return success();
  return emitModuleError(op)
         << "the key 'forward' is reserved in an 'nnx.module' for its "
            "'nnx.forward' (PyTorch reserves it too)";
}

static SmallVector<StringRef> tensorNamesOf(ModuleOpInterface m) {
  SmallVector<StringRef> names = m.getParameterNames();
  llvm::append_range(names, m.getBufferNames());
  return names;
}

LogicalResult mlir::nnx::detail::verifyModuleOpInterface(Operation *op) {
  if (failed(verifyKeyNotReserved(op)))
    return failure();
  auto m = cast<ModuleOpInterface>(op);
  SmallVector<StringRef> names = tensorNamesOf(m);
  auto known = [&](StringRef n) { return llvm::is_contained(names, n); };
  auto checkKeys = [&](DictionaryAttr d, StringRef what) -> LogicalResult {
    if (!d)
      return success();
    for (NamedAttribute na : d) {
      if (!known(na.getName().getValue()))
        return emitModuleError(op)
               << "'" << what << "' names '" << na.getName().getValue()
               << "', which is not a tensor of this module";
    }
    return success();
  };
  if (auto buffers = op->getAttrOfType<ArrayAttr>(kBuffersAttrName)) {
    if (!op->hasTrait<OpTrait::SymbolTable>())
      return emitModuleError(op) << "'" << kBuffersAttrName
                                 << "' is only for a container's 'state'";
    auto state = op->getAttrOfType<DictionaryAttr>("state");
    for (Attribute a : buffers) {
      auto name = dyn_cast<StringAttr>(a);
      if (!name || !state || !state.get(name))
        return emitModuleError(op) << "'" << kBuffersAttrName << "' names " << a
                                   << ", which is not an entry of its 'state'";
    }
  }
  if (failed(checkKeys(m.getRequiresGradAttr(), "requires_grad")) ||
      failed(checkKeys(m.getParametrizationsAttr(), "parametrizations")))
    return failure();
  if (DictionaryAttr d = m.getRequiresGradAttr())
    for (NamedAttribute na : d)
      if (!isa<BoolAttr>(na.getValue()))
        return emitModuleError(op)
               << "'requires_grad' of '" << na.getName().getValue()
               << "' must be a bool";
  if (DictionaryAttr d = m.getParametrizationsAttr())
    for (NamedAttribute na : d)
      if (!isa<StringAttr>(na.getValue()))
        return emitModuleError(op)
               << "parametrization of '" << na.getName().getValue()
               << "' must be a string (e.g. \"weight_norm\")";
  if (ArrayAttr pruned = m.getPrunedAttr())
    for (Attribute a : pruned)
      if (!known(cast<StringAttr>(a).getValue()))
        return emitModuleError(op)
               << "'pruned' names '" << cast<StringAttr>(a).getValue()
               << "', which is not a tensor of this module";
  // Counts and sizes are int64: a tensor too large for them is no tensor.
  for (StringRef name : names)
    if (ElementsAttr t = m.getTensor(name))
      if (auto type = dyn_cast<ShapedType>(t.getType());
          type && type.hasStaticShape() &&
          type.getElementType().isIntOrFloat() && !getStoredByteSize(type))
        return emitModuleError(op)
               << "tensor '" << name << "' of type " << type
               << " holds more bytes than 64 bits can count";
  return success();
}

static LogicalResult verifyFloatTensor(Operation *op, ElementsAttr t,
                                       StringRef name,
                                       ArrayRef<int64_t> shape) {
  if (!t)
    return success();
  auto type = dyn_cast<RankedTensorType>(t.getType());
  if (!type || !isa<FloatType>(type.getElementType()))
    return emitModuleError(op)
           << "'" << name << "' must be a ranked float tensor";
  if (type.getShape() != shape) {
    auto diag = emitModuleError(op) << "'" << name << "' has shape ";
    llvm::interleave(type.getShape(), diag, "x");
    diag << " but the layer needs ";
    llvm::interleave(shape, diag, "x");
    return diag;
  }
  return success();
}

static LogicalResult verifySameElementType(Operation *op,
                                           ArrayRef<ElementsAttr> tensors) {
  Type elt;
  for (ElementsAttr t : tensors) {
    if (!t)
      continue;
    Type e = cast<ShapedType>(t.getType()).getElementType();
    if (elt && e != elt)
      return emitModuleError(op)
             << "tensors mix element types " << elt << " and " << e;
    elt = e;
  }
  return success();
}

/// Children of a container must be modules or aliases; positional containers
/// additionally need keys "0", "1", ... in order.
static LogicalResult verifyChildren(Operation *container, bool positional) {
  unsigned index = 0;
  for (Operation &child : container->getRegion(0).front()) {
    if (!isa<ModuleOpInterface, AliasOp>(child))
      return emitModuleError(container)
             << "may only hold modules and aliases, found '" << child.getName()
             << "'";
    if (positional) {
      StringRef key = SymbolTable::getSymbolName(&child).getValue();
      if (key != std::to_string(index)) {
        auto diag = emitModuleError(container)
                    << "is positional but child " << index << " has key '"
                    << key << "' (expected '" << index << "')";
        diag.attachNote(child.getLoc()) << "child is here";
        return diag;
      }
    }
    ++index;
  }
  return success();
}

namespace {
/// What a sequential's chain knows of one feature axis of the value between
/// two children: its size, and the child that fixed it.
struct KnownAxis {
  int64_t size = 0;
  Operation *producer = nullptr;
};
} // namespace

static StringRef axisWord(unsigned axis) {
  return axis == FeatureSignature::Channel ? "channels" : "features";
}

/// Checks that the feature sizes of consecutive children agree, axis by
/// axis: a child's required size against what the children before it are
/// known to produce on the same axis (FeatureSignature).
static LogicalResult verifyChain(Operation *container,
                                 ArrayRef<Operation *> children) {
  std::array<KnownAxis, FeatureSignature::NumAxes> known;
  Operation *lastProducer = nullptr;
  for (Operation *child : children) {
    ModuleOpInterface m = resolveAlias(child);
    if (!m)
      continue; // a dangling alias is reported by the alias itself
    FeatureSignature sig = getFeatureSignature(m);
    StringRef name = SymbolTable::getSymbolName(child).getValue();
    if (sig.integerInput && lastProducer) {
      auto diag = emitModuleError(container)
                  << "child '" << name
                  << "' takes integer ids but follows a module producing "
                     "features";
      diag.attachNote(lastProducer->getLoc()) << "producer is here";
      return diag;
    }
    for (unsigned axis = 0; axis < FeatureSignature::NumAxes; ++axis) {
      KnownAxis &k = known[axis];
      if (sig.in[axis] && k.producer && *sig.in[axis] != k.size) {
        StringRef word = axisWord(axis);
        auto diag = emitModuleError(container)
                    << "child '" << name << "' takes " << *sig.in[axis] << " "
                    << word << " but '"
                    << SymbolTable::getSymbolName(k.producer).getValue()
                    << "' produces " << k.size;
        diag.attachNote(k.producer->getLoc()) << "producer is here";
        return diag;
      }
    }
    for (unsigned axis = 0; axis < FeatureSignature::NumAxes; ++axis) {
      KnownAxis &k = known[axis];
      const FeatureSignature::Effect &e = sig.out[axis];
      if (e.kind == FeatureSignature::Effect::Sets)
        k = {e.size, child};
      else if (e.kind == FeatureSignature::Effect::Unknown)
        k = {};
      else if (!k.producer && sig.in[axis])
        k = {*sig.in[axis], child};
    }
    if (llvm::any_of(sig.out, [](const FeatureSignature::Effect &e) {
          return e.kind == FeatureSignature::Effect::Sets;
        }))
      lastProducer = child;
  }
  return success();
}

static SmallVector<Operation *> childOps(Operation *container) {
  SmallVector<Operation *> ops;
  for (Operation &op : container->getRegion(0).front())
    ops.push_back(&op);
  return ops;
}

static SmallVector<StringRef> stateNames(DictionaryAttr state) {
  SmallVector<StringRef> names;
  if (state)
    for (NamedAttribute na : state)
      names.push_back(na.getName().getValue());
  return names;
}

//===----------------------------------------------------------------------===//
// ModelOp
//===----------------------------------------------------------------------===//

static ParseResult parseTypeList(OpAsmParser &parser, ArrayAttr &types) {
  SmallVector<Attribute> list;
  if (parser.parseCommaSeparatedList([&]() -> ParseResult {
        Type t;
        if (parser.parseType(t))
          return failure();
        list.push_back(TypeAttr::get(t));
        return success();
      }))
    return failure();
  types = parser.getBuilder().getArrayAttr(list);
  return success();
}

static void printTypeList(OpAsmPrinter &p, Operation *, ArrayAttr types) {
  llvm::interleaveComma(types, p, [&](Attribute a) {
    p.printType(cast<TypeAttr>(a).getValue());
  });
}

BaseDescriptorAttr ModelOp::getBaseAttr() {
  return (*this)->getAttrOfType<BaseDescriptorAttr>(kBaseAttrName);
}

void ModelOp::setBaseAttr(BaseDescriptorAttr base) {
  (*this)->setAttr(kBaseAttrName, base);
}

RecipeAttr ModelOp::getRecipeAttr() {
  return (*this)->getAttrOfType<RecipeAttr>(kRecipeAttrName);
}

void ModelOp::setRecipeAttr(RecipeAttr recipe) {
  (*this)->setAttr(kRecipeAttrName, recipe);
}

ModuleOpInterface ModelOp::getRootModule() {
  for (Operation &op : getBody().front())
    if (auto m = dyn_cast<ModuleOpInterface>(op))
      return m;
  return {};
}

SmallVector<Type> ModelOp::getInputTypes() {
  SmallVector<Type> types;
  for (Attribute a : getInputs())
    types.push_back(cast<TypeAttr>(a).getValue());
  return types;
}

LogicalResult ModelOp::verifyRegions() {
  Block &body = getBody().front();
  if (!llvm::hasSingleElement(body) || !isa<ModuleOpInterface>(body.front()))
    return emitOpError("must hold exactly one root module");
  for (Attribute a : getInputs()) {
    auto t = dyn_cast<TypeAttr>(a);
    if (!t || !isa<RankedTensorType>(t.getValue()))
      return emitOpError("inputs must be ranked tensor types");
  }
  // An uninitialized lazy layer has no shapes yet: the forward cannot be
  // typed until it is materialized (lowering refuses it with its path).
  bool hasLazy = getBody()
                     .walk([](LayerOpInterface layer) {
                       return layer.isUninitialized() ? WalkResult::interrupt()
                                                      : WalkResult::advance();
                     })
                     .wasInterrupted();
  if (!hasLazy &&
      failed(inferForwardTypes(getRootModule(), getInputTypes(), getLoc())))
    return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// Containers
//===----------------------------------------------------------------------===//

/// The `state` entries of a container that `buffers` names (buffers) or
/// does not name (parameters).
static SmallVector<StringRef> stateNames(DictionaryAttr state,
                                         ArrayAttr buffers, bool wantBuffers) {
  SmallVector<StringRef> names;
  for (StringRef name : stateNames(state)) {
    bool isBuffer = buffers && llvm::any_of(buffers, [&](Attribute a) {
                      auto s = dyn_cast<StringAttr>(a);
                      return s && s.getValue() == name;
                    });
    if (isBuffer == wantBuffers)
      names.push_back(name);
  }
  return names;
}

/// A container's `nnx.buffers` list, if any.
static ArrayAttr getBuffersOf(Operation *op) {
  return op->getAttrOfType<ArrayAttr>(kBuffersAttrName);
}

#define NNX_CONTAINER_PARAMETER_NAMES(OP)                                      \
  SmallVector<StringRef> OP::getParameterNames() {                             \
    return stateNames(getStateAttr(), getBuffersOf(*this), false);             \
  }                                                                            \
  SmallVector<StringRef> OP::getBufferNames() {                                \
    return stateNames(getStateAttr(), getBuffersOf(*this), true);              \
  }                                                                            \
  ElementsAttr OP::getTensor(StringRef name) {                                 \
    DictionaryAttr state = getStateAttr();                                     \
    return state ? state.getAs<ElementsAttr>(name) : ElementsAttr();           \
  }
NNX_CONTAINER_PARAMETER_NAMES(SequentialOp)
NNX_CONTAINER_PARAMETER_NAMES(FeedFwdOp)
NNX_CONTAINER_PARAMETER_NAMES(ConvNNOp)
NNX_CONTAINER_PARAMETER_NAMES(ModuleListOp)
NNX_CONTAINER_PARAMETER_NAMES(ModuleDictOp)
NNX_CONTAINER_PARAMETER_NAMES(CustomModuleOp)
#undef NNX_CONTAINER_PARAMETER_NAMES

LogicalResult SequentialOp::verifyRegions() {
  if (failed(verifyChildren(*this, getKeying() == Keying::positional)))
    return failure();
  return verifyChain(*this, childOps(*this));
}

//===----------------------------------------------------------------------===//
// Stock nets: nnx.feed_fwd and nnx.conv_nn
//===----------------------------------------------------------------------===//

ActivationKind mlir::nnx::detail::getSiteActivation(ArrayAttr overrides,
                                                    ActivationKind fallback,
                                                    unsigned i) {
  if (overrides && i < overrides.size())
    return cast<ActivationKindAttr>(overrides[i]).getValue();
  return fallback;
}

double mlir::nnx::detail::getSiteDropout(std::optional<ArrayAttr> probs,
                                         APFloat fallback, unsigned i) {
  if (probs && i < probs->size())
    return cast<FloatAttr>((*probs)[i]).getValueAsDouble();
  return fallback.convertToDouble();
}

/// `list` (a per-site override or null) with `value` inserted at `at`.
static ArrayAttr insertedAt(ArrayAttr list, unsigned at, Attribute value) {
  SmallVector<Attribute> items(list.begin(), list.end());
  items.insert(items.begin() + at, value);
  return ArrayAttr::get(value.getContext(), items);
}

/// The per-site dropout list after a new site `at` with dropout 0: written
/// when there is a list or a nonzero default (which must not apply there).
template <typename NetOp>
static void insertDropoutSite(NetOp net, unsigned at, unsigned oldSites) {
  if (!net.getDropoutProbsAttr() && net.getDropout().isZero())
    return;
  MLIRContext *ctx = net.getContext();
  SmallVector<Attribute> probs;
  for (unsigned i = 0; i < oldSites; ++i)
    probs.push_back(FloatAttr::get(Float64Type::get(ctx), net.dropoutFor(i)));
  probs.insert(probs.begin() + at, FloatAttr::get(Float64Type::get(ctx), 0.0));
  net.setDropoutProbsAttr(ArrayAttr::get(ctx, probs));
}

/// The activation and dropout params of `net`, for `numSites` sites.
template <typename NetOp>
static LogicalResult verifySiteParams(NetOp net, size_t numSites,
                                      StringRef sites) {
  if (ArrayAttr acts = net.getActivationsAttr();
      acts && acts.size() != numSites)
    return emitModuleError(net)
           << "has " << acts.size() << " per-layer activations for " << numSites
           << " " << sites;
  auto checkProb = [&](double p) -> LogicalResult {
    if (p < 0.0 || p > 1.0)
      return emitModuleError(net)
             << "dropout probability " << formatProbability(p)
             << " is outside [0, 1]";
    return success();
  };
  if (failed(checkProb(net.getDropout().convertToDouble())))
    return failure();
  std::optional<ArrayAttr> probs = net.getDropoutProbs();
  if (!probs)
    return success();
  if (probs->size() != numSites)
    return emitModuleError(net)
           << "has " << probs->size() << " per-layer dropout_probs for "
           << numSites << " " << sites;
  for (Attribute a : *probs)
    if (failed(checkProb(cast<FloatAttr>(a).getValueAsDouble())))
      return failure();
  return success();
}

/// Refuses `op`, slot `i` of `net`'s list `list`, with a note at the layer.
static InFlightDiagnostic slotError(Operation *net, StringRef list, size_t i,
                                    Operation *op) {
  InFlightDiagnostic diag = emitModuleError(net) << list << "." << i << " ";
  diag.attachNote(op->getLoc()) << "layer is here";
  return diag;
}

/// Checks the Linears of a stock net's list `list` against the sizes
/// `dims[i] -> dims[i+1]`; an identity (a dropped layer) keeps its size.
static LogicalResult verifyLinearList(Operation *net, StringRef list,
                                      ArrayRef<Operation *> layers,
                                      ArrayRef<int64_t> dims) {
  for (auto [i, op] : llvm::enumerate(layers)) {
    int64_t in = dims[i], out = dims[i + 1];
    if (isa<IdentityOp>(op)) {
      if (in != out)
        return slotError(net, list, i, op)
               << "is an 'nnx.identity' but the params say " << in << "->"
               << out;
      continue;
    }
    auto lin = dyn_cast<LinearOp>(op);
    if (!lin)
      return slotError(net, list, i, op)
             << "must be an 'nnx.linear' (or the 'nnx.identity' of a dropped "
                "layer), found '"
             << op->getName() << "'";
    if (lin.getInFeatures() != in || lin.getOutFeaturesCount() != out)
      return slotError(net, list, i, op)
             << "is " << lin.getInFeatures() << "->"
             << lin.getOutFeaturesCount() << " but the params say " << in
             << "->" << out;
  }
  return success();
}

/// `layers`' position of `slot` in data-flow order over `lists`.
static std::optional<unsigned> indexInLists(ArrayRef<Operation *> lists,
                                            Operation *slot) {
  unsigned base = 0;
  for (Operation *list : lists) {
    if (!list)
      return std::nullopt;
    if (slot->getParentOp() == list)
      return base + std::distance(list->getRegion(0).front().begin(),
                                  Block::iterator(slot));
    base += childOps(list).size();
  }
  return std::nullopt;
}

static Operation *layerInLists(ArrayRef<Operation *> lists, unsigned index) {
  for (Operation *list : lists) {
    if (!list)
      return nullptr;
    SmallVector<Operation *> ops = childOps(list);
    if (index < ops.size())
      return ops[index];
    index -= ops.size();
  }
  return nullptr;
}

ModuleListOp FeedFwdOp::getLayers() {
  return dyn_cast_or_null<ModuleListOp>(lookupChild(*this, "layers"));
}

SmallVector<Operation *, 2> FeedFwdOp::getLayerLists() { return {getLayers()}; }

unsigned FeedFwdOp::getSiteCount() { return getHiddenDims().size(); }

std::optional<unsigned> FeedFwdOp::getLayerIndex(Operation *slot) {
  return indexInLists(getLayerLists(), slot);
}

Operation *FeedFwdOp::getLayerAt(unsigned index) {
  return layerInLists(getLayerLists(), index);
}

std::pair<int64_t, int64_t> FeedFwdOp::getLayerSizes(unsigned i) {
  ArrayRef<int64_t> hidden = getHiddenDims();
  int64_t in = getInputDim(), out = getOutputDim();
  return {i == 0 ? in : hidden[i - 1], i == hidden.size() ? out : hidden[i]};
}

void FeedFwdOp::setSiteWidth(unsigned site, int64_t width) {
  SmallVector<int64_t> hidden(getHiddenDims());
  hidden[site] = width;
  setHiddenDims(hidden);
}

void FeedFwdOp::insertSite(unsigned at, int64_t width, int64_t) {
  unsigned oldSites = getSiteCount();
  SmallVector<int64_t> hidden(getHiddenDims());
  hidden.insert(hidden.begin() + at, width);
  setHiddenDims(hidden);
  if (ArrayAttr acts = getActivationsAttr())
    setActivationsAttr(insertedAt(
        acts, at, ActivationKindAttr::get(getContext(), ActivationKind::relu)));
  insertDropoutSite(*this, at, oldSites);
}

LogicalResult FeedFwdOp::verifyRegions() {
  Block &body = getBody().front();
  ModuleListOp layers = getLayers();
  if (!llvm::hasSingleElement(body) || !layers)
    return emitModuleError(*this)
           << "must hold exactly one 'nnx.module_list @layers'";
  ArrayRef<int64_t> hidden = getHiddenDims();
  size_t numHidden = hidden.size();
  if (failed(verifySiteParams(*this, numHidden, "hidden layers")))
    return failure();
  SmallVector<Operation *> linears = childOps(layers);
  if (linears.size() != numHidden + 1)
    return emitModuleError(*this)
           << "has " << linears.size() << " layers but hidden_dims implies "
           << numHidden + 1;
  SmallVector<int64_t> dims{static_cast<int64_t>(getInputDim())};
  llvm::append_range(dims, hidden);
  dims.push_back(getOutputDim());
  return verifyLinearList(*this, "layers", linears, dims);
}

int64_t ConvNNOp::kernelFor(unsigned i) {
  if (std::optional<ArrayRef<int64_t>> ks = getKernelSizes();
      ks && i < ks->size())
    return (*ks)[i];
  return static_cast<int64_t>(getKernelSize());
}

int64_t ConvNNOp::poolFor(unsigned i) {
  if (std::optional<ArrayRef<int64_t>> ps = getPools(); ps && i < ps->size())
    return (*ps)[i];
  return static_cast<int64_t>(getPool());
}

ModuleListOp ConvNNOp::getLayers() {
  return dyn_cast_or_null<ModuleListOp>(lookupChild(*this, "layers"));
}

ModuleListOp ConvNNOp::getFcs() {
  return dyn_cast_or_null<ModuleListOp>(lookupChild(*this, "fcs"));
}

SmallVector<Operation *, 2> ConvNNOp::getLayerLists() {
  return {getLayers(), getFcs()};
}

unsigned ConvNNOp::getSiteCount() {
  return getChannels().size() + getHiddenDims().size();
}

std::optional<unsigned> ConvNNOp::getLayerIndex(Operation *slot) {
  return indexInLists(getLayerLists(), slot);
}

Operation *ConvNNOp::getLayerAt(unsigned index) {
  return layerInLists(getLayerLists(), index);
}

std::pair<int64_t, int64_t> ConvNNOp::getLayerSizes(unsigned i) {
  SmallVector<int64_t> dims{static_cast<int64_t>(getInChannels())};
  llvm::append_range(dims, getChannels());
  llvm::append_range(dims, getHiddenDims());
  dims.push_back(getOutputDim());
  // Conv block L - 1 feeds fcs.0 through the global pool: one size.
  return {dims[i], dims[i + 1]};
}

void ConvNNOp::setSiteWidth(unsigned site, int64_t width) {
  size_t numBlocks = getChannels().size();
  if (site < numBlocks) {
    SmallVector<int64_t> channels(getChannels());
    channels[site] = width;
    setChannels(channels);
    return;
  }
  SmallVector<int64_t> hidden(getHiddenDims());
  hidden[site - numBlocks] = width;
  setHiddenDims(hidden);
}

void ConvNNOp::insertSite(unsigned at, int64_t width, int64_t kernel) {
  unsigned oldSites = getSiteCount();
  size_t numBlocks = getChannels().size();
  if (at <= numBlocks && kernel) {
    SmallVector<int64_t> channels(getChannels());
    channels.insert(channels.begin() + at, width);
    SmallVector<int64_t> kernels, pools;
    for (unsigned i = 0; i < numBlocks; ++i) {
      kernels.push_back(kernelFor(i));
      pools.push_back(poolFor(i));
    }
    kernels.insert(kernels.begin() + at, kernel);
    pools.insert(pools.begin() + at, 0);
    setChannels(channels);
    if (getKernelSizes() || kernel != kernelFor(numBlocks))
      setKernelSizes(kernels);
    if (getPools() || poolFor(numBlocks) > 1)
      setPools(pools);
  } else {
    SmallVector<int64_t> hidden(getHiddenDims());
    hidden.insert(hidden.begin() + (at - numBlocks), width);
    setHiddenDims(hidden);
  }
  if (ArrayAttr acts = getActivationsAttr())
    setActivationsAttr(insertedAt(
        acts, at, ActivationKindAttr::get(getContext(), ActivationKind::relu)));
  insertDropoutSite(*this, at, oldSites);
}

/// The descriptor params of a conv_nn that are not sizes of its layers.
static LogicalResult verifyConvNNParams(ConvNNOp net) {
  size_t numBlocks = net.getChannels().size();
  if (numBlocks == 0)
    return emitModuleError(net) << "has no conv blocks (channels is empty)";
  if (failed(verifySiteParams(net, net.getSiteCount(), "hidden sites")))
    return failure();
  auto sized = [&](std::optional<ArrayRef<int64_t>> list,
                   StringRef name) -> LogicalResult {
    if (!list || list->size() == numBlocks)
      return success();
    return emitModuleError(net) << "has " << list->size() << " " << name
                                << " for " << numBlocks << " conv blocks";
  };
  if (failed(sized(net.getKernelSizes(), "kernel_sizes")) ||
      failed(sized(net.getPools(), "pools")))
    return failure();
  for (unsigned i = 0; i < numBlocks; ++i) {
    if (net.kernelFor(i) < 1 || net.kernelFor(i) % 2 == 0)
      return emitModuleError(net)
             << "kernel_for(" << i << ") = " << net.kernelFor(i)
             << " must be odd and positive (\"same\" padding)";
    if (net.poolFor(i) < 0)
      return emitModuleError(net)
             << "pool_for(" << i << ") = " << net.poolFor(i) << " is negative";
  }
  return success();
}

/// Checks conv block `i` of `net` against its params.
static LogicalResult verifyConvBlock(ConvNNOp net, size_t i, Operation *op) {
  auto [in, out] = net.getLayerSizes(i);
  if (isa<IdentityOp>(op)) {
    if (in != out)
      return slotError(net, "layers", i, op)
             << "is an 'nnx.identity' but the params say " << in << "->" << out;
    return success();
  }
  auto conv = dyn_cast<Conv2dOp>(op);
  if (!conv)
    return slotError(net, "layers", i, op)
           << "must be an 'nnx.conv2d' (or the 'nnx.identity' of a dropped "
              "block), found '"
           << op->getName() << "'";
  if (static_cast<int64_t>(conv.getInChannels()) != in ||
      static_cast<int64_t>(conv.getOutChannels()) != out)
    return slotError(net, "layers", i, op)
           << "is " << conv.getInChannels() << "->" << conv.getOutChannels()
           << " channels but the params say " << in << "->" << out;
  int64_t k = net.kernelFor(i);
  bool stock = conv.getGroups() == 1;
  for (unsigned d = 0; d < 2; ++d) {
    Window w = conv.getWindow(d);
    stock &=
        w.kernel == k && w.stride == 1 && w.dilation == 1 && w.padding == k / 2;
  }
  if (!stock)
    return slotError(net, "layers", i, op)
           << "must be a " << k << "x" << k
           << " convolution with stride 1, dilation 1, padding " << k / 2
           << " and groups 1, as the params say";
  return success();
}

LogicalResult ConvNNOp::verifyRegions() {
  Block &body = getBody().front();
  ModuleListOp layers = getLayers(), fcs = getFcs();
  if (std::distance(body.begin(), body.end()) != 2 || !layers || !fcs ||
      &body.front() != layers.getOperation())
    return emitModuleError(*this) << "must hold exactly 'nnx.module_list "
                                     "@layers' then 'nnx.module_list @fcs'";
  if (failed(verifyConvNNParams(*this)))
    return failure();
  SmallVector<Operation *> blocks = childOps(layers), linears = childOps(fcs);
  size_t numBlocks = getChannels().size();
  size_t numHidden = getHiddenDims().size();
  if (blocks.size() != numBlocks)
    return emitModuleError(*this)
           << "has " << blocks.size() << " conv blocks but channels implies "
           << numBlocks;
  if (linears.size() != numHidden + 1)
    return emitModuleError(*this)
           << "has " << linears.size() << " fcs but hidden_dims implies "
           << numHidden + 1;
  for (auto [i, op] : llvm::enumerate(blocks))
    if (failed(verifyConvBlock(*this, i, op)))
      return failure();
  SmallVector<int64_t> dims{getChannels().back()};
  llvm::append_range(dims, getHiddenDims());
  dims.push_back(getOutputDim());
  return verifyLinearList(*this, "fcs", linears, dims);
}

LogicalResult ModuleListOp::verifyRegions() {
  return verifyChildren(*this, /*positional=*/true);
}

LogicalResult ModuleDictOp::verifyRegions() {
  return verifyChildren(*this, /*positional=*/false);
}

ForwardOp CustomModuleOp::getForward() {
  for (Operation &op : getBody().front())
    if (auto f = dyn_cast<ForwardOp>(op))
      return f;
  return {};
}

LogicalResult CustomModuleOp::verifyRegions() {
  unsigned forwards = 0;
  for (Operation &child : getBody().front()) {
    if (isa<ForwardOp>(child)) {
      ++forwards;
      continue;
    }
    if (!isa<ModuleOpInterface, AliasOp>(child))
      return emitModuleError(*this)
             << "may only hold modules, aliases and one 'nnx.forward', found '"
             << child.getName() << "'";
  }
  if (isUncalledModule(*this)) {
    if (forwards != 0)
      return emitModuleError(*this)
             << "is marked '" << kUncalledAttrName
             << "' (never called by the model's forward) but has an "
                "'nnx.forward'";
    return success();
  }
  if (forwards != 1)
    return emitModuleError(*this)
           << "must have exactly one 'nnx.forward' (found " << forwards << ")";
  return success();
}

//===----------------------------------------------------------------------===//
// ForwardOp / ReturnOp / CallOp / AliasOp
//===----------------------------------------------------------------------===//

void ForwardOp::build(OpBuilder &builder, OperationState &state,
                      FunctionType type) {
  state.addAttribute(SymbolTable::getSymbolAttrName(),
                     builder.getStringAttr(getForwardSymbolName()));
  state.addAttribute(getFunctionTypeAttrName(state.name), TypeAttr::get(type));
  Region *body = state.addRegion();
  Block *block = new Block();
  body->push_back(block);
  for (Type t : type.getInputs())
    block->addArgument(t, state.location);
}

// function_interface_impl::parseFunctionOp, but for the name: before
// 2026-12-01 a forward had none (`nnx.forward(%x: ...) -> ...`), and such a
// file still reads (Compatibility.h).
ParseResult ForwardOp::parse(OpAsmParser &parser, OperationState &result) {
  Builder &builder = parser.getBuilder();
  (void)mlir::impl::parseOptionalVisibilityKeyword(parser, result.attributes);
  StringAttr name;
  if (failed(parser.parseOptionalSymbolName(name)))
    name = builder.getStringAttr(getForwardSymbolName());
  result.addAttribute(SymbolTable::getSymbolAttrName(), name);
  SmallVector<OpAsmParser::Argument> args;
  SmallVector<Type> resultTypes;
  SmallVector<DictionaryAttr> resultAttrs;
  bool isVariadic = false;
  if (function_interface_impl::parseFunctionSignatureWithArguments(
          parser, /*allowVariadic=*/false, args, isVariadic, resultTypes,
          resultAttrs))
    return failure();
  SmallVector<Type> argTypes;
  for (OpAsmParser::Argument &arg : args)
    argTypes.push_back(arg.type);
  result.addAttribute(
      getFunctionTypeAttrName(result.name),
      TypeAttr::get(builder.getFunctionType(argTypes, resultTypes)));
  if (parser.parseOptionalAttrDictWithKeyword(result.attributes))
    return failure();
  call_interface_impl::addArgAndResultAttrs(builder, result, args, resultAttrs,
                                            getArgAttrsAttrName(result.name),
                                            getResAttrsAttrName(result.name));
  Region &body = *result.addRegion();
  SMLoc bodyLoc = parser.getCurrentLocation();
  OptionalParseResult parsed =
      parser.parseOptionalRegion(body, args, /*enableNameShadowing=*/false);
  if (parsed.has_value() && failed(*parsed))
    return failure();
  if (parsed.has_value() && body.empty())
    return parser.emitError(bodyLoc, "expected non-empty function body");
  if (!body.empty())
    ForwardOp::ensureTerminator(body, builder, result.location);
  return success();
}

void ForwardOp::print(OpAsmPrinter &p) {
  function_interface_impl::printFunctionOp(
      p, *this, /*isVariadic=*/false, getFunctionTypeAttrName(),
      getArgAttrsAttrName(), getResAttrsAttrName());
}

LogicalResult ForwardOp::verify() {
  // The block arguments are checked against the type by FunctionOpInterface.
  if (getSymName() != getForwardSymbolName())
    return emitOpError() << "must be named @" << getForwardSymbolName()
                         << ", not @" << getSymName();
  if ((*this)->hasAttr(SymbolTable::getVisibilityAttrName()))
    return emitOpError("has no visibility: it is always its module's forward");
  llvm::StringMap<Operation *> labels;
  WalkResult walk = getBody().walk([&](Operation *op) {
    if (failed(verifyUpstreamOp(op)))
      return WalkResult::interrupt();
    // The dialect's attribute verifier has checked the label is a string.
    auto label = op->getAttrOfType<StringAttr>(kSourceAttrName);
    if (!label)
      return WalkResult::advance();
    auto [it, inserted] = labels.try_emplace(label.getValue(), op);
    if (!inserted) {
      op->emitOpError() << "reuses source label " << label
                        << " within one forward"
                        << "";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

LogicalResult ReturnOp::verify() {
  auto forward = cast<ForwardOp>((*this)->getParentOp());
  ArrayRef<Type> results = forward.getFunctionType().getResults();
  if (getOperandTypes() != TypeRange(results))
    return emitOpError("operand types do not match the forward's result types");
  return success();
}

Operation *CallOp::lookupCalleeSlot() {
  auto module = (*this)->getParentOfType<CustomModuleOp>();
  return module ? resolveReference(module, getCallee()) : nullptr;
}

ModuleOpInterface CallOp::resolveCalleeModule() {
  return resolveAlias(lookupCalleeSlot());
}

CallInterfaceCallable CallOp::getCallableForCallee() { return getCalleeAttr(); }

void CallOp::setCalleeFromCallable(CallInterfaceCallable callee) {
  setCalleeAttr(cast<SymbolRefAttr>(callee));
}

Operation::operand_range CallOp::getArgOperands() { return getOperands(); }

MutableOperandRange CallOp::getArgOperandsMutable() {
  return getOperandsMutable();
}

/// The callable of a call to an `nnx.module` is its forward; other modules
/// have no callable region.
Operation *CallOp::resolveCallable() {
  ModuleOpInterface callee = resolveCalleeModule();
  auto custom = dyn_cast_or_null<CustomModuleOp>(callee.getOperation());
  return custom ? custom.getForward().getOperation() : nullptr;
}

Operation *CallOp::resolveCallableInTable(SymbolTableCollection *) {
  return resolveCallable();
}

/// The callee a call names, aliases followed, or an error.
static FailureOr<ModuleOpInterface> verifyCallee(CallOp call,
                                                 CustomModuleOp module) {
  SymbolRefAttr ref = call.getCallee();
  AliasOp cycle;
  Operation *slot = resolveReference(module, ref, &cycle);
  ModuleOpInterface target =
      slot ? resolveAlias(slot, &cycle) : ModuleOpInterface();
  if (cycle)
    return call.emitOpError()
           << "callee " << ref
           << " cannot be resolved: its path runs into an alias cycle at '"
           << getDisplayPath(cycle) << "'";
  if (!slot && ref.getNestedReferences().empty() &&
      ref.getRootReference().getValue() == ForwardOp::getForwardSymbolName())
    return call.emitOpError()
           << "callee " << ref
           << " names the module's own forward: a forward cannot call itself";
  if (!slot)
    return call.emitOpError()
           << "callee " << ref << " is not a child of module '"
           << module.getSymName() << "'";
  if (!target)
    return call.emitOpError()
           << "callee " << ref << " is an alias whose target does not exist";
  // A callee that contains this call would need an alias cycle (the path
  // steps down from this module's children), which the aliases' verifiers
  // report first: a table's aliases are checked before its forward's calls.
  return target;
}

//===----------------------------------------------------------------------===//
// StateOp
//===----------------------------------------------------------------------===//

CustomModuleOp StateOp::getModule() {
  return (*this)->getParentOfType<CustomModuleOp>();
}

ElementsAttr StateOp::getTensor() {
  return getModuleTensor(getStateOwner(*this), getName());
}

LogicalResult StateOp::verify() {
  auto of = (*this)->getAttrOfType<SymbolRefAttr>(kStateOfAttrName);
  if (of && !getStateOwner(*this))
    return emitOpError() << "reads '" << getName() << "' of " << of
                         << ", which names no module below the enclosing "
                            "module";
  ElementsAttr tensor = getTensor();
  if (!tensor && of)
    return emitOpError() << "reads '" << getName() << "' of " << of
                         << ", which has no tensor of that name";
  if (!tensor)
    return emitOpError() << "reads '" << getName()
                         << "', which is not a tensor in the 'state' of "
                            "the enclosing module";
  if (tensor.getType() != getType())
    return emitOpError() << "result type " << getType()
                         << " differs from the type of state tensor '"
                         << getName() << "', " << tensor.getType();
  return success();
}

LogicalResult CallOp::verifySymbolUses(SymbolTableCollection &) {
  auto module = (*this)->getParentOfType<CustomModuleOp>();
  if (!module)
    return emitOpError("must be inside the forward of an 'nnx.module'");
  FailureOr<ModuleOpInterface> target = verifyCallee(*this, module);
  if (failed(target))
    return failure();
  if (isForwardlessContainer(*target))
    return emitOpError() << "callee " << getCallee() << " is a "
                         << target->getOperation()->getName().stripDialect()
                         << ", which has no forward";
  FailureOr<SmallVector<Type>> inferred =
      inferForwardTypes(*target, getOperandTypes(), getLoc());
  if (failed(inferred))
    return failure();
  if (inferred->size() != getNumResults())
    return emitOpError() << "callee " << getCallee() << " returns "
                         << inferred->size() << " values, call expects "
                         << getNumResults();
  for (auto [want, got] : llvm::zip(*inferred, getResultTypes()))
    if (failed(verifyCompatibleShape(want, got)) ||
        getElementTypeOrSelf(want) != getElementTypeOrSelf(got))
      return emitOpError() << "result type " << got
                           << " does not match what callee " << getCallee()
                           << " computes: " << want;
  return success();
}

LogicalResult AliasOp::verify() { return verifyKeyNotReserved(*this); }

/// An alias may not make a module contain itself: its target may be neither
/// an ancestor of the alias nor lead back to one through other aliases.
static LogicalResult verifyAcyclic(AliasOp alias, ModuleOpInterface target) {
  ModuleOpInterface loop = findContainerReachableFrom(target, alias);
  if (!loop)
    return success();
  InFlightDiagnostic diag = alias.emitOpError() << "'" << getDisplayPath(alias)
                                                << "' = " << alias.getTarget();
  if (loop == target)
    return diag << " names its own ancestor '" << getDisplayPath(target)
                << "': the module would contain itself";
  diag << " closes a cycle: '" << getDisplayPath(target) << "' reaches '"
       << getDisplayPath(loop)
       << "', which holds this alias, through aliases: the module would "
          "contain itself";
  diag.attachNote(loop.getLoc())
      << "module '" << getDisplayPath(loop) << "' is here";
  return diag;
}

LogicalResult AliasOp::verifySymbolUses(SymbolTableCollection &) {
  ModelOp model = getParentModel(*this);
  if (!model)
    return success();
  AliasOp cycle;
  (void)resolveAlias(*this, &cycle);
  if (cycle == *this)
    return emitOpError() << "'" << getDisplayPath(*this)
                         << "' = " << getTarget()
                         << " is an alias cycle: resolving the target leads "
                            "back to the alias";
  if (cycle)
    return emitOpError() << "'" << getDisplayPath(*this)
                         << "' = " << getTarget()
                         << " cannot be resolved: its path runs into an alias "
                            "cycle at '"
                         << getDisplayPath(cycle) << "'";
  Operation *target = resolveReference(model.getRootModule(), getTarget());
  if (!target)
    return emitOpError() << "target " << getTarget()
                         << " does not name a module";
  if (isa<AliasOp>(target))
    return emitOpError() << "target " << getTarget()
                         << " is itself an alias; name the module";
  return verifyAcyclic(*this, cast<ModuleOpInterface>(target));
}

//===----------------------------------------------------------------------===//
// Leaves
//===----------------------------------------------------------------------===//

int64_t LinearOp::getInFeatures() {
  if (ElementsAttr w = getWeightAttr())
    return cast<ShapedType>(w.getType()).getDimSize(1);
  return ShapedType::kDynamic;
}

int64_t LinearOp::getOutFeaturesCount() {
  if (ElementsAttr w = getWeightAttr())
    return cast<ShapedType>(w.getType()).getDimSize(0);
  return getOutFeatures().value_or(ShapedType::kDynamic);
}

LogicalResult LinearOp::verify() {
  if (getLazy()) {
    if (getWeightAttr() || getBiasAttr())
      return emitModuleError(*this)
             << "is an uninitialized lazy layer and cannot hold tensors";
    if (!getOutFeatures())
      return emitModuleError(*this) << "lazy layer needs 'out_features'";
    return success();
  }
  ElementsAttr w = getWeightAttr();
  if (!w)
    return emitModuleError(*this) << "needs a 'weight' (or 'lazy')";
  auto wt = dyn_cast<RankedTensorType>(w.getType());
  if (!wt || wt.getRank() != 2 || !isa<FloatType>(wt.getElementType()))
    return emitModuleError(*this)
           << "'weight' must be a 2-D float tensor (out x in)";
  if (getOutFeatures() && (int64_t)*getOutFeatures() != wt.getDimSize(0))
    return emitModuleError(*this) << "'out_features' disagrees with 'weight'";
  if (failed(
          verifyFloatTensor(*this, getBiasAttr(), "bias", {wt.getDimSize(0)})))
    return failure();
  return verifySameElementType(*this, {w, getBiasAttr()});
}

int64_t LoraOp::getInFeatures() {
  return cast<ShapedType>(getWeight().getType()).getDimSize(1);
}

int64_t LoraOp::getOutFeaturesCount() {
  return cast<ShapedType>(getWeight().getType()).getDimSize(0);
}

int64_t LoraOp::getRank() {
  return cast<ShapedType>(getLora_A().getType()).getDimSize(0);
}

double LoraOp::getScaling() {
  return getAlpha().convertToDouble() / (double)getRank();
}

bool LoraOp::isScalingFinite(double alpha, int64_t rank, Type elementType) {
  auto floatType = dyn_cast<FloatType>(elementType);
  if (!floatType || rank < 1)
    return false;
  llvm::APFloat scaling(alpha / static_cast<double>(rank));
  bool losesInfo = false;
  scaling.convert(floatType.getFloatSemantics(),
                  llvm::APFloat::rmNearestTiesToEven, &losesInfo);
  return scaling.isFinite();
}

LogicalResult LoraOp::verify() {
  auto wt = dyn_cast<RankedTensorType>(getWeight().getType());
  if (!wt || wt.getRank() != 2 || !isa<FloatType>(wt.getElementType()))
    return emitModuleError(*this)
           << "'weight' must be a 2-D float tensor (out x in)";
  int64_t out = wt.getDimSize(0), in = wt.getDimSize(1);
  auto at = dyn_cast<RankedTensorType>(getLora_A().getType());
  if (!at || at.getRank() != 2 || at.getDimSize(0) < 1)
    return emitModuleError(*this)
           << "'lora_A' must be a 2-D tensor (r x in) with r >= 1";
  int64_t r = at.getDimSize(0);
  if (failed(verifyFloatTensor(*this, getLora_A(), "lora_A", {r, in})) ||
      failed(verifyFloatTensor(*this, getLora_B(), "lora_B", {out, r})) ||
      failed(verifyFloatTensor(*this, getBiasAttr(), "bias", {out})))
    return failure();
  double alpha = getAlpha().convertToDouble();
  if (!std::isfinite(alpha))
    return emitModuleError(*this) << "'alpha' must be finite";
  if (!isScalingFinite(alpha, r, wt.getElementType()))
    return emitModuleError(*this)
           << "the scaling alpha / r = " << alpha << " / " << r
           << " is not finite in " << wt.getElementType()
           << ", the weights' type (the adapter's output would be inf or NaN)";
  return verifySameElementType(
      *this, {getWeight(), getBiasAttr(), getLora_A(), getLora_B()});
}

LogicalResult EmbeddingOp::verify() {
  auto wt = dyn_cast<RankedTensorType>(getWeight().getType());
  if (!wt || wt.getRank() != 2 || !isa<FloatType>(wt.getElementType()))
    return emitModuleError(*this)
           << "'weight' must be a 2-D float tensor (num x dim)";
  int64_t num = wt.getDimSize(0);
  if (std::optional<int64_t> pad = getPaddingIdx())
    if (*pad < -num || *pad >= num)
      return emitModuleError(*this)
             << "padding_idx " << *pad << " is outside the table of " << num
             << " rows";
  if (std::optional<ArrayRef<bool>> mask = getFrozenRows())
    if ((int64_t)mask->size() != num)
      return emitModuleError(*this) << "frozen_rows has " << mask->size()
                                    << " entries for " << num << " rows";
  return success();
}

template <typename NormOp>
static LogicalResult verifyNorm(NormOp op, ArrayRef<ElementsAttr> affine,
                                ArrayRef<StringRef> names) {
  ArrayRef<int64_t> shape = op.getNormalizedShape();
  if (shape.empty() || llvm::any_of(shape, [](int64_t d) { return d <= 0; }))
    return emitModuleError(op)
           << "normalized_shape must be non-empty with positive sizes";
  if (op.getEps().convertToDouble() <= 0.0)
    return emitModuleError(op) << "eps must be positive";
  for (auto [t, name] : llvm::zip(affine, names))
    if (failed(verifyFloatTensor(op, t, name, shape)))
      return failure();
  return verifySameElementType(op, affine);
}

LogicalResult LayerNormOp::verify() {
  return verifyNorm(*this, {getWeightAttr(), getBiasAttr()},
                    {"weight", "bias"});
}

LogicalResult RMSNormOp::verify() {
  return verifyNorm(*this, {getWeightAttr()}, {"weight"});
}

LogicalResult BatchNormOp::verify() {
  auto mt = dyn_cast<RankedTensorType>(getRunningMean().getType());
  if (!mt || mt.getRank() != 1)
    return emitModuleError(*this) << "'running_mean' must be a 1-D tensor";
  int64_t n = mt.getDimSize(0);
  if (failed(verifyFloatTensor(*this, getRunningMean(), "running_mean", {n})) ||
      failed(verifyFloatTensor(*this, getRunningVar(), "running_var", {n})) ||
      failed(verifyFloatTensor(*this, getWeightAttr(), "weight", {n})) ||
      failed(verifyFloatTensor(*this, getBiasAttr(), "bias", {n})))
    return failure();
  if (getEps().convertToDouble() <= 0.0)
    return emitModuleError(*this) << "eps must be positive";
  // The parser fills in momentum's default, so only another value shows
  // that both were written.
  if (getCumulativeAverage() && getMomentum().convertToDouble() != 0.1)
    return emitModuleError(*this)
           << "has both momentum = " << getMomentum().convertToDouble()
           << " and 'cumulative_average' (PyTorch's momentum=None); keep one";
  return verifySameElementType(*this, {getRunningMean(), getRunningVar(),
                                       getWeightAttr(), getBiasAttr()});
}

LogicalResult DropoutOp::verify() {
  double p = getP().convertToDouble();
  if (p < 0.0 || p > 1.0)
    return emitModuleError(*this)
           << "p = " << formatProbability(p) << " is outside [0, 1]";
  return success();
}

//===----------------------------------------------------------------------===//
// Convolutions and pooling
//===----------------------------------------------------------------------===//

/// `value` has one entry per spatial dim, each at least `min`.
static LogicalResult verifySizes(Operation *op, ArrayRef<int64_t> value,
                                 StringRef name, unsigned rank, int64_t min) {
  if (value.size() == rank &&
      llvm::all_of(value, [&](int64_t v) { return v >= min; }))
    return success();
  return emitModuleError(op)
         << "'" << name << "' must be "
         << (rank == 1 ? "one size (L)" : "two sizes (H, W)")
         << ", each at least " << min;
}

template <typename ConvOp> static Window convWindow(ConvOp op, unsigned i) {
  return {op.getKernelSize()[i], op.getStride()[i], op.getPadding()[i],
          op.getDilation()[i]};
}

Window Conv2dOp::getWindow(unsigned i) { return convWindow(*this, i); }
Window Conv1dOp::getWindow(unsigned i) { return convWindow(*this, i); }

/// The windows of `op` (`rank` spatial dims) in the range whose output-size
/// arithmetic fits int64 (verifyWindowRange).
template <typename WindowedOp>
static LogicalResult verifyWindowRanges(WindowedOp op, unsigned rank) {
  for (unsigned i = 0; i < rank; ++i)
    if (failed(verifyWindowRange(
            op.getWindow(i), [&] { return emitModuleError(op); }, 2 + i)))
      return failure();
  return success();
}

/// The verifier of `nnx.conv1d` (`rank` 1) and `nnx.conv2d` (2).
template <typename ConvOp>
static LogicalResult verifyConv(ConvOp op, unsigned rank) {
  if (failed(verifySizes(op, op.getKernelSize(), "kernel_size", rank, 1)) ||
      failed(verifySizes(op, op.getStride(), "stride", rank, 1)) ||
      failed(verifySizes(op, op.getPadding(), "padding", rank, 0)) ||
      failed(verifySizes(op, op.getDilation(), "dilation", rank, 1)) ||
      failed(verifyWindowRanges(op, rank)))
    return failure();
  int64_t in = op.getInChannels(), out = op.getOutChannels(),
          g = op.getGroups();
  if (in < 1 || out < 1)
    return emitModuleError(op) << "channel counts must be positive, got " << in
                               << " in and " << out << " out";
  if (g < 1 || in % g || out % g)
    return emitModuleError(op)
           << "groups = " << g << " must divide in_channels = " << in
           << " and out_channels = " << out;
  SmallVector<int64_t> shape{out, in / g};
  llvm::append_range(shape, op.getKernelSize());
  if (failed(verifyFloatTensor(op, op.getWeight(), "weight", shape)) ||
      failed(verifyFloatTensor(op, op.getBiasAttr(), "bias", {out})))
    return failure();
  return verifySameElementType(op, {op.getWeight(), op.getBiasAttr()});
}

LogicalResult Conv2dOp::verify() { return verifyConv(*this, 2); }
LogicalResult Conv1dOp::verify() { return verifyConv(*this, 1); }

Window MaxPool2dOp::getWindow(unsigned i) {
  return {getKernelSize()[i], getStride()[i], getPadding()[i], getDilation()[i],
          getCeilMode()};
}

Window AvgPool2dOp::getWindow(unsigned i) {
  return {getKernelSize()[i], getStride()[i], getPadding()[i], 1,
          getCeilMode()};
}

/// torch's rule for the pools: padding at most half the kernel, so that no
/// window lies in the padding alone.
static LogicalResult verifyPoolPadding(Operation *op, ArrayRef<int64_t> kernel,
                                       ArrayRef<int64_t> padding) {
  for (unsigned i = 0; i < 2; ++i)
    if (padding[i] > kernel[i] / 2)
      return emitModuleError(op)
             << "padding " << padding[i] << " in dim " << 2 + i
             << " is more than half the kernel size " << kernel[i];
  return success();
}

LogicalResult MaxPool2dOp::verify() {
  if (failed(verifySizes(*this, getKernelSize(), "kernel_size", 2, 1)) ||
      failed(verifySizes(*this, getStride(), "stride", 2, 1)) ||
      failed(verifySizes(*this, getPadding(), "padding", 2, 0)) ||
      failed(verifySizes(*this, getDilation(), "dilation", 2, 1)) ||
      failed(verifyWindowRanges(*this, 2)))
    return failure();
  return verifyPoolPadding(*this, getKernelSize(), getPadding());
}

LogicalResult AvgPool2dOp::verify() {
  if (failed(verifySizes(*this, getKernelSize(), "kernel_size", 2, 1)) ||
      failed(verifySizes(*this, getStride(), "stride", 2, 1)) ||
      failed(verifySizes(*this, getPadding(), "padding", 2, 0)) ||
      failed(verifyWindowRanges(*this, 2)))
    return failure();
  return verifyPoolPadding(*this, getKernelSize(), getPadding());
}

LogicalResult AdaptiveAvgPool2dOp::verify() {
  return verifySizes(*this, getOutputSize(), "output_size", 2, 1);
}

//===----------------------------------------------------------------------===//
// LayerOpInterface: forward types, feature signatures, feature dependence
//===----------------------------------------------------------------------===//

LogicalResult ModuleTypeError::emit(StringRef msg) const {
  std::string path = getModulePath(module);
  InFlightDiagnostic diag = emitError(*loc)
                            << "module '" << (path.empty() ? "<root>" : path)
                            << "' (" << module->getName() << ") " << msg;
  if (*loc != module->getLoc())
    diag.attachNote(module->getLoc()) << "module defined here";
  return diag;
}

LogicalResult ModuleTypeError::requireFloat(RankedTensorType input,
                                            Type paramType) const {
  Type elt = input.getElementType();
  if (!isa<FloatType>(elt))
    return (*this)("takes float tensors, got ", Type(input));
  if (paramType && paramType != elt)
    return (*this)("has ", paramType, " parameters but gets ", elt, " input");
  return success();
}

LogicalResult ModuleTypeError::requireFeatures(RankedTensorType input,
                                               int64_t features) const {
  int64_t last = input.getDimSize(input.getRank() - 1);
  if (last != ShapedType::kDynamic && last != features)
    return (*this)("expects ", features, " input features, got ", last);
  return success();
}

static Type elementTypeOf(ElementsAttr tensor) {
  return tensor ? cast<ShapedType>(tensor.getType()).getElementType() : Type();
}

bool LinearOp::isUninitialized() { return getLazy(); }

FailureOr<Type> LinearOp::inferOutputType(RankedTensorType input,
                                          const ModuleTypeError &error) {
  if (getLazy())
    return error("is an uninitialized lazy layer and has no forward");
  if (failed(error.requireFloat(input, elementTypeOf(getWeightAttr()))) ||
      failed(error.requireFeatures(input, getInFeatures())))
    return failure();
  SmallVector<int64_t> shape(input.getShape());
  shape.back() = getOutFeaturesCount();
  return Type(input.clone(shape));
}

FeatureSignature LinearOp::getFeatureSignature() {
  std::optional<int64_t> in, out;
  if (getWeightAttr())
    in = getInFeatures();
  if (getOutFeaturesCount() != ShapedType::kDynamic)
    out = getOutFeaturesCount();
  return FeatureSignature::projecting(FeatureSignature::Last, in, out);
}

FeatureDependence LinearOp::getFeatureDependence() {
  return FeatureDependence::Projecting;
}

FailureOr<Type> LoraOp::inferOutputType(RankedTensorType input,
                                        const ModuleTypeError &error) {
  if (failed(error.requireFloat(input, elementTypeOf(getWeight()))) ||
      failed(error.requireFeatures(input, getInFeatures())))
    return failure();
  SmallVector<int64_t> shape(input.getShape());
  shape.back() = getOutFeaturesCount();
  return Type(input.clone(shape));
}

FeatureSignature LoraOp::getFeatureSignature() {
  return FeatureSignature::projecting(FeatureSignature::Last, getInFeatures(),
                                      getOutFeaturesCount());
}

FeatureDependence LoraOp::getFeatureDependence() {
  return FeatureDependence::Projecting;
}

FailureOr<Type> EmbeddingOp::inferOutputType(RankedTensorType input,
                                             const ModuleTypeError &error) {
  if (!isa<IntegerType>(input.getElementType()))
    return error("takes integer ids");
  auto table = cast<ShapedType>(getWeight().getType());
  SmallVector<int64_t> shape(input.getShape());
  shape.push_back(table.getDimSize(1));
  return Type(RankedTensorType::get(shape, table.getElementType()));
}

FeatureSignature EmbeddingOp::getFeatureSignature() {
  FeatureSignature s = FeatureSignature::projecting(
      FeatureSignature::Last, std::nullopt,
      cast<ShapedType>(getWeight().getType()).getDimSize(1));
  s.integerInput = true;
  return s;
}

FeatureDependence EmbeddingOp::getFeatureDependence() {
  return FeatureDependence::Projecting;
}

/// The norms over trailing dims: float input whose trailing dims are
/// `normalized_shape`.
template <typename NormOp>
static FailureOr<Type> inferNormType(NormOp norm, RankedTensorType input,
                                     const ModuleTypeError &error) {
  ArrayRef<int64_t> ns = norm.getNormalizedShape();
  if (failed(error.requireFloat(input, elementTypeOf(norm.getWeightAttr()))))
    return failure();
  if ((int64_t)ns.size() > input.getRank())
    return error("normalizes more dimensions than the input has");
  for (auto [i, d] : llvm::enumerate(ns)) {
    int64_t got = input.getDimSize(input.getRank() - ns.size() + i);
    if (got != ShapedType::kDynamic && got != d)
      return error("normalized_shape does not match the input's trailing "
                   "dimensions");
  }
  return Type(input);
}

template <typename NormOp> static FeatureSignature normSignature(NormOp norm) {
  FeatureSignature s = FeatureSignature::keepsShape();
  s.in[FeatureSignature::Last] = norm.getNormalizedShape().back();
  return s;
}

FailureOr<Type> LayerNormOp::inferOutputType(RankedTensorType input,
                                             const ModuleTypeError &error) {
  return inferNormType(*this, input, error);
}

FeatureSignature LayerNormOp::getFeatureSignature() {
  return normSignature(*this);
}

FeatureDependence LayerNormOp::getFeatureDependence() {
  return FeatureDependence::Normalizing;
}

bool LayerNormOp::initializesAsNorm() { return true; }

/// (0 - mean) * rstd * weight is zero; the bias is what is added to it.
bool LayerNormOp::mapsZeroToZero() { return !getTensor("bias"); }

FailureOr<Type> RMSNormOp::inferOutputType(RankedTensorType input,
                                           const ModuleTypeError &error) {
  return inferNormType(*this, input, error);
}

FeatureSignature RMSNormOp::getFeatureSignature() {
  return normSignature(*this);
}

FeatureDependence RMSNormOp::getFeatureDependence() {
  return FeatureDependence::Normalizing;
}

bool RMSNormOp::initializesAsNorm() { return true; }

/// 0 / sqrt(0 + eps) * weight.
bool RMSNormOp::mapsZeroToZero() { return true; }

FailureOr<Type> BatchNormOp::inferOutputType(RankedTensorType input,
                                             const ModuleTypeError &error) {
  if (failed(error.requireFloat(input, elementTypeOf(getRunningMean()))))
    return failure();
  if (input.getRank() < 2 || input.getRank() > 4)
    return error("takes (N, C), (N, C, L) or (N, C, H, W) input");
  int64_t c = input.getDimSize(1);
  int64_t n = cast<ShapedType>(getRunningMean().getType()).getDimSize(0);
  if (c != ShapedType::kDynamic && c != n)
    return error("expects ", n, " channels, got ", c);
  return Type(input);
}

FeatureSignature BatchNormOp::getFeatureSignature() {
  FeatureSignature s = FeatureSignature::keepsShape();
  s.in[FeatureSignature::Channel] =
      cast<ShapedType>(getRunningMean().getType()).getDimSize(0);
  return s;
}

FeatureDependence BatchNormOp::getFeatureDependence() {
  return FeatureDependence::Normalizing;
}

bool BatchNormOp::initializesAsNorm() { return true; }

FailureOr<Type> SoftmaxOp::inferOutputType(RankedTensorType input,
                                           const ModuleTypeError &error) {
  if (failed(error.requireFloat(input, Type())))
    return failure();
  int64_t dim = getDim();
  if (dim < -input.getRank() || dim >= input.getRank())
    return error("dim ", dim, " is out of range for rank ", input.getRank());
  return Type(input);
}

FeatureDependence SoftmaxOp::getFeatureDependence() {
  return FeatureDependence::Mixing;
}

/// The output type of a layer with sliding windows `windows` over the last
/// dims of `input` (N x C x spatial...), with `channels` output channels;
/// `what` names the input's layout in the diagnostic.
static FailureOr<Type> inferWindowedType(RankedTensorType input,
                                         ArrayRef<Window> windows,
                                         int64_t channels, StringRef what,
                                         const ModuleTypeError &error) {
  if (input.getRank() != (int64_t)windows.size() + 2)
    return error("takes ", what, " input, got ", Type(input));
  SmallVector<int64_t> shape{input.getDimSize(0), channels};
  for (auto [i, w] : llvm::enumerate(windows)) {
    int64_t in = input.getDimSize(2 + i);
    if (in > kMaxWindowExtent)
      return error("takes an input of size ", in, " in dim ", 2 + i,
                   ", more than 2^60 (", kMaxWindowExtent, ")");
    int64_t size = w.outputSize(in);
    if (size != ShapedType::kDynamic && size < 1)
      return error("has a window (", w.span(),
                   ") larger than the padded input (", in, " + 2 * ", w.padding,
                   " in dim ", 2 + i, ")");
    shape.push_back(size);
  }
  return Type(input.clone(shape));
}

template <typename ConvOp>
static FailureOr<Type> inferConvType(ConvOp op, RankedTensorType input,
                                     unsigned rank, StringRef what,
                                     const ModuleTypeError &error) {
  if (failed(error.requireFloat(input, elementTypeOf(op.getWeight()))))
    return failure();
  int64_t c = input.getRank() > 1 ? input.getDimSize(1) : 0;
  if (input.getRank() == rank + 2 && c != ShapedType::kDynamic &&
      c != (int64_t)op.getInChannels())
    return error("expects ", op.getInChannels(), " input channels, got ", c);
  SmallVector<Window> windows;
  for (unsigned i = 0; i < rank; ++i)
    windows.push_back(op.getWindow(i));
  return inferWindowedType(input, windows, op.getOutChannels(), what, error);
}

FailureOr<Type> Conv2dOp::inferOutputType(RankedTensorType input,
                                          const ModuleTypeError &error) {
  return inferConvType(*this, input, 2, "(N, C, H, W)", error);
}

FailureOr<Type> Conv1dOp::inferOutputType(RankedTensorType input,
                                          const ModuleTypeError &error) {
  return inferConvType(*this, input, 1, "(N, C, L)", error);
}

template <typename ConvOp> static FeatureSignature convSignature(ConvOp op) {
  return FeatureSignature::projecting(FeatureSignature::Channel,
                                      (int64_t)op.getInChannels(),
                                      (int64_t)op.getOutChannels());
}

FeatureSignature Conv2dOp::getFeatureSignature() {
  return convSignature(*this);
}
FeatureSignature Conv1dOp::getFeatureSignature() {
  return convSignature(*this);
}
FeatureDependence Conv2dOp::getFeatureDependence() {
  return FeatureDependence::Projecting;
}
FeatureDependence Conv1dOp::getFeatureDependence() {
  return FeatureDependence::Projecting;
}

template <typename PoolOp>
static FailureOr<Type> inferPoolType(PoolOp op, RankedTensorType input,
                                     const ModuleTypeError &error) {
  if (failed(error.requireFloat(input, Type())))
    return failure();
  int64_t channels = input.getRank() == 4 ? input.getDimSize(1) : 0;
  return inferWindowedType(input, {op.getWindow(0), op.getWindow(1)}, channels,
                           "(N, C, H, W)", error);
}

FailureOr<Type> MaxPool2dOp::inferOutputType(RankedTensorType input,
                                             const ModuleTypeError &error) {
  return inferPoolType(*this, input, error);
}

FailureOr<Type> AvgPool2dOp::inferOutputType(RankedTensorType input,
                                             const ModuleTypeError &error) {
  return inferPoolType(*this, input, error);
}

FailureOr<Type>
AdaptiveAvgPool2dOp::inferOutputType(RankedTensorType input,
                                     const ModuleTypeError &error) {
  if (failed(error.requireFloat(input, Type())))
    return failure();
  if (input.getRank() != 4)
    return error("takes (N, C, H, W) input, got ", Type(input));
  ArrayRef<int64_t> out = getOutputSize();
  // Static sizes pool by PyTorch's windows, whatever they are; a dynamic
  // one must be a multiple of the output (checked at run time).
  if (input.isDynamicDim(2) != input.isDynamicDim(3))
    for (unsigned i = 0; i < 2; ++i) {
      int64_t in = input.getDimSize(2 + i);
      if (!ShapedType::isDynamic(in) && in % out[i])
        return error("needs an input size that is a multiple of the output "
                     "size where the other spatial size is dynamic, got ",
                     in, " for ", out[i], " in dim ", 2 + i);
    }
  return Type(
      input.clone({input.getDimSize(0), input.getDimSize(1), out[0], out[1]}));
}

// The windows mix the spatial dims, the last of which is what a Linear's
// features are: no unit of the last dim maps to one of the output's.
FeatureDependence MaxPool2dOp::getFeatureDependence() {
  return FeatureDependence::PerChannel;
}
FeatureDependence AvgPool2dOp::getFeatureDependence() {
  return FeatureDependence::PerChannel;
}
FeatureDependence AdaptiveAvgPool2dOp::getFeatureDependence() {
  return FeatureDependence::PerChannel;
}
FeatureSignature FlattenOp::getFeatureSignature() {
  return FeatureSignature::opaque();
}

FeatureDependence FlattenOp::getFeatureDependence() {
  return FeatureDependence::Mixing;
}

/// The flattened dims [start, end] of a rank-`rank` input, or failure.
FailureOr<std::pair<int64_t, int64_t>>
mlir::nnx::getFlattenedDims(FlattenOp op, int64_t rank) {
  int64_t lo = op.getStartDim(), hi = op.getEndDim();
  int64_t r = std::max<int64_t>(rank, 1);
  if (lo < 0)
    lo += r;
  if (hi < 0)
    hi += r;
  if (lo < 0 || hi >= r || lo > hi)
    return failure();
  return std::make_pair(lo, hi);
}

FailureOr<Type> FlattenOp::inferOutputType(RankedTensorType input,
                                           const ModuleTypeError &error) {
  FailureOr<std::pair<int64_t, int64_t>> dims =
      getFlattenedDims(*this, input.getRank());
  if (failed(dims))
    return error("flattens dims ", getStartDim(), " to ", getEndDim(),
                 " of a rank-", input.getRank(), " input");
  if (input.getRank() == 0)
    return Type(input.clone({1}));
  auto [lo, hi] = *dims;
  SmallVector<int64_t> shape(input.getShape().take_front(lo));
  int64_t size = 1;
  for (int64_t d : input.getShape().slice(lo, hi - lo + 1)) {
    if (ShapedType::isDynamic(d) || ShapedType::isDynamic(size))
      size = ShapedType::kDynamic;
    else if (llvm::MulOverflow(size, d, size))
      return error("flattens a dim of more than 2^63 elements");
  }
  shape.push_back(size);
  llvm::append_range(shape, input.getShape().drop_front(hi + 1));
  return Type(input.clone(shape));
}

//===----------------------------------------------------------------------===//
// Custom assembly: the legacy spellings
//===----------------------------------------------------------------------===//

// nnx.gelu and nnx.feed_fwd print as ODS would (`@name {attrs}`,
// `@name attributes {attrs} {body}`) and parse what earlier versions wrote
// too: their attributes go through upgradeLegacyAttributes before the
// checks the generated parser makes (Compatibility.h).

/// `@name` then the attribute dictionary (after `attributes` when
/// `withKeyword`), upgraded and checked.
static ParseResult parseNameAndUpgradedAttrs(OpAsmParser &parser,
                                             OperationState &result,
                                             bool withKeyword) {
  StringAttr name;
  if (parser.parseSymbolName(name))
    return failure();
  result.addAttribute(SymbolTable::getSymbolAttrName(), name);
  SMLoc loc = parser.getCurrentLocation();
  if (withKeyword ? parser.parseOptionalAttrDictWithKeyword(result.attributes)
                  : parser.parseOptionalAttrDict(result.attributes))
    return failure();
  // The parser names the op ("custom op 'nnx.gelu' ...").
  auto emitError = [&]() { return parser.emitError(loc); };
  if (failed(
          upgradeLegacyAttributes(result.name, result.attributes, emitError)) ||
      failed(result.name.verifyInherentAttrs(result.attributes, emitError)))
    return failure();
  return success();
}

/// `@name` and the attributes but `sym_name` and `elided`.
static void printNameAndAttrs(OpAsmPrinter &p, Operation *op,
                              SmallVector<StringRef> elided, bool withKeyword) {
  p << ' ';
  p.printSymbolName(SymbolTable::getSymbolName(op).getValue());
  elided.push_back(SymbolTable::getSymbolAttrName());
  if (withKeyword)
    p.printOptionalAttrDictWithKeyword(op->getAttrs(), elided);
  else
    p.printOptionalAttrDict(op->getAttrs(), elided);
}

ParseResult GELUOp::parse(OpAsmParser &parser, OperationState &result) {
  return parseNameAndUpgradedAttrs(parser, result, /*withKeyword=*/false);
}

void GELUOp::print(OpAsmPrinter &p) {
  SmallVector<StringRef> elided;
  if (getApproximate() == GeluApproximation::none)
    elided.push_back(getApproximateAttrName());
  printNameAndAttrs(p, *this, elided, /*withKeyword=*/false);
}

ParseResult FeedFwdOp::parse(OpAsmParser &parser, OperationState &result) {
  if (parseNameAndUpgradedAttrs(parser, result, /*withKeyword=*/true))
    return failure();
  Region *body = result.addRegion();
  if (parser.parseRegion(*body))
    return failure();
  if (body->empty())
    body->emplaceBlock();
  return success();
}

void FeedFwdOp::print(OpAsmPrinter &p) {
  SmallVector<StringRef> elided;
  if (getActivation() == ActivationKind::relu)
    elided.push_back(getActivationAttrName());
  if (getDropoutAttr() == Builder(getContext()).getF64FloatAttr(0.0))
    elided.push_back(getDropoutAttrName());
  printNameAndAttrs(p, *this, elided, /*withKeyword=*/true);
  p << ' ';
  p.printRegion(getBody());
}

#define GET_OP_CLASSES
#include "nnx/Dialect/NNX/IR/NNXOps.cpp.inc"
