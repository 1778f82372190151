//===- BuildForward.cpp - nnx.model to func.func on tensors -----*- C++ -*-===//
//
// `nnx-build-forward`: the structure walk. Flattens containers, `nnx.call`
// and forward regions into the SSA of one `func.func` on tensors; each leaf
// layer emits its own forward through LayerLoweringOpInterface (the
// per-family Lower*.cpp files beside this one).
//
//===----------------------------------------------------------------------===//
#include "nnx/Conversion/NNXToLinalg/ConvLowering.h"
#include "nnx/Conversion/NNXToLinalg/LayerLowering.h"
#include "nnx/Conversion/NNXToLinalg/NNXToLinalg.h"
#include "nnx/Conversion/NNXToLinalg/RecurrentLowering.h"
#include "nnx/Conversion/Passes.h"
#include "nnx/Dialect/NNX/IR/ModuleTree.h"
#include "nnx/Dialect/NNX/IR/ModuleVisitor.h"
#include "nnx/Dialect/NNX/IR/NNXFnOps.h"
#include "nnx/Dialect/NNX/IR/NNXRecurrentOps.h"
#include "nnx/Dialect/NNX/IR/Weights.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/ScopeExit.h"

namespace mlir::nnx {
#define GEN_PASS_DEF_NNXBUILDFORWARDPASS
#include "nnx/Conversion/Passes.h.inc"
} // namespace mlir::nnx

using namespace mlir;
using namespace mlir::nnx;

