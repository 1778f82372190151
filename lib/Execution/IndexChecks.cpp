//===- IndexChecks.cpp - run-time index checks of a forward ---------------===//
#include "IndexChecks.h"
#include "ExecutionError.h"
#include "nnx/Dialect/NNX/IR/NNXOps.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringExtras.h"

#include <limits>

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

/// "(0, 3)": the row-major `position` as an index into `shape`.
static std::string formatIndex(int64_t position, ArrayRef<int64_t> shape) {
  SmallVector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = shape[d] ? position % shape[d] : 0;
    position = shape[d] ? position / shape[d] : 0;
  }
  return "(" +
         llvm::join(llvm::map_range(
                        index, [](int64_t v) { return std::to_string(v); }),
                    ", ") +
         ")";
}

llvm::Error mlir::nnx::reportBadIndices(ArrayRef<IndexCheckSpec> checks,
                                        ArrayRef<int64_t> words,
                                        ArrayRef<NpyArray> inputs) {
  for (auto [i, check] : llvm::enumerate(checks)) {
    int64_t code = words[2 * i];
    if (code == 0)
      continue;
    int64_t position = std::numeric_limits<int64_t>::max() - code;
    int64_t index = words[2 * i + 1];
    std::string where;
    if (check.input >= 0 && static_cast<size_t>(check.input) < inputs.size())
      where = "at " + formatIndex(position, inputs[check.input].shape) +
              " of input " + std::to_string(check.input);
    else
      where =
          "at row-major position " + std::to_string(position) + " of its ids";
    return makeError("'" + check.op + "' at '" + check.layer + "': id " +
                     Twine(index) + " " + where + " is out of range [0, " +
                     Twine(check.bound) + ") (the table has " +
                     Twine(check.bound) + " rows)");
  }
  return llvm::Error::success();
}
