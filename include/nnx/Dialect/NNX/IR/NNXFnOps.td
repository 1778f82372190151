//===- NNXFnOps.td - nnx.fn functional ops -----------------*- tablegen -*-===//
//
// The functional code of a forward region (torch.* / F.* / Tensor methods),
// mirroring `torch.nn.functional`: broadcasting arithmetic and comparisons,
// where, matmul, reshape/expand/permute, row reductions, activations and
// factories. Module (leaf) ops have a symbol; these do not. All are pure ops
// on ranked tensors whose result shapes reify from the operands, and all are
// lowered by `nnx-lower-functional`. Verifiers and shape reification live in
// lib/Dialect/NNX/IR/NNXFnOps.cpp, the broadcasting rule in Broadcast.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef NNX_FN_OPS_TD
#define NNX_FN_OPS_TD

include "nnx/Dialect/NNX/IR/NNXDialect.td"
include "nnx/Dialect/NNX/IR/NNXAttrs.td"
include "nnx/Dialect/NNX/IR/NNXFnEnums.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Dialect/Arith/IR/ArithBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Trait and interfaces
//===----------------------------------------------------------------------===//

// Marks the ops of this file: what nnx-build-forward accepts in a forward
// region beside upstream ops, and what nnx-lower-functional rewrites.
def NNX_FunctionalOpTrait : NativeOpTrait<"FunctionalOpTrait"> {
  let cppNamespace = "::mlir::nnx";
}

def NNX_FnBinaryOpInterface : OpInterface<"FnBinaryOpInterface"> {
  let cppNamespace = "::mlir::nnx";
  let description = [{
    The broadcasting elementwise binary ops (`nnx.fn.add`, ..., `nnx.fn.ge`):
    one verifier, one shape function and one lowering for all of them; each
    op only says which scalar operation it is.
  }];
  let methods = [
    InterfaceMethod<"The scalar operation.", "::mlir::nnx::FnBinaryKind",
      "getBinaryKind">,
    InterfaceMethod<"The left operand.", "::mlir::Value", "getLhs">,
    InterfaceMethod<"The right operand.", "::mlir::Value", "getRhs">,
  ];
}

def NNX_FnActivationOpInterface : OpInterface<"FnActivationOpInterface"> {
  let cppNamespace = "::mlir::nnx";
  let description = [{
    The functional activations (`nnx.fn.relu`, `nnx.fn.gelu`, ...): each is
    the leaf activation `nnx.<kind>` applied to a value, with the leaf's
    attributes of the same name (`approximate`), so both share one lowering.
  }];
  let methods = [
    InterfaceMethod<"The leaf activation this op computes.",
      "::mlir::nnx::ActivationKind", "getActivationKind">,
  ];
}

//===----------------------------------------------------------------------===//
// Base classes
//===----------------------------------------------------------------------===//

class NNX_FnOp<string mnemonic, list<Trait> traits = []>
    : Op<NNX_Dialect, "fn." # mnemonic, !listconcat([
        Pure, NNX_FunctionalOpTrait,
        DeclareOpInterfaceMethods<ReifyRankedShapedTypeOpInterface,
                                  ["reifyResultShapes"]>], traits)> {
  let results = (outs AnyRankedTensor:$result);
  let hasVerifier = 1;
  // Attributes go to bytecode as one dictionary, like NNX_Op's.
  let useCustomPropertiesEncoding = 1;
}

// The verifier and shape function of a class of ops: one C++ function each
// for the whole family (NNXFnOps.cpp), called by every op of the class.
class NNX_FnFamily<string family> {
  code definition = [{
    ::llvm::LogicalResult $cppClass::verify() {
      return ::mlir::nnx::verifyFn}] # family # [{Op(getOperation());
    }
    ::llvm::LogicalResult $cppClass::reifyResultShapes(
        ::mlir::OpBuilder &builder,
        ::mlir::ReifiedRankedShapedTypeDims &shapes) {
      return ::mlir::nnx::reifyFn}] # family # [{Op(builder, getOperation(),
                                                   shapes);
    }
  }];
}

//===----------------------------------------------------------------------===//
// Broadcasting elementwise binary ops
//===----------------------------------------------------------------------===//

