//===- LayerEmitter.cpp - helpers shared by the layer lowerings -*- C++ -*-===//
#include "nnx/Conversion/NNXToLinalg/LayerLowering.h"
#include "nnx/Dialect/NNX/IR/ModuleTree.h"
#include "nnx/Dialect/NNX/IR/StateRead.h"
#include "nnx/Dialect/NNX/IR/TensorUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace mlir::nnx;
using IT = utils::IteratorType;

#include "nnx/Conversion/NNXToLinalg/LayerLoweringOpInterface.cpp.inc"

bool mlir::nnx::isNarrowFloat(Type type) {
  return type.isBF16() || type.isF16();
}

FloatType mlir::nnx::getComputeType(Operation *op) {
  auto func = op->getParentOfType<func::FuncOp>();
  if (auto self = dyn_cast<func::FuncOp>(op))
    func = self;
  auto mode = func ? func->getAttrOfType<StringAttr>(kAccumulateAttrName)
                   : StringAttr();
  if (mode && mode.getValue() == "storage")
    return nullptr;
  return Float32Type::get(op->getContext());
}

Value mlir::nnx::convertElements(OpBuilder &b, Location loc, Value x,
                                 Type elt) {
  auto type = cast<RankedTensorType>(x.getType());
  auto from = dyn_cast<FloatType>(type.getElementType());
  auto to = dyn_cast<FloatType>(elt);
  if (!from || !to || from == to)
    return x;
  Type result = type.clone(elt);
  if (to.getWidth() > from.getWidth())
    return arith::ExtFOp::create(b, loc, result, x);
  return arith::TruncFOp::create(b, loc, result, x);
}

Type LayerEmitter::accumulatorFor(Type elt) const {
  return computeType && isNarrowFloat(elt) ? Type(computeType) : elt;
}

Value ParameterArguments::get(Operation *layer, StringRef name,
                              ElementsAttr attr) {
  MLIRContext *context = func.getContext();
  auto key = std::make_pair(layer, Attribute(StringAttr::get(context, name)));
  if (Value arg = arguments.lookup(key))
    return arg;
  std::string path = getModulePath(layer);
  std::string dotted = path.empty() ? name.str() : path + "." + name.str();
  Builder b(context);
  NamedAttribute argAttrs[] = {
      b.getNamedAttr(bufferization::BufferizationDialect::kWritableAttrName,
                     b.getBoolAttr(false)),
      b.getNamedAttr(kParameterArgAttrName, b.getStringAttr(dotted))};
  unsigned index = func.getNumArguments();
  if (failed(func.insertArgument(index, attr.getType(),
                                 b.getDictionaryAttr(argAttrs),
                                 layer->getLoc())))
    llvm_unreachable("a func.func takes any argument type");
  values.push_back(attr);
  names.push_back(b.getStringAttr(dotted));
  Value arg = func.getArgument(index);
  arguments[key] = arg;
  return arg;
}

void ParameterArguments::annotate(StringRef weightsPath) {
  if (values.empty())
    return;
  Builder b(func.getContext());
  func->setAttr(kParametersAttrName, b.getArrayAttr(values));
  func->setAttr(kParameterNamesAttrName, b.getArrayAttr(names));
  bool external = llvm::any_of(
      values, [](Attribute a) { return isa<ExternalTensorAttr>(a); });
  if (external && !weightsPath.empty())
    func->setAttr(kWeightsAttrName, b.getStringAttr(weightsPath));
}

FailureOr<Value> LayerEmitter::getTensor(Operation *layer, StringRef name) {
  auto attr = layer->getAttrOfType<ElementsAttr>(name);
  if (!attr)
    return emitModuleError(layer) << "has no '" << name << "' tensor";
  return materialize(layer, name, attr);
}