namespace {
using IT = utils::IteratorType;
using BodyFn = function_ref<Value(OpBuilder &, Location, ValueRange)>;

//===----------------------------------------------------------------------===//
// Probes
//===----------------------------------------------------------------------===//

/// Emits the `nnx.probes` requests of `op` at `point` on `values` (the
/// inputs the op consumes, or the results it produces): each request on
/// `values[index]` becomes an `nnx.probe` whose result replaces that value
/// (what the op then consumes, or what all later uses see). Used for modules
/// and for ops of forward regions alike. The dialect has verified the list
/// holds #nnx.probe attributes.
LogicalResult emitProbes(OpBuilder &b, Operation *op, ProbePoint point,
                         MutableArrayRef<Value> values) {
  auto list = op->getAttrOfType<ArrayAttr>(kProbesAttrName);
  if (!list)
    return success();
  for (auto probe : list.getAsRange<ProbeAttr>()) {
    if (probe.getPoint() != point)
      continue;
    StringRef name = probe.getName().getValue();
    int64_t idx = probe.getIndex();
    if (idx >= (int64_t)values.size())
      return emitModuleError(op)
             << "probe '" << name << "' asks for " << stringifyEnum(point)
             << " #" << idx << ", but there are " << values.size() << " "
             << stringifyEnum(point) << "s";
    Value &v = values[idx];
    if (!isa<RankedTensorType>(v.getType()))
      return emitModuleError(op) << "probe '" << name << "' is on "
                                 << v.getType() << ", not a ranked tensor";
    v = ProbeOp::create(b, op->getLoc(), v.getType(), probe.getKind(), name, v);
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Emitter
//===----------------------------------------------------------------------===//

class ForwardEmitter
    : public ModuleVisitor<ForwardEmitter, FailureOr<SmallVector<Value>>,
                           ValueRange> {
public:
  ForwardEmitter(OpBuilder &b, ParameterArguments *params, bool checkIndices,
                 FloatType computeType)
      : b(b), layers(b) {
    layers.setParameterArguments(params);
    layers.setCheckIndices(checkIndices);
    layers.setComputeType(computeType);
  }

  ArrayRef<IndexCheck> getIndexChecks() const {
    return layers.getIndexChecks();
  }

  /// Emits the forward of `op` (a module, or an alias of one) on `inputs`.
  FailureOr<SmallVector<Value>> emit(Operation *op, ValueRange inputs);

private:
  OpBuilder &b;
  LayerEmitter layers;
  /// The modules whose forward is being emitted (the current call chain).
  llvm::SmallPtrSet<Operation *, 8> active;

  FailureOr<SmallVector<Value>> emitModule(ModuleOpInterface m,
                                           ValueRange inputs);
  FailureOr<Value> emitLeaf(LayerOpInterface layer, Value x);
  FailureOr<SmallVector<Value>> emitLeafValues(LayerOpInterface layer,
                                               ValueRange inputs);

  // ModuleVisitor: one case per container kind, one for every leaf layer.
  friend class ModuleVisitor<ForwardEmitter, FailureOr<SmallVector<Value>>,
                             ValueRange>;
  FailureOr<SmallVector<Value>> visit(SequentialOp seq, ValueRange inputs);
  FailureOr<SmallVector<Value>> visit(FeedFwdOp ff, ValueRange inputs);
  FailureOr<SmallVector<Value>> visit(ConvNNOp cnn, ValueRange inputs);
  FailureOr<SmallVector<Value>> visit(ModuleListOp list, ValueRange inputs);
  FailureOr<SmallVector<Value>> visit(ModuleDictOp dict, ValueRange inputs);
  FailureOr<SmallVector<Value>> visit(CustomModuleOp custom, ValueRange inputs);
  FailureOr<SmallVector<Value>> visitLayer(LayerOpInterface layer,
                                           ValueRange inputs);
  FailureOr<SmallVector<Value>> visitNotAModule(Operation *op,
                                                ValueRange inputs);
  /// Runs `body` on the single input of `m` (leaves and stock nets).
  FailureOr<SmallVector<Value>>
  single(Operation *m, ValueRange inputs,
         function_ref<FailureOr<Value>(Value)> body);
  FailureOr<SmallVector<Value>> emitCustom(CustomModuleOp m, ValueRange inputs);
  FailureOr<SmallVector<Value>> emitForwardOp(Operation &op,
                                              IRMapping &mapping);
  FailureOr<SmallVector<Value>> emitCall(CallOp call, ValueRange operands);
  FailureOr<Value> emitSite(StockNetOpInterface net, unsigned site, Value x);
  FailureOr<Value> emitLayerList(StockNetOpInterface net, ModuleListOp list,
                                 unsigned firstSite, Value x);
  FailureOr<Value> emitConvNN(ConvNNOp cnn, Value x);

  Value castTo(Value v, Type type) {
    if (v.getType() == type)
      return v;
    return tensor::CastOp::create(b, layers.getLoc(), type, v);
  }
};

/// Sets the emitter's location for the lifetime of the guard.
struct LocGuard {
  LayerEmitter &emitter;
  Location saved;
  LocGuard(LayerEmitter &emitter, Location l)
      : emitter(emitter), saved(emitter.getLoc()) {
    emitter.setLoc(l);
  }
  ~LocGuard() { emitter.setLoc(saved); }
};
} // namespace

FailureOr<SmallVector<Value>> ForwardEmitter::emit(Operation *op,
                                                   ValueRange inputs) {
  ModuleOpInterface m = resolveAlias(op);
  if (!m)
    return emitModuleError(op) << "alias names no module";
  // The verifier rejects a module reachable from itself; this guard keeps
  // unverified IR from recursing forever.
  if (!active.insert(m).second)
    return emitModuleError(m) << "runs itself in its own forward (through an "
                                 "alias or a call)";
  llvm::scope_exit leave([&] { active.erase(m); });
  LocGuard guard(layers, m->getLoc());
  SmallVector<Value> ins(inputs);
  if (failed(emitProbes(b, m, ProbePoint::input, ins)))
    return failure();
  FailureOr<SmallVector<Value>> outs = emitModule(m, ins);
  if (failed(outs) || failed(emitProbes(b, m, ProbePoint::output, *outs)))
    return failure();
  return outs;
}

FailureOr<SmallVector<Value>> ForwardEmitter::emitModule(ModuleOpInterface m,
                                                         ValueRange inputs) {
  if (StringAttr sub = m.getSubclassAttr())
    return emitModuleError(m)
           << "is an instance of subclass '" << sub.getValue()
           << "' with its own forward, which nnx cannot "
              "lower";
  return dispatchModuleVisitor(m, inputs);
}

FailureOr<SmallVector<Value>> ForwardEmitter::visit(SequentialOp seq,
                                                    ValueRange inputs) {
  SmallVector<Value> cur(inputs);
  for (Operation &child : seq.getBody().front()) {
    FailureOr<SmallVector<Value>> next = emit(&child, cur);
    if (failed(next))
      return failure();
    cur = std::move(*next);
  }
  return cur;
}

FailureOr<SmallVector<Value>> ForwardEmitter::visit(ModuleListOp list,
                                                    ValueRange) {
  return emitModuleError(list)
         << "is a module_list, which has no forward of its own";
}

FailureOr<SmallVector<Value>> ForwardEmitter::visit(ModuleDictOp dict,
                                                    ValueRange) {
  return emitModuleError(dict)
         << "is a module_dict, which has no forward of its own";
}

FailureOr<SmallVector<Value>> ForwardEmitter::visit(CustomModuleOp custom,
                                                    ValueRange inputs) {
  return emitCustom(custom, inputs);
}

FailureOr<SmallVector<Value>> ForwardEmitter::visit(FeedFwdOp ff,
                                                    ValueRange inputs) {
  return single(ff, inputs, [&](Value x) -> FailureOr<Value> {
    if (ModuleListOp list = ff.getLayers())
      return emitLayerList(ff, list, 0, x);
    return emitModuleError(ff) << "has no 'layers'";
  });
}

FailureOr<SmallVector<Value>> ForwardEmitter::visit(ConvNNOp cnn,
                                                    ValueRange inputs) {
  return single(cnn, inputs, [&](Value x) { return emitConvNN(cnn, x); });
}

FailureOr<SmallVector<Value>> ForwardEmitter::visitLayer(LayerOpInterface layer,
                                                         ValueRange inputs) {
  if (isa<RecurrentLayerOpInterface>(layer.getOperation()))
    return emitLeafValues(layer, inputs);
  return single(layer, inputs, [&](Value x) { return emitLeaf(layer, x); });
}

/// A layer of several inputs or results (the recurrent layers). bf16 / f16
/// under accumulate=f32: float inputs are extended to f32 and the results
/// rounded back.
FailureOr<SmallVector<Value>>
ForwardEmitter::emitLeafValues(LayerOpInterface m, ValueRange inputs) {
  if (failed(inferForwardTypes(m, inputs.getTypes(), m->getLoc())))
    return failure();
  Location loc = m->getLoc();
  FloatType compute = layers.getComputeType();
  Type elt = getElementTypeOrSelf(inputs.front().getType());
  bool widen = compute && isNarrowFloat(elt);
  SmallVector<Value> ins(inputs);
  if (widen)
    for (Value &v : ins)
      v = convertElements(b, loc, v, compute);
  FailureOr<SmallVector<Value>> outs =
      emitRecurrentForward(layers, m.getOperation(), ins);
  if (failed(outs) || !widen)
    return outs;
  for (Value &v : *outs)
    v = convertElements(b, loc, v, elt);
  return outs;
}

FailureOr<SmallVector<Value>> ForwardEmitter::visitNotAModule(Operation *op,
                                                              ValueRange) {
  return emitModuleError(op) << "is not a module with a forward";
}

FailureOr<SmallVector<Value>>
ForwardEmitter::single(Operation *m, ValueRange inputs,
                       function_ref<FailureOr<Value>(Value)> body) {
  if (inputs.size() != 1)
    return emitModuleError(m)
           << "takes exactly one input, got " << inputs.size();
  FailureOr<Value> out = body(inputs.front());
  if (failed(out))
    return failure();
  return SmallVector<Value>{*out};
}

/// `activation_for(site)`, then in train mode `dropout_for(site)`.
FailureOr<Value> ForwardEmitter::emitSite(StockNetOpInterface net,
                                          unsigned site, Value x) {
  LocGuard guard(layers, net->getLoc());
  FailureOr<Value> act = emitActivationKind(layers, net.activationFor(site), x);
  if (failed(act))
    return failure();
  double p = net.dropoutFor(site);
  if (!cast<ModuleOpInterface>(net.getOperation()).getTrain() || p <= 0.0)
    return *act;
  return emitDropout(layers, *act, p, /*seed=*/site);
}

/// The layers of `list` in order, child `k` followed by site `firstSite + k`
/// when that is a hidden site of `net`.
FailureOr<Value> ForwardEmitter::emitLayerList(StockNetOpInterface net,
                                               ModuleListOp list,
                                               unsigned firstSite, Value x) {
  unsigned site = firstSite;
  for (Operation &layer : list.getBody().front()) {
    FailureOr<SmallVector<Value>> y = emit(&layer, x);
    if (failed(y))
      return failure();
    x = y->front();
    if (site < net.getSiteCount()) {
      FailureOr<Value> z = emitSite(net, site, x);
      if (failed(z))
        return failure();
      x = *z;
    }
    ++site;
  }
  return x;
}

/// The conv blocks (each with its site and max pool), the global average
/// pool and flatten, then the fcs.
FailureOr<Value> ForwardEmitter::emitConvNN(ConvNNOp cnn, Value x) {
  if (failed(inferForwardTypes(cnn, x.getType(), cnn.getLoc())))
    return failure();
  std::string what = describeLayer(cnn);
  unsigned site = 0;
  for (Operation &block : cnn.getLayers().getBody().front()) {
    FailureOr<SmallVector<Value>> y = emit(&block, x);
    if (failed(y))
      return failure();
    FailureOr<Value> z = emitSite(cnn, site, y->front());
    if (failed(z))
      return failure();
    x = *z;
    if (int64_t pool = cnn.poolFor(site++); pool > 1) {
      LocGuard guard(layers, cnn.getLoc());
      Window w{pool, pool, /*padding=*/0, /*dilation=*/1, /*ceilMode=*/false};
      FailureOr<Value> pooled =
          emitPool2d(layers, {{w, w}, Pool2dSpec::Max, false, what}, x);
      if (failed(pooled))
        return failure();
      x = *pooled;
    }
  }
  LocGuard guard(layers, cnn.getLoc());
  FailureOr<Value> pooled = emitAdaptiveAvgPool2d(layers, {1, 1}, x, what);
  if (failed(pooled))
    return failure();
  x = tensor::CollapseShapeOp::create(
      b, cnn.getLoc(), *pooled, ArrayRef<ReassociationIndices>{{0}, {1, 2, 3}});
  return emitLayerList(cnn, cnn.getFcs(), site, x);
}

FailureOr<Value> ForwardEmitter::emitLeaf(LayerOpInterface m, Value x) {
  if (m.isUninitialized())
    return emitModuleError(m) << "is an uninitialized lazy layer (in_features "
                                 "unknown) and cannot be lowered";
  // The shared type function: feature sizes, element types, ranks.
  if (failed(inferForwardTypes(m, x.getType(), m->getLoc())))
    return failure();
  auto lowering = dyn_cast<LayerLoweringOpInterface>(m.getOperation());
  if (!lowering)
    return emitModuleError(m) << "has no lowering to the forward level";
  // bf16 / f16 under accumulate=f32: a layer that computes (activations,
  // norms, softmax, pooling, dropout) reads its input extended to f32 and
  // rounds its result once; contractions accumulate in f32 themselves
  // (accumulatorFor) and the layers that only move data keep the type.
  Type elt = getElementTypeOrSelf(x.getType());
  FloatType compute = layers.getComputeType();
  if (!compute || !isNarrowFloat(elt) ||
      isa<LinearOp, LoraOp, Conv1dOp, Conv2dOp, EmbeddingOp, IdentityOp,
          FlattenOp, MaxPool2dOp>(m.getOperation()))
    return lowering.emitForward(layers, x);
  Location loc = m->getLoc();
  FailureOr<Value> y =
      lowering.emitForward(layers, convertElements(b, loc, x, compute));
  if (failed(y))
    return failure();
  return convertElements(b, loc, *y, elt);
}

//===----------------------------------------------------------------------===//
// nnx.module: clone the forward region
//===----------------------------------------------------------------------===//

static bool isForwardLevelOp(Operation *op) {
  // nnx.fn ops are cloned like upstream ops; nnx-lower-functional lowers
  // them.
  if (isa<ProbeOp>(op) || isFunctionalOp(op))
    return true;
  StringRef ns = op->getName().getDialectNamespace();
  return op->isRegistered() &&
         llvm::is_contained({"arith", "math", "tensor", "linalg"}, ns);
}

/// Refuses ops of a forward region that cannot be lowered: anything but
/// upstream arith/math/tensor/linalg ops, `nnx.fn` ops and `nnx.call`, also
/// nested in regions, where probes cannot be placed either.
static LogicalResult checkForwardRegionOp(Operation &op) {
  if (!isa<CallOp, StateOp>(op) && !isForwardLevelOp(&op))
    return emitModuleError(&op)
           << "only upstream arith/math/tensor/linalg ops, 'nnx.fn' ops and "
              "'nnx.call' can be lowered";
  WalkResult nested = op.walk([&](Operation *inner) {
    if (inner == &op)
      return WalkResult::advance();
    bool probed = inner->hasAttr(kProbesAttrName);
    if (isa<linalg::YieldOp, tensor::YieldOp>(inner) && !probed)
      return WalkResult::advance();
    if (isa<CallOp>(inner) || !isForwardLevelOp(inner) || probed) {
      emitModuleError(inner) << "nested in a region, only upstream "
                                "arith/math/tensor/linalg ops without probes "
                                "can be lowered";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(nested.wasInterrupted());
}

FailureOr<SmallVector<Value>> ForwardEmitter::emitCall(CallOp call,
                                                       ValueRange operands) {
  Operation *callee = call.resolveCalleeModule();
  if (!callee)
    return emitModuleError(call)
           << "callee " << call.getCallee() << " names no module";
  FailureOr<SmallVector<Value>> outs = emit(callee, operands);
  if (failed(outs))
    return failure();
  if (outs->size() != call.getNumResults())
    return emitModuleError(call)
           << "callee returns " << outs->size() << " values, the call "
           << call.getNumResults();
  SmallVector<Value> results;
  for (auto [v, t] : llvm::zip(*outs, call.getResultTypes())) {
    if (!tensor::CastOp::areCastCompatible(v.getType(), t))
      return emitModuleError(call)
             << "callee returns " << v.getType() << ", the call expects " << t;
    results.push_back(castTo(v, t));
  }
  return results;
}

/// Emits one op of `m`'s forward region; `mapping` maps the region's values
/// to the emitted ones.
FailureOr<SmallVector<Value>>
ForwardEmitter::emitForwardOp(Operation &op, IRMapping &mapping) {
  LocGuard guard(layers, op.getLoc());
  if (failed(checkForwardRegionOp(op)))
    return failure();
  SmallVector<Value> ins;
  for (Value v : op.getOperands())
    ins.push_back(mapping.lookup(v));
  if (failed(emitProbes(b, &op, ProbePoint::input, ins)))
    return failure();
  SmallVector<Value> results;
  if (auto call = dyn_cast<CallOp>(op)) {
    FailureOr<SmallVector<Value>> outs = emitCall(call, ins);
    if (failed(outs))
      return failure();
    results = std::move(*outs);
  } else if (auto state = dyn_cast<StateOp>(op)) {
    FailureOr<Value> tensor = layers.getStateTensor(state);
    if (failed(tensor))
      return failure();
    results.push_back(*tensor);
  } else {
    Operation *clone = b.clone(op, mapping);
    clone->setOperands(ins);
    clone->removeAttr(kProbesAttrName);
    llvm::append_range(results, clone->getResults());
  }
  if (failed(emitProbes(b, &op, ProbePoint::output, results)))
    return failure();
  return results;
}

FailureOr<SmallVector<Value>> ForwardEmitter::emitCustom(CustomModuleOp m,
                                                         ValueRange inputs) {
  ForwardOp fwd = m.getForward();
  if (!fwd)
    return emitModuleError(m) << "has no 'nnx.forward'";
  SmallVector<Type> inTypes(inputs.getTypes());
  if (failed(inferForwardTypes(m, inTypes, m.getLoc())))
    return failure();
  Block &body = fwd.getBodyBlock();
  IRMapping mapping;
  for (auto [arg, in] : llvm::zip(body.getArguments(), inputs))
    mapping.map(arg, castTo(in, arg.getType()));
  for (Operation &op : body) {
    if (isa<ReturnOp>(op))
      return llvm::map_to_vector(op.getOperands(),
                                 [&](Value v) { return mapping.lookup(v); });
    FailureOr<SmallVector<Value>> results = emitForwardOp(op, mapping);
    if (failed(results))
      return failure();
    mapping.map(op.getResults(), *results);
  }
  return emitModuleError(m) << "forward has no 'nnx.return'";
}

//===----------------------------------------------------------------------===//
// API and pass
//===----------------------------------------------------------------------===//

std::string mlir::nnx::getForwardFuncName(ModelOp model, unsigned numModels) {
  if (numModels == 1)
    return "forward";
  return (model.getSymName() + "_forward").str();
}

/// Attaches the layer lowerings to `ctx`'s ops (once: the registry dedups
/// extensions), for callers of the C++ API that did not register them.
static void loadLayerLowerings(MLIRContext *ctx) {
  DialectRegistry registry;
  registerLayerLoweringExternalModels(registry);
  ctx->appendDialectRegistry(registry);
}

/// Appends the results of `checks` to `outs` and describes them in
/// `nnx.index_checks` on `fn` (`input` when the indices are an argument
/// among the first `numInputs`).
static void addIndexChecks(func::FuncOp fn, ArrayRef<IndexCheck> checks,
                           unsigned numInputs, SmallVectorImpl<Value> &outs) {
  if (checks.empty())
    return;
  Builder b(fn.getContext());
  SmallVector<Attribute> entries;
  for (const IndexCheck &c : checks) {
    std::string path = getModulePath(c.layer);
    SmallVector<NamedAttribute> fields{
        b.getNamedAttr("layer",
                       b.getStringAttr(path.empty() ? "<root>" : path)),
        b.getNamedAttr("op",
                       b.getStringAttr(c.layer->getName().getStringRef())),
        b.getNamedAttr("bound", b.getI64IntegerAttr(c.bound))};
    if (auto arg = dyn_cast<BlockArgument>(c.indices);
        arg && arg.getOwner() == &fn.getBody().front() &&
        arg.getArgNumber() < numInputs)
      fields.push_back(
          b.getNamedAttr("input", b.getI64IntegerAttr(arg.getArgNumber())));
    entries.push_back(b.getDictionaryAttr(fields));
    outs.append({c.position, c.index});
  }
  fn->setAttr(kIndexChecksAttrName, b.getArrayAttr(entries));
}

/// Whether any value of `fn` holds bf16 / f16 elements.
static bool hasNarrowFloats(func::FuncOp fn) {
  auto narrow = [](Value v) {
    return isNarrowFloat(getElementTypeOrSelf(v.getType()));
  };
  if (llvm::any_of(fn.getArguments(), narrow))
    return true;
  WalkResult found = fn.walk([&](Operation *op) {
    return llvm::any_of(op->getResults(), narrow) ? WalkResult::interrupt()
                                                  : WalkResult::advance();
  });
  return found.wasInterrupted();
}

FailureOr<func::FuncOp> mlir::nnx::buildForward(ModelOp model,
                                                StringRef funcName,
                                                const ForwardOptions &options) {
  ParameterMode mode = options.parameters;
  loadLayerLowerings(model.getContext());
  ModuleOpInterface root = model.getRootModule();
  if (!root)
    return model.emitOpError("has no root module");
  // A declaration of the function (e.g. for a test `main` that calls it) is
  // replaced by the definition; any other symbol of that name is a clash.
  func::FuncOp declaration;
  if (Operation *table =
          SymbolTable::getNearestSymbolTable(model->getParentOp()))
    if (Operation *existing = SymbolTable::lookupSymbolIn(
            table, StringAttr::get(model.getContext(), funcName));
        existing && !isa<ModelOp>(existing)) {
      declaration = dyn_cast<func::FuncOp>(existing);
      if (!declaration || !declaration.isDeclaration())
        return model.emitOpError("cannot build '@")
               << funcName << "': the symbol already exists";
    }
  SmallVector<Type> inputs = model.getInputTypes();
  for (Type t : inputs)
    if (!isa<RankedTensorType>(t))
      return model.emitOpError("inputs must be ranked tensors, got ") << t;

  if (options.accumulate != "f32" && options.accumulate != "storage")
    return model.emitOpError("accumulate=")
           << options.accumulate
           << " is not a compute type nnx knows (expected f32 or storage)";
  OpBuilder b(model);
  auto fn = func::FuncOp::create(b, model.getLoc(), funcName,
                                 b.getFunctionType(inputs, {}));
  Block *entry = fn.addEntryBlock();
  OpBuilder fb = OpBuilder::atBlockBegin(entry);
  ParameterArguments params(fn);
  ForwardEmitter emitter(
      fb, mode == ParameterMode::Arguments ? &params : nullptr,
      options.checkIndices,
      options.accumulate == "f32" ? b.getF32Type() : FloatType());
  SmallVector<Value> inputArgs(entry->getArguments());
  FailureOr<SmallVector<Value>> outs = emitter.emit(root, inputArgs);
  if (failed(outs)) {
    fn.erase();
    return failure();
  }
  addIndexChecks(fn, emitter.getIndexChecks(), inputs.size(), *outs);
  func::ReturnOp::create(fb, model.getLoc(), *outs);
  fn.setFunctionType(b.getFunctionType(entry->getArgumentTypes(),
                                       ValueRange(*outs).getTypes()));
  params.annotate(resolveWeightsPath(model).value_or(""));
  if (declaration) {
    if (declaration.getFunctionType() != fn.getFunctionType()) {
      InFlightDiagnostic diag = model.emitOpError("computes ")
                                << fn.getFunctionType() << ", but '@"
                                << funcName << "' is declared as "
                                << declaration.getFunctionType();
      diag.attachNote(declaration.getLoc()) << "declared here";
      fn.erase();
      return failure();
    }
    declaration.erase();
  }
  fn->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  // The compute rule, stated where it matters: a forward with bf16 / f16
  // values (nnx-lower-functional follows it), or one told to keep them.
  if (options.accumulate == "storage" || hasNarrowFloats(fn))
    fn->setAttr(kAccumulateAttrName, b.getStringAttr(options.accumulate));
  return fn;
}

LogicalResult mlir::nnx::buildAllForwards(Operation *root,
                                          const ForwardOptions &options) {
  SmallVector<ModelOp> models;
  root->walk([&](ModelOp m) { models.push_back(m); });
  SmallVector<func::FuncOp> built;
  for (ModelOp m : models) {
    FailureOr<func::FuncOp> fn =
        buildForward(m, getForwardFuncName(m, models.size()), options);
    if (failed(fn)) {
      for (func::FuncOp f : built)
        f.erase();
      return failure();
    }
    built.push_back(*fn);
  }
  for (ModelOp m : models)
    m.erase();
  return success();
}

namespace {
struct NNXBuildForwardPass
    : public mlir::nnx::impl::NNXBuildForwardPassBase<NNXBuildForwardPass> {
  using NNXBuildForwardPassBase::NNXBuildForwardPassBase;
  void getDependentDialects(DialectRegistry &registry) const override {
    NNXBuildForwardPassBase::getDependentDialects(registry);
    registerLayerLoweringExternalModels(registry);
  }
  void runOnOperation() override {
    ForwardOptions options;
    options.parameters = parameters;
    options.checkIndices = checkIndices;
    options.accumulate = accumulate;
    if (failed(buildAllForwards(getOperation(), options)))
      signalPassFailure();
  }
};
} // namespace
