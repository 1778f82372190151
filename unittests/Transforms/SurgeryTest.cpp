//===- SurgeryTest.cpp - surgery entry points without the pass manager ----===//
//
// - A refused edit leaves the printed IR byte-identical (every entry point).
// - widen/deepen preserve the function on many random nets and edit sequences
//   (a double-precision reference evaluator of the module tree).
// - low-rank truncation meets the Eckart-Young bound exactly.
//
//===----------------------------------------------------------------------===//
#include "nnx/Dialect/NNX/Transforms/Surgery.h"
#include "Support/Tolerance.h"
#include "TransformTestFixture.h"
#include "nnx/Dialect/NNX/IR/ModuleTree.h"
#include "nnx/Dialect/NNX/IR/NNXDialect.h"
#include "nnx/Dialect/NNX/IR/TensorUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

#include <Eigen/SVD>
#include <cmath>
#include <functional>
#include <gtest/gtest.h>
#include <limits>
#include <random>
#include <sstream>

using namespace mlir;
using namespace mlir::nnx;

namespace {

//===----------------------------------------------------------------------===//
// Fixture: parse, print, capture diagnostics
//===----------------------------------------------------------------------===//

class SurgeryTest : public TransformTest {};

//===----------------------------------------------------------------------===//
// Refusals leave the IR byte-identical
//===----------------------------------------------------------------------===//

struct RefusalCase {
  const char *name;
  const char *ir;
  std::function<LogicalResult(ModelOp)> run;
  const char *expect; // substring of the error
};

const char *kSoftmaxPath = R"mlir(
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = positional {
    nnx.linear @"0" {weight = dense<1.0> : tensor<8x4xf32>, bias = dense<0.5> : tensor<8xf32>}
    nnx.relu @"1"
    nnx.softmax @"2"
    nnx.linear @"3" {weight = dense<1.0> : tensor<2x8xf32>}
  }
})mlir";

const char *kAliasedConsumer = R"mlir(
nnx.model @m inputs(tensor<?x8xf32>) {
  nnx.sequential @net keying = named {
    nnx.linear @t {weight = dense<1.0> : tensor<8x8xf32>}
    nnx.relu @r
    nnx.linear @c {weight = dense<1.0> : tensor<8x8xf32>}
    nnx.alias @c2 = @c
  }
})mlir";

// The Linear is reachable as body.0 and again.0.
const char *kAliasedContainer = R"mlir(
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    nnx.sequential @body keying = positional {
      nnx.linear @"0" {weight = dense<1.0> : tensor<4x4xf32>}
      nnx.relu @"1"
      nnx.linear @"2" {weight = dense<1.0> : tensor<4x4xf32>}
    }
    nnx.alias @again = @body
  }
})mlir";

const char *kCustom = R"mlir(
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.module @net class = "Block" {
    nnx.linear @t {weight = dense<1.0> : tensor<4x4xf32>}
    nnx.relu @r
    nnx.linear @c {weight = dense<1.0> : tensor<4x4xf32>}
    nnx.forward @forward(%x: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>) {
      %h = nnx.call @t(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>
      %a = nnx.call @r(%h) : (tensor<?x4xf32>) -> tensor<?x4xf32>
      %y = nnx.call @c(%a) : (tensor<?x4xf32>) -> tensor<?x4xf32>
      nnx.return %y, %h : tensor<?x4xf32>, tensor<?x4xf32>
    }
  }
})mlir";

const char *kFeedFwd = R"mlir(
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.feed_fwd @net attributes {input_dim = 4, hidden_dims = array<i64: 8, 8>, output_dim = 2, activation = #nnx.activation<relu>, activations = [#nnx.activation<softmax>, #nnx.activation<tanh>], dropout = 0.25 : f64} {
    nnx.module_list @layers {
      nnx.linear @"0" {weight = dense<1.0> : tensor<8x4xf32>}
      nnx.linear @"1" {weight = dense<1.0> : tensor<8x8xf32>}
      nnx.linear @"2" {weight = dense<1.0> : tensor<2x8xf32>}
    }
  }
})mlir";

// A positional sequential whose later keys deepen would renumber, and an
// alias deepen would retarget: a refusal must do neither.
const char *kHookedRelu = R"mlir(
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    nnx.sequential @body keying = positional {
      nnx.linear @"0" {weight = dense<1.0> : tensor<8x4xf32>}
      nnx.relu @"1" {hooks = ["capture"]}
      nnx.linear @"2" {weight = dense<1.0> : tensor<8x8xf32>}
    }
    nnx.alias @tied = @body::@"2"
  }
})mlir";

const char *kTanhSite = R"mlir(
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = positional {
    nnx.linear @"0" {weight = dense<1.0> : tensor<8x4xf32>}
    nnx.tanh @"1"
    nnx.linear @"2" {weight = dense<1.0> : tensor<2x8xf32>}
  }
})mlir";

const char *kStateContainer = R"mlir(
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = positional attributes {state = {scale = dense<2.0> : tensor<1xf32>}} {
    nnx.linear @"0" {weight = dense<1.0> : tensor<8x4xf32>}
    nnx.relu @"1"
    nnx.linear @"2" {weight = dense<1.0> : tensor<2x8xf32>}
  }
})mlir";

const char *kReaching = R"mlir(
nnx.model @m inputs(tensor<?x8xf32>) {
  nnx.sequential @net keying = named {
    nnx.sequential @t keying = named {
      nnx.linear @fc {weight = dense<1.0> : tensor<8x8xf32>}
    }
    nnx.alias @shared = @t::@fc
  }
})mlir";

const char *kPrunedLinear = R"mlir(
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    nnx.linear @t {weight = dense<1.0> : tensor<8x4xf32>, pruned = ["weight"]}
    nnx.linear @u {weight = dense<[[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]]> : tensor<1x8xf32>}
  }
})mlir";

