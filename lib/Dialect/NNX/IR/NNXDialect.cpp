//===- NNXDialect.cpp - nnx dialect -----------------------------*- C++ -*-===//
#include "nnx/Dialect/NNX/IR/NNXDialect.h"
#include "nnx/Dialect/NNX/IR/NNXOps.h"

using namespace mlir;
using namespace mlir::nnx;

#include "nnx/Dialect/NNX/IR/NNXDialect.cpp.inc"

void NNXDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "nnx/Dialect/NNX/IR/NNXOps.cpp.inc"
      >();
}
