//===- CompiledModelTest.cpp - compile and run through the C++ API --------===//
#include "nnx/Execution/CompiledModel.h"
#include "nnx-aot/Runtime.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "nnx/Support/SafeTensors.h"

#include "llvm/Support/FileSystem.h"

#include "gtest/gtest.h"

#include <malloc.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
/// The execution library turns an allocation the system refuses (a null
/// malloc) into an error, and the out-of-memory tests check that. ASan's
/// allocator aborts on such a request instead (allocation-size-too-big)
/// unless it is told to return null as the system does.
extern "C" const char *__asan_default_options() {
  return "allocator_may_return_null=1";
}
#endif
#endif

using namespace mlir;
using namespace mlir::nnx;

namespace {

constexpr llvm::StringLiteral kTinyModel = R"mlir(
nnx.model @tiny inputs(tensor<?x2xf32>) {
  nnx.sequential @net keying = named {
    nnx.linear @fc {weight = dense<[[1.0, 2.0], [-1.0, 0.5], [0.0, 1.0]]> : tensor<3x2xf32>,
                    bias = dense<[0.5, 0.0, -1.0]> : tensor<3xf32>}
    nnx.relu @act
    nnx.linear @head {weight = dense<[[1.0, 1.0, 1.0], [2.0, 0.0, -1.0]]> : tensor<2x3xf32>}
  }
}
)mlir";

/// A forward as `nnx-lower-probes` leaves it: write probe "w" replaces the
/// hidden value, read probe "h" returns the value before the write.
constexpr llvm::StringLiteral kProbedForward = R"mlir(
func.func @forward(%x: tensor<?x2xf32>, %w: tensor<?x2xf32>)
    -> (tensor<?x2xf32>, tensor<?x2xf32>)
    attributes {nnx.read_probes = ["h"], nnx.write_probes = ["w"]} {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x2xf32>
  %e = tensor.empty(%n) : tensor<?x2xf32>
  %h = linalg.add ins(%x, %x : tensor<?x2xf32>, tensor<?x2xf32>)
                  outs(%e : tensor<?x2xf32>) -> tensor<?x2xf32>
  %e2 = tensor.empty(%n) : tensor<?x2xf32>
  %y = linalg.mul ins(%w, %w : tensor<?x2xf32>, tensor<?x2xf32>)
                  outs(%e2 : tensor<?x2xf32>) -> tensor<?x2xf32>
  return %y, %h : tensor<?x2xf32>, tensor<?x2xf32>
}
)mlir";

class CompiledModelTest : public ::testing::Test {
protected:
  CompiledModelTest() {
    DialectRegistry registry;
    registerExecutionDialects(registry);
    context.appendDialectRegistry(registry);
    context.printOpOnDiagnostic(false);
  }