const char *kEmbedding = R"mlir(
nnx.model @m inputs(tensor<?x3xi64>) {
  nnx.sequential @net keying = named {
    nnx.embedding @e {weight = dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>}
    nnx.relu @r
  }
})mlir";

const char *kEmbeddingSubclass = R"mlir(
nnx.model @m inputs(tensor<?x3xi64>) {
  nnx.sequential @net keying = named {
    nnx.embedding @q {weight = dense<1.0> : tensor<3x2xf32>, subclass = "Scaled"}
  }
})mlir";

// Tensors no pass can hold: a 1e8-wide layer (deepen would build a 1e8x1e8
// identity) and a splat of 2^60 rows (low-rank would read every value).
const char *kHuge = R"mlir(
nnx.model @m inputs(tensor<?x1xf32>) {
  nnx.sequential @net keying = named {
    nnx.linear @wide {weight = dense<1.0> : tensor<100000000x1xf32>}
    nnx.relu @r
  }
})mlir";

/// Grouped-query attention: 2 kv heads of 2 query heads, head dim 2.
const char *kAttention = R"mlir(
nnx.model @gqa inputs(tensor<?x?x8xf32>) {
  nnx.module @net class = "Net" {
    nnx.module @attn class = "Attention" {
      nnx.linear @q_proj {weight = dense<0.1> : tensor<8x8xf32>}
      nnx.linear @k_proj {weight = dense<0.2> : tensor<4x8xf32>}
      nnx.linear @v_proj {weight = dense<0.3> : tensor<4x8xf32>}
      nnx.linear @o_proj {weight = dense<0.4> : tensor<8x8xf32>}
      nnx.forward @forward(%x: tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
        %c0 = arith.constant 0 : index
        %c1 = arith.constant 1 : index
        %b = tensor.dim %x, %c0 : tensor<?x?x8xf32>
        %t = tensor.dim %x, %c1 : tensor<?x?x8xf32>
        %q = nnx.call @q_proj(%x) : (tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
        %qv = nnx.fn.reshape %q [%b, %t, 4, 2] : tensor<?x?x8xf32> -> tensor<?x?x4x2xf32>
        %qt0 = nnx.fn.permute %qv [0, 2, 1, 3] : tensor<?x?x4x2xf32> -> tensor<?x4x?x2xf32>
        %qt = nnx.fn.dropout %qt0 {p = 0.0 : f64} : tensor<?x4x?x2xf32>
        %k = nnx.call @k_proj(%x) : (tensor<?x?x8xf32>) -> tensor<?x?x4xf32>
        %kv = nnx.fn.reshape %k [%b, %t, 2, 2] : tensor<?x?x4xf32> -> tensor<?x?x2x2xf32>
        %kt = nnx.fn.permute %kv [0, 2, 1, 3] : tensor<?x?x2x2xf32> -> tensor<?x2x?x2xf32>
        %k1 = nnx.fn.reshape %kt [%b, 2, 1, %t, 2] : tensor<?x2x?x2xf32> -> tensor<?x2x1x?x2xf32>
        %ke = nnx.fn.expand %k1 [%b, 2, 2, %t, 2] : tensor<?x2x1x?x2xf32> -> tensor<?x2x2x?x2xf32>
        %kr = nnx.fn.reshape %ke [%b, 4, %t, 2] : tensor<?x2x2x?x2xf32> -> tensor<?x4x?x2xf32>
        %v = nnx.call @v_proj(%x) : (tensor<?x?x8xf32>) -> tensor<?x?x4xf32>
        %vv = nnx.fn.reshape %v [%b, %t, 2, 2] : tensor<?x?x4xf32> -> tensor<?x?x2x2xf32>
        %vt = nnx.fn.permute %vv [0, 2, 1, 3] : tensor<?x?x2x2xf32> -> tensor<?x2x?x2xf32>
        %v1 = nnx.fn.reshape %vt [%b, 2, 1, %t, 2] : tensor<?x2x?x2xf32> -> tensor<?x2x1x?x2xf32>
        %ve = nnx.fn.expand %v1 [%b, 2, 2, %t, 2] : tensor<?x2x1x?x2xf32> -> tensor<?x2x2x?x2xf32>
        %vr = nnx.fn.reshape %ve [%b, 4, %t, 2] : tensor<?x2x2x?x2xf32> -> tensor<?x4x?x2xf32>
        %ktt = nnx.fn.permute %kr [0, 1, 3, 2] : tensor<?x4x?x2xf32> -> tensor<?x4x2x?xf32>
        %s = nnx.fn.matmul %qt, %ktt : tensor<?x4x?x2xf32>, tensor<?x4x2x?xf32> -> tensor<?x4x?x?xf32>
        %scale = arith.constant dense<0.7071> : tensor<f32>
        %ss = nnx.fn.mul %s, %scale : tensor<?x4x?x?xf32>, tensor<f32> -> tensor<?x4x?x?xf32>
        %p = nnx.fn.softmax %ss {dim = -1 : i64} : tensor<?x4x?x?xf32>
        %o = nnx.fn.matmul %p, %vr : tensor<?x4x?x?xf32>, tensor<?x4x?x2xf32> -> tensor<?x4x?x2xf32>
        %ot = nnx.fn.permute %o [0, 2, 1, 3] : tensor<?x4x?x2xf32> -> tensor<?x?x4x2xf32>
        %of = nnx.fn.reshape %ot [%b, %t, 8] : tensor<?x?x4x2xf32> -> tensor<?x?x8xf32>
        %y = nnx.call @o_proj(%of) : (tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
        nnx.return %y : tensor<?x?x8xf32>
      }
    }
    nnx.forward @forward(%x: tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
      %y = nnx.call @attn(%x) : (tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
      nnx.return %y : tensor<?x?x8xf32>
    }
  }
})mlir";

const char *kTall = R"mlir(
nnx.model @m inputs(tensor<?x1xf32>) {
  nnx.sequential @net keying = named {
    nnx.linear @tall {weight = dense<1.0> : tensor<1152921504606846976x1xf32>}
  }
})mlir";

// A conv whose channels a mean (a LayerNorm2d's) reduces over.
const char *kConvNorm = R"mlir(
nnx.model @m inputs(tensor<?x1x2x2xf32>) {
  nnx.module @net class = "Net" {
    nnx.conv2d @conv {in_channels = 1 : i64, out_channels = 2 : i64, kernel_size = array<i64: 1, 1>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, weight = dense<0.5> : tensor<2x1x1x1xf32>}
    nnx.conv2d @out {in_channels = 2 : i64, out_channels = 1 : i64, kernel_size = array<i64: 1, 1>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, weight = dense<0.5> : tensor<1x2x1x1xf32>}
    nnx.forward @forward(%x: tensor<?x1x2x2xf32>) -> tensor<?x1x2x2xf32> {
      %c = nnx.call @conv(%x) : (tensor<?x1x2x2xf32>) -> tensor<?x2x2x2xf32>
      %m = nnx.fn.mean %c {dims = array<i64: 1>, keepdim} : tensor<?x2x2x2xf32> -> tensor<?x1x2x2xf32>
      %s = nnx.fn.sub %c, %m : tensor<?x2x2x2xf32>, tensor<?x1x2x2xf32> -> tensor<?x2x2x2xf32>
      %o = nnx.call @out(%s) : (tensor<?x2x2x2xf32>) -> tensor<?x1x2x2xf32>
      nnx.return %o : tensor<?x1x2x2xf32>
    }
  }
})mlir";