FailureOr<Value> LayerEmitter::getStateTensor(StateOp op) {
  // The owner: the enclosing module, or the one `nnx.of` names (then the
  // runtime parameter is the owner's own, shared with its layer).
  Operation *owner = getStateOwner(op);
  ElementsAttr attr = getModuleTensor(owner, op.getName());
  if (!attr || !owner)
    return emitModuleError(op) << "reads '" << op.getName()
                               << "', which its module's 'state' lacks";
  return materialize(owner, op.getName(), attr);
}

FailureOr<Value> LayerEmitter::materialize(Operation *layer, StringRef name,
                                           ElementsAttr attr) {
  if (params)
    return params->get(layer, name, attr);
  if (isa<ExternalTensorAttr>(attr))
    return emitModuleError(layer)
           << "tensor '" << name
           << "' is in the weights file; a forward with constant parameters "
              "needs it inline (nnx-internalize-weights), or build the "
              "forward with parameters=arguments";
  DenseElementsAttr dense = toDenseElements(attr);
  if (!dense)
    return emitModuleError(layer)
           << "the data of tensor '" << name << "' is not available";
  return arith::ConstantOp::create(builder, loc, dense).getResult();
}

FailureOr<Value> LayerEmitter::getOptionalTensor(Operation *layer,
                                                 StringRef name) {
  if (!layer->getAttr(name))
    return Value();
  return getTensor(layer, name);
}

Value LayerEmitter::scalar(OpBuilder &b, Location l, Type elt, double v) {
  return arith::ConstantOp::create(b, l,
                                   cast<TypedAttr>(b.getFloatAttr(elt, v)));
}

Value LayerEmitter::empty(ArrayRef<OpFoldResult> sizes, Type elt) {
  return tensor::EmptyOp::create(builder, loc, sizes, elt);
}

Value LayerEmitter::filled(ArrayRef<OpFoldResult> sizes, Type elt, double v) {
  Value init = empty(sizes, elt);
  return linalg::FillOp::create(builder, loc,
                                ValueRange{scalar(builder, loc, elt, v)},
                                ValueRange{init})
      .getResult(0);
}

Value LayerEmitter::generic(ValueRange ins, ArrayRef<AffineMap> inMaps,
                            Value init, AffineMap outMap, ArrayRef<IT> iters,
                            BodyFn body) {
  SmallVector<AffineMap> maps(inMaps);
  maps.push_back(outMap);
  auto g = linalg::GenericOp::create(
      builder, loc, TypeRange{init.getType()}, ins, ValueRange{init}, maps,
      iters, [&](OpBuilder &nb, Location l, ValueRange args) {
        Type outElt = getElementTypeOrSelf(init.getType());
        bool wide = isa<FloatType>(outElt) && !isNarrowFloat(outElt);
        SmallVector<Value> values(args);
        for (Value &v : values)
          if (wide && isNarrowFloat(v.getType()))
            v = arith::ExtFOp::create(nb, l, outElt, v);
        Value result = body(nb, l, values);
        if (isNarrowFloat(outElt) && isa<FloatType>(result.getType()) &&
            result.getType() != outElt)
          result = arith::TruncFOp::create(nb, l, outElt, result);
        linalg::YieldOp::create(nb, l, result);
      });
  return g.getResult(0);
}

SmallVector<OpFoldResult> LayerEmitter::sizesOf(Value x) {
  return tensor::getMixedSizes(builder, loc, x);
}

Value LayerEmitter::map(Value x, ScalarFn f) {
  auto t = cast<RankedTensorType>(x.getType());
  AffineMap id = builder.getMultiDimIdentityMap(t.getRank());
  return generic(
      x, {id}, empty(sizesOf(x), t.getElementType()), id,
      SmallVector<IT>(t.getRank(), IT::parallel),
      [&](OpBuilder &nb, Location l, ValueRange a) { return f(nb, l, a[0]); });
}

AffineMap LayerEmitter::keptDims(unsigned rank, ArrayRef<bool> keep) {
  SmallVector<AffineExpr> exprs;
  for (unsigned d = 0; d < rank; ++d)
    if (keep[d])
      exprs.push_back(builder.getAffineDimExpr(d));
  return AffineMap::get(rank, 0, exprs, builder.getContext());
}