  /// Parses and compiles `source`; diagnostics are collected in `diags`.
  llvm::Expected<std::unique_ptr<CompiledModel>>
  compile(StringRef source, const CompileOptions &options = {}) {
    module = parseSourceString<ModuleOp>(source, &context);
    EXPECT_TRUE(module) << "test IR does not parse";
    if (!module)
      return llvm::createStringError(llvm::inconvertibleErrorCode(), "parse");
    return CompiledModel::compile(*module, options);
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  std::string diags;
  ScopedDiagnosticHandler handler{&context, [this](Diagnostic &diag) {
                                    diags += diag.str() + "\n";
                                    return success();
                                  }};
};

NpyArray floats(ArrayRef<int64_t> shape, ArrayRef<float> values) {
  return NpyArray::fromValues<float>(DType::F32, shape, values);
}

using Shapes = std::vector<SmallVector<int64_t, 4>>;

std::vector<float> valuesOf(const NpyArray &array) {
  ArrayRef<float> values = array.getValues<float>();
  return {values.begin(), values.end()};
}

TEST_F(CompiledModelTest, RunsTinyModelOnAnyBatch) {
  auto compiled = compile(kTinyModel);
  ASSERT_TRUE(static_cast<bool>(compiled))
      << llvm::toString(compiled.takeError()) << diags;
  CompiledModel &model = **compiled;
  ASSERT_EQ(model.getInputs().size(), 1u);
  EXPECT_EQ(model.getInputs()[0].typeString, "tensor<?x2xf32>");
  EXPECT_EQ(model.getInputs()[0].shape,
            (SmallVector<int64_t, 4>{ShapedType::kDynamic, 2}));
  ASSERT_EQ(model.getOutputs().size(), 1u);
  EXPECT_EQ(model.getOutputs()[0].typeString, "tensor<?x2xf32>");
  EXPECT_TRUE(model.getReadProbes().empty());
  EXPECT_TRUE(model.getWriteProbes().empty());

  // Hand-computed: see test/nnx-run/run.mlir.
  auto batch3 = model.run({floats({3, 2}, {1, 2, -1, 0.5f, 0, 0})});
  ASSERT_TRUE(static_cast<bool>(batch3)) << llvm::toString(batch3.takeError());
  ASSERT_EQ(batch3->outputs.size(), 1u);
  EXPECT_EQ(batch3->outputs[0].shape, (SmallVector<int64_t, 4>{3, 2}));
  EXPECT_EQ(valuesOf(batch3->outputs[0]),
            (std::vector<float>{6.5f, 10, 1.75f, 1, 0.5f, 1}));

  auto batch1 = model.run({floats({1, 2}, {2, -3})});
  ASSERT_TRUE(static_cast<bool>(batch1)) << llvm::toString(batch1.takeError());
  EXPECT_EQ(batch1->outputs[0].shape, (SmallVector<int64_t, 4>{1, 2}));
  EXPECT_EQ(valuesOf(batch1->outputs[0]), (std::vector<float>{0, 0}));

  RunOptions options;
  options.repeat = 4;
  auto repeated = model.run({floats({1, 2}, {1, 2})}, {}, options);
  ASSERT_TRUE(static_cast<bool>(repeated))
      << llvm::toString(repeated.takeError());
  EXPECT_EQ(repeated->seconds.size(), 4u);
  EXPECT_EQ(valuesOf(repeated->outputs[0]), (std::vector<float>{6.5f, 10}));
}

/// Writes the tiny model's tensors, scaled by `scale`, as a checkpoint.
std::string writeTinyCheckpoint(StringRef name, float scale,
                                StringRef headKey = "head.weight") {
  std::vector<float> fcW = {1, 2, -1, 0.5f, 0, 1}, fcB = {0.5f, 0, -1},
                     headW = {1, 1, 1, 2, 0, -1};
  for (std::vector<float> *t : {&fcW, &fcB, &headW})
    for (float &v : *t)
      v *= scale;
  auto bytes = [](const std::vector<float> &v) {
    return ArrayRef<char>(reinterpret_cast<const char *>(v.data()),
                          v.size() * sizeof(float));
  };
  SmallString<128> path;
  llvm::sys::fs::createTemporaryFile(name, "safetensors", path);
  llvm::Error err = writeSafeTensorsFile(
      path, {{"fc.weight", "F32", {3, 2}, bytes(fcW)},
             {"fc.bias", "F32", {3}, bytes(fcB)},
             {headKey.str(), "F32", {2, 3}, bytes(headW)}});
  EXPECT_FALSE(static_cast<bool>(err)) << llvm::toString(std::move(err));
  return std::string(path);
}

TEST_F(CompiledModelTest, BindsParametersAtRunTime) {
  auto compiled = compile(kTinyModel);
  ASSERT_TRUE(static_cast<bool>(compiled))
      << llvm::toString(compiled.takeError()) << diags;
  CompiledModel &model = **compiled;
  // The parameters, as stored, by dotted name (the root's key is not in it).
  ASSERT_EQ(model.getParameters().size(), 3u);
  EXPECT_EQ(model.getParameters()[0].name, "fc.weight");
  EXPECT_EQ(model.getParameters()[0].typeString, "tensor<3x2xf32>");
  EXPECT_EQ(model.getParameters()[2].name, "head.weight");
  EXPECT_EQ(model.getParameterKeys()[1], "fc.bias");
  NpyArray x = floats({3, 2}, {1, 2, -1, 0.5f, 0, 0});

  // Doubled weights: every layer is linear and positively homogeneous, so
  // the output is 4x the model's own (6.5, 10, 1.75, 1, 0.5, 1).
  std::string doubled = writeTinyCheckpoint("doubled", 2);
  ASSERT_FALSE(static_cast<bool>(model.bindWeights(doubled)));
  auto y = model.run({x});
  ASSERT_TRUE(static_cast<bool>(y)) << llvm::toString(y.takeError());
  EXPECT_EQ(valuesOf(y->outputs[0]), (std::vector<float>{26, 40, 7, 4, 2, 4}));

  // A checkpoint that does not fit changes nothing.
  std::string wrong = writeTinyCheckpoint("wrongkey", 1, "head.w");
  llvm::Error err = model.bindWeights(wrong);
  ASSERT_TRUE(static_cast<bool>(err));
  EXPECT_EQ(llvm::toString(std::move(err)),
            wrong + ": no tensor 'head.weight' (parameter 'head.weight', "
                    "tensor<2x3xf32>)");
  auto same = model.run({x});
  ASSERT_TRUE(static_cast<bool>(same)) << llvm::toString(same.takeError());
  EXPECT_EQ(valuesOf(same->outputs[0]), valuesOf(y->outputs[0]));

  // The original tensors again, from a file: the model's own output.
  std::string original = writeTinyCheckpoint("original", 1);
  ASSERT_FALSE(static_cast<bool>(model.bindWeights(original)));
  auto back = model.run({x});
  ASSERT_TRUE(static_cast<bool>(back)) << llvm::toString(back.takeError());
  EXPECT_EQ(valuesOf(back->outputs[0]),
            (std::vector<float>{6.5f, 10, 1.75f, 1, 0.5f, 1}));
  for (const std::string &path : {doubled, wrong, original})
    llvm::sys::fs::remove(path);
}

TEST_F(CompiledModelTest, ValidatesInputsBeforeRunning) {
  auto compiled = compile(kTinyModel);
  ASSERT_TRUE(static_cast<bool>(compiled))
      << llvm::toString(compiled.takeError()) << diags;
  CompiledModel &model = **compiled;
  auto errorOf = [&](std::vector<NpyArray> inputs,
                     ArrayRef<std::string> sources = {}) {
    RunOptions options;
    options.inputSources = sources;
    llvm::Error err = model.validate(inputs, {}, options);
    std::string text = err ? llvm::toString(std::move(err)) : "";
    // run() refuses the same way.
    auto result = model.run(inputs, {}, options);
    EXPECT_FALSE(static_cast<bool>(result));
    if (!result) {
      EXPECT_EQ(llvm::toString(result.takeError()), text);
    }
    return text;
  };
  std::vector<std::string> sources = {"x.npy"};
  EXPECT_EQ(errorOf({NpyArray(DType::F64, {3, 5})}, sources),
            "input 0: expected tensor<?x2xf32>, got float64 array of shape "
            "(3, 5) from x.npy");
  EXPECT_EQ(errorOf({NpyArray(DType::F32, {3, 5})}),
            "input 0: dimension 1 is 5, expected 2 (tensor<?x2xf32>); got "
            "float32 array of shape (3, 5)");
  EXPECT_EQ(errorOf({NpyArray(DType::F32, {2})}),
            "input 0: expected tensor<?x2xf32>, got float32 array of shape "
            "(2,)");
  EXPECT_EQ(errorOf({}), "the forward takes 1 input (tensor<?x2xf32>), got 0");
  EXPECT_EQ(
      errorOf({NpyArray(DType::F32, {1, 2}), NpyArray(DType::F32, {1, 2})}),
      "the forward takes 1 input (tensor<?x2xf32>), got 2");
  EXPECT_FALSE(
      static_cast<bool>(model.validate({NpyArray(DType::F32, {7, 2})}, {})));
}

TEST_F(CompiledModelTest, ReportsModelsThatDoNotLower) {
  auto compiled = compile(R"mlir(
nnx.model @lazy inputs(tensor<?x2xf32>) {
  nnx.sequential @net keying = named {
    nnx.linear @fc {lazy, out_features = 3}
  }
}
)mlir");
  ASSERT_FALSE(static_cast<bool>(compiled));
  // The error carries the diagnostic, with where; the handler gets nothing.
  EXPECT_EQ(llvm::toString(compiled.takeError()),
            "-:4:5: 'nnx.linear' op at 'fc': is an uninitialized lazy layer "
            "(in_features unknown) and cannot be lowered");
  EXPECT_EQ(diags, "");
}

TEST_F(CompiledModelTest, TakesTargetPipelineOptions) {
  CompileOptions options;
  options.pipelineOptions = "max-isa=avx2 bf16-dot=off";
  auto capped = compile(kTinyModel, options);
  ASSERT_TRUE(static_cast<bool>(capped))
      << llvm::toString(capped.takeError()) << diags;

  options.pipelineOptions = "no-such-option=1";
  auto unknown = compile(kTinyModel, options);
  ASSERT_FALSE(static_cast<bool>(unknown));
  EXPECT_NE(llvm::toString(unknown.takeError())
                .find("nnx-cpu-pipeline options 'no-such-option=1': "),
            std::string::npos);

  // The runtime allocates the results: out-params stay on.
  options.pipelineOptions = "out-params=false";
  auto noOutParams = compile(kTinyModel, options);
  ASSERT_FALSE(static_cast<bool>(noOutParams));
  EXPECT_EQ(llvm::toString(noOutParams.takeError()),
            "nnx-cpu-pipeline options 'out-params=false': the runtime needs "
            "out-params and runtime-allocator");
}

TEST_F(CompiledModelTest, RefusesModulesWithoutForward) {
  auto compiled = compile("func.func @other() { return }");
  ASSERT_FALSE(static_cast<bool>(compiled));
  EXPECT_EQ(llvm::toString(compiled.takeError()),
            "-: the module holds neither an nnx.model nor a func.func @forward "
            "with a body");
}

TEST_F(CompiledModelTest, ResolvesProbeRequestsWithTheInsertProbesPass) {
  CompileOptions options;
  options.probes.reads = {"a", "b"};
  options.probes.writes = {"c"};
  auto compiled = compile(kTinyModel, options);
  ASSERT_FALSE(static_cast<bool>(compiled));
  EXPECT_EQ(llvm::toString(compiled.takeError()),
            "-:2:1: nnx-insert-probes: no family given (family=<name or "
            "file>)");
  EXPECT_EQ(diags, "");

  // A forward-level module has no structure to probe.
  auto forwardLevel = compile(kProbedForward, options);
  ASSERT_FALSE(static_cast<bool>(forwardLevel));
  EXPECT_EQ(llvm::toString(forwardLevel.takeError()),
            "-: probes need an nnx.model; the module holds a forward-level "
            "function");
}

TEST_F(CompiledModelTest, PassesProbesAsTrailingArgumentsAndResults) {
  auto compiled = compile(kProbedForward);
  ASSERT_TRUE(static_cast<bool>(compiled))
      << llvm::toString(compiled.takeError()) << diags;
  CompiledModel &model = **compiled;
  ASSERT_EQ(model.getInputs().size(), 1u);
  ASSERT_EQ(model.getWriteProbes().size(), 1u);
  EXPECT_EQ(model.getWriteProbes()[0].name, "w");
  ASSERT_EQ(model.getOutputs().size(), 1u);
  ASSERT_EQ(model.getReadProbes().size(), 1u);
  EXPECT_EQ(model.getReadProbes()[0].name, "h");

  auto result = model.run({floats({2, 2}, {1, 2, 3, 4})},
                          {floats({2, 2}, {-1, 2, 0.5f, 3})});
  ASSERT_TRUE(static_cast<bool>(result)) << llvm::toString(result.takeError());
  ASSERT_EQ(result->outputs.size(), 1u);
  ASSERT_EQ(result->readProbes.size(), 1u);
  EXPECT_EQ(valuesOf(result->outputs[0]), (std::vector<float>{1, 4, 0.25f, 9}));
  EXPECT_EQ(valuesOf(result->readProbes[0]), (std::vector<float>{2, 4, 6, 8}));

  // A write probe lowered by hand is an argument like the inputs: it must
  // agree with them where the graph makes their dimensions meet (here the
  // product's output, sized by the input's batch), and have its own type.
  llvm::Error batch =
      model.validate({floats({2, 2}, {1, 2, 3, 4})}, {floats({1, 2}, {0, 0})});
  EXPECT_EQ(llvm::toString(std::move(batch)),
            "write probe 'w': dimension 0 is 1, expected 2 (as dimension 0 of "
            "operand 2: 'linalg.mul' at -:11:8 runs both in one loop); got "
            "float32 array of shape (1, 2)");
  llvm::Error dtype = model.validate({floats({2, 2}, {1, 2, 3, 4})},
                                     {NpyArray(DType::F64, {2, 2})});
  EXPECT_EQ(llvm::toString(std::move(dtype)),
            "write probe 'w': expected tensor<?x2xf32>, got float64 array of "
            "shape (2, 2)");
  llvm::Error missing = model.validate({floats({2, 2}, {1, 2, 3, 4})}, {});
  EXPECT_EQ(llvm::toString(std::move(missing)),
            "the forward takes 1 write probe, got 0");
}

/// A forward whose probes compile() lowers: "t", the transpose of the input
/// (both dims dynamic), is read and written; "y" = 2 * t is written.
constexpr llvm::StringLiteral kProbeOpsForward = R"mlir(
func.func @forward(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = tensor.dim %x, %c0 : tensor<?x?xf32>
  %m = tensor.dim %x, %c1 : tensor<?x?xf32>
  %e = tensor.empty(%m, %n) : tensor<?x?xf32>
  %t = linalg.transpose ins(%x : tensor<?x?xf32>)
                        outs(%e : tensor<?x?xf32>) permutation = [1, 0]
  %r = nnx.probe read "t" %t : tensor<?x?xf32>
  %w = nnx.probe write "t" %r : tensor<?x?xf32>
  %y = linalg.add ins(%w, %w : tensor<?x?xf32>, tensor<?x?xf32>)
                  outs(%e : tensor<?x?xf32>) -> tensor<?x?xf32>
  %yw = nnx.probe write "y" %y : tensor<?x?xf32>
  return %yw : tensor<?x?xf32>
}
)mlir";