// Two convs, the second reading the first's channels.
const char *kConvs = R"mlir(
nnx.model @m inputs(tensor<?x1x2x2xf32>) {
  nnx.module @net class = "Net" {
    nnx.conv2d @conv {in_channels = 1 : i64, out_channels = 2 : i64, kernel_size = array<i64: 1, 1>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, weight = dense<0.5> : tensor<2x1x1x1xf32>}
    nnx.conv2d @out {in_channels = 2 : i64, out_channels = 1 : i64, kernel_size = array<i64: 1, 1>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, weight = dense<0.5> : tensor<1x2x1x1xf32>}
    nnx.forward @forward(%x: tensor<?x1x2x2xf32>) -> tensor<?x1x2x2xf32> {
      %c = nnx.call @conv(%x) : (tensor<?x1x2x2xf32>) -> tensor<?x2x2x2xf32>
      %o = nnx.call @out(%c) : (tensor<?x2x2x2xf32>) -> tensor<?x1x2x2xf32>
      nnx.return %o : tensor<?x1x2x2xf32>
    }
  }
})mlir";

TEST_F(SurgeryTest, RefusalsLeaveTheIRByteIdentical) {
  const std::vector<RefusalCase> cases = {
      {"widen/softmax", kSoftmaxPath,
       [](ModelOp m) { return widen(m, "0", 16, 3); }, "width-dependent"},
      {"widen/not-larger", kSoftmaxPath,
       [](ModelOp m) { return widen(m, "0", 8, 0); }, "must be larger"},
      {"widen/aliased-consumer", kAliasedConsumer,
       [](ModelOp m) { return widen(m, "t", 12, 0); },
       "registered under more than one path"},
      {"widen/aliased-container", kAliasedContainer,
       [](ModelOp m) { return widen(m, "again.0", 8, 0); },
       "its container 'body' is also registered as 'again'"},
      {"widen/custom", kCustom, [](ModelOp m) { return widen(m, "t", 8, 0); },
       "a second use of the units"},
      {"prune/custom", kCustom, [](ModelOp m) { return prune(m, "t", 2); },
       "a second use of the units"},
      {"insert-block/not-listed", kCustom,
       [](ModelOp m) { return insertBlock(m, "t"); },
       "is not a block of an 'nnx.module_list'"},
      {"grow-attention/ratio", kAttention,
       [](ModelOp m) { return growAttention(m, "attn", 5, 0, 0); },
       "num_heads / num_kv_heads must stay an integer"},
      {"grow-attention/smaller-head-dim", kAttention,
       [](ModelOp m) { return growAttention(m, "attn", 8, 0, 1); },
       "must not be smaller"},
      {"prune/heads-group", kAttention,
       [](ModelOp m) { return pruneHeads(m, "attn", 3); },
       "a kv head goes with all its query heads"},
      {"widen-residual/no-embedding", kAttention,
       [](ModelOp m) { return widenResidual(m, 16); }, "has no embedding"},
      {"drop/remove-not-listed", kCustom,
       [](ModelOp m) { return dropLayer(m, "t", /*remove=*/true); },
       "is not a block of a plain 'nnx.module_list'"},
      {"widen/ff-softmax", kFeedFwd,
       [](ModelOp m) { return widen(m, "layers.0", 9, 0); }, "'softmax'"},
      {"widen/missing", kFeedFwd,
       [](ModelOp m) { return widen(m, "layers.7", 9, 0); }, "no module '7'"},
      {"deepen/hooked-relu", kHookedRelu,
       [](ModelOp m) { return deepen(m, "body.1"); }, "has hooks"},
      {"deepen/tanh", kTanhSite, [](ModelOp m) { return deepen(m, "1"); },
       "nnx-deepen: type error:"},
      {"deepen/state", kStateContainer,
       [](ModelOp m) { return deepen(m, "1"); }, "of its own ('scale')"},
      {"deepen/ff-tanh", kFeedFwd,
       [](ModelOp m) { return deepen(m, "layers.1"); }, "'tanh'"},
      {"drop/non-square", kTanhSite,
       [](ModelOp m) { return dropLayer(m, "0"); }, "break the chain"},
      {"drop/aliased", kAliasedConsumer,
       [](ModelOp m) { return dropLayer(m, "c"); },
       "registered under more than one path"},
      {"drop/aliased-container", kAliasedContainer,
       [](ModelOp m) { return dropLayer(m, "body.0"); },
       "reachable under more than one path"},
      {"drop/reaching", kReaching, [](ModelOp m) { return dropLayer(m, "t"); },
       "referenced from outside"},
      {"low-rank/zero", kPrunedLinear,
       [](ModelOp m) { return lowRank(m, "u", 0); }, "outside 1..1"},
      {"low-rank/too-big", kPrunedLinear,
       [](ModelOp m) { return lowRank(m, "u", 2); }, "outside 1..1"},
      {"low-rank/aliased-container", kAliasedContainer,
       [](ModelOp m) { return lowRank(m, "body.0", 1); },
       "reachable under more than one path"},
      {"low-rank/pruned", kPrunedLinear,
       [](ModelOp m) { return lowRank(m, "t", 2); }, "prune mask"},
      {"expand/smaller", kEmbedding,
       [](ModelOp m) { return expandEmbedding(m, "e", 2); }, "shrink"},
      {"expand/overflow", kEmbedding,
       [](ModelOp m) {
         return expandEmbedding(m, "e", std::numeric_limits<int64_t>::max());
       },
       "overflows 64 bits"},
      {"expand/huge", kEmbedding,
       [](ModelOp m) { return expandEmbedding(m, "e", 4000000000); },
       "at most 16 GiB per tensor"},
      {"deepen/huge", kHuge, [](ModelOp m) { return deepen(m, "r"); },
       "identity Linear of 100000000x100000000"},
      {"low-rank/huge", kTall, [](ModelOp m) { return lowRank(m, "tall", 1); },
       "overflows 64 bits"},
      {"widen/huge", kTanhSite,
       [](ModelOp m) { return widen(m, "0", int64_t(1) << 62, 0); },
       "overflows 64 bits"},
      {"prune-channels/norm", kConvNorm,
       [](ModelOp m) { return pruneChannels(m, "conv", 1); }, "reduces over"},
      {"prune-channels/keep", kConvNorm,
       [](ModelOp m) { return pruneChannels(m, "conv", 2); },
       "must be in 1..1"},
      {"widen-channels/norm", kConvNorm,
       [](ModelOp m) { return widenChannels(m, "conv", 3); }, "reduces over"},
      {"widen-channels/huge", kConvs,
       [](ModelOp m) { return widenChannels(m, "conv", int64_t(1) << 62); },
       "overflows 64 bits"},
      {"channels/not-a-layer", kConvNorm,
       [](ModelOp m) { return widenChannels(m, "nothing", 3); },
       "no module 'nothing'"},
      {"expand/subclass", kEmbeddingSubclass,
       [](ModelOp m) {
         return expandEmbedding(m, "q", 9, EmbeddingInit::CopyMean);
       },
       "subclass"},
  };
  for (const RefusalCase &c : cases) {
    SCOPED_TRACE(c.name);
    errors.clear();
    OwningOpRef<mlir::ModuleOp> module = parse(c.ir);
    ASSERT_TRUE(module);
    std::string before = print(*module);
    EXPECT_TRUE(failed(c.run(firstModel(*module))));
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_NE(errors.front().find(c.expect), std::string::npos)
        << errors.front();
    EXPECT_EQ(print(*module), before);
    EXPECT_TRUE(succeeded(verify(*module)));
  }
}

