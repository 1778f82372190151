//===- NNXDialect.cpp - nnx dialect -----------------------------*- C++ -*-===//
#include "nnx/Dialect/NNX/IR/NNXDialect.h"
#include "nnx/Dialect/NNX/IR/NNXOps.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::nnx;

#include "nnx/Dialect/NNX/IR/NNXDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "nnx/Dialect/NNX/IR/NNXAttrs.cpp.inc"

void NNXDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "nnx/Dialect/NNX/IR/NNXAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "nnx/Dialect/NNX/IR/NNXOps.cpp.inc"
      >();
}
