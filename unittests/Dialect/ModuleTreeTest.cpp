//===- ModuleTreeTest.cpp - dotted paths, aliases, counts, types ----------===//
#include "nnx/Dialect/NNX/IR/ModuleTree.h"
#include "nnx/Dialect/NNX/IR/NNXDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Parser/Parser.h"
#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::nnx;

namespace {
constexpr const char *kModel = R"mlir(
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    nnx.sequential @body keying = positional {
      nnx.linear @"0" {weight = dense<1.0> : tensor<8x4xf32>, bias = dense<0.0> : tensor<8xf32>}
      nnx.relu @"1"
    }
    nnx.linear @mid {weight = dense<1.0> : tensor<8x8xf32>}
    nnx.alias @tied = @mid
    nnx.linear @head {weight = dense<1.0> : tensor<2x8xf32>}
  }
}
)mlir";

class ModuleTreeTest : public ::testing::Test {
protected:
  void SetUp() override {
    ctx.loadDialect<NNXDialect, arith::ArithDialect>();
    module = parseSourceString<mlir::ModuleOp>(kModel, &ctx);
    ASSERT_TRUE(module);
    model = cast<ModelOp>(module->getBody()->front());
  }
  MLIRContext ctx;
  OwningOpRef<mlir::ModuleOp> module;
  ModelOp model;
};

TEST_F(ModuleTreeTest, LooksUpNestedPaths) {
  FailureOr<ModuleOpInterface> lin = lookupModule(model, "body.0");
  ASSERT_TRUE(succeeded(lin));
  EXPECT_TRUE(isa<LinearOp>(*lin));
  EXPECT_EQ(getModulePath(*lin), "body.0");
  FailureOr<ModuleOpInterface> root = lookupModule(model, "");
  ASSERT_TRUE(succeeded(root));
  EXPECT_EQ(*root, model.getRootModule());
}

TEST_F(ModuleTreeTest, ResolvesAliases) {
  FailureOr<ModuleOpInterface> viaAlias = lookupModule(model, "tied");
  ASSERT_TRUE(succeeded(viaAlias));
  EXPECT_EQ(*viaAlias, *lookupModule(model, "mid"));
  EXPECT_EQ(getAliasesOf(*viaAlias).size(), 1u);
}

TEST_F(ModuleTreeTest, NamesTheFailingSegment) {
  std::string why;
  EXPECT_TRUE(failed(lookupModule(model, "body.7.x", &why)));
  EXPECT_NE(why.find("no module '7' in 'body'"), std::string::npos) << why;
  EXPECT_TRUE(failed(lookupModule(model, "nope", &why)));
  EXPECT_NE(why.find("the root module"), std::string::npos) << why;
}

TEST_F(ModuleTreeTest, CountsAliasedModulesOnce) {
  // body.0: 8*4+8 = 40, mid: 8*8 = 64, head: 2*8 = 16; the alias adds
  // nothing although the forward applies `mid` twice.
  EXPECT_EQ(getParameterCount(model.getRootModule()), 120);
}

TEST_F(ModuleTreeTest, InfersForwardTypes) {
  auto f32 = Float32Type::get(&ctx);
  Type in = RankedTensorType::get({ShapedType::kDynamic, 4}, f32);
  FailureOr<SmallVector<Type>> out =
      inferForwardTypes(model.getRootModule(), in, std::nullopt);
  ASSERT_TRUE(succeeded(out));
  ASSERT_EQ(out->size(), 1u);
  EXPECT_EQ((*out)[0], RankedTensorType::get({ShapedType::kDynamic, 2}, f32));
  Type bad = RankedTensorType::get({ShapedType::kDynamic, 5}, f32);
  EXPECT_TRUE(
      failed(inferForwardTypes(model.getRootModule(), bad, std::nullopt)));
}

constexpr const char *kCalls = R"mlir(
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.module @top class = "Top" {
    nnx.module @inner class = "Inner" {
      nnx.relu @act
      nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
        %y = nnx.call @act(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>
        nnx.return %y : tensor<?x4xf32>
      }
    }
    nnx.alias @again = @inner
    nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
      %a = nnx.call @again(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>
      %b = nnx.call @inner::@act(%a) : (tensor<?x4xf32>) -> tensor<?x4xf32>
      nnx.return %b : tensor<?x4xf32>
    }
  }
}
)mlir";

