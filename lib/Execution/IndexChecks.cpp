//===- IndexChecks.cpp - run-time index checks of a forward ---------------===//
#include "IndexChecks.h"
#include "ExecutionError.h"
#include "nnx/Dialect/NNX/IR/NNXOps.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::nnx;

llvm::Expected<std::vector<IndexCheckSpec>>
mlir::nnx::readIndexChecks(func::FuncOp forward, size_t numReadProbes) {
  std::vector<IndexCheckSpec> checks;
  auto entries = forward->getAttrOfType<ArrayAttr>(kIndexChecksAttrName);
  if (!entries)
    return checks;
  TypeRange results = forward.getResultTypes();
  if (2 * entries.size() + numReadProbes > results.size())
    return makeError("@forward lists " + Twine(entries.size()) +
                     " index checks, but has only " + Twine(results.size()) +
                     " results");
  size_t first = results.size() - numReadProbes - 2 * entries.size();
  auto scalarI64 =
      RankedTensorType::get({}, IntegerType::get(forward.getContext(), 64));
  for (auto [i, entry] : llvm::enumerate(entries)) {
    auto d = dyn_cast<DictionaryAttr>(entry);
    auto layer = d ? d.getAs<StringAttr>("layer") : StringAttr();
    auto op = d ? d.getAs<StringAttr>("op") : StringAttr();
    auto bound = d ? d.getAs<IntegerAttr>("bound") : IntegerAttr();
    auto input = d ? d.getAs<IntegerAttr>("input") : IntegerAttr();
    if (!layer || !op || !bound)
      return makeError("@forward's index check " + Twine(i) +
                       " lacks its layer, op or bound");
    for (size_t r : {first + 2 * i, first + 2 * i + 1})
      if (results[r] != scalarI64)
        return makeError("result " + Twine(r) + " of @forward (index check " +
                         Twine(i) + ") must be tensor<i64>");
    checks.push_back(
        {layer.str(), op.str(), bound.getInt(), input ? input.getInt() : -1});
  }
  return checks;
}