TEST_F(CompiledModelTest, ChecksEveryDimensionOfWriteProbes) {
  auto compiled = compile(kProbeOpsForward);
  ASSERT_TRUE(static_cast<bool>(compiled))
      << llvm::toString(compiled.takeError()) << diags;
  CompiledModel &model = **compiled;
  ASSERT_EQ(model.getWriteProbes().size(), 2u);
  EXPECT_EQ(model.getWriteProbes()[0].name, "t");
  EXPECT_EQ(model.getWriteProbes()[1].name, "y");
  ASSERT_EQ(model.getReadProbes().size(), 1u);

  // The shapes the writes must have follow the inputs through the graph.
  for (auto [n, m] : {std::pair<int64_t, int64_t>{2, 3}, {4, 1}, {0, 5}}) {
    auto shapes = model.getWriteProbeShapes({NpyArray(DType::F32, {n, m})});
    ASSERT_TRUE(static_cast<bool>(shapes))
        << llvm::toString(shapes.takeError());
    EXPECT_EQ(*shapes, (Shapes{{m, n}, {m, n}})) << n << "x" << m;
  }

  // A read and a write of "t": the read sees the transpose, the rest the
  // written tensor; "y" replaces the output.
  NpyArray x = floats({2, 3}, {1, 2, 3, 4, 5, 6});
  auto result = model.run({x}, {floats({3, 2}, {1, 1, 2, 2, 3, 3}),
                                floats({3, 2}, {0, -1, -2, -3, -4, -5})});
  ASSERT_TRUE(static_cast<bool>(result)) << llvm::toString(result.takeError());
  EXPECT_EQ(valuesOf(result->readProbes[0]),
            (std::vector<float>{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(valuesOf(result->outputs[0]),
            (std::vector<float>{0, -1, -2, -3, -4, -5}));

  // Every dimension is checked: a (2, 3) "t" where the run computes (3, 2).
  RunOptions options;
  std::vector<std::string> sources = {"t.npy", "y.npy"};
  options.writeProbeSources = sources;
  llvm::Error err = model.validate(
      {x}, {NpyArray(DType::F32, {2, 3}), NpyArray(DType::F32, {3, 2})},
      options);
  EXPECT_EQ(llvm::toString(std::move(err)),
            "write probe 't': dimension 0 is 2, expected 3 (this run computes "
            "tensor<?x?xf32> as (3, 2)); got float32 array of shape (2, 3) "
            "from t.npy");
  auto run = model.run(
      {x}, {NpyArray(DType::F32, {3, 2}), NpyArray(DType::F32, {3, 3})});
  ASSERT_FALSE(static_cast<bool>(run));
  EXPECT_EQ(llvm::toString(run.takeError()),
            "write probe 'y': dimension 1 is 3, expected 2 (this run computes "
            "tensor<?x?xf32> as (3, 2)); got float32 array of shape (3, 3)");
}

/// Batch and sequence dynamic, through a reshape pair, a read probe, a
/// residual add on tensors and a write probe (ShapeFunctionsTest.cpp has
/// the same forward).
constexpr llvm::StringLiteral kBatchAndSequence = R"mlir(
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

TEST_F(CompiledModelTest, RunsProbesOnBatchAndSequence) {
  auto compiled = compile(kBatchAndSequence);
  ASSERT_TRUE(static_cast<bool>(compiled))
      << llvm::toString(compiled.takeError()) << diags;
  CompiledModel &model = **compiled;
  std::vector<float> ones(2 * 3 * 8, 1), twos(2 * 3 * 8, 2);
  auto result = model.run({floats({2, 3, 8}, ones)}, {floats({2, 3, 8}, ones)});
  ASSERT_TRUE(static_cast<bool>(result)) << llvm::toString(result.takeError());
  EXPECT_EQ(result->outputs[0].shape, (SmallVector<int64_t>{2, 3, 8}));
  EXPECT_EQ(valuesOf(result->outputs[0]), twos);
  EXPECT_EQ(valuesOf(result->readProbes[0]), ones);
  auto wrong =
      model.run({floats({2, 3, 8}, ones)}, {NpyArray(DType::F32, {2, 4, 8})});
  ASSERT_FALSE(static_cast<bool>(wrong));
  EXPECT_EQ(llvm::toString(wrong.takeError()),
            "write probe 'y': dimension 1 is 4, expected 3 (this run computes "
            "tensor<?x?x8xf32> as (2, 3, 8)); got float32 array of shape (2, "
            "4, 8)");
}

/// Results of every kind of shape: the batch, a flattened batch (2 * n), a
/// static one, the dimension of the second input, and one whose size is a
/// value of that input (data-dependent: the shape function keeps the read).
constexpr llvm::StringLiteral kShapedResults = R"mlir(
func.func @forward(%x: tensor<?x2xf32>, %ids: tensor<?xi64>)
    -> (tensor<?x2xf32>, tensor<?xf32>, tensor<2xf32>, tensor<?xi64>,
        tensor<?xf32>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x2xf32>
  %e = tensor.empty(%n) : tensor<?x2xf32>
  %y = linalg.add ins(%x, %x : tensor<?x2xf32>, tensor<?x2xf32>)
                  outs(%e : tensor<?x2xf32>) -> tensor<?x2xf32>
  %flat = tensor.collapse_shape %y [[0, 1]] : tensor<?x2xf32> into tensor<?xf32>
  %c = arith.constant dense<[1.5, -2.0]> : tensor<2xf32>
  %first = tensor.extract %ids[%c0] : tensor<?xi64>
  %m = arith.index_cast %first : i64 to index
  %one = arith.constant 1.0 : f32
  %em = tensor.empty(%m) : tensor<?xf32>
  %ones = linalg.fill ins(%one : f32) outs(%em : tensor<?xf32>) -> tensor<?xf32>
  return %y, %flat, %c, %ids, %ones
      : tensor<?x2xf32>, tensor<?xf32>, tensor<2xf32>, tensor<?xi64>,
        tensor<?xf32>
}
)mlir";

NpyArray int64s(ArrayRef<int64_t> shape, ArrayRef<int64_t> values) {
  return NpyArray::fromValues<int64_t>(DType::I64, shape, values);
}

TEST_F(CompiledModelTest, ComputesDynamicResultShapesBeforeTheCall) {
  auto compiled = compile(kShapedResults);
  ASSERT_TRUE(static_cast<bool>(compiled))
      << llvm::toString(compiled.takeError()) << diags;
  CompiledModel &model = **compiled;
  for (int64_t batch : {0, 1, 3, 7}) {
    std::vector<float> x(batch * 2, 0.5f);
    std::vector<NpyArray> inputs = {floats({batch, 2}, x),
                                    int64s({3}, {4, -2, 7})};
    auto shapes = model.getResultShapes(inputs);
    ASSERT_TRUE(static_cast<bool>(shapes))
        << llvm::toString(shapes.takeError());
    Shapes expected = {{batch, 2}, {2 * batch}, {2}, {3}, {4}};
    EXPECT_EQ(shapes->outputs, expected) << "batch " << batch;
    EXPECT_TRUE(shapes->readProbes.empty());

    // The forward produces exactly these shapes.
    auto result = model.run(inputs);
    ASSERT_TRUE(static_cast<bool>(result))
        << llvm::toString(result.takeError());
    ASSERT_EQ(result->outputs.size(), 5u);
    for (auto [array, shape] : llvm::zip_equal(result->outputs, expected))
      EXPECT_EQ(array.shape, shape);
    EXPECT_EQ(valuesOf(result->outputs[1]), std::vector<float>(batch * 2, 1));
    EXPECT_EQ(valuesOf(result->outputs[2]), (std::vector<float>{1.5f, -2}));
    ArrayRef<int64_t> ids = result->outputs[3].getValues<int64_t>();
    EXPECT_EQ(std::vector<int64_t>(ids.begin(), ids.end()),
              (std::vector<int64_t>{4, -2, 7}));
    EXPECT_EQ(valuesOf(result->outputs[4]), std::vector<float>(4, 1));
  }
}

TEST_F(CompiledModelTest, CopiesOneValueReturnedTwiceIntoBothBuffers) {
  auto compiled = compile(R"mlir(
func.func @forward(%x: tensor<?x2xf32>)
    -> (tensor<?x2xf32>, tensor<?x2xf32>, tensor<?x2xf32>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x2xf32>
  %e = tensor.empty(%n) : tensor<?x2xf32>
  %y = linalg.add ins(%x, %x : tensor<?x2xf32>, tensor<?x2xf32>)
                  outs(%e : tensor<?x2xf32>) -> tensor<?x2xf32>
  return %y, %y, %x : tensor<?x2xf32>, tensor<?x2xf32>, tensor<?x2xf32>
}
)mlir");
  ASSERT_TRUE(static_cast<bool>(compiled))
      << llvm::toString(compiled.takeError()) << diags;
  auto result = (*compiled)->run({floats({1, 2}, {1, -2})});
  ASSERT_TRUE(static_cast<bool>(result)) << llvm::toString(result.takeError());
  ASSERT_EQ(result->outputs.size(), 3u);
  EXPECT_EQ(valuesOf(result->outputs[0]), (std::vector<float>{2, -4}));
  EXPECT_EQ(valuesOf(result->outputs[1]), (std::vector<float>{2, -4}));
  EXPECT_EQ(valuesOf(result->outputs[2]), (std::vector<float>{1, -2}));
}

TEST_F(CompiledModelTest, WritesResultsIntoCallerOwnedBuffers) {
  auto compiled = compile(kProbedForward);
  ASSERT_TRUE(static_cast<bool>(compiled))
      << llvm::toString(compiled.takeError()) << diags;
  CompiledModel &model = **compiled;
  std::vector<NpyArray> inputs = {floats({2, 2}, {1, 2, 3, 4})};
  std::vector<NpyArray> writes = {floats({2, 2}, {-1, 2, 0.5f, 3})};
  auto shapes = model.getResultShapes(inputs, writes);
  ASSERT_TRUE(static_cast<bool>(shapes)) << llvm::toString(shapes.takeError());
  EXPECT_EQ(shapes->outputs, (Shapes{{2, 2}}));
  EXPECT_EQ(shapes->readProbes, (Shapes{{2, 2}}));

  // The caller's arrays are written in place.
  std::vector<NpyArray> outputs = {floats({2, 2}, {9, 9, 9, 9})};
  std::vector<NpyArray> reads = {floats({2, 2}, {9, 9, 9, 9})};
  const uint8_t *outputData = outputs[0].data.data();
  const uint8_t *readData = reads[0].data.data();
  RunOptions options;
  options.repeat = 3;
  auto seconds = model.runInto(inputs, writes, outputs, reads, options);
  ASSERT_TRUE(static_cast<bool>(seconds))
      << llvm::toString(seconds.takeError());
  EXPECT_EQ(seconds->size(), 3u);
  EXPECT_EQ(outputs[0].data.data(), outputData);
  EXPECT_EQ(reads[0].data.data(), readData);
  EXPECT_EQ(valuesOf(outputs[0]), (std::vector<float>{1, 4, 0.25f, 9}));
  EXPECT_EQ(valuesOf(reads[0]), (std::vector<float>{2, 4, 6, 8}));
  // The inputs are the caller's too: never written.
  EXPECT_EQ(valuesOf(inputs[0]), (std::vector<float>{1, 2, 3, 4}));

  // Buffers of another shape, dtype or count are refused; nothing runs.
  std::vector<NpyArray> small = {floats({1, 2}, {9, 9})};
  auto shape = model.runInto(inputs, writes, small, reads);
  ASSERT_FALSE(static_cast<bool>(shape));
  EXPECT_EQ(llvm::toString(shape.takeError()),
            "output 0: the result is a float32 array of shape (2, 2), the "
            "buffer given for it is a float32 array of shape (1, 2)");
  EXPECT_EQ(valuesOf(small[0]), (std::vector<float>{9, 9}));
  std::vector<NpyArray> doubles = {NpyArray(DType::F64, {2, 2})};
  auto dtype = model.runInto(inputs, writes, outputs, doubles);
  ASSERT_FALSE(static_cast<bool>(dtype));
  EXPECT_EQ(llvm::toString(dtype.takeError()),
            "read probe 'h': the result is a float32 array of shape (2, 2), "
            "the buffer given for it is a float64 array of shape (2, 2)");
  auto count = model.runInto(inputs, writes, outputs, {});
  ASSERT_FALSE(static_cast<bool>(count));
  EXPECT_EQ(llvm::toString(count.takeError()),
            "the forward has 1 output and 1 read probe, got buffers for 1 "
            "and 0");
}

/// Bytes the process holds from malloc (glibc: the main arena plus mmapped
/// chunks; the runs below are on this thread).
size_t heapInUse() {
  struct mallinfo2 info = mallinfo2();
  return info.uordblks + info.hblkhd;
}

TEST_F(CompiledModelTest, RunsWithoutLeaking) {
  auto compiled = compile(kTinyModel);
  ASSERT_TRUE(static_cast<bool>(compiled))
      << llvm::toString(compiled.takeError()) << diags;
  CompiledModel &model = **compiled;
  // 1 MiB of output per run: a leak of the results, of the temporaries or
  // of the argument copies would show as ~100 MiB.
  std::vector<NpyArray> inputs = {NpyArray(DType::F32, {1 << 17, 2})};
  auto warmUp = model.run(inputs);
  ASSERT_TRUE(static_cast<bool>(warmUp)) << llvm::toString(warmUp.takeError());
  size_t before = heapInUse();
  RunOptions options;
  options.repeat = 100;
  auto result = model.run(inputs, {}, options);
  ASSERT_TRUE(static_cast<bool>(result)) << llvm::toString(result.takeError());
  ASSERT_EQ(result->outputs[0].numBytes(), size_t(1) << 20);
  result->outputs.clear();
  EXPECT_LT(heapInUse(), before + (size_t(1) << 20));
}

TEST(TargetTest, ParsesTargetNames) {
  EXPECT_EQ(parseTarget("cpu"), Target::CPU);
  EXPECT_EQ(parseTarget("cuda"), Target::CUDA);
  EXPECT_EQ(parseTarget("gpu"), std::nullopt);
  EXPECT_EQ(stringifyTarget(Target::CUDA), "cuda");
  TargetConfig config;
  ASSERT_FALSE(static_cast<bool>(getTargetConfig(Target::CPU, config)));
  EXPECT_TRUE(static_cast<bool>(config.buildPipeline));
}

} // namespace

/// A forward whose temporary has `rows` x 1024 floats, `rows` the value of
/// its first input: the matmul's result, summed over the rows (4 * rows
/// each, with `w` ones).
constexpr llvm::StringLiteral kRowsForward = R"mlir(
func.func @forward(%n: tensor<i64>, %w: tensor<4x1024xf32>) -> tensor<1024xf32> {
  %v = tensor.extract %n[] : tensor<i64>
  %rows = arith.index_cast %v : i64 to index
  %one = arith.constant 1.0 : f32
  %a = tensor.splat %one[%rows] : tensor<?x4xf32>
  %big = nnx.fn.matmul %a, %w : tensor<?x4xf32>, tensor<4x1024xf32> -> tensor<?x1024xf32>
  %s = nnx.fn.sum %big {dims = array<i64: 0>} : tensor<?x1024xf32> -> tensor<1024xf32>
  return %s : tensor<1024xf32>
}
)mlir";