TEST_F(SurgeryTest, TypeErrorIsDistinctFromValueErrors) {
  OwningOpRef<mlir::ModuleOp> module = parse(kStateContainer);
  ASSERT_TRUE(module);
  EXPECT_TRUE(failed(deepen(firstModel(*module), "1")));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].rfind("nnx-deepen: container", 0), 0u) << errors[0];
  errors.clear();
  module = parse(kTanhSite);
  EXPECT_TRUE(failed(deepen(firstModel(*module), "1")));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].rfind("nnx-deepen: type error: ", 0), 0u) << errors[0];
}

//===----------------------------------------------------------------------===//
// A double-precision reference evaluator of the module tree
//===----------------------------------------------------------------------===//

using Batch = std::vector<std::vector<double>>;

std::vector<double> tensorValues(ElementsAttr a) {
  FailureOr<std::vector<double>> v = readTensor(a);
  EXPECT_TRUE(succeeded(v));
  return succeeded(v) ? *v : std::vector<double>();
}

double applyActivation(llvm::StringRef act, double v, double slope = 0.01) {
  if (act == "relu")
    return v > 0 ? v : 0;
  if (act == "tanh")
    return std::tanh(v);
  if (act == "sigmoid")
    return 1 / (1 + std::exp(-v));
  if (act == "gelu")
    return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
  if (act == "silu")
    return v / (1 + std::exp(-v));
  if (act == "leaky_relu")
    return v > 0 ? v : slope * v;
  if (act == "identity")
    return v;
  ADD_FAILURE() << "activation " << act.str() << " not in the evaluator";
  return v;
}