SmallVector<OpFoldResult> LayerEmitter::keptSizes(Value x,
                                                  ArrayRef<bool> keep) {
  SmallVector<OpFoldResult> out;
  for (auto [d, s] : llvm::enumerate(sizesOf(x)))
    if (keep[d])
      out.push_back(s);
  return out;
}

Value LayerEmitter::reduce(Value x, ArrayRef<bool> keep, double init,
                           ValueRange extra, CombineFn combine) {
  auto t = cast<RankedTensorType>(x.getType());
  unsigned r = t.getRank();
  AffineMap id = builder.getMultiDimIdentityMap(r), red = keptDims(r, keep);
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

void LayerEmitter::checkIndices(Operation *layer, Value indices,
                                int64_t bound) {
  if (!checkIndicesEnabled)
    return;
  auto t = cast<RankedTensorType>(indices.getType());
  unsigned rank = t.getRank();
  Type i64 = builder.getI64Type();
  SmallVector<Value> dims;
  for (OpFoldResult s : sizesOf(indices))
    dims.push_back(getValueOrCreateConstantIndexOp(builder, loc, s));
  auto fill = [&](int64_t v) {
    Value init =
        tensor::EmptyOp::create(builder, loc, ArrayRef<int64_t>{}, i64);
    Value c = arith::ConstantIntOp::create(builder, loc, i64, v);
    return linalg::FillOp::create(builder, loc, c, init).getResult(0);
  };
  Value none = fill(0);
  AffineMap id = builder.getMultiDimIdentityMap(rank);
  AffineMap scalarMap = AffineMap::get(rank, 0, {}, builder.getContext());
  // The first bad position p in row-major order, encoded INT64_MAX - p so
  // that 0 (a zeroed buffer) means none, and its index: a max reduction.
  auto g = linalg::GenericOp::create(
      builder, loc, TypeRange{none.getType(), none.getType()},
      ValueRange{indices}, ValueRange{none, fill(0)},
      ArrayRef<AffineMap>{id, scalarMap, scalarMap},
      SmallVector<IT>(rank, IT::reduction),
      [&](OpBuilder &nb, Location l, ValueRange a) {
        Value v = a[0];
        if (v.getType() != i64)
          v = arith::ExtSIOp::create(nb, l, i64, v);
        Value flat = arith::ConstantIndexOp::create(nb, l, 0);
        for (unsigned d = 0; d < rank; ++d)
          flat = arith::AddIOp::create(
              nb, l, arith::MulIOp::create(nb, l, flat, dims[d]),
              linalg::IndexOp::create(nb, l, d));
        flat = arith::IndexCastOp::create(nb, l, i64, flat);
        Value zero = arith::ConstantIntOp::create(nb, l, i64, 0);
        Value hi = arith::ConstantIntOp::create(nb, l, i64, bound);
        Value low =
            arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt, v, zero);
        Value high =
            arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sge, v, hi);
        Value bad = arith::OrIOp::create(nb, l, low, high);
        Value max = arith::ConstantIntOp::create(
            nb, l, i64, std::numeric_limits<int64_t>::max());
        Value code = arith::SelectOp::create(
            nb, l, bad, arith::SubIOp::create(nb, l, max, flat), zero);
        Value first =
            arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sgt, code, a[1]);
        Value pos = arith::SelectOp::create(nb, l, first, code, a[1]);
        Value idx = arith::SelectOp::create(nb, l, first, v, a[2]);
        linalg::YieldOp::create(nb, l, ValueRange{pos, idx});
      });
  indexChecks.push_back(
      {layer, indices, bound, g.getResult(0), g.getResult(1)});
}

void mlir::nnx::registerLayerLoweringExternalModels(DialectRegistry &registry) {
  registerProjectionLowerings(registry);
  registerNormLowerings(registry);
  registerConvLowerings(registry);
  registerActivationLowerings(registry);
}
