//===- ResultShapes.cpp - the result-shape function of a forward ----------===//
#include "ResultShapes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

/// The number of dynamic dimensions of the ranked tensor results of `type`.
static int64_t countDynamicResultDims(FunctionType type) {
  int64_t count = 0;
  for (Type result : type.getResults())
    if (auto tensor = dyn_cast<RankedTensorType>(result))
      count += tensor.getNumDynamicDims();
  return count;
}

/// Replaces `ret` by a return of the dynamic dimensions of its operands,
/// packed into one tensor of `packedType`.
static void returnDynamicDims(func::ReturnOp ret, RankedTensorType packedType) {
  OpBuilder b(ret);
  Location loc = ret.getLoc();
  SmallVector<Value> dims;
  for (Value value : ret.getOperands()) {
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

FailureOr<func::FuncOp>
mlir::nnx::buildResultShapesFunction(func::FuncOp forward, StringRef name) {
  FunctionType type = forward.getFunctionType();
  int64_t numDynamic = countDynamicResultDims(type);
  if (numDynamic == 0)
    return func::FuncOp();
  auto module = forward->getParentOfType<ModuleOp>();
  if (!module || SymbolTable::lookupSymbolIn(module, name))
    return forward.emitError()
           << "cannot add @" << name << " (the shapes of @"
           << forward.getSymName() << "'s results): the symbol exists";

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
  auto packedType = RankedTensorType::get({numDynamic}, b.getI64Type());
  shapes.setFunctionTypeAttr(TypeAttr::get(
      FunctionType::get(b.getContext(), type.getInputs(), {packedType})));
  for (unsigned i = 0, e = shapes.getNumArguments(); i < e; ++i)
    shapes.setArgAttr(i, bufferization::BufferizationDialect::kWritableAttrName,
                      b.getBoolAttr(false));
  SmallVector<func::ReturnOp> returns;
  shapes.walk([&](func::ReturnOp ret) { returns.push_back(ret); });
  for (func::ReturnOp ret : returns)
    returnDynamicDims(ret, packedType);

  // Dimensions of op results in terms of their operands' dimensions, then
  // away with what no dimension needs.
  PassManager pm(b.getContext(), func::FuncOp::getOperationName());
  pm.addPass(memref::createResolveShapedTypeResultDimsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  if (failed(pm.run(shapes)))
    return failure();
  return shapes;
}
