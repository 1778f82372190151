//===- NNXPrecompiled.h - headers most of lib/ includes ---------*- C++ -*-===//
//
// The upstream headers that most sources of lib/ include, precompiled once
// per library when the compiler is clang (CMakeLists.txt,
// NNX_PRECOMPILED_HEADERS): parsing them was most of each source's compile
// time. Only upstream headers: a header of nnx's own (or a generated one)
// here would rebuild every library whenever it changed. Each source still
// includes what it uses; this list only changes build time.
//
//===----------------------------------------------------------------------===//
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"