Batch evaluate(Operation *op, Batch x) {
  ModuleOpInterface m = resolveAlias(op);
  if (!m) {
    ADD_FAILURE() << "dangling alias";
    return x;
  }
  auto map = [&](llvm::StringRef act, double slope = 0.01) {
    for (auto &row : x)
      for (double &v : row)
        v = applyActivation(act, v, slope);
    return x;
  };
  if (auto seq = dyn_cast<SequentialOp>(m.getOperation())) {
    for (Operation &child : seq.getBody().front())
      x = evaluate(&child, x);
    return x;
  }
  if (auto ff = dyn_cast<FeedFwdOp>(m.getOperation())) {
    unsigned i = 0, n = ff.getHiddenDims().size();
    for (Operation &layer : ff.getLayers().getBody().front()) {
      x = evaluate(&layer, x);
      if (i < n)
        x = map(stringifyEnum(
            ff.activationFor(i))); // dropout: eval mode is the identity
      ++i;
    }
    return x;
  }
  if (auto lin = dyn_cast<LinearOp>(m.getOperation())) {
    auto wt = cast<ShapedType>(lin.getWeightAttr().getType());
    int64_t out = wt.getDimSize(0), in = wt.getDimSize(1);
    std::vector<double> w = tensorValues(lin.getWeightAttr());
    std::vector<double> b(out, 0.0);
    if (lin.getBiasAttr())
      b = tensorValues(lin.getBiasAttr());
    Batch y(x.size(), std::vector<double>(out));
    for (size_t r = 0; r < x.size(); ++r)
      for (int64_t o = 0; o < out; ++o) {
        y[r][o] = ::nnx::testing::sum<double>(
            in, [&](size_t k) { return w[o * in + k] * x[r][k]; }, b[o]);
      }
    return y;
  }
  if (auto ln = dyn_cast<LayerNormOp>(m.getOperation())) {
    size_t d = x.front().size();
    std::vector<double> g(d, 1.0), b(d, 0.0);
    if (ln.getWeightAttr())
      g = tensorValues(ln.getWeightAttr());
    if (ln.getBiasAttr())
      b = tensorValues(ln.getBiasAttr());
    double eps = ln.getEps().convertToDouble();
    for (auto &row : x) {
      double mean =
          ::nnx::testing::sum<double>(d, [&](size_t k) { return row[k] / d; });
      double var = ::nnx::testing::sum<double>(
          d, [&](size_t k) { return (row[k] - mean) * (row[k] - mean) / d; });
      for (size_t k = 0; k < d; ++k)
        row[k] = (row[k] - mean) / std::sqrt(var + eps) * g[k] + b[k];
    }
    return x;
  }
  if (auto leaky = dyn_cast<LeakyReLUOp>(m.getOperation()))
    return map("leaky_relu", leaky.getNegativeSlope().convertToDouble());
  if (isa<DropoutOp, IdentityOp>(m.getOperation()))
    return x;
  llvm::StringRef name = m->getName().stripDialect();
  return map(name);
}

void expectClose(const Batch &a, const Batch &b, const std::string &what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t r = 0; r < a.size(); ++r) {
    ASSERT_EQ(a[r].size(), b[r].size()) << what;
    for (size_t c = 0; c < a[r].size(); ++c)
      ASSERT_TRUE(::nnx::testing::withinContract(b[r][c], a[r][c]))
          << what << " at [" << r << "][" << c << "]";
  }
}

//===----------------------------------------------------------------------===//
// Random nets and edit sequences
//===----------------------------------------------------------------------===//

struct NetGen {
  std::mt19937_64 rng;
  explicit NetGen(uint64_t seed) : rng(seed) {}