class NNX_FnBinaryOp<string mnemonic, string kind, string what>
    : NNX_FnOp<mnemonic, [NNX_FnBinaryOpInterface]> {
  let summary = "Broadcasting elementwise `" # what # "`";
  let description = [{
    numpy/torch broadcasting: shapes are aligned from the right and a rank-0
    operand is a scalar. An operand dim broadcasts only where it is a static
    1 and the result's dim is not 1; elsewhere operand and result dims must
    agree (static sizes are checked, a dynamic operand dim is assumed equal
    to the result's at run time). The result has the larger rank, and each
    of its dims is static exactly when the operands determine it: `?` only
    where some operand dim is `?` and no operand fixes a static size.

    Arithmetic ops (`add sub mul div pow maximum minimum`) keep the element
    type of their operands (which must agree; `div` and `pow` need floats,
    the others take floats or integers other than i1). Comparisons (`eq ne
    lt le gt ge`) give i1: ordered float predicates except `ne` (unordered,
    as torch), signed integer predicates, and i1 operands for `eq`/`ne`.
    Logical ops (`logical_and logical_or logical_xor`, torch's `&`, `|`,
    `^` and `logical_*` on bool tensors) take i1 operands and give i1; the
    exporter writes `~mask` as `logical_xor %mask, %true`.

    ```mlir
    %r = nnx.fn.}] # mnemonic # [{ %a, %b : tensor<?x?x8x}] #
      !if(!eq(kind, "logical"), "i1", "f32") # [{>, tensor<8x}] #
      !if(!eq(kind, "logical"), "i1", "f32") # [{> -> tensor<?x?x8x}] #
      !if(!eq(kind, "arith"), "f32", "i1") # [{>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$lhs, AnyRankedTensor:$rhs);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let extraClassDeclaration = [{
    ::mlir::nnx::FnBinaryKind getBinaryKind() {
      return ::mlir::nnx::FnBinaryKind::}] # mnemonic # [{;
    }
  }];
  let extraClassDefinition = NNX_FnFamily<"Binary">.definition;
}

def NNX_FnAddOp : NNX_FnBinaryOp<"add", "arith", "a + b">;
def NNX_FnSubOp : NNX_FnBinaryOp<"sub", "arith", "a - b">;
def NNX_FnMulOp : NNX_FnBinaryOp<"mul", "arith", "a * b">;
def NNX_FnDivOp : NNX_FnBinaryOp<"div", "arith", "a / b">;
def NNX_FnPowOp : NNX_FnBinaryOp<"pow", "arith", "a ** b">;
def NNX_FnMaximumOp : NNX_FnBinaryOp<"maximum", "arith", "torch.maximum">;
def NNX_FnMinimumOp : NNX_FnBinaryOp<"minimum", "arith", "torch.minimum">;
def NNX_FnEqOp : NNX_FnBinaryOp<"eq", "compare", "a == b">;
def NNX_FnNeOp : NNX_FnBinaryOp<"ne", "compare", "a != b">;
def NNX_FnLtOp : NNX_FnBinaryOp<"lt", "compare", "a < b">;
def NNX_FnLeOp : NNX_FnBinaryOp<"le", "compare", "a <= b">;
def NNX_FnGtOp : NNX_FnBinaryOp<"gt", "compare", "a > b">;
def NNX_FnGeOp : NNX_FnBinaryOp<"ge", "compare", "a >= b">;
def NNX_FnLogicalAndOp : NNX_FnBinaryOp<"logical_and", "logical", "a & b">;
def NNX_FnLogicalOrOp : NNX_FnBinaryOp<"logical_or", "logical", "a | b">;
def NNX_FnLogicalXorOp : NNX_FnBinaryOp<"logical_xor", "logical", "a ^ b">;

//===----------------------------------------------------------------------===//
// where, matmul
//===----------------------------------------------------------------------===//

def NNX_FnWhereOp : NNX_FnOp<"where"> {
  let summary = "`torch.where(cond, a, b)`, broadcasting all three";
  let description = [{
    Element of `a` where `cond` holds, of `b` elsewhere; the three operands
    broadcast as for the binary ops. `cond` is i1, `a` and `b` have the
    result's element type. `x.masked_fill(m, v)` is `where(m, v, x)`.

    ```mlir
    %r = nnx.fn.where %cond, %a, %b : tensor<1x1x?x?xi1>, tensor<?x4x?x?xf32>, tensor<f32> -> tensor<?x4x?x?xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$cond, AnyRankedTensor:$a,
                       AnyRankedTensor:$b);
  let assemblyFormat = [{
    $cond `,` $a `,` $b attr-dict `:` type($cond) `,` type($a) `,` type($b)
    `->` type($result)
  }];
  let extraClassDefinition = NNX_FnFamily<"Where">.definition;
}

def NNX_FnMatmulOp : NNX_FnOp<"matmul"> {
  let summary = "`torch.matmul` on operands of rank >= 2";
  let description = [{
    `lhs[..., m, k] x rhs[..., k, n]`, or with `transpose_b`
    `lhs[..., m, k] x rhs[..., n, k]^T`. The leading (batch) dims broadcast
    as for the binary ops (right-aligned, static 1s broadcast, ranks may
    differ). Floats only. The canonicalizer folds a `nnx.fn.permute` that
    swaps the last two dims of `rhs` (and has no other use) into
    `transpose_b`.

    ```mlir
    %s = nnx.fn.matmul %q, %k {transpose_b} : tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x?x?xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$lhs, AnyRankedTensor:$rhs,
                       UnitAttr:$transpose_b);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasCanonicalizer = 1;
  let extraClassDefinition = NNX_FnFamily<"Matmul">.definition;
}

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

class NNX_FnShapeListOp<string mnemonic> : NNX_FnOp<mnemonic> {
  let arguments = (ins AnyRankedTensor:$input, Variadic<Index>:$shape,
                       DenseI64ArrayAttr:$static_shape);
  let assemblyFormat = [{
    $input custom<DynamicIndexList>($shape, $static_shape) attr-dict `:`
    type($input) `->` type($result)
  }];
  let extraClassDeclaration = [{
    /// The output shape: static sizes and `index` values.
    ::llvm::SmallVector<::mlir::OpFoldResult> getMixedShape();
  }];
  let extraClassDefinition = NNX_FnFamily<"ShapeList">.definition # [{
    ::llvm::SmallVector<::mlir::OpFoldResult> $cppClass::getMixedShape() {
      return ::mlir::getMixedValues(getStaticShape(), getShape(),
                                    getContext());
    }
  }];
}

def NNX_FnReshapeOp : NNX_FnShapeListOp<"reshape"> {
  let summary = "`torch.reshape` / `view` / `flatten` / `(un)squeeze`";
  let description = [{
    The list is the full output shape: static sizes and `index` values; the
    result type has `?` exactly where the list has a value. The elements are
    read and written in row-major order, so the element count must not
    change (checked when both shapes are static).

    ```mlir
    %v = nnx.fn.reshape %x [%b, %t, 4, 16] : tensor<?x?x64xf32> -> tensor<?x?x4x16xf32>
    ```
  }];
}

def NNX_FnExpandOp : NNX_FnShapeListOp<"expand"> {
  let summary = "`Tensor.expand` / `torch.broadcast_to`";
  let description = [{
    The list is the full output shape, as for `nnx.fn.reshape`. Input dims
    are right-aligned with it: an input dim of static size 1 may become any
    size, any other dim must keep its size (a dynamic input dim stays
    dynamic, assumed equal to the list's value at run time).

    ```mlir
    %e = nnx.fn.expand %kv [%b, 2, 2, %t, 16] : tensor<?x2x1x?x16xf32> -> tensor<?x2x2x?x16xf32>
    ```
  }];
}

def NNX_FnPermuteOp : NNX_FnOp<"permute"> {
  let summary = "`Tensor.permute` / `transpose(i, j)`";
  let description = [{
    Result dim `i` is input dim `permutation[i]`.

    ```mlir
    %h = nnx.fn.permute %v [0, 2, 1, 3] : tensor<?x?x4x16xf32> -> tensor<?x4x?x16xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input,
                       DenseI64ArrayAttr:$permutation);
  let assemblyFormat = [{
    $input custom<I64List>($permutation) attr-dict `:` type($input) `->`
    type($result)
  }];
  let extraClassDefinition = NNX_FnFamily<"Permute">.definition;
}

//===----------------------------------------------------------------------===//
// Row ops
//===----------------------------------------------------------------------===//

// An op whose result has the input's type.
class NNX_FnSameTypeOp<string mnemonic, list<Trait> traits = []>
    : NNX_FnOp<mnemonic, !listconcat(traits,
                                     [AllTypesMatch<["input", "result"]>])>;

def NNX_FnSoftmaxOp : NNX_FnSameTypeOp<"softmax"> {
  let summary = "`F.softmax` along `dim` (negative counts from the end)";
  let description = [{
    Max-subtracted, so a row's `-inf` entries give exact zeros (as torch).
    Floats only.

    ```mlir
    %p = nnx.fn.softmax %s {dim = -1 : i64} : tensor<?x4x?x?xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, I64Attr:$dim);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let extraClassDefinition = NNX_FnFamily<"Softmax">.definition;
}

class NNX_FnReduceOp<string mnemonic, string what> : NNX_FnOp<mnemonic> {
  let summary = "`torch." # mnemonic # "` over `dims`";
  let description = [{
    The }] # what # [{ over `dims` (negative counts from the end, no
    duplicates; empty: every dim, as torch's `dim=[]`). The reduced dims are
    dropped, or kept as static 1s with `keepdim`. `mean` needs floats; `sum`,
    `amax` and `amin` also take integers (not i1). `amax` / `amin` propagate
    NaN as torch does: a reduced slice holding a NaN gives NaN. `sum`
    accumulates in the element type. An empty reduced slice gives the
    identity (0 for `sum`, NaN for `mean`, -inf / +inf or the integer type's
    minimum / maximum for `amax` / `amin`, where torch raises).

    ```mlir
    %v = nnx.fn.}] # mnemonic # [{ %x {dims = array<i64: -1>, keepdim} : tensor<?x?x64xf32> -> tensor<?x?x1xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, DenseI64ArrayAttr:$dims,
                       UnitAttr:$keepdim);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let extraClassDeclaration = [{
    /// Which input dims the result keeps (the others are reduced).
    ::llvm::SmallVector<bool> getKeptDims() {
      return ::mlir::nnx::getReductionKeptDims(getDims(),
                                               getInput().getType().getRank());
    }
  }];
  let extraClassDefinition = NNX_FnFamily<"Reduce">.definition;
}

def NNX_FnMeanOp : NNX_FnReduceOp<"mean", "mean">;
def NNX_FnSumOp : NNX_FnReduceOp<"sum", "sum">;
def NNX_FnAmaxOp : NNX_FnReduceOp<"amax", "maximum">;
def NNX_FnAminOp : NNX_FnReduceOp<"amin", "minimum">;

//===----------------------------------------------------------------------===//
// Indexing, top-k, scans
//===----------------------------------------------------------------------===//

def NNX_FnGatherOp : NNX_FnOp<"gather"> {
  let summary = "`torch.gather(input, dim, index)`";
  let description = [{
    `index` has the input's rank and i64 or i32 elements; the result has the
    index's shape and the input's element type. For `dim = 1` of a rank-2
    input, `result[i][j] = input[i][index[i][j]]`; the other dims of the
    index must not exceed the input's (checked statically, and at run time
    for dynamic sizes). `dim` counts from the end when negative.

    Every index must lie in `[0, size)` of the input's dim `dim` (torch
    raises on a negative one too): the compiled code checks them before the
    gather and fails through the run-time failure channel with the op, its
    source label, the first bad index and the size (docs/Lowering.md), so no
    element is read out of bounds.

    ```mlir
    %r = nnx.fn.gather %x, %index {dim = 1 : i64} : tensor<?x8xf32>, tensor<?x2xi64> -> tensor<?x2xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, AnyRankedTensor:$index,
                       I64Attr:$dim);
  let assemblyFormat = [{
    $input `,` $index attr-dict `:` type($input) `,` type($index) `->`
    type($result)
  }];
  let extraClassDefinition = NNX_FnFamily<"Gather">.definition;
}

def NNX_FnIndexSelectOp : NNX_FnOp<"index_select"> {
  let summary = "`torch.index_select(input, dim, index)`";
  let description = [{
    `index` is rank 1 with i64 or i32 elements; the result is the input's
    shape with dim `dim` replaced by the index's length, and
    `result[..., j, ...] = input[..., index[j], ...]` along `dim` (negative
    counts from the end). An index outside `[0, size)` is a run-time error
    naming the op, as for `nnx.fn.gather`.

    ```mlir
    %r = nnx.fn.index_select %x, %index {dim = 0 : i64} : tensor<?x8xf32>, tensor<?xi64> -> tensor<?x8xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, AnyRankedTensor:$index,
                       I64Attr:$dim);
  let assemblyFormat = [{
    $input `,` $index attr-dict `:` type($input) `,` type($index) `->`
    type($result)
  }];
  let extraClassDefinition = NNX_FnFamily<"IndexSelect">.definition;
}

def NNX_FnTopkOp : Op<NNX_Dialect, "fn.topk", [
    Pure, NNX_FunctionalOpTrait,
    DeclareOpInterfaceMethods<ReifyRankedShapedTypeOpInterface,
                              ["reifyResultShapes"]>]> {
  let useCustomPropertiesEncoding = 1;
  let summary = "`torch.topk(input, k, dim, largest, sorted)`";
  let description = [{
    The `k` largest (with `largest`, else smallest) elements along `dim`
    (negative counts from the end) and their positions along it, as i64.
    Both results are the input's shape with dim `dim` replaced by `k`.
    Floats or integers (not i1). The order is torch's: largest first with
    `largest`, smallest first without, equal values in ascending position,
    and NaN compares larger than every number (so it comes first with
    `largest` and last without). Without `sorted` the results come in the
    same order. `k` is static and at most the size of `dim`: checked by the
    verifier when that size is static, at run time when it is dynamic.

    ```mlir
    %values, %indices = nnx.fn.topk %x {k = 2 : i64, dim = -1 : i64, largest, sorted} : tensor<?x8xf32> -> tensor<?x2xf32>, tensor<?x2xi64>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, I64Attr:$k, I64Attr:$dim,
                       UnitAttr:$largest, UnitAttr:$sorted);
  let results = (outs AnyRankedTensor:$values, AnyRankedTensor:$indices);
  let assemblyFormat = [{
    $input attr-dict `:` type($input) `->` type($values) `,` type($indices)
  }];
  let hasVerifier = 1;
  let extraClassDefinition = NNX_FnFamily<"Topk">.definition;
}

def NNX_FnCumsumOp : NNX_FnSameTypeOp<"cumsum"> {
  let summary = "`torch.cumsum(input, dim)`";
  let description = [{
    `result[..., j, ...]` is the sum of `input[..., 0..j, ...]` along `dim`
    (negative counts from the end), accumulated in the element type in
    ascending order (`((x0 + x1) + x2) + ...`, as torch's CPU kernel).
    Floats or integers (not i1; torch would promote those to i64).

    ```mlir
    %r = nnx.fn.cumsum %x {dim = 1 : i64} : tensor<?x?xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, I64Attr:$dim);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let extraClassDefinition = NNX_FnFamily<"Cumsum">.definition;
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

// F.max_pool2d / F.avg_pool2d: the leaf pools as functions, one shape rule and
// one lowering with them (Window.h, ConvLowering.h).
class NNX_FnPool2dOp<string mnemonic, string layer, dag extraArgs>
    : NNX_FnOp<mnemonic> {
  let summary = "`F." # mnemonic # "` on N x C x H x W: `nnx." # layer #
                "` as a function";
  let arguments = !con((ins AnyRankedTensor:$input,
      DenseI64ArrayAttr:$kernel_size, DenseI64ArrayAttr:$stride,
      DenseI64ArrayAttr:$padding), extraArgs);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let extraClassDeclaration = [{
    /// The sliding window of spatial dim `i` (0: H, 1: W).
    ::mlir::nnx::Window getWindow(unsigned i);
  }];
  let extraClassDefinition = NNX_FnFamily<"Pool2d">.definition;
}

def NNX_FnMaxPool2dOp : NNX_FnPool2dOp<"max_pool2d", "max_pool2d",
    (ins DenseI64ArrayAttr:$dilation, UnitAttr:$ceil_mode)> {
  let description = [{
    As the layer `nnx.max_pool2d`: the maximum of each window, padding
    (at most half the kernel) never chosen, `ceil_mode` by torch's rule, NaN
    propagating. The result's H and W follow torch's output-size rule; they
    are dynamic where the input's are.

    ```mlir
    %p = nnx.fn.max_pool2d %x {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>} : tensor<?x6x28x28xf32> -> tensor<?x6x14x14xf32>
    ```
  }];
}

def NNX_FnAvgPool2dOp : NNX_FnPool2dOp<"avg_pool2d", "avg_pool2d",
    (ins UnitAttr:$ceil_mode, UnitAttr:$count_include_pad)> {
  let description = [{
    As the layer `nnx.avg_pool2d`: the mean of each window, the divisor
    counting the zero padding with `count_include_pad` (torch's default for
    `F.avg_pool2d` too).

    ```mlir
    %p = nnx.fn.avg_pool2d %x {kernel_size = array<i64: 4, 4>, stride = array<i64: 4, 4>, padding = array<i64: 0, 0>, count_include_pad} : tensor<?x512x4x4xf32> -> tensor<?x512x1x1xf32>
    ```
  }];
}

def NNX_FnAdaptiveAvgPool2dOp : NNX_FnOp<"adaptive_avg_pool2d"> {
  let summary = "`F.adaptive_avg_pool2d` to an `output_size` (H, W)";
  let description = [{
    As the layer `nnx.adaptive_avg_pool2d`: the input's H and W must be
    multiples of `output_size` (checked at run time where dynamic), so the
    windows are equal and disjoint; `(1, 1)` is the global average pool.

    ```mlir
    %p = nnx.fn.adaptive_avg_pool2d %x {output_size = array<i64: 1, 1>} : tensor<?x64x?x?xf32> -> tensor<?x64x1x1xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input,
                       DenseI64ArrayAttr:$output_size);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let extraClassDefinition = NNX_FnFamily<"AdaptiveAvgPool2d">.definition;
}

//===----------------------------------------------------------------------===//
// Activations and dropout
//===----------------------------------------------------------------------===//

class NNX_FnActivationOp<string mnemonic, string kind, dag extraArgs = (ins)>
    : NNX_FnSameTypeOp<mnemonic, [NNX_FnActivationOpInterface]> {
  let summary = "`F." # mnemonic # "`: the leaf `nnx." # kind # "` as a function";
  let description = [{
    Same semantics and numerics as the leaf activation `nnx.}] # kind # [{`
    (its attributes of the same name included). Floats only, except `relu`,
    which also takes integers.

    ```mlir
    %y = nnx.fn.}] # mnemonic # [{ %x : tensor<?x?x64xf32>
    ```
  }];
  let arguments = !con((ins AnyRankedTensor:$input), extraArgs);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let extraClassDeclaration = [{
    ::mlir::nnx::ActivationKind getActivationKind() {
      return ::mlir::nnx::ActivationKind::}] # kind # [{;
    }
  }];
  let extraClassDefinition = NNX_FnFamily<"Activation">.definition;
}