TEST_F(CompiledModelTest, OutOfMemoryIsAnErrorAndTheModelStaysUsable) {
  auto compiled = compile(kRowsForward);
  ASSERT_TRUE(static_cast<bool>(compiled))
      << llvm::toString(compiled.takeError()) << diags;
  CompiledModel &model = **compiled;
  NpyArray w = floats({4, 1024}, std::vector<float>(4 * 1024, 1.0f));
  auto rows = [](int64_t n) {
    return NpyArray::fromValues<int64_t>(DType::I64, {}, {n});
  };
  auto ok = model.run({rows(3), w});
  ASSERT_TRUE(static_cast<bool>(ok)) << llvm::toString(ok.takeError());
  EXPECT_EQ(valuesOf(ok->outputs[0]), std::vector<float>(1024, 12.0f));

  // 2^45 rows: 2^57 bytes, which no system gives. The call fails (it used
  // to write through a null temporary) and the model runs on.
  size_t mallocBefore = mallinfo2().uordblks;
  for (int i = 0; i < 3; ++i) {
    auto huge = model.run({rows(int64_t(1) << 45), w});
    ASSERT_FALSE(static_cast<bool>(huge));
    std::string message = llvm::toString(huge.takeError());
    EXPECT_NE(message.find("out of memory: the forward asked for a temporary "
                           "of "),
              std::string::npos)
        << message;
    EXPECT_NE(message.find(" bytes"), std::string::npos) << message;
  }
  auto again = model.run({rows(5), w});
  ASSERT_TRUE(static_cast<bool>(again)) << llvm::toString(again.takeError());
  EXPECT_EQ(valuesOf(again->outputs[0]), std::vector<float>(1024, 20.0f));
  // Nothing the failed calls allocated is left (their temporaries freed
  // after the unwind), beyond what one call caches.
  nnx_aot_release_temporaries();
  EXPECT_LT(mallinfo2().uordblks, mallocBefore + (64u << 10));
}