  int64_t pick(int64_t lo, int64_t hi) { // inclusive
    return lo +
           static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1));
  }
  double uniform() {
    return std::uniform_real_distribution<double>(-1.0, 1.0)(rng);
  }
  std::string tensor(std::vector<int64_t> shape) {
    std::ostringstream os;
    os.precision(7);
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    os << "dense<";
    if (shape.size() == 2) {
      os << "[";
      for (int64_t r = 0; r < shape[0]; ++r) {
        os << (r ? ", [" : "[");
        for (int64_t c = 0; c < shape[1]; ++c)
          os << (c ? ", " : "") << uniform();
        os << "]";
      }
      os << "]";
    } else {
      os << "[";
      for (int64_t i = 0; i < n; ++i)
        os << (i ? ", " : "") << uniform();
      os << "]";
    }
    os << "> : tensor<" << shape[0];
    for (size_t i = 1; i < shape.size(); ++i)
      os << "x" << shape[i];
    os << "xf32>";
    return os.str();
  }
  std::string linear(const std::string &key, int64_t in, int64_t out) {
    std::string s = "nnx.linear @" + key + " {weight = " + tensor({out, in});
    if (pick(0, 3) != 0)
      s += ", bias = " + tensor({out});
    return s + "}\n";
  }
  std::string activation(const std::string &key) {
    static const char *acts[] = {"relu", "relu",       "relu",
                                 "tanh", "gelu",       "sigmoid",
                                 "silu", "leaky_relu", "identity"};
    return std::string("nnx.") + acts[pick(0, 8)] + " @" + key + "\n";
  }

  /// A chain of Linears and elementwise modules in a sequential.
  std::string chain(bool positional, int64_t in, int64_t out, int depth,
                    const std::string &prefix) {
    std::string body;
    int64_t cur = in;
    int index = 0;
    auto key = [&](const std::string &named) {
      return positional ? "\"" + std::to_string(index++) + "\""
                        : prefix + named + std::to_string(index++);
    };
    for (int d = 0; d < depth; ++d) {
      int64_t next = d + 1 == depth ? out : pick(2, 6);
      body += linear(key("fc"), cur, next);
      cur = next;
      if (d + 1 < depth) {
        body += activation(key("act"));
        if (pick(0, 3) == 0)
          body += "nnx.dropout " + std::string("@") + key("drop") +
                  " {p = 0.2 : f64}\n";
      }
    }
    return body;
  }

  std::string model() {
    int64_t in = pick(2, 5), out = pick(1, 4);
    std::string head =
        "nnx.model @m inputs(tensor<?x" + std::to_string(in) + "xf32>) {\n";
    switch (pick(0, 3)) {
    case 0:
      return head + "nnx.sequential @net keying = positional {\n" +
             chain(true, in, out, pick(2, 4), "") + "}\n}\n";
    case 1:
      return head + "nnx.sequential @net keying = named {\n" +
             chain(false, in, out, pick(2, 4), "") + "}\n}\n";
    case 2: {
      int64_t mid = pick(2, 6);
      return head + "nnx.sequential @net keying = named {\n" +
             "nnx.sequential @body keying = positional {\n" +
             chain(true, in, mid, pick(2, 3), "") + "}\n" + "nnx.relu @act\n" +
             "nnx.sequential @head keying = named {\n" +
             chain(false, mid, out, pick(1, 3), "h") + "}\n}\n}\n";
    }
    default: {
      int n = pick(1, 3);
      std::vector<int64_t> hidden;
      for (int i = 0; i < n; ++i)
        hidden.push_back(pick(2, 6));
      static const char *acts[] = {"relu", "tanh", "gelu", "sigmoid"};
      std::string attrs = "input_dim = " + std::to_string(in) +
                          ", output_dim = " + std::to_string(out) +
                          ", hidden_dims = array<i64: ";
      for (int i = 0; i < n; ++i)
        attrs += (i ? ", " : "") + std::to_string(hidden[i]);
      attrs += ">, activation = #nnx.activation<" +
               std::string(acts[pick(0, 1)]) + ">";
      if (pick(0, 1)) {
        attrs += ", activations = [";
        for (int i = 0; i < n; ++i)
          attrs += std::string(i ? ", " : "") + "#nnx.activation<" +
                   acts[pick(0, 3)] + ">";
        attrs += "]";
      }
      if (pick(0, 1))
        attrs += ", dropout = 0.3 : f64";
      if (pick(0, 1)) {
        attrs += ", dropout_probs = [";
        for (int i = 0; i < n; ++i)
          attrs += std::string(i ? ", " : "") + (pick(0, 1) ? "0.1" : "0.0");
        attrs += "]";
      }
      std::string layers;
      int64_t cur = in;
      for (int i = 0; i <= n; ++i) {
        int64_t next = i == n ? out : hidden[i];
        layers += linear("\"" + std::to_string(i) + "\"", cur, next);
        cur = next;
      }
      return head + "nnx.feed_fwd @net attributes {" + attrs + "} {\n" +
             "nnx.module_list @layers {\n" + layers + "}\n}\n}\n";
    }
    }
  }
};

TEST_F(SurgeryTest, WidenAndDeepenPreserveTheFunctionOnRandomNets) {
  int refused = 0, widened = 0, deepened = 0;
  for (uint64_t seed = 0; seed < 150; ++seed) {
    SCOPED_TRACE("net seed " + std::to_string(seed));
    NetGen gen(seed);
    std::string src = gen.model();
    OwningOpRef<mlir::ModuleOp> module = parse(src);
    ASSERT_TRUE(module) << src;
    ModelOp model = firstModel(*module);
    int64_t in = cast<RankedTensorType>(model.getInputTypes()[0]).getDimSize(1);
    Batch x(5, std::vector<double>(in));
    for (auto &row : x)
      for (double &v : row)
        v = 2.0 * gen.uniform();
    Batch reference = evaluate(model.getRootModule(), x);

    for (int step = 0; step < 4; ++step) {
      // Candidate sites: every Linear (widen; deepen on a feed_fwd) and every
      // ReLU (deepen), by dotted path.
      std::vector<std::pair<std::string, bool>> sites; // path, is linear
      model.walk([&](Operation *op) {
        if (isa<LinearOp>(op))
          sites.push_back({getModulePath(op), true});
        else if (isa<ReLUOp>(op))
          sites.push_back({getModulePath(op), false});
      });
      auto [path, isLinear] = sites[gen.pick(0, sites.size() - 1)];
      std::string before = print(*module);
      errors.clear();
      LogicalResult r = failure();
      bool doWiden = isLinear && gen.pick(0, 2) != 0;
      if (doWiden) {
        auto lin = cast<LinearOp>(*lookupModule(model, path));
        r = widen(model, path, lin.getOutFeaturesCount() + gen.pick(1, 5),
                  gen.rng());
      } else {
        r = deepen(model, path);
      }
      std::string after = print(*module);
      if (failed(r)) {
        ++refused;
        EXPECT_EQ(errors.size(), 1u);
        ASSERT_EQ(after, before) << "a refusal changed the IR";
        continue;
      }
      (doWiden ? widened : deepened) += 1;
      ASSERT_TRUE(succeeded(verify(*module))) << after;
      expectClose(reference, evaluate(model.getRootModule(), x),
                  (doWiden ? "widen " : "deepen ") + path + " on\n" + src);
    }
  }
  // The generator must exercise both edits many times, and refusals too.
  EXPECT_GT(widened, 100);
  EXPECT_GT(deepened, 50);
  EXPECT_GT(refused, 20);
}

//===----------------------------------------------------------------------===//
// Low rank: Eckart-Young, exactness at max rank, flags
//===----------------------------------------------------------------------===//