TEST(ForwardAndCallTest, AreFunctionAndCallOps) {
  MLIRContext ctx;
  ctx.loadDialect<NNXDialect, arith::ArithDialect>();
  OwningOpRef<mlir::ModuleOp> module =
      parseSourceString<mlir::ModuleOp>(kCalls, &ctx);
  ASSERT_TRUE(module);
  auto model = cast<ModelOp>(module->getBody()->front());
  auto top = cast<CustomModuleOp>(model.getRootModule().getOperation());
  auto fn = cast<FunctionOpInterface>(top.getForward().getOperation());
  EXPECT_EQ(fn.getName(), "forward");
  EXPECT_EQ(fn.getArgumentTypes().size(), 1u);
  // The forward is a symbol of the module's table, but not a child.
  EXPECT_EQ(lookupChild(top, "forward"), nullptr);
  EXPECT_TRUE(failed(lookupModule(model, "forward")));

  auto calls = llvm::to_vector(top.getForward().getOps<CallOp>());
  ASSERT_EQ(calls.size(), 2u);
  auto inner = cast<CustomModuleOp>(lookupChild(top, "inner"));
  // Through the alias: the module, its forward as the callable.
  EXPECT_TRUE(isa<AliasOp>(calls[0].lookupCalleeSlot()));
  EXPECT_EQ(calls[0].resolveCalleeModule(), inner);
  auto call = cast<CallOpInterface>(calls[0].getOperation());
  EXPECT_EQ(call.resolveCallable(), inner.getForward().getOperation());
  EXPECT_EQ(call.getArgOperands().size(), 1u);
  // A leaf has no callable region.
  EXPECT_TRUE(isa<ReLUOp>(calls[1].resolveCalleeModule()));
  EXPECT_EQ(cast<CallOpInterface>(calls[1].getOperation()).resolveCallable(),
            nullptr);
  // Paths never include the forward.
  EXPECT_EQ(getModulePath(calls[1]), "");
  EXPECT_EQ(getModulePath(inner.getForward()), "inner");
}

// Rejected by the verifier, but the walks must still terminate on it.
constexpr const char *kCycles = R"mlir(
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    nnx.sequential @sub keying = named {
      nnx.linear @fc {weight = dense<1.0> : tensor<4x4xf32>}
      nnx.alias @up = @sub
    }
    nnx.alias @self = @self::@r
  }
}
)mlir";

TEST(AliasCycleTest, WalksTerminateOnUnverifiedIR) {
  MLIRContext ctx;
  ctx.loadDialect<NNXDialect, arith::ArithDialect>();
  ParserConfig config(&ctx, /*verifyAfterParse=*/false);
  OwningOpRef<mlir::ModuleOp> module =
      parseSourceString<mlir::ModuleOp>(kCycles, config);
  ASSERT_TRUE(module);
  auto model = cast<ModelOp>(module->getBody()->front());
  ModuleOpInterface root = model.getRootModule();
  auto self = cast<AliasOp>(lookupChild(root, "self"));
  AliasOp cycle;
  EXPECT_FALSE(resolveAlias(self, &cycle));
  EXPECT_EQ(cycle, self);

  auto sub = cast<SequentialOp>(lookupChild(root, "sub"));
  auto up = cast<AliasOp>(lookupChild(sub, "up"));
  EXPECT_EQ(resolveAlias(up), sub);
  EXPECT_EQ(findContainerReachableFrom(sub, up), sub);
  EXPECT_EQ(getParameterCount(root), 16);
  EXPECT_EQ(getFeatureSignature(sub).in[FeatureSignature::Last], 4);
  auto f32 = Float32Type::get(&ctx);
  Type in = RankedTensorType::get({ShapedType::kDynamic, 4}, f32);
  EXPECT_TRUE(failed(inferForwardTypes(sub, in, std::nullopt)));
}
} // namespace
