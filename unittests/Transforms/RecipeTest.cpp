//===- RecipeTest.cpp - recipe entry points without the pass manager ------===//
//
// A refused materialization, rebuild or merge leaves the printed IR
// byte-identical, including a recipe whose second operation fails only while
// it is applied (after the first one was: the edit happens on a clone).
//
//===----------------------------------------------------------------------===//
#include "TransformTestFixture.h"
#include "nnx/Dialect/NNX/IR/NNXDialect.h"
#include "nnx/Dialect/NNX/Transforms/Recipes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::nnx;

namespace {

class RecipeTest : public TransformTest {};

std::string recipeModel(llvm::StringRef ops, llvm::StringRef extra = "",
                        llvm::StringRef mode = "in_place") {
  return (llvm::Twine("nnx.model @m inputs(tensor<?x2xf32>) attributes {") +
          extra + "nnx.recipe = #nnx.recipe<materialization = " + mode +
          ", materialized = 0, operations = [" + ops +
          "]>} {\n"
          "  nnx.sequential @net keying = named {\n"
          "    nnx.linear @a {weight = dense<[[1.0, 2.0], [3.0, 4.0]]> : "
          "tensor<2x2xf32>}\n"
          "    nnx.relu @r\n"
          "    nnx.linear @b {weight = #nnx.external<\"b.w\"> : "
          "tensor<2x2xf32>}\n"
          "  }\n"
          "}\n")
      .str();
}

constexpr llvm::StringLiteral kLoraA =
    "#nnx.recipe_op<id = \"lora\", version = 1, targets = [\"a\"], config = "
    "{r = 1 : i64, alpha = 2.0 : f64}>";
constexpr llvm::StringLiteral kLowRankB =
    "#nnx.recipe_op<id = \"low_rank\", version = 1, targets = [\"b\"], "
    "config = {rank = 1 : i64}>";
constexpr llvm::StringLiteral kMissing =
    "#nnx.recipe_op<id = \"lora\", version = 1, targets = [\"zz\"], config = "
    "{r = 1 : i64, alpha = 2.0 : f64}>";

struct RefusalCase {
  const char *name;
  std::string ir;
  std::function<LogicalResult(ModelOp)> run;
  const char *expect;
};

TEST_F(RecipeTest, RefusalsLeaveTheIRByteIdentical) {
  std::string late = (kLoraA + ", " + kLowRankB).str();
  const std::vector<RefusalCase> cases = {
      // lora on `a` is applied, then low_rank cannot read `b`'s weights
      // file: the clone is dropped.
      {"materialize/second-op-fails",
       recipeModel(late, "weights = \"missing.safetensors\", "),
       [](ModelOp m) { return materializeRecipe(m, 0); }, "b.w"},
      {"materialize/invalid", recipeModel(kMissing),
       [](ModelOp m) { return materializeRecipe(m, 0); }, "names no module"},
      {"materialize/fresh-name-taken", recipeModel(kLoraA, "", "fresh"),
       [](ModelOp m) { return materializeRecipe(m, 0); },
       "needs a symbol name that is free"},
      {"merge/not-lora", recipeModel(kLoraA),
       [](ModelOp m) { return mergeLora(m, "a"); }, "is not an 'nnx.lora'"},
  };
  for (const RefusalCase &c : cases) {
    SCOPED_TRACE(c.name);
    errors.clear();
    OwningOpRef<mlir::ModuleOp> module =
        parseSourceString<mlir::ModuleOp>(c.ir, &ctx);
    ASSERT_TRUE(module);
    auto model = cast<ModelOp>(module->getBody()->front());
    ASSERT_TRUE(succeeded(recordBase(model)));
    if (llvm::StringRef(c.name) == "materialize/fresh-name-taken") {
      // A model already holds the fresh model's name (part of "before").
      OpBuilder b(model);
      b.setInsertionPointAfter(model);
      cast<ModelOp>(b.clone(*model)).setSymName("m_fresh");
    }
    std::string before = print(*module);
    EXPECT_TRUE(failed(c.run(model)));
    ASSERT_FALSE(errors.empty());
    EXPECT_NE(errors.back().find(c.expect), std::string::npos) << errors.back();
    EXPECT_EQ(print(*module), before);
  }
}

TEST_F(RecipeTest, RebuildRefusesUnknownRecordedOperationsBeforeLoading) {
  OwningOpRef<mlir::ModuleOp> module =
      parseSourceString<mlir::ModuleOp>(recipeModel(kLoraA), &ctx);
  ASSERT_TRUE(module);
  auto model = cast<ModelOp>(module->getBody()->front());
  ASSERT_TRUE(succeeded(recordBase(model)));
  ASSERT_TRUE(succeeded(materializeRecipe(model, 7)));
  // Record a version nobody knows, as a newer writer would.
  RecipeAttr recipe = model.getRecipeAttr();
  auto op = cast<RecipeOpAttr>(recipe.getOperations()[0]);
  auto unknown = RecipeOpAttr::get(&ctx, op.getId(), 2, op.getTargets(),
                                   op.getConfig(), op.getShapes());
  model.setRecipeAttr(RecipeAttr::get(
      &ctx, recipe.getMaterialization(), recipe.getMaterialized(),
      ArrayAttr::get(&ctx, {Attribute(unknown)})));
  std::string before = print(*module);
  errors.clear();
  EXPECT_TRUE(failed(rebuildModel(model)));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors.front().find("recorded operation 0 ('lora'): unknown "
                                "version 2 of 'lora'"),
            std::string::npos)
      << errors.front();
  EXPECT_EQ(print(*module), before);
  EXPECT_TRUE(succeeded(verify(*module)));
}

} // namespace

namespace {

TEST(RecipeAttrTest, OperationsAndRecipesCompareAndHashByValue) {
  MLIRContext ctx;
  ctx.loadDialect<NNXDialect>();
  Builder b(&ctx);
  auto op = [&](int64_t r) {
    return RecipeOpAttr::get(
        &ctx, b.getStringAttr("lora"), 1,
        b.getArrayAttr({b.getStringAttr("h.0.attn.q_proj")}),
        b.getDictionaryAttr({b.getNamedAttr("r", b.getI64IntegerAttr(r)),
                             b.getNamedAttr("alpha", b.getF64FloatAttr(8))}),
        nullptr);
  };
  EXPECT_EQ(op(4), op(4));
  EXPECT_NE(op(4), op(2));
  EXPECT_EQ(hash_value(Attribute(op(4))), hash_value(Attribute(op(4))));
  auto recipe = [&](RecipeOpAttr o) {
    return RecipeAttr::get(&ctx, Materialization::in_place, 0,
                           b.getArrayAttr({o}));
  };
  EXPECT_EQ(recipe(op(4)), recipe(op(4)));
  EXPECT_NE(recipe(op(4)), recipe(op(2)));
}

} // namespace