std::string matrixModel(const Eigen::MatrixXd &w, const char *elt) {
  std::ostringstream os;
  os.precision(17);
  os << "nnx.model @m inputs(tensor<?x" << w.cols() << "x" << elt << ">) {\n"
     << "  nnx.sequential @net keying = named {\n"
     << "    nnx.linear @fc {requires_grad = {bias = false}, weight = dense<[";
  for (int r = 0; r < w.rows(); ++r) {
    os << (r ? ", [" : "[");
    for (int c = 0; c < w.cols(); ++c)
      os << (c ? ", " : "") << w(r, c);
    os << "]";
  }
  os << "]> : tensor<" << w.rows() << "x" << w.cols() << "x" << elt
     << ">, bias = dense<0.5> : tensor<" << w.rows() << "x" << elt << ">}\n"
     << "  }\n}\n";
  return os.str();
}

Eigen::MatrixXd readMatrix(LinearOp lin) {
  auto t = cast<ShapedType>(lin.getWeightAttr().getType());
  std::vector<double> v = tensorValues(lin.getWeightAttr());
  Eigen::MatrixXd m(t.getDimSize(0), t.getDimSize(1));
  for (int r = 0; r < m.rows(); ++r)
    for (int c = 0; c < m.cols(); ++c)
      m(r, c) = v[r * m.cols() + c];
  return m;
}

/// Checks a truncation `b * a` of `w` against Eckart-Young: its Frobenius
/// error is `bound` (the L2 norm of the discarded singular values), 0 at
/// `exact` (max rank). f32 factors are each off by at most u = 2^-24
/// relative, so ||B~A~ - BA||_F <= (2u + u^2) ||B||_F ||A||_F; f64 factors
/// carry only the SVD's own rounding, far below 1e-10 of the scale.
void expectEckartYoung(const Eigen::MatrixXd &w, const Eigen::MatrixXd &a,
                       const Eigen::MatrixXd &b, double bound, bool f32,
                       bool exact) {
  double u = std::ldexp(1.0, -24);
  double tol = f32 ? (2 * u + u * u) * a.norm() * b.norm() + 1e-12 * w.norm()
                   : 1e-10 * w.norm();
  double err = (w - b * a).norm();
  EXPECT_LE(err, bound + tol);
  EXPECT_GE(err, bound - tol);
  if (exact) {
    EXPECT_LE(err, tol);
  }
}

TEST_F(SurgeryTest, LowRankMeetsTheEckartYoungBound) {
  std::mt19937_64 rng(42);
  std::normal_distribution<double> normal;
  for (auto [rows, cols] : {std::pair{12, 9}, std::pair{7, 11}}) {
    Eigen::MatrixXd w(rows, cols);
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c)
        w(r, c) = normal(rng);
    // Singular values from an independent algorithm (Jacobi, not BDC).
    Eigen::VectorXd s = Eigen::JacobiSVD<Eigen::MatrixXd>(w).singularValues();
    int maxRank = std::min(rows, cols);
    for (const char *elt : {"f64", "f32"}) {
      for (int k = 1; k <= maxRank; ++k) {
        SCOPED_TRACE(std::string(elt) + " " + std::to_string(rows) + "x" +
                     std::to_string(cols) + " rank " + std::to_string(k));
        OwningOpRef<mlir::ModuleOp> module = parse(matrixModel(w, elt));
        ASSERT_TRUE(module);
        ModelOp model = firstModel(*module);
        ASSERT_TRUE(succeeded(lowRank(model, "fc", k)));
        auto first = cast<LinearOp>(*lookupModule(model, "fc.0"));
        auto second = cast<LinearOp>(*lookupModule(model, "fc.1"));
        EXPECT_FALSE(first.getBiasAttr());
        ASSERT_TRUE(second.getBiasAttr());
        Eigen::MatrixXd a = readMatrix(first), b = readMatrix(second);
        ASSERT_EQ(a.rows(), k);
        ASSERT_EQ(b.cols(), k);
        double bound = std::sqrt(s.tail(maxRank - k).squaredNorm());
        expectEckartYoung(w, a, b, bound, std::string(elt) == "f32",
                          k == maxRank);
        // Flags: both weights take the source weight's (true), only 1.bias
        // the source bias's (false).
        EXPECT_TRUE(cast<ModuleOpInterface>(first.getOperation())
                        .requiresGrad("weight"));
        EXPECT_TRUE(cast<ModuleOpInterface>(second.getOperation())
                        .requiresGrad("weight"));
        EXPECT_FALSE(cast<ModuleOpInterface>(second.getOperation())
                         .requiresGrad("bias"));
      }
    }
  }
}

/// A model holding one Conv2d @c whose weight is `w` (O x I*k*k, row-major
/// over input channel, then kernel row and column).
std::string convModel(const Eigen::MatrixXd &w, int in, int k) {
  std::ostringstream os;
  os.precision(17);
  os << "nnx.model @m inputs(tensor<?x" << in << "x6x6xf32>) {\n"
     << "  nnx.sequential @net keying = named {\n"
     << "    nnx.conv2d @c {in_channels = " << in
     << " : i64, out_channels = " << w.rows() << " : i64, kernel_size = "
     << "array<i64: " << k << ", " << k << ">, stride = array<i64: 1, 1>, "
     << "padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, "
     << "weight = dense<[";
  for (int r = 0; r < w.rows(); ++r) {
    os << (r ? ", [" : "[");
    for (int c = 0; c < in; ++c) {
      os << (c ? ", [" : "[");
      for (int y = 0; y < k; ++y) {
        os << (y ? ", [" : "[");
        for (int x = 0; x < k; ++x)
          os << (x ? ", " : "") << w(r, (c * k + y) * k + x);
        os << "]";
      }
      os << "]";
    }
    os << "]";
  }
  os << "]> : tensor<" << w.rows() << "x" << in << "x" << k << "x" << k
     << "xf32>}\n  }\n}\n";
  return os.str();
}

