//===- ResultShapes.cpp - the shape functions of a forward ----------------===//
#include "ResultShapes.h"

#include "nnx/Dialect/NNX/IR/NNXOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
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

/// Replaces `ret` by a return of the dynamic dimensions of `values` (the
/// ranked tensors among them), packed into one tensor of `packedType`.
static void returnDynamicDims(func::ReturnOp ret, ValueRange values,
                              RankedTensorType packedType) {
  OpBuilder b(ret);
  Location loc = ret.getLoc();
  SmallVector<Value> dims;
  for (Value value : values) {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    if (!type)
      continue;
    for (int64_t d = 0, e = type.getRank(); d < e; ++d) {
      if (!type.isDynamicDim(d))
        continue;
      Value dim = tensor::DimOp::create(b, loc, value, d);
      dims.push_back(arith::IndexCastOp::create(b, loc, b.getI64Type(), dim));
    }
  }
  Value packed = tensor::FromElementsOp::create(b, loc, packedType, dims);
  func::ReturnOp::create(b, loc, packed);
  ret.erase();
}

/// A clone of `forward` named `name`, added after it, with `forward`'s
/// arguments (read only) and one result of `packedType`; its body is still
/// `forward`'s. Fails with a diagnostic when `@<name>` exists.
static FailureOr<func::FuncOp> cloneAsShapeFunction(func::FuncOp forward,
                                                    StringRef name,
                                                    RankedTensorType packedType,
                                                    StringRef what) {
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
  shapes.setFunctionTypeAttr(TypeAttr::get(FunctionType::get(
      b.getContext(), forward.getArgumentTypes(), {packedType})));
  for (unsigned i = 0, e = shapes.getNumArguments(); i < e; ++i)
    shapes.setArgAttr(i, bufferization::BufferizationDialect::kWritableAttrName,
                      b.getBoolAttr(false));
  return shapes;
}

/// Dimensions of op results in terms of their operands' dimensions, then
/// away with what no dimension needs: only arithmetic on the argument
/// shapes remains when the shapes depend on nothing else. Elementwise ops on
/// tensors (the residual `arith.addf`) become `linalg.generic`s first, whose
/// result shapes are their inits'.
static LogicalResult simplifyShapeFunction(func::FuncOp shapes) {
  // A copy (a read probe's, a repeated result's) has the shape of what it
  // copies; as an allocation that reads it, it would keep it alive.
  shapes.walk([](bufferization::AllocTensorOp alloc) {
    if (Value copy = alloc.getCopy()) {
      alloc.replaceAllUsesWith(copy);
      alloc.erase();
    }
  });
  PassManager pm(shapes.getContext(), func::FuncOp::getOperationName());
  pm.addPass(createConvertElementwiseToLinalgPass());
  pm.addPass(memref::createResolveShapedTypeResultDimsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  return pm.run(shapes);
}

FailureOr<func::FuncOp>
mlir::nnx::buildResultShapesFunction(func::FuncOp forward, StringRef name) {
  int64_t numDynamic = countDynamicDims(forward.getResultTypes());
  if (numDynamic == 0)
    return func::FuncOp();
  auto packedType = RankedTensorType::get(
      {numDynamic}, IntegerType::get(forward.getContext(), 64));
  FailureOr<func::FuncOp> shapes = cloneAsShapeFunction(
      forward, name, packedType, "the shapes of the results");
  if (failed(shapes))
    return failure();
  SmallVector<func::ReturnOp> returns;
  shapes->walk([&](func::ReturnOp ret) { returns.push_back(ret); });
  for (func::ReturnOp ret : returns)
    returnDynamicDims(ret, ret.getOperands(), packedType);
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
  auto packedType = RankedTensorType::get(
      {numDynamic}, IntegerType::get(forward.getContext(), 64));
  FailureOr<func::FuncOp> shapes = cloneAsShapeFunction(
      forward, name, packedType, "the shapes of the write probes");
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
  returnDynamicDims(ret, written, packedType);
  if (failed(simplifyShapeFunction(*shapes)))
    return failure();
  return *shapes;
}
