//===- ResultShapes.cpp - the shape functions of a forward ----------------===//
#include "nnx/Pipelines/ResultShapes.h"

#include "nnx/Conversion/NNXToLinalg/RuntimeChecks.h"
#include "nnx/Dialect/NNX/IR/NNXFnOps.h"
#include "nnx/Dialect/NNX/IR/NNXOps.h"
#include "nnx/Support/ResolveDims.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

/// The number of dynamic dimensions of the ranked tensors among `types`.
static int64_t countDynamicDims(TypeRange types) {
  int64_t count = 0;
  for (Type type : types)
    if (auto tensor = dyn_cast<RankedTensorType>(type))
      count += tensor.getNumDynamicDims();
  return count;
}

/// Replaces `ret` of `fn` by a return of `values` (index or i64) packed into
/// one `tensor<Nxi64>`, which becomes `fn`'s only result.
static void returnPacked(func::FuncOp fn, func::ReturnOp ret,
                         ValueRange values) {
  OpBuilder b(ret);
  Location loc = ret.getLoc();
  SmallVector<Value> packed;
  for (Value v : values)
    packed.push_back(v.getType().isIndex()
                         ? arith::IndexCastOp::create(b, loc, b.getI64Type(), v)
                         : v);
  auto type = RankedTensorType::get({static_cast<int64_t>(packed.size())},
                                    b.getI64Type());
  func::ReturnOp::create(
      b, loc, ValueRange{tensor::FromElementsOp::create(b, loc, type, packed)});
  ret.erase();
  fn.setFunctionTypeAttr(TypeAttr::get(
      FunctionType::get(b.getContext(), fn.getArgumentTypes(), {type})));
}

/// Replaces `ret` of `fn` by a return of the dynamic dimensions of
/// `values` (the ranked tensors among them), packed.
static void returnDynamicDims(func::FuncOp fn, func::ReturnOp ret,
                              ValueRange values) {
  OpBuilder b(ret);
  SmallVector<Value> dims;
  for (Value value : values) {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    if (!type)
      continue;
    for (int64_t d = 0, e = type.getRank(); d < e; ++d)
      if (type.isDynamicDim(d))
        dims.push_back(tensor::DimOp::create(b, ret.getLoc(), value, d));
  }
  returnPacked(fn, ret, dims);
}

/// A clone of `forward` named `name`, added after it, with `forward`'s
/// arguments (read only); its body, results included, is still `forward`'s
/// until a return is replaced (returnPacked). Fails with a diagnostic when
/// `@<name>` exists.
static FailureOr<func::FuncOp>
cloneAsShapeFunction(func::FuncOp forward, StringRef name, StringRef what) {
  auto module = forward->getParentOfType<ModuleOp>();
  if (!module || SymbolTable::lookupSymbolIn(module, name))
    return forward.emitError()
           << "cannot add @" << name << " (" << what << " of @"
           << forward.getSymName() << "): the symbol exists";
  OpBuilder b(forward);
  b.setInsertionPointAfter(forward);
  auto shapes = cast<func::FuncOp>(b.clone(*forward.getOperation()));
  shapes.setSymName(name);
  // Of the forward's attributes only the C interface still holds (not the
  // probe lists, not the argument and result attributes).
  shapes->setDiscardableAttrs(b.getDictionaryAttr({}));
  shapes.removeArgAttrsAttr();
  shapes.removeResAttrsAttr();
  shapes->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  for (unsigned i = 0, e = shapes.getNumArguments(); i < e; ++i)
    shapes.setArgAttr(i, bufferization::BufferizationDialect::kWritableAttrName,
                      b.getBoolAttr(false));
  return shapes;
}

/// Elementwise ops on tensors (the residual `arith.addf`) become
/// `linalg.generic`s, whose result shapes are their inits' and whose
/// operands meet in loops. A copy (a read probe's, a repeated result's) is
/// replaced by what it copies: same shape, and as an allocation that reads
/// it, it would keep it alive.
static LogicalResult convertToLinalg(func::FuncOp fn) {
  fn.walk([](bufferization::AllocTensorOp alloc) {
    if (Value copy = alloc.getCopy()) {
      alloc.replaceAllUsesWith(copy);
      alloc.erase();
    }
  });
  PassManager pm(fn.getContext(), func::FuncOp::getOperationName());
  pm.addPass(createConvertElementwiseToLinalgPass());
  return pm.run(fn);
}