/// A convolution's weight as the matrix `dim 0 x (the rest)`.
Eigen::MatrixXd readConvMatrix(Conv2dOp conv) {
  auto t = cast<ShapedType>(conv.getWeightAttr().getType());
  std::vector<double> v = tensorValues(conv.getWeightAttr());
  int64_t rows = t.getDimSize(0), cols = t.getNumElements() / rows;
  Eigen::MatrixXd m(rows, cols);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c)
      m(r, c) = v[r * cols + c];
  return m;
}

TEST_F(SurgeryTest, ConvLowRankMeetsTheEckartYoungBound) {
  std::mt19937_64 rng(23);
  std::normal_distribution<double> normal;
  // 5 x (2 * 9): rank at most 5; 4 x (1 * 1): a 1x1 conv, rank 1.
  for (auto [out, in, k] : {std::tuple{5, 2, 3}, std::tuple{4, 1, 1}}) {
    Eigen::MatrixXd w(out, in * k * k);
    for (int r = 0; r < w.rows(); ++r)
      for (int c = 0; c < w.cols(); ++c)
        w(r, c) = normal(rng);
    Eigen::VectorXd s = Eigen::JacobiSVD<Eigen::MatrixXd>(w).singularValues();
    int maxRank = std::min<int>(w.rows(), w.cols());
    for (int rank = 1; rank <= maxRank; ++rank) {
      SCOPED_TRACE("conv " + std::to_string(out) + "x" + std::to_string(in) +
                   "x" + std::to_string(k) + " rank " + std::to_string(rank));
      OwningOpRef<mlir::ModuleOp> module = parse(convModel(w, in, k));
      ASSERT_TRUE(module);
      ModelOp model = firstModel(*module);
      ASSERT_TRUE(succeeded(lowRank(model, "c", rank)));
      ASSERT_TRUE(succeeded(verify(*module)));
      auto first = cast<Conv2dOp>(*lookupModule(model, "c.0"));
      auto second = cast<Conv2dOp>(*lookupModule(model, "c.1"));
      // The window stays on the first; the second is 1x1.
      EXPECT_EQ(first.getKernelSize(), ArrayRef<int64_t>({k, k}));
      EXPECT_EQ(first.getPadding(), ArrayRef<int64_t>({1, 1}));
      EXPECT_EQ(second.getKernelSize(), ArrayRef<int64_t>({1, 1}));
      EXPECT_EQ(second.getPadding(), ArrayRef<int64_t>({0, 0}));
      Eigen::MatrixXd a = readConvMatrix(first), b = readConvMatrix(second);
      ASSERT_EQ(a.rows(), rank);
      ASSERT_EQ(b.cols(), rank);
      double bound = std::sqrt(s.tail(maxRank - rank).squaredNorm());
      expectEckartYoung(w, a, b, bound, /*f32=*/true, rank == maxRank);
    }
  }
}

TEST_F(SurgeryTest, LowRankAtMaxRankPreservesTheForward) {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> normal;
  Eigen::MatrixXd w(6, 4);
  for (int r = 0; r < 6; ++r)
    for (int c = 0; c < 4; ++c)
      w(r, c) = normal(rng);
  OwningOpRef<mlir::ModuleOp> module = parse(matrixModel(w, "f32"));
  ASSERT_TRUE(module);
  ModelOp model = firstModel(*module);
  Batch x = {{0.5, -1.0, 2.0, 0.25}, {-0.75, 0.1, 0.3, 1.5}};
  Batch before = evaluate(model.getRootModule(), x);
  ASSERT_TRUE(succeeded(lowRank(model, "fc", 4)));
  ASSERT_TRUE(succeeded(verify(*module)));
  expectClose(before, evaluate(model.getRootModule(), x), "low rank 4");
}

//===----------------------------------------------------------------------===//
// Expand embedding: original rows bit-identical
//===----------------------------------------------------------------------===//

TEST_F(SurgeryTest, ExpandEmbeddingKeepsOriginalRowsBitIdentical) {
  const char *src = R"mlir(
nnx.model @m inputs(tensor<?x3xi64>) {
  nnx.sequential @net keying = named {
    nnx.embedding @e {weight = dense<[[0.1, 0.2], [0.3, 0.7], [1.0e-30, -3.3]]> : tensor<3x2xf32>, train}
  }
})mlir";
  for (EmbeddingInit init : {EmbeddingInit::Zeros, EmbeddingInit::CopyMean}) {
    OwningOpRef<mlir::ModuleOp> module = parse(src);
    ASSERT_TRUE(module);
    ModelOp model = firstModel(*module);
    auto emb = cast<EmbeddingOp>(*lookupModule(model, "e"));
    std::vector<float> old(
        cast<DenseElementsAttr>(emb.getWeight()).getValues<float>().begin(),
        cast<DenseElementsAttr>(emb.getWeight()).getValues<float>().end());
    ASSERT_TRUE(succeeded(expandEmbedding(model, "e", 6, init)));
    auto values = cast<DenseElementsAttr>(emb.getWeight()).getValues<float>();
    ASSERT_EQ(values.size(), 12u);
    for (size_t i = 0; i < old.size(); ++i)
      EXPECT_EQ(std::memcmp(&old[i], &values[i], sizeof(float)), 0);
    float expect0 = init == EmbeddingInit::Zeros
                        ? 0.0f
                        : static_cast<float>((0.1 + 0.3 + 1.0e-30) / 3);
    EXPECT_FLOAT_EQ(values[6], expect0);
    ArrayRef<bool> frozen = *emb.getFrozenRows();
    EXPECT_EQ(std::vector<bool>(frozen.begin(), frozen.end()),
              (std::vector<bool>{true, true, true, false, false, false}));
    EXPECT_TRUE(emb.getTrain());
  }
}

} // namespace