def NNX_FnReluOp : NNX_FnActivationOp<"relu", "relu">;
def NNX_FnSigmoidOp : NNX_FnActivationOp<"sigmoid", "sigmoid">;
def NNX_FnSiluOp : NNX_FnActivationOp<"silu", "silu">;
def NNX_FnGeluOp : NNX_FnActivationOp<"gelu", "gelu", (ins
    DefaultValuedAttr<NNX_GeluApproximationAttr,
                      "GeluApproximation::none">:$approximate)>;

def NNX_FnDropoutOp : NNX_FnSameTypeOp<"dropout"> {
  let summary = "`F.dropout`: the identity unless `train`";
  let description = [{
    Without `train` (or with `p = 0`) the op folds to its input. With
    `train` it is the leaf `nnx.dropout` in train mode: each element is
    zeroed with probability `p` (in [0, 1]) and the rest scaled by
    `1/(1-p)`, with the counter-based hash of `seed` (docs/Lowering.md).
    Floats only.

    ```mlir
    %d = nnx.fn.dropout %x {p = 1.000000e-01 : f64} : tensor<?x?x64xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input,
                       DefaultValuedAttr<F64Attr, "0.5">:$p, UnitAttr:$train,
                       DefaultValuedAttr<I64Attr, "0">:$seed);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasFolder = 1;
  let extraClassDefinition = NNX_FnFamily<"Dropout">.definition;
}

//===----------------------------------------------------------------------===//
// Factories
//===----------------------------------------------------------------------===//

def NNX_FnArangeOp : NNX_FnOp<"arange"> {
  let summary = "`torch.arange(n)`: 0, 1, ..., n-1";
  let description = [{
    A rank-1 tensor of integers or floats. The size is `n`; a static result
    size is allowed (then `n` must be that size at run time).

    ```mlir
    %i = nnx.fn.arange %t : tensor<?xi64>
    ```
  }];
  let arguments = (ins Index:$n);
  let assemblyFormat = "$n attr-dict `:` type($result)";
  let extraClassDefinition = NNX_FnFamily<"Arange">.definition;
}

class NNX_FnTriangleOp<string mnemonic, string keep>
    : NNX_FnSameTypeOp<mnemonic> {
  let summary = "`torch." # mnemonic # "` over the last two dims";
  let description = [{
    Keeps the elements (row `i`, column `j` of the last two dims) with
    `}] # keep # [{` and zeroes (false) the others. Rank >= 2, any element
    type.

    ```mlir
    %l = nnx.fn.}] # mnemonic # [{ %m {diagonal = 0 : i64} : tensor<?x?xi1>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input,
                       DefaultValuedAttr<I64Attr, "0">:$diagonal);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let extraClassDeclaration = [{
    static constexpr bool isLower() { return }] #
      !if(!eq(mnemonic, "tril"), "true", "false") # [{; }
  }];
  let extraClassDefinition = NNX_FnFamily<"Triangle">.definition;
}

def NNX_FnTrilOp : NNX_FnTriangleOp<"tril", "j - i <= diagonal">;
def NNX_FnTriuOp : NNX_FnTriangleOp<"triu", "j - i >= diagonal">;

//===----------------------------------------------------------------------===//
// Guards
//===----------------------------------------------------------------------===//

def NNX_FnGuardOp : Op<NNX_Dialect, "fn.guard", [
    NNX_FunctionalOpTrait, AllTypesMatch<["lhs", "rhs"]>,
    MemoryEffects<[MemWrite]>]> {
  let summary = "A decision the exported Python made on run-time sizes";
  let description = [{
    The forward was recorded on the assumption that `lhs predicate rhs`
    holds (`arith.cmpi` predicates, signed): the model's Python branched or
    asserted on a run-time size (`if x.shape[0] > 3:`, `assert t <=
    block_size`, `x.size(1) % 8 == 0`) and the example runs took one way.
    At run time a call whose sizes take the other way fails with `message`
    ("{0}" stands for `lhs`, "{1}" for `rhs`), which names the model's
    source line and the condition as written, instead of computing what
    the other branch of the Python would not have computed.

    The op has no result; it is kept where it stands (a side effect, like
    `cf.assert`). A guard whose operands are constants for which the
    predicate holds folds away; `nnx-lower-functional` lowers the others to
    a run-time check (RuntimeChecks.h).

    ```mlir
    %b = tensor.dim %x, %c0 : tensor<?x8xf32>
    nnx.fn.guard sgt, %b, %c3, "model.py:12: `x.shape[0] > 3` was True when exported; this call has {0} > {1}" : index
    ```
  }];
  let arguments = (ins Arith_CmpIPredicateAttr:$predicate,
                       AnySignlessIntegerOrIndex:$lhs,
                       AnySignlessIntegerOrIndex:$rhs,
                       StrAttr:$message);
  let assemblyFormat = [{
    $predicate `,` $lhs `,` $rhs `,` $message attr-dict `:` type($lhs)
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
  let useCustomPropertiesEncoding = 1;
}

#endif // NNX_FN_OPS_TD
