//===- BuildForward.cpp - nnx.model to func.func on tensors -----*- C++ -*-===//
//
// `nnx-build-forward`: emits the forward of every module of a model with
// upstream linalg / arith / math / tensor ops on tensors.
//
//===----------------------------------------------------------------------===//
#include "nnx/Conversion/NNXToLinalg/NNXToLinalg.h"
#include "nnx/Conversion/Passes.h"
#include "nnx/Dialect/NNX/IR/ModuleTree.h"
#include "nnx/Dialect/NNX/IR/TensorUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

namespace mlir::nnx {
#define GEN_PASS_DEF_NNXBUILDFORWARDPASS
#include "nnx/Conversion/Passes.h.inc"
} // namespace mlir::nnx

using namespace mlir;
using namespace mlir::nnx;

namespace {
using IT = utils::IteratorType;
using BodyFn = function_ref<Value(OpBuilder &, Location, ValueRange)>;

/// "'nnx.linear' op at 'body.fc': " -- the prefix of every refusal.
InFlightDiagnostic emitModuleError(Operation *op) {
  std::string path = getModulePath(op);
  InFlightDiagnostic diag = op->emitOpError();
  if (isa<ModuleOpInterface>(op) || isa<AliasOp>(op))
    diag << "at '" << (path.empty() ? std::string("<root>") : path) << "': ";
  else
    diag << "in the forward of '" << (path.empty() ? "<root>" : path)
         << "': ";
  return diag;
}

//===----------------------------------------------------------------------===//
// Probes
//===----------------------------------------------------------------------===//

/// Emits the `nnx.probes` requests of `op` at `point` ("input" or "output")
/// on `values` (the inputs the op consumes, or the results it produces):
/// each request on `values[index]` becomes an `nnx.probe` whose result
/// replaces that value (what the op then consumes, or what all later uses
/// see). Used for modules and for ops of forward regions alike.
LogicalResult emitProbes(OpBuilder &b, Operation *op, StringRef point,
                         MutableArrayRef<Value> values) {
  Attribute attr = op->getAttr(kProbesAttrName);
  if (!attr)
    return success();
  auto list = dyn_cast<ArrayAttr>(attr);
  if (!list)
    return emitModuleError(op) << "'" << kProbesAttrName
                               << "' must be an array of dictionaries";
  for (auto [i, entry] : llvm::enumerate(list)) {
    auto dict = dyn_cast<DictionaryAttr>(entry);
    auto name = dict ? dict.getAs<StringAttr>("name") : StringAttr();
    auto pointAttr = dict ? dict.getAs<StringAttr>("point") : StringAttr();
    auto index = dict ? dict.getAs<IntegerAttr>("index") : IntegerAttr();
    auto kindAttr = dict ? dict.getAs<StringAttr>("kind") : StringAttr();
    std::optional<ProbeKind> kind =
        kindAttr ? symbolizeProbeKind(kindAttr.getValue()) : std::nullopt;
    if (!name || !pointAttr || !index || !kind ||
        !llvm::is_contained({"input", "output"}, pointAttr.getValue()))
      return emitModuleError(op)
             << "probe request #" << i
             << " must be {name = \"...\", point = \"input\"|\"output\", "
                "index = <int>, kind = \"read\"|\"write\"}";
    if (pointAttr.getValue() != point)
      continue;
    int64_t idx = index.getInt();
    if (idx < 0 || idx >= (int64_t)values.size())
      return emitModuleError(op)
             << "probe '" << name.getValue() << "' asks for " << point
             << " #" << idx << ", but there are " << values.size() << " "
             << point << "s";
    Value &v = values[idx];
    if (!isa<RankedTensorType>(v.getType()))
      return emitModuleError(op) << "probe '" << name.getValue() << "' is on "
                                 << v.getType() << ", not a ranked tensor";
    v = ProbeOp::create(b, op->getLoc(), v.getType(), *kind, name.getValue(),
                        v);
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Emitter
//===----------------------------------------------------------------------===//

/// Transposes a 2-D dense attribute (the Linear weight, pre-transposed so the
/// forward is a plain `linalg.matmul`).
DenseElementsAttr transpose2D(DenseElementsAttr w) {
  auto type = cast<RankedTensorType>(w.getType());
  int64_t rows = type.getDimSize(0), cols = type.getDimSize(1);
  auto newType =
      RankedTensorType::get({cols, rows}, type.getElementType());
  if (w.isSplat())
    return w.resizeSplat(newType);
  unsigned bits = type.getElementTypeBitWidth();
  if (bits % 8 == 0) {
    size_t eb = bits / 8;
    ArrayRef<char> raw = w.getRawData();
    std::vector<char> out(raw.size());
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j)
        std::memcpy(&out[(j * rows + i) * eb], &raw[(i * cols + j) * eb], eb);
    return DenseElementsAttr::getFromRawBuffer(newType, out);
  }
  SmallVector<Attribute> vals(w.getValues<Attribute>());
  SmallVector<Attribute> out(vals.size());
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      out[j * rows + i] = vals[i * cols + j];
  return DenseElementsAttr::get(newType, out);
}

class ForwardEmitter {
public:
  explicit ForwardEmitter(OpBuilder &b) : b(b), loc(b.getUnknownLoc()) {}

  /// Emits the forward of `op` (a module, or an alias of one) on `inputs`.
  FailureOr<SmallVector<Value>> emit(Operation *op, ValueRange inputs);

private:
  OpBuilder &b;
  Location loc;

  // Dispatch.
  FailureOr<SmallVector<Value>> emitModule(ModuleOpInterface m,
                                           ValueRange inputs);
  FailureOr<Value> emitLeaf(ModuleOpInterface m, Value x);
  FailureOr<SmallVector<Value>> emitCustom(CustomModuleOp m,
                                           ValueRange inputs);
  FailureOr<Value> emitFeedFwd(FeedFwdOp ff, Value x);

  // Leaves.
  FailureOr<Value> emitLinear(LinearOp op, Value x);
  FailureOr<Value> emitEmbedding(EmbeddingOp op, Value ids);
  FailureOr<Value> emitLayerNorm(Operation *op, Value x,
                                 ArrayRef<int64_t> normalizedShape, double eps,
                                 bool rms);
  FailureOr<Value> emitBatchNorm(BatchNormOp op, Value x);
  Value emitActivation(StringRef kind, Value x, double param);
  Value emitSoftmax(Value x, int64_t dim);
  Value emitDropout(Value x, double p, uint64_t seed);

  // Helpers.
  FailureOr<Value> constantOf(Operation *m, StringRef name);
  Value scalar(OpBuilder &nb, Location l, Type elt, double v) {
    return arith::ConstantOp::create(nb, l, cast<TypedAttr>(nb.getFloatAttr(elt, v)));
  }
  Value empty(ArrayRef<OpFoldResult> sizes, Type elt) {
    return tensor::EmptyOp::create(b, loc, sizes, elt);
  }
  Value filled(ArrayRef<OpFoldResult> sizes, Type elt, double v) {
    Value init = empty(sizes, elt);
    return linalg::FillOp::create(b, loc, ValueRange{scalar(b, loc, elt, v)},
                                  ValueRange{init})
        .getResult(0);
  }
  Value generic(ValueRange ins, ArrayRef<AffineMap> inMaps, Value init,
                AffineMap outMap, ArrayRef<IT> iters, BodyFn body) {
    SmallVector<AffineMap> maps(inMaps);
    maps.push_back(outMap);
    auto g = linalg::GenericOp::create(
        b, loc, TypeRange{init.getType()}, ins, ValueRange{init}, maps, iters,
        [&](OpBuilder &nb, Location l, ValueRange args) {
          linalg::YieldOp::create(nb, l, body(nb, l, args));
        });
    return g.getResult(0);
  }
  Value map(Value x, function_ref<Value(OpBuilder &, Location, Value)> f) {
    auto t = cast<RankedTensorType>(x.getType());
    AffineMap id = b.getMultiDimIdentityMap(t.getRank());
    return generic(x, {id}, empty(tensor::getMixedSizes(b, loc, x),
                                  t.getElementType()),
                   id, SmallVector<IT>(t.getRank(), IT::parallel),
                   [&](OpBuilder &nb, Location l, ValueRange a) {
                     return f(nb, l, a[0]);
                   });
  }
  /// The map from the full iteration space of rank `rank` to the dims kept
  /// (those with `keep[d]`).
  AffineMap keptDims(unsigned rank, ArrayRef<bool> keep) {
    SmallVector<AffineExpr> exprs;
    for (unsigned d = 0; d < rank; ++d)
      if (keep[d])
        exprs.push_back(b.getAffineDimExpr(d));
    return AffineMap::get(rank, 0, exprs, b.getContext());
  }
  /// Sizes of the dims of `x` with `keep[d]`.
  SmallVector<OpFoldResult> keptSizes(Value x, ArrayRef<bool> keep) {
    SmallVector<OpFoldResult> all = tensor::getMixedSizes(b, loc, x), out;
    for (auto [d, s] : llvm::enumerate(all))
      if (keep[d])
        out.push_back(s);
    return out;
  }
  /// Sum over the dims without `keep[d]` of `f(x, extra...)`, where the
  /// `extra` tensors have the shape of the result.
  Value reduce(Value x, ArrayRef<bool> keep, double init, ValueRange extra,
               function_ref<Value(OpBuilder &, Location, ValueRange, Value)>
                   combine) {
    auto t = cast<RankedTensorType>(x.getType());
    unsigned r = t.getRank();
    AffineMap id = b.getMultiDimIdentityMap(r), red = keptDims(r, keep);
    SmallVector<Value> ins{x};
    llvm::append_range(ins, extra);
    SmallVector<AffineMap> maps{id};
    maps.append(extra.size(), red);
    SmallVector<IT> iters;
    for (bool k : keep)
      iters.push_back(k ? IT::parallel : IT::reduction);
    Value acc = filled(keptSizes(x, keep), t.getElementType(), init);
    return generic(ins, maps, acc, red, iters,
                   [&](OpBuilder &nb, Location l, ValueRange a) {
                     return combine(nb, l, a.drop_back(), a.back());
                   });
  }
  Value castTo(Value v, Type type) {
    if (v.getType() == type)
      return v;
    return tensor::CastOp::create(b, loc, type, v);
  }
};

struct LocGuard {
  Location &slot, saved;
  LocGuard(Location &slot, Location l) : slot(slot), saved(slot) { slot = l; }
  ~LocGuard() { slot = saved; }
};
} // namespace

FailureOr<Value> ForwardEmitter::constantOf(Operation *m, StringRef name) {
  auto attr = m->getAttrOfType<ElementsAttr>(name);
  if (!attr)
    return emitModuleError(m) << "has no '" << name << "' tensor", failure();
  DenseElementsAttr dense = toDenseElements(attr);
  if (!dense)
    return emitModuleError(m) << "the data of tensor '" << name
                              << "' is not available",
           failure();
  return arith::ConstantOp::create(b, loc, dense).getResult();
}

FailureOr<SmallVector<Value>> ForwardEmitter::emit(Operation *op,
                                                   ValueRange inputs) {
  ModuleOpInterface m = resolveAlias(op);
  if (!m)
    return emitModuleError(op) << "alias names no module", failure();
  LocGuard guard(loc, m->getLoc());
  SmallVector<Value> ins(inputs);
  if (failed(emitProbes(b, m, "input", ins)))
    return failure();
  FailureOr<SmallVector<Value>> outs = emitModule(m, ins);
  if (failed(outs) || failed(emitProbes(b, m, "output", *outs)))
    return failure();
  return outs;
}

FailureOr<SmallVector<Value>>
ForwardEmitter::emitModule(ModuleOpInterface m, ValueRange inputs) {
  if (StringAttr sub = m.getSubclassAttr())
    return emitModuleError(m) << "is an instance of subclass '"
                              << sub.getValue()
                              << "' with its own forward, which nnx cannot "
                                 "lower",
           failure();
  if (auto seq = dyn_cast<SequentialOp>(m.getOperation())) {
    SmallVector<Value> cur(inputs);
    for (Operation &child : seq.getBody().front()) {
      FailureOr<SmallVector<Value>> next = emit(&child, cur);
      if (failed(next))
        return failure();
      cur = std::move(*next);
    }
    return cur;
  }
  if (isa<ModuleListOp>(m.getOperation()))
    return emitModuleError(m) << "is a module_list, which has no forward of "
                                 "its own",
           failure();
  if (auto custom = dyn_cast<CustomModuleOp>(m.getOperation()))
    return emitCustom(custom, inputs);
  if (inputs.size() != 1)
    return emitModuleError(m) << "takes exactly one input, got "
                              << inputs.size(),
           failure();
  FailureOr<Value> out =
      isa<FeedFwdOp>(m.getOperation())
          ? emitFeedFwd(cast<FeedFwdOp>(m.getOperation()), inputs.front())
          : emitLeaf(m, inputs.front());
  if (failed(out))
    return failure();
  return SmallVector<Value>{*out};
}

FailureOr<Value> ForwardEmitter::emitFeedFwd(FeedFwdOp ff, Value x) {
  ModuleListOp layers = ff.getLayers();
  if (!layers)
    return emitModuleError(ff) << "has no 'layers'", failure();
  SmallVector<Operation *> linears;
  for (Operation &l : layers.getBody().front())
    linears.push_back(&l);
  for (auto [i, layer] : llvm::enumerate(linears)) {
    FailureOr<SmallVector<Value>> y = emit(layer, x);
    if (failed(y))
      return failure();
    x = y->front();
    if (i + 1 == linears.size())
      break;
    LocGuard guard(loc, ff.getLoc());
    StringRef act = ff.activationFor(i);
    x = act == "softmax" ? emitSoftmax(x, -1)
                         : emitActivation(act, x, /*leaky slope=*/0.01);
    double p = ff.dropoutFor(i);
    if (ff.getTrain() && p > 0.0)
      x = emitDropout(x, p, /*seed=*/i);
  }
  return x;
}

FailureOr<Value> ForwardEmitter::emitLeaf(ModuleOpInterface m, Value x) {
  if (auto lin = dyn_cast<LinearOp>(m.getOperation()); lin && lin.getLazy())
    return emitModuleError(m) << "is an uninitialized lazy layer (in_features "
                                 "unknown) and cannot be lowered",
           failure();
  // The shared type function: feature sizes, element types, ranks.
  if (failed(inferForwardTypes(m, x.getType(), m->getLoc())))
    return failure();
  return llvm::TypeSwitch<Operation *, FailureOr<Value>>(m.getOperation())
      .Case([&](LinearOp op) { return emitLinear(op, x); })
      .Case([&](EmbeddingOp op) { return emitEmbedding(op, x); })
      .Case([&](LayerNormOp op) {
        return emitLayerNorm(op, x, op.getNormalizedShape(),
                             op.getEps().convertToDouble(), /*rms=*/false);
      })
      .Case([&](RMSNormOp op) {
        return emitLayerNorm(op, x, op.getNormalizedShape(),
                             op.getEps().convertToDouble(), /*rms=*/true);
      })
      .Case([&](BatchNormOp op) { return emitBatchNorm(op, x); })
      .Case([&](ReLUOp) { return emitActivation("relu", x, 0); })
      .Case([&](TanhOp) { return emitActivation("tanh", x, 0); })
      .Case([&](SigmoidOp) { return emitActivation("sigmoid", x, 0); })
      .Case([&](SiLUOp) { return emitActivation("silu", x, 0); })
      .Case([&](IdentityOp) { return x; })
      .Case([&](GELUOp op) {
        return emitActivation(op.getApproximate() == "tanh" ? "gelu_tanh"
                                                            : "gelu",
                              x, 0);
      })
      .Case([&](LeakyReLUOp op) {
        return emitActivation("leaky_relu", x,
                              op.getNegativeSlope().convertToDouble());
      })
      .Case([&](SoftmaxOp op) { return emitSoftmax(x, op.getDim()); })
      .Case([&](DropoutOp op) -> FailureOr<Value> {
        double p = op.getP().convertToDouble();
        if (!op.getTrain() || p == 0.0)
          return x;
        return emitDropout(x, p, (uint64_t)op.getSeed());
      })
      .Default([&](Operation *op) -> FailureOr<Value> {
        return emitModuleError(op) << "has no lowering to the forward level",
               failure();
      });
}

//===----------------------------------------------------------------------===//
// nnx.module: clone the forward region
//===----------------------------------------------------------------------===//

static bool isForwardLevelOp(Operation *op) {
  if (isa<ProbeOp>(op))
    return true;
  StringRef ns = op->getName().getDialectNamespace();
  return op->isRegistered() &&
         llvm::is_contained({"arith", "math", "tensor", "linalg"}, ns);
}

FailureOr<SmallVector<Value>>
ForwardEmitter::emitCustom(CustomModuleOp m, ValueRange inputs) {
  ForwardOp fwd = m.getForward();
  if (!fwd)
    return emitModuleError(m) << "has no 'nnx.forward'", failure();
  SmallVector<Type> inTypes(inputs.getTypes());
  if (failed(inferForwardTypes(m, inTypes, m.getLoc())))
    return failure();
  Block &body = fwd.getBodyBlock();
  IRMapping mapping;
  for (auto [arg, in] : llvm::zip(body.getArguments(), inputs))
    mapping.map(arg, castTo(in, arg.getType()));

  for (Operation &op : body) {
    if (auto ret = dyn_cast<ReturnOp>(op)) {
      SmallVector<Value> outs;
      for (Value v : ret.getOperands())
        outs.push_back(mapping.lookup(v));
      return outs;
    }
    LocGuard guard(loc, op.getLoc());
    bool isCall = isa<CallOp>(op);
    if (!isCall && !isForwardLevelOp(&op))
      return emitModuleError(&op)
             << "only upstream arith/math/tensor/linalg ops and 'nnx.call' "
                "can be lowered",
             failure();
    WalkResult nested = op.walk([&](Operation *inner) {
      if (inner != &op && (isa<CallOp>(inner) || !isForwardLevelOp(inner) ||
                           inner->hasAttr(kProbesAttrName))) {
        if (isa<linalg::YieldOp, tensor::YieldOp>(inner) &&
            !inner->hasAttr(kProbesAttrName))
          return WalkResult::advance();
        emitModuleError(inner) << "nested in a region, only upstream "
                                  "arith/math/tensor/linalg ops without probes "
                                  "can be lowered";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (nested.wasInterrupted())
      return failure();

    SmallVector<Value> operands;
    for (Value v : op.getOperands())
      operands.push_back(mapping.lookup(v));
    if (failed(emitProbes(b, &op, "input", operands)))
      return failure();

    SmallVector<Value> results;
    if (auto call = dyn_cast<CallOp>(op)) {
      Operation *callee = call.resolveCalleeModule();
      if (!callee)
        return emitModuleError(&op) << "callee " << call.getCallee()
                                    << " names no module",
               failure();
      FailureOr<SmallVector<Value>> outs = emit(callee, operands);
      if (failed(outs))
        return failure();
      if (outs->size() != call.getNumResults())
        return emitModuleError(&op)
               << "callee returns " << outs->size() << " values, the call "
               << call.getNumResults(),
               failure();
      for (auto [v, t] : llvm::zip(*outs, call.getResultTypes())) {
        if (!tensor::CastOp::areCastCompatible(v.getType(), t))
          return emitModuleError(&op) << "callee returns " << v.getType()
                                      << ", the call expects " << t,
                 failure();
        results.push_back(castTo(v, t));
      }
    } else {
      Operation *clone = b.clone(op, mapping);
      for (auto [i, v] : llvm::enumerate(operands))
        clone->setOperand(i, v);
      clone->removeAttr(kProbesAttrName);
      llvm::append_range(results, clone->getResults());
    }
    if (failed(emitProbes(b, &op, "output", results)))
      return failure();
    for (auto [orig, now] : llvm::zip(op.getResults(), results))
      mapping.map(orig, now);
  }
  return emitModuleError(m) << "forward has no 'nnx.return'", failure();
}

//===----------------------------------------------------------------------===//
// Leaves
//===----------------------------------------------------------------------===//

FailureOr<Value> ForwardEmitter::emitLinear(LinearOp op, Value x) {
  auto xt = cast<RankedTensorType>(x.getType());
  Type elt = xt.getElementType();
  int64_t rank = xt.getRank();
  if (rank < 2)
    return emitModuleError(op) << "needs an input of rank >= 2 (batch, ..., "
                                  "features), got "
                               << x.getType(),
           failure();
  DenseElementsAttr w = toDenseElements(op.getWeightAttr());
  if (!w)
    return emitModuleError(op) << "the data of tensor 'weight' is not "
                                  "available",
           failure();
  int64_t out = op.getOutFeaturesCount();
  Value wt = arith::ConstantOp::create(b, loc, transpose2D(w));

  // Rank > 2: fold the leading dims into one and back.
  SmallVector<OpFoldResult> sizes;
  SmallVector<ReassociationIndices> reassoc;
  Value x2 = x;
  if (rank > 2) {
    ReassociationIndices lead;
    for (int64_t d = 0; d + 1 < rank; ++d)
      lead.push_back(d);
    reassoc = {lead, {rank - 1}};
    sizes = tensor::getMixedSizes(b, loc, x);
    x2 = tensor::CollapseShapeOp::create(b, loc, x, reassoc);
  }
  OpFoldResult m = tensor::getMixedSize(b, loc, x2, 0);
  SmallVector<OpFoldResult> outSizes{m, b.getIndexAttr(out)};
  Value init;
  if (op.getBiasAttr()) {
    FailureOr<Value> bias = constantOf(op, "bias");
    if (failed(bias))
      return failure();
    AffineMap id = b.getMultiDimIdentityMap(2);
    init = generic(*bias, {keptDims(2, {false, true})}, empty(outSizes, elt),
                   id, {IT::parallel, IT::parallel},
                   [](OpBuilder &, Location, ValueRange a) { return a[0]; });
  } else {
    init = filled(outSizes, elt, 0.0);
  }
  Value y = linalg::MatmulOp::create(b, loc, TypeRange{init.getType()},
                                     ValueRange{x2, wt}, ValueRange{init})
                .getResult(0);
  if (rank > 2) {
    SmallVector<OpFoldResult> outShape(sizes);
    outShape.back() = b.getIndexAttr(out);
    SmallVector<int64_t> staticShape(xt.getShape());
    staticShape.back() = out;
    y = tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get(staticShape, elt), y, reassoc, outShape);
  }
  return y;
}

FailureOr<Value> ForwardEmitter::emitEmbedding(EmbeddingOp op, Value ids) {
  auto it = cast<RankedTensorType>(ids.getType());
  FailureOr<Value> table = constantOf(op, "weight");
  if (failed(table))
    return failure();
  auto wt = cast<RankedTensorType>(table->getType());
  int64_t rank = it.getRank(), dim = wt.getDimSize(1),
          rows = wt.getDimSize(0);
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, ids);
  sizes.push_back(b.getIndexAttr(dim));
  SmallVector<bool> keep(rank + 1, true);
  keep.back() = false;
  Value tbl = *table;
  // Out-of-range ids are clamped into [0, rows) so a bad id cannot read
  // outside the table (PyTorch raises an error instead).
  return generic(
      ids, {keptDims(rank + 1, keep)}, empty(sizes, wt.getElementType()),
      b.getMultiDimIdentityMap(rank + 1),
      SmallVector<IT>(rank + 1, IT::parallel),
      [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        Value id = arith::IndexCastOp::create(nb, l, nb.getIndexType(), a[0]);
        Value zero = arith::ConstantIndexOp::create(nb, l, 0);
        Value last = arith::ConstantIndexOp::create(nb, l, rows - 1);
        id = arith::MaxSIOp::create(nb, l, id, zero);
        id = arith::MinSIOp::create(nb, l, id, last);
        Value col = linalg::IndexOp::create(nb, l, rank);
        return tensor::ExtractOp::create(nb, l, tbl, ValueRange{id, col});
      });
}

FailureOr<Value> ForwardEmitter::emitLayerNorm(Operation *op, Value x,
                                               ArrayRef<int64_t> normalized,
                                               double eps, bool rms) {
  auto t = cast<RankedTensorType>(x.getType());
  Type elt = t.getElementType();
  unsigned r = t.getRank(), k = normalized.size(), lead = r - k;
  int64_t count = 1;
  for (int64_t d : normalized)
    count *= d;
  SmallVector<bool> keep(r, false), keepParam(r, false);
  for (unsigned d = 0; d < r; ++d)
    (d < lead ? keep : keepParam)[d] = true;

  Value w, bias;
  if (op->getAttr("weight")) {
    FailureOr<Value> c = constantOf(op, "weight");
    if (failed(c))
      return failure();
    w = *c;
  }
  if (!rms && op->getAttr("bias")) {
    FailureOr<Value> c = constantOf(op, "bias");
    if (failed(c))
      return failure();
    bias = *c;
  }
  // Per row: mean, and rstd = 1 / sqrt(mean of squares + eps).
  auto divCount = [&](OpBuilder &nb, Location l, Value v) -> Value {
    return arith::DivFOp::create(nb, l, v, scalar(nb, l, elt, (double)count));
  };
  auto add = [](OpBuilder &nb, Location l, ValueRange a, Value acc) -> Value {
    return arith::AddFOp::create(nb, l, acc, a[0]);
  };
  auto addSquare = [](OpBuilder &nb, Location l, ValueRange a,
                      Value acc) -> Value {
    Value d = a.size() > 1 ? arith::SubFOp::create(nb, l, a[0], a[1])
                           : a[0];
    Value sq = arith::MulFOp::create(nb, l, d, d);
    return arith::AddFOp::create(nb, l, acc, sq);
  };
  Value mean;
  if (!rms)
    mean = map(reduce(x, keep, 0.0, {}, add),
               [&](OpBuilder &nb, Location l, Value s) {
                 return divCount(nb, l, s);
               });
  SmallVector<Value> centre;
  if (mean)
    centre.push_back(mean);
  Value sumsq = reduce(x, keep, 0.0, centre, addSquare);
  Value rstd = map(sumsq, [&](OpBuilder &nb, Location l, Value s) -> Value {
    Value var = arith::AddFOp::create(nb, l, divCount(nb, l, s),
                                      scalar(nb, l, elt, eps));
    return arith::DivFOp::create(nb, l, scalar(nb, l, elt, 1.0),
                                 math::SqrtOp::create(nb, l, var));
  });

  AffineMap id = b.getMultiDimIdentityMap(r), red = keptDims(r, keep),
            par = keptDims(r, keepParam);
  SmallVector<Value> ins{x, rstd};
  SmallVector<AffineMap> maps{id, red};
  if (!rms) {
    ins.push_back(mean);
    maps.push_back(red);
  }
  int wIdx = -1, bIdx = -1;
  if (w) {
    wIdx = ins.size();
    ins.push_back(w);
    maps.push_back(par);
  }
  if (bias) {
    bIdx = ins.size();
    ins.push_back(bias);
    maps.push_back(par);
  }
  return generic(ins, maps, empty(tensor::getMixedSizes(b, loc, x), elt), id,
                 SmallVector<IT>(r, IT::parallel),
                 [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                   Value v = a[0];
                   if (!rms)
                     v = arith::SubFOp::create(nb, l, v, a[2]);
                   v = arith::MulFOp::create(nb, l, v, a[1]);
                   if (wIdx >= 0)
                     v = arith::MulFOp::create(nb, l, v, a[wIdx]);
                   if (bIdx >= 0)
                     v = arith::AddFOp::create(nb, l, v, a[bIdx]);
                   return v;
                 });
}

FailureOr<Value> ForwardEmitter::emitBatchNorm(BatchNormOp op, Value x) {
  auto t = cast<RankedTensorType>(x.getType());
  Type elt = t.getElementType();
  unsigned r = t.getRank();
  double eps = op.getEps().convertToDouble();
  SmallVector<bool> keep(r, false);
  keep[1] = true;
  Value w, bias;
  if (op.getWeightAttr()) {
    FailureOr<Value> c = constantOf(op, "weight");
    if (failed(c))
      return failure();
    w = *c;
  }
  if (op.getBiasAttr()) {
    FailureOr<Value> c = constantOf(op, "bias");
    if (failed(c))
      return failure();
    bias = *c;
  }

  // Per channel: mean and 1/sqrt(var + eps), from the running statistics
  // (eval) or the batch's biased statistics over dims 0 (and 2) (train).
  Value mean, var; // var: the variance (eval) or sum of squares (train)
  Value count;     // train: the number of elements per channel
  if (op.getTrain()) {
    Value n = tensor::DimOp::create(b, loc, x, 0);
    if (r == 3)
      n = arith::MulIOp::create(b, loc, n, tensor::DimOp::create(b, loc, x, 2));
    Value n64 = arith::IndexCastOp::create(b, loc, b.getI64Type(), n);
    count = arith::SIToFPOp::create(b, loc, elt, n64);
    Value sum =
        reduce(x, keep, 0.0, {},
               [&](OpBuilder &nb, Location l, ValueRange a, Value acc) {
                 return arith::AddFOp::create(nb, l, acc, a[0]);
               });
    mean = map(sum, [&](OpBuilder &nb, Location l, Value s) {
      return arith::DivFOp::create(nb, l, s, count);
    });
    var = reduce(x, keep, 0.0, mean,
                 [&](OpBuilder &nb, Location l, ValueRange a, Value acc) {
                   Value d = arith::SubFOp::create(nb, l, a[0], a[1]);
                   Value sq = arith::MulFOp::create(nb, l, d, d);
                   return arith::AddFOp::create(nb, l, acc, sq);
                 });
  } else {
    FailureOr<Value> rm = constantOf(op, "running_mean");
    FailureOr<Value> rv = constantOf(op, "running_var");
    if (failed(rm) || failed(rv))
      return failure();
    mean = *rm;
    var = *rv;
  }
  // alpha = invstd * weight, beta = bias - mean * alpha (as PyTorch's CPU
  // kernel), then y = x * alpha + beta.
  AffineMap id1 = b.getMultiDimIdentityMap(1);
  SmallVector<OpFoldResult> csize{tensor::getMixedSize(b, loc, mean, 0)};
  SmallVector<Value> ins{var};
  if (w)
    ins.push_back(w);
  Value alpha = generic(
      ins, SmallVector<AffineMap>(ins.size(), id1), empty(csize, elt), id1,
      {IT::parallel}, [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        Value v = a[0];
        if (count)
          v = arith::DivFOp::create(nb, l, v, count);
        v = arith::AddFOp::create(nb, l, v, scalar(nb, l, elt, eps));
        Value inv = arith::DivFOp::create(nb, l, scalar(nb, l, elt, 1.0),
                                          math::SqrtOp::create(nb, l, v));
        return w ? arith::MulFOp::create(nb, l, inv, a[1]).getResult() : inv;
      });
  ins = {mean, alpha};
  if (bias)
    ins.push_back(bias);
  Value beta = generic(
      ins, SmallVector<AffineMap>(ins.size(), id1), empty(csize, elt), id1,
      {IT::parallel}, [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        Value ma = arith::MulFOp::create(nb, l, a[0], a[1]);
        if (bias)
          return arith::SubFOp::create(nb, l, a[2], ma);
        return arith::NegFOp::create(nb, l, ma);
      });
  AffineMap id = b.getMultiDimIdentityMap(r), ch = keptDims(r, keep);
  return generic({x, alpha, beta}, {id, ch, ch},
                 empty(tensor::getMixedSizes(b, loc, x), elt), id,
                 SmallVector<IT>(r, IT::parallel),
                 [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                   Value v = arith::MulFOp::create(nb, l, a[0], a[1]);
                   return arith::AddFOp::create(nb, l, v, a[2]);
                 });
}

Value ForwardEmitter::emitActivation(StringRef kind, Value x, double param) {
  Type elt = cast<RankedTensorType>(x.getType()).getElementType();
  if (kind == "identity")
    return x;
  return map(x, [&](OpBuilder &nb, Location l, Value v) -> Value {
    auto c = [&](double d) { return scalar(nb, l, elt, d); };
    auto sigmoidDen = [&]() { // 1 + exp(-v)
      Value e = math::ExpOp::create(nb, l, arith::NegFOp::create(nb, l, v));
      return arith::AddFOp::create(nb, l, c(1.0), e);
    };
    if (kind == "relu")
      return arith::MaximumFOp::create(nb, l, v, c(0.0));
    if (kind == "tanh")
      return math::TanhOp::create(nb, l, v);
    if (kind == "sigmoid")
      return arith::DivFOp::create(nb, l, c(1.0), sigmoidDen());
    if (kind == "silu")
      return arith::DivFOp::create(nb, l, v, sigmoidDen());
    if (kind == "leaky_relu") {
      Value pos = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OGT, v,
                                        c(0.0));
      Value neg = arith::MulFOp::create(nb, l, v, c(param));
      return arith::SelectOp::create(nb, l, pos, v, neg);
    }
    Value half = arith::MulFOp::create(nb, l, v, c(0.5));
    if (kind == "gelu") { // x/2 * (1 + erf(x / sqrt(2)))
      Value e = math::ErfOp::create(
          nb, l, arith::MulFOp::create(nb, l, v, c(M_SQRT1_2)));
      return arith::MulFOp::create(nb, l, half,
                                   arith::AddFOp::create(nb, l, c(1.0), e));
    }
    assert(kind == "gelu_tanh" && "unknown activation");
    // x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))
    Value cube = arith::MulFOp::create(
        nb, l, arith::MulFOp::create(nb, l, v, v), v);
    Value inner = arith::AddFOp::create(
        nb, l, v, arith::MulFOp::create(nb, l, c(0.044715), cube));
    Value th = math::TanhOp::create(
        nb, l,
        arith::MulFOp::create(nb, l, c(M_SQRT2 * M_2_SQRTPI * 0.5), inner));
    return arith::MulFOp::create(nb, l, half,
                                 arith::AddFOp::create(nb, l, c(1.0), th));
  });
}

Value ForwardEmitter::emitSoftmax(Value x, int64_t dim) {
  auto t = cast<RankedTensorType>(x.getType());
  Type elt = t.getElementType();
  unsigned r = t.getRank();
  if (dim < 0)
    dim += r;
  SmallVector<bool> keep(r, true);
  keep[dim] = false;
  Value mx = reduce(x, keep, -INFINITY, {},
                    [](OpBuilder &nb, Location l, ValueRange a, Value acc) {
                      return arith::MaximumFOp::create(nb, l, acc, a[0]);
                    });
  Value sum = reduce(x, keep, 0.0, mx,
                     [](OpBuilder &nb, Location l, ValueRange a, Value acc) {
                       Value e = math::ExpOp::create(
                           nb, l, arith::SubFOp::create(nb, l, a[0], a[1]));
                       return arith::AddFOp::create(nb, l, acc, e);
                     });
  AffineMap id = b.getMultiDimIdentityMap(r), red = keptDims(r, keep);
  return generic({x, mx, sum}, {id, red, red},
                 empty(tensor::getMixedSizes(b, loc, x), elt), id,
                 SmallVector<IT>(r, IT::parallel),
                 [](OpBuilder &nb, Location l, ValueRange a) -> Value {
                   Value e = math::ExpOp::create(
                       nb, l, arith::SubFOp::create(nb, l, a[0], a[1]));
                   return arith::DivFOp::create(nb, l, e, a[2]);
                 });
}

/// Train-mode dropout. Element `i` (row-major linear index) is dropped when
/// `(splitmix64(i + (seed + 1) * 0x9E3779B97F4A7C15) >> 40) < round(p * 2^24)`
/// and kept elements are scaled by 1/(1-p). docs/Lowering.md spells out the
/// hash so a reference can reproduce the mask.
Value ForwardEmitter::emitDropout(Value x, double p, uint64_t seed) {
  auto t = cast<RankedTensorType>(x.getType());
  Type elt = t.getElementType();
  unsigned r = t.getRank();
  if (p >= 1.0)
    return filled(tensor::getMixedSizes(b, loc, x), elt, 0.0);
  SmallVector<Value> dims;
  for (unsigned d = 0; d < r; ++d)
    dims.push_back(tensor::DimOp::create(b, loc, x, d));
  uint64_t offset = (seed + 1) * 0x9E3779B97F4A7C15ULL;
  uint64_t threshold = (uint64_t)std::llround(p * (double)(1 << 24));
  double scale = 1.0 / (1.0 - p);
  return map(x, [&](OpBuilder &nb, Location l, Value v) -> Value {
    Value lin = linalg::IndexOp::create(nb, l, 0);
    for (unsigned d = 1; d < r; ++d)
      lin = arith::AddIOp::create(
          nb, l, arith::MulIOp::create(nb, l, lin, dims[d]),
          linalg::IndexOp::create(nb, l, d));
    auto i64 = nb.getI64Type();
    auto k = [&](uint64_t c) {
      return arith::ConstantIntOp::create(nb, l, i64, (int64_t)c);
    };
    Value z = arith::IndexCastOp::create(nb, l, i64, lin);
    z = arith::AddIOp::create(nb, l, z, k(offset));
    auto mix = [&](Value z, unsigned shift, uint64_t mul) -> Value {
      Value s = arith::ShRUIOp::create(nb, l, z, k(shift));
      Value x = arith::XOrIOp::create(nb, l, z, s);
      return mul ? arith::MulIOp::create(nb, l, x, k(mul)).getResult() : x;
    };
    z = mix(z, 30, 0xBF58476D1CE4E5B9ULL);
    z = mix(z, 27, 0x94D049BB133111EBULL);
    z = mix(z, 31, 0);
    Value u = arith::ShRUIOp::create(nb, l, z, k(40));
    Value keepIt = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::uge, u,
                                         k(threshold));
    Value scaled = arith::MulFOp::create(nb, l, v, scalar(nb, l, elt, scale));
    return arith::SelectOp::create(nb, l, keepIt, scaled,
                                   scalar(nb, l, elt, 0.0));
  });
}

