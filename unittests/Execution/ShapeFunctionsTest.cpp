//===- ShapeFunctionsTest.cpp - the shape functions of a forward ----------===//
#include "nnx/Pipelines/ResultShapes.h"

#include "nnx/Dialect/NNX/Tracing/Passes.h"
#include "nnx/Execution/CompiledModel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::nnx;

namespace {

/// Batch and sequence dynamic, through a reshape pair, a read probe, a
/// residual add on tensors and a write probe.
constexpr llvm::StringLiteral kForward = R"mlir(
func.func @forward(%x: tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = tensor.dim %x, %c0 : tensor<?x?x8xf32>
  %s = tensor.dim %x, %c1 : tensor<?x?x8xf32>
  %flat = tensor.collapse_shape %x [[0], [1, 2]]
      : tensor<?x?x8xf32> into tensor<?x?xf32>
  %e = tensor.expand_shape %flat [[0], [1, 2]] output_shape [%b, %s, 8]
      : tensor<?x?xf32> into tensor<?x?x8xf32>
  %r = nnx.probe read "e" %e : tensor<?x?x8xf32>
  %y = arith.addf %x, %r : tensor<?x?x8xf32>
  %w = nnx.probe write "y" %y : tensor<?x?x8xf32>
  %z = arith.mulf %w, %y : tensor<?x?x8xf32>
  return %z : tensor<?x?x8xf32>
}
)mlir";

class ShapeFunctionsTest : public ::testing::Test {
protected:
  ShapeFunctionsTest() {
    DialectRegistry registry;
    registerExecutionDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  /// The ops of `fn` that are not arithmetic on the argument shapes.
  static std::vector<std::string> nonShapeOps(func::FuncOp fn) {
    std::vector<std::string> names;
    fn.walk([&](Operation *op) {
      if (!isa<func::FuncOp, func::ReturnOp, tensor::DimOp, arith::ConstantOp,
               arith::IndexCastOp, tensor::FromElementsOp>(op))
        names.push_back(op->getName().getStringRef().str());
    });
    return names;
  }

  MLIRContext context;
  std::string diags;
  ScopedDiagnosticHandler handler{&context, [this](Diagnostic &diag) {
                                    diags += diag.str() + "\n";
                                    return success();
                                  }};
};

TEST_F(ShapeFunctionsTest, AreArithmeticOnTheArgumentShapes) {
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(kForward, &context);
  ASSERT_TRUE(module);
  auto forward = module->lookupSymbol<func::FuncOp>("forward");
  SmallVector<std::string> names;
  FailureOr<func::FuncOp> writes =
      buildWriteShapesFunction(forward, "write_shapes", names);
  ASSERT_TRUE(succeeded(writes) && *writes) << diags;
  EXPECT_EQ(names, (SmallVector<std::string>{"y"}));
  PassManager pm(&context);
  pm.addPass(createNNXLowerProbesPass());
  ASSERT_TRUE(succeeded(pm.run(*module))) << diags;
  forward = module->lookupSymbol<func::FuncOp>("forward");
  FailureOr<func::FuncOp> results =
      buildResultShapesFunction(forward, "result_shapes");
  ASSERT_TRUE(succeeded(results) && *results) << diags;

  // Through the reshapes, the elementwise ops and the copy of the read
  // probe, nothing of the forward remains: only dims of the arguments (the
  // input's; for the result, also the written tensor's, which is checked
  // against the write shapes first).
  for (func::FuncOp fn : {*writes, *results}) {
    EXPECT_EQ(nonShapeOps(fn), std::vector<std::string>())
        << fn.getSymName().str();
    fn.walk([&](tensor::DimOp dim) {
      EXPECT_TRUE(isa<BlockArgument>(dim.getSource())) << fn.getSymName().str();
    });
  }
  (*writes).walk([&](tensor::DimOp dim) {
    EXPECT_EQ(dim.getSource(), (*writes).getArgument(0));
  });
  // (batch, sequence) of the write; of the result and the read probe.
  EXPECT_EQ(cast<RankedTensorType>((*writes).getResultTypes()[0]).getShape(),
            ArrayRef<int64_t>{2});
  EXPECT_EQ(cast<RankedTensorType>((*results).getResultTypes()[0]).getShape(),
            ArrayRef<int64_t>{4});
}

TEST_F(ShapeFunctionsTest, RefuseAnExistingSymbol) {
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(kForward, &context);
  ASSERT_TRUE(module);
  auto forward = module->lookupSymbol<func::FuncOp>("forward");
  SmallVector<std::string> names;
  EXPECT_TRUE(failed(buildWriteShapesFunction(forward, "forward", names)));
  EXPECT_NE(diags.find("cannot add @forward (the shapes of the write probes "
                       "of @forward): the symbol exists"),
            std::string::npos)
      << diags;
}

/// Two arguments added (their dims meet in one loop), one added to itself.
constexpr llvm::StringLiteral kTwoInputs = R"mlir(
func.func @forward(%x: tensor<?x4xf32>, %y: tensor<?x4xf32>)
    -> (tensor<?x4xf32>, tensor<?x4xf32>) {
  %s = arith.addf %x, %y {nnx.source = "add_0"} : tensor<?x4xf32>
  %d = arith.addf %x, %x : tensor<?x4xf32>
  return %s, %d : tensor<?x4xf32>, tensor<?x4xf32>
}
)mlir";

TEST_F(ShapeFunctionsTest, ChecksWhereArgumentsMeet) {
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(kTwoInputs, &context);
  ASSERT_TRUE(module);
  auto forward = module->lookupSymbol<func::FuncOp>("forward");
  std::vector<ShapeCheck> checks;
  FailureOr<func::FuncOp> fn =
      buildShapeChecksFunction(forward, "checks", checks);
  ASSERT_TRUE(succeeded(fn) && *fn) << diags;
  // Only the batch of y against x's: the rest holds in every run.
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_EQ(checks[0].operand, 1u);
  EXPECT_EQ(checks[0].dim, 0u);
  EXPECT_EQ(checks[0].argument, 1);
  EXPECT_EQ(checks[0].sourceOperand, 0u);
  EXPECT_EQ(checks[0].sourceDim, 0u);
  EXPECT_EQ(checks[0].sourceArgument, 0);
  EXPECT_EQ(checks[0].op, "'linalg.generic' (add_0) at -:4:8");
  EXPECT_EQ(nonShapeOps(*fn), std::vector<std::string>());

  // A forward with one input has nothing to check.
  OwningOpRef<ModuleOp> single = parseSourceString<ModuleOp>(R"mlir(
func.func @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %d = arith.addf %x, %x : tensor<?x4xf32>
  %e = arith.mulf %d, %x : tensor<?x4xf32>
  return %e : tensor<?x4xf32>
}
)mlir",
                                                             &context);
  ASSERT_TRUE(single);
  FailureOr<func::FuncOp> none = buildShapeChecksFunction(
      single->lookupSymbol<func::FuncOp>("forward"), "checks", checks);
  ASSERT_TRUE(succeeded(none)) << diags;
  EXPECT_FALSE(*none);
  EXPECT_TRUE(checks.empty());
  EXPECT_FALSE(single->lookupSymbol("checks"));
}

} // namespace