/// Dimensions of op results in terms of their operands' dimensions, then
/// away with what no dimension needs: only arithmetic on the argument
/// shapes remains when the shapes depend on nothing else.
static LogicalResult simplifyShapeFunction(func::FuncOp fn) {
  if (failed(convertToLinalg(fn)))
    return failure();
  // Each size resolved once, in order (linear in depth); the passes below
  // then find little left to resolve.
  nnx::resolveDims(fn.getBody().front());
  PassManager pm(fn.getContext(), func::FuncOp::getOperationName());
  pm.addPass(memref::createResolveShapedTypeResultDimsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  return pm.run(fn);
}

FailureOr<func::FuncOp>
mlir::nnx::buildResultShapesFunction(func::FuncOp forward, StringRef name) {
  int64_t numDynamic = countDynamicDims(forward.getResultTypes());
  if (numDynamic == 0)
    return func::FuncOp();
  FailureOr<func::FuncOp> shapes =
      cloneAsShapeFunction(forward, name, "the shapes of the results");
  if (failed(shapes))
    return failure();
  SmallVector<func::ReturnOp> returns;
  shapes->walk([&](func::ReturnOp ret) { returns.push_back(ret); });
  for (func::ReturnOp ret : returns)
    returnDynamicDims(*shapes, ret, ret.getOperands());
  if (failed(simplifyShapeFunction(*shapes)))
    return failure();
  return *shapes;
}

FailureOr<func::FuncOp>
mlir::nnx::buildWriteShapesFunction(func::FuncOp forward, StringRef name,
                                    SmallVectorImpl<std::string> &probeNames) {
  probeNames.clear();
  SmallVector<Type> types;
  forward.walk([&](ProbeOp probe) {
    if (probe.getKind() != ProbeKind::write)
      return;
    probeNames.push_back(probe.getName().str());
    types.push_back(probe.getValue().getType());
  });
  int64_t numDynamic = countDynamicDims(types);
  if (numDynamic == 0)
    return func::FuncOp();
  if (!forward.getBody().hasOneBlock())
    return forward.emitError()
           << "cannot compute the shapes of the write probes of @"
           << forward.getSymName() << ": it has more than one block";
  FailureOr<func::FuncOp> shapes =
      cloneAsShapeFunction(forward, name, "the shapes of the write probes");
  if (failed(shapes))
    return failure();

  // The value each write probe replaces, in the model without any probe:
  // once every write has its shape, every value downstream has the shape it
  // has here.
  SmallVector<Value> written;
  SmallVector<ProbeOp> probes;
  shapes->walk([&](ProbeOp probe) { probes.push_back(probe); });
  for (ProbeOp probe : probes) {
    if (probe->getParentOp() != shapes->getOperation()) {
      InFlightDiagnostic diag =
          forward.emitError()
          << "cannot compute the shape of probe \"" << probe.getName()
          << "\" before the call: it is nested in a region";
      shapes->erase();
      return diag;
    }
    if (probe.getKind() == ProbeKind::write)
      written.push_back(probe.getValue());
    probe.getResult().replaceAllUsesWith(probe.getValue());
    probe.erase();
  }
  auto ret = cast<func::ReturnOp>(shapes->getBody().front().getTerminator());
  returnDynamicDims(*shapes, ret, written);
  if (failed(simplifyShapeFunction(*shapes)))
    return failure();
  SmallVector<StringRef> names(probeNames.begin(), probeNames.end());
  (*shapes)->setAttr(kWriteProbesAttrName,
                     Builder(forward.getContext()).getStrArrayAttr(names));
  return *shapes;
}

//===----------------------------------------------------------------------===//
// Shape checks
//===----------------------------------------------------------------------===//

/// "'linalg.generic' (add_0) at model.mlir:5:8": the op, its label (a
/// NameLoc), where.
static std::string describeOp(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "'" << op->getName() << "'";
  if (auto label = op->getLoc()->findInstanceOf<NameLoc>())
    os << " (" << label.getName().getValue() << ")";
  if (auto file = op->getLoc()->findInstanceOf<FileLineColLoc>())
    os << " at " << file.getFilename().getValue() << ":" << file.getLine()
       << ":" << file.getColumn();
  return text;
}

/// The argument number of `v` in `fn`, or -1.
static int64_t argumentNumber(Value v, func::FuncOp fn) {
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg || arg.getOwner()->getParentOp() != fn)
    return -1;
  return arg.getArgNumber();
}