TEST_F(CompiledModelTest, FailedShapeCheckIsAnErrorAndTheModelStaysUsable) {
  auto compiled = compile(R"mlir(
func.func @forward(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %y = nnx.fn.matmul %a, %b {nnx.source = "matmul_0"} : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
  return %y : tensor<?x?xf32>
}
)mlir");
  ASSERT_TRUE(static_cast<bool>(compiled))
      << llvm::toString(compiled.takeError()) << diags;
  CompiledModel &model = **compiled;
  NpyArray a = floats({2, 3}, {1, 2, 3, 4, 5, 6});
  auto bad = model.run({a, floats({4, 1}, {1, 1, 1, 1})});
  ASSERT_FALSE(static_cast<bool>(bad));
  std::string message = llvm::toString(bad.takeError());
  EXPECT_NE(message.find("'nnx.fn.matmul' (matmul_0) at "), std::string::npos)
      << message;
  EXPECT_NE(message.find("dimension 1 of the lhs is 3 and dimension 0 of the "
                         "rhs is 4; they must be equal"),
            std::string::npos)
      << message;
  auto good = model.run({a, floats({3, 1}, {1, 1, 1})});
  ASSERT_TRUE(static_cast<bool>(good)) << llvm::toString(good.takeError());
  EXPECT_EQ(valuesOf(good->outputs[0]), (std::vector<float>{6, 15}));
}
