//===- TransformTestFixture.h - parse, print, capture -----------*- C++ -*-===//
//
// The fixture the surgery and recipe tests share: a context with the nnx
// dialect, the error diagnostics it emitted, and parse/print helpers (a
// refused edit must leave the printed IR byte-identical).
//
//===----------------------------------------------------------------------===//
#ifndef NNX_UNITTESTS_TRANSFORMS_TRANSFORMTESTFIXTURE_H
#define NNX_UNITTESTS_TRANSFORMS_TRANSFORMTESTFIXTURE_H

#include "nnx/Dialect/NNX/IR/NNXDialect.h"
#include "nnx/Dialect/NNX/IR/NNXOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>
#include <string>
#include <vector>

namespace mlir::nnx {

class TransformTest : public ::testing::Test {
protected:
  TransformTest()
      : handler(&ctx, [this](Diagnostic &d) {
          if (d.getSeverity() == DiagnosticSeverity::Error)
            errors.push_back(d.str());
          return success();
        }) {
    ctx.loadDialect<NNXDialect, arith::ArithDialect>();
  }

  OwningOpRef<ModuleOp> parse(llvm::StringRef src) {
    return parseSourceString<ModuleOp>(src, &ctx);
  }
  static ModelOp firstModel(ModuleOp m) {
    return cast<ModelOp>(m.getBody()->front());
  }
  static std::string print(Operation *op) {
    std::string s;
    llvm::raw_string_ostream os(s);
    op->print(os);
    return s;
  }

  MLIRContext ctx;
  std::vector<std::string> errors;
  ScopedDiagnosticHandler handler;
};

} // namespace mlir::nnx

#endif // NNX_UNITTESTS_TRANSFORMS_TRANSFORMTESTFIXTURE_H