/// The checks of `op`: each dimension that indexes a loop an earlier
/// operand dimension indexes must equal it. Appends (that earlier
/// dimension, the dimension) to `pairs`.
static void addLoopChecks(linalg::LinalgOp op, func::FuncOp fn,
                          SmallVectorImpl<Value> &pairs,
                          std::vector<nnx::ShapeCheck> &checks) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  std::string where = describeOp(op);
  llvm::DenseMap<unsigned, std::pair<OpOperand *, unsigned>> firsts;
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<RankedTensorType>(operand.get().getType());
    if (!type)
      continue;
    AffineMap map = op.getMatchingIndexingMap(&operand);
    for (auto [d, expr] : llvm::enumerate(map.getResults())) {
      auto loop = dyn_cast<AffineDimExpr>(expr);
      if (!loop)
        continue;
      auto [it, inserted] = firsts.try_emplace(loop.getPosition(), &operand, d);
      auto [source, sourceDim] = it->second;
      auto sourceType = cast<RankedTensorType>(source->get().getType());
      if (inserted ||
          (!type.isDynamicDim(d) && !sourceType.isDynamicDim(sourceDim)))
        continue;
      pairs.push_back(tensor::DimOp::create(b, loc, source->get(), sourceDim));
      pairs.push_back(tensor::DimOp::create(b, loc, operand.get(), d));
      checks.push_back({where, operand.getOperandNumber(),
                        static_cast<unsigned>(d), source->getOperandNumber(),
                        sourceDim, argumentNumber(operand.get(), fn),
                        argumentNumber(source->get(), fn)});
    }
  }
}

/// Drops the checks of `fn` (the pairs it returns) that hold in every run:
/// the same value twice, or two equal constants. Erases `fn` and returns
/// null when none is left.
static FailureOr<func::FuncOp>
pruneChecks(func::FuncOp fn, std::vector<nnx::ShapeCheck> &checks) {
  auto ret = cast<func::ReturnOp>(fn.getBody().front().getTerminator());
  auto packed = ret.getOperand(0).getDefiningOp<tensor::FromElementsOp>();
  if (!packed) {
    // Every size a constant: the checks hold, or fail in every run (then
    // they stay, for the error).
    DenseIntElementsAttr sizes;
    if (!matchPattern(ret.getOperand(0), m_Constant(&sizes)))
      return fn.emitError() << "@" << fn.getSymName()
                            << ": the checks did not simplify to a list";
    SmallVector<APInt> values(sizes.getValues<APInt>());
    for (size_t i = 0; i < checks.size(); ++i)
      if (values[2 * i] != values[2 * i + 1])
        return fn;
    checks.clear();
    fn.erase();
    return func::FuncOp();
  }
  auto same = [](Value a, Value b) {
    APInt x, y;
    return a == b || (matchPattern(a, m_ConstantInt(&x)) &&
                      matchPattern(b, m_ConstantInt(&y)) && x == y);
  };
  SmallVector<Value> kept;
  std::vector<nnx::ShapeCheck> keptChecks;
  OperandRange values = packed.getElements();
  for (auto [i, check] : llvm::enumerate(checks)) {
    if (same(values[2 * i], values[2 * i + 1]))
      continue;
    kept.append({values[2 * i], values[2 * i + 1]});
    keptChecks.push_back(check);
  }
  checks = std::move(keptChecks);
  if (checks.empty()) {
    fn.erase();
    return func::FuncOp();
  }
  returnPacked(fn, ret, kept);
  if (failed(simplifyShapeFunction(fn)))
    return failure();
  return fn;
}

FailureOr<func::FuncOp>
mlir::nnx::buildShapeChecksFunction(func::FuncOp forward, StringRef name,
                                    std::vector<ShapeCheck> &checks) {
  checks.clear();
  if (!forward.getBody().hasOneBlock())
    return func::FuncOp();
  FailureOr<func::FuncOp> fn =
      cloneAsShapeFunction(forward, name, "the shape checks");
  if (failed(fn))
    return failure();
  // The labels (`add_0`) survive the conversion to linalg in the locations.
  fn->walk([](Operation *op) {
    if (auto label = op->getAttrOfType<StringAttr>(kSourceAttrName))
      op->setLoc(NameLoc::get(label, op->getLoc()));
  });
  if (failed(convertToLinalg(*fn)))
    return failure();
  SmallVector<linalg::LinalgOp> ops;
  for (Operation &op : fn->getBody().front())
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(&op);
        linalgOp && linalgOp.hasPureTensorSemantics())
      ops.push_back(linalgOp);
  SmallVector<Value> pairs;

  for (linalg::LinalgOp op : ops)
    addLoopChecks(op, *fn, pairs, checks);
  if (pairs.empty()) {
    fn->erase();
    return func::FuncOp();
  }
  returnPacked(*fn, cast<func::ReturnOp>(fn->getBody().front().getTerminator()),
               pairs);
  if (failed(simplifyShapeFunction(*fn)))
    return failure();
  FailureOr<func::FuncOp> pruned = pruneChecks(*fn, checks);
  if (succeeded(pruned) && *pruned)
    (*pruned)->setAttr(kShapeChecksAttrName,
                       getShapeChecksAttr(forward.getContext(), checks));
  return pruned;
}

