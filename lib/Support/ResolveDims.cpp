//===- ResolveDims.cpp - tensor.dim of results, resolved once -------------===//
#include "nnx/Support/ResolveDims.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::nnx;

DimResolver::DimResolver(Block &block)
    : block(block), builder(block.getParentOp()->getContext()) {}

Value DimResolver::resolve(Value value, int64_t dim) {
  auto key = std::make_pair(value, dim);
  if (auto it = sizes.find(key); it != sizes.end())
    return it->second;
  auto type = cast<RankedTensorType>(value.getType());
  Value size;
  if (!type.isDynamicDim(dim)) {
    builder.setInsertionPointToStart(&block);
    size = arith::ConstantIndexOp::create(builder, value.getLoc(),
                                          type.getDimSize(dim));
  } else if (auto result = dyn_cast<OpResult>(value);
             result && result.getOwner()->getBlock() == &block) {
    size = resolveResult(result, dim);
  } else {
    size = createDim(value, dim);
  }
  sizes[key] = size;
  return size;
}

Value DimResolver::resolveResult(OpResult result, int64_t dim) {
  Operation *op = result.getOwner();
  auto dps = dyn_cast<DestinationStyleOpInterface>(op);
  if (dps && dps.hasPureTensorSemantics())
    return resolve(dps.getTiedOpOperand(result)->get(), dim);
  if (auto empty = dyn_cast<tensor::EmptyOp>(op))
    return empty.getDynamicSize(dim);
  return reify(op, result, dim);
}

/// The sizes of `op`'s results from its ReifyRankedShapedTypeOpInterface,
/// with the sizes of operands it asks for resolved in turn; every dynamic
/// size of every result is remembered (one reification per op).
Value DimResolver::reify(Operation *op, OpResult result, int64_t dim) {
  auto reifiable = dyn_cast<ReifyRankedShapedTypeOpInterface>(op);
  if (!reifiable)
    return createDim(result, dim);
  Operation *before = op->getPrevNode();
  builder.setInsertionPoint(op);
  ReifiedRankedShapedTypeDims shapes;
  LogicalResult reified = reifiable.reifyResultShapes(builder, shapes);
  Block::iterator first =
      before ? std::next(before->getIterator()) : block.begin();
  SmallVector<Operation *> created;
  for (Operation &c : llvm::make_range(first, op->getIterator()))
    created.push_back(&c);
  if (failed(reified))
    return createDim(result, dim);
  // The operand sizes the reification read, resolved (the shapes may hold
  // those dims themselves: they are looked up in `replaced`).
  llvm::DenseMap<Value, Value> replaced;
  for (Operation *c : created)
    if (isa<tensor::DimOp>(c)) {
      Value old = c->getResult(0);
      if (Value size = replace(c))
        replaced[old] = size;
    }
  for (auto [i, shape] : llvm::enumerate(shapes)) {
    auto type = dyn_cast<RankedTensorType>(op->getResult(i).getType());
    if (!type || static_cast<int64_t>(shape.size()) != type.getRank())
      continue;
    for (auto [d, size] : llvm::enumerate(shape)) {
      if (!type.isDynamicDim(d))
        continue;
      builder.setInsertionPoint(op);
      Value value =
          getValueOrCreateConstantIndexOp(builder, op->getLoc(), size);
      if (Value resolved = replaced.lookup(value))
        value = resolved;
      sizes.try_emplace({op->getResult(i), static_cast<int64_t>(d)}, value);
    }
  }
  auto it = sizes.find({result, dim});
  return it != sizes.end() ? it->second : createDim(result, dim);
}

Value DimResolver::createDim(Value value, int64_t dim) {
  if (Operation *def = value.getDefiningOp(); def && def->getBlock() == &block)
    builder.setInsertionPointAfter(def);
  else
    builder.setInsertionPointToStart(&block);
  return tensor::DimOp::create(builder, value.getLoc(), value, dim);
}

Value DimResolver::replace(Operation *op) {
  auto dim = dyn_cast<tensor::DimOp>(op);
  std::optional<int64_t> index = dim ? dim.getConstantIndex() : std::nullopt;
  if (!index)
    return Value();
  // A size of an argument (or of what is defined around the block) is
  // resolved already: it stays where it is.
  Value source = dim.getSource();
  auto result = dyn_cast<OpResult>(source);
  auto type = dyn_cast<RankedTensorType>(source.getType());
  if (!type || *index < 0 || *index >= type.getRank() || !result ||
      result.getOwner()->getBlock() != &block)
    return Value();
  Value size = resolve(source, *index);
  Operation *constant = dim.getIndex().getDefiningOp();
  dim.replaceAllUsesWith(size);
  dim.erase();
  if (constant && isOpTriviallyDead(constant))
    constant->erase();
  return size;
}

int64_t mlir::nnx::resolveDims(Block &block) {
  SmallVector<Operation *> dims;
  block.walk([&](tensor::DimOp dim) { dims.push_back(dim); });
  DimResolver resolver(block);
  int64_t replaced = 0;
  for (Operation *dim : dims)
    replaced += resolver.replace(dim) ? 1 : 0;
  return replaced;
}