//===----------------------------------------------------------------------===//
// API and pass
//===----------------------------------------------------------------------===//

std::string mlir::nnx::getForwardFuncName(ModelOp model, unsigned numModels) {
  if (numModels == 1)
    return "forward";
  return (model.getSymName() + "_forward").str();
}

FailureOr<func::FuncOp> mlir::nnx::buildForward(ModelOp model,
                                                StringRef funcName) {
  ModuleOpInterface root = model.getRootModule();
  if (!root)
    return model.emitOpError("has no root module"), failure();
  // A declaration of the function (e.g. for a test `main` that calls it) is
  // replaced by the definition; any other symbol of that name is a clash.
  func::FuncOp declaration;
  if (Operation *table = SymbolTable::getNearestSymbolTable(model->getParentOp()))
    if (Operation *existing = SymbolTable::lookupSymbolIn(
            table, StringAttr::get(model.getContext(), funcName));
        existing && !isa<ModelOp>(existing)) {
      declaration = dyn_cast<func::FuncOp>(existing);
      if (!declaration || !declaration.isDeclaration())
        return model.emitOpError("cannot build '@")
                   << funcName << "': the symbol already exists",
               failure();
    }
  SmallVector<Type> inputs = model.getInputTypes();
  for (Type t : inputs)
    if (!isa<RankedTensorType>(t))
      return model.emitOpError("inputs must be ranked tensors, got ") << t,
             failure();

  OpBuilder b(model);
  auto fn = func::FuncOp::create(b, model.getLoc(), funcName,
                                 b.getFunctionType(inputs, {}));
  Block *entry = fn.addEntryBlock();
  OpBuilder fb = OpBuilder::atBlockBegin(entry);
  ForwardEmitter emitter(fb);
  FailureOr<SmallVector<Value>> outs = emitter.emit(root, entry->getArguments());
  if (failed(outs)) {
    fn.erase();
    return failure();
  }
  func::ReturnOp::create(fb, model.getLoc(), *outs);
  fn.setFunctionType(b.getFunctionType(inputs, ValueRange(*outs).getTypes()));
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
  return fn;
}

LogicalResult mlir::nnx::buildAllForwards(Operation *root) {
  SmallVector<ModelOp> models;
  root->walk([&](ModelOp m) { models.push_back(m); });
  SmallVector<func::FuncOp> built;
  for (ModelOp m : models) {
    FailureOr<func::FuncOp> fn =
        buildForward(m, getForwardFuncName(m, models.size()));
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
  void runOnOperation() override {
    if (failed(buildAllForwards(getOperation())))
      signalPassFailure();
  }
};
} // namespace