ArrayAttr mlir::nnx::getShapeChecksAttr(MLIRContext *context,
                                        ArrayRef<nnx::ShapeCheck> checks) {
  Builder b(context);
  SmallVector<Attribute> entries;
  for (const nnx::ShapeCheck &c : checks)
    entries.push_back(b.getDictionaryAttr({
        b.getNamedAttr("op", b.getStringAttr(c.op)),
        b.getNamedAttr("operand", b.getI64IntegerAttr(c.operand)),
        b.getNamedAttr("dim", b.getI64IntegerAttr(c.dim)),
        b.getNamedAttr("source_operand", b.getI64IntegerAttr(c.sourceOperand)),
        b.getNamedAttr("source_dim", b.getI64IntegerAttr(c.sourceDim)),
        b.getNamedAttr("argument", b.getI64IntegerAttr(c.argument)),
        b.getNamedAttr("source_argument",
                       b.getI64IntegerAttr(c.sourceArgument)),
    }));
  return b.getArrayAttr(entries);
}

std::vector<nnx::ShapeCheck> mlir::nnx::readShapeChecks(func::FuncOp fn) {
  std::vector<nnx::ShapeCheck> checks;
  auto array =
      fn ? fn->getAttrOfType<ArrayAttr>(kShapeChecksAttrName) : ArrayAttr();
  if (!array)
    return checks;
  // The dialect verified every entry (NNXDialect::verifyOperationAttribute).
  for (auto d : array.getAsRange<DictionaryAttr>()) {
    auto at = [&](StringRef key) { return d.getAs<IntegerAttr>(key).getInt(); };
    nnx::ShapeCheck c;
    c.op = d.getAs<StringAttr>("op").str();
    c.operand = at("operand");
    c.dim = at("dim");
    c.sourceOperand = at("source_operand");
    c.sourceDim = at("source_dim");
    c.argument = at("argument");
    c.sourceArgument = at("source_argument");
    checks.push_back(std::move(c));
  }
  return checks;
}

//===----------------------------------------------------------------------===//
// Temporary sizes
//===----------------------------------------------------------------------===//

/// The checks that `type`, of sizes `sizes` (what `op` reifies), takes at
/// most INT64_MAX bytes: each dynamic dim in turn at most INT64_MAX / the
/// bytes of the dims before it (unsigned: a negative dim fails too).
static void checkTemporarySize(OpBuilder &b, Operation *op,
                               RankedTensorType type,
                               ArrayRef<OpFoldResult> sizes) {
  Location loc = op->getLoc();
  int64_t bytes =
      std::max<int64_t>(1, llvm::divideCeil(type.getElementTypeBitWidth(), 8));
  for (int64_t d : type.getShape())
    if (!ShapedType::isDynamic(d) && d > 0 &&
        llvm::MulOverflow(bytes, d, bytes))
      return; // Refused at compile time (static sizes).
  std::string message;
  llvm::raw_string_ostream os(message);
  os << nnx::describeCheckedOp(op) << ": a temporary " << type
     << " of dimension {0}: negative, or its size in bytes overflows 64 bits "
        "(at most {1})";
  Value acc = arith::ConstantIndexOp::create(b, loc, bytes);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value max = arith::ConstantIndexOp::create(
      b, loc, std::numeric_limits<int64_t>::max());
  for (auto [d, size] : llvm::enumerate(sizes)) {
    if (!type.isDynamicDim(d))
      continue;
    Value dim = getValueOrCreateConstantIndexOp(b, loc, size);
    Value limit = arith::DivUIOp::create(b, loc, max, acc);
    nnx::emitRuntimeCheck(b, loc, arith::CmpIPredicate::ule, dim, limit,
                          message);
    acc = arith::MulIOp::create(b, loc, acc,
                                arith::MaxUIOp::create(b, loc, dim, one));
  }
}

void mlir::nnx::addTemporarySizeChecks(func::FuncOp forward) {
  SmallVector<Operation *> ops;
  forward.walk([&](Operation *op) {
    if (isa<tensor::EmptyOp, tensor::SplatOp, nnx::FnArangeOp, nnx::FnExpandOp,
            nnx::FnReshapeOp>(op))
      ops.push_back(op);
  });
  for (Operation *op : ops) {
    auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    auto reify = dyn_cast<ReifyRankedShapedTypeOpInterface>(op);
    if (!type || type.hasStaticShape() ||
        !type.getElementType().isIntOrFloat() || !reify)
      continue;
    OpBuilder b(op);
    ReifiedRankedShapedTypeDims shapes;
    if (failed(reify.reifyResultShapes(b, shapes)) || shapes.empty())
      continue;
    checkTemporarySize(b, op, type, shapes[0]);
  }
}
