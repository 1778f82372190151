//===- Support.cpp - print standardized names and availability --*- C++ -*-===//
#include "nnx/Dialect/NNX/Tracing/Passes.h"
#include "nnx/Dialect/NNX/Tracing/Resolver.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/FormatVariadic.h"

namespace mlir::nnx {
#define GEN_PASS_DEF_NNXSUPPORTPASS
#include "nnx/Dialect/NNX/Tracing/Passes.h.inc"
} // namespace mlir::nnx

using namespace mlir;
using namespace mlir::nnx;
using namespace mlir::nnx::tracing;

namespace {
struct NNXSupportPass
    : public mlir::nnx::impl::NNXSupportPassBase<NNXSupportPass> {
  using Base::Base;

  void runOnOperation() override {
    std::string error;
    std::optional<Family> fam =
        loadFamily(family, getFamiliesDir(familiesDir), error);
    if (!fam) {
      auto models = getOperation().getOps<ModelOp>();
      Location loc =
          models.empty() ? getOperation().getLoc() : (*models.begin()).getLoc();
      emitError(loc) << "nnx-support: " << error;
      return signalPassFailure();
    }
    llvm::raw_ostream &os = llvm::outs();
    bool anyModel = false;
    for (ModelOp model : getOperation().getOps<ModelOp>()) {
      anyModel = true;
      Resolver resolver(*fam, model);
      os << "model @" << model.getSymName() << " family " << fam->name << "\n";
      std::vector<std::string> names = resolver.listNames(error);
      if (names.empty() && !error.empty()) {
        model.emitError() << "nnx-support: family '" << fam->name
                          << "': " << error;
        return signalPassFailure();
      }
      size_t width = 4;
      for (const std::string &n : names)
        width = std::max(width, n.size());
      for (const std::string &n : names) {
        Resolution r = resolver.resolve(n, /*forWrite=*/false);
        os << "  " << llvm::left_justify(n, width) << "  ";
        switch (r.kind) {
        case Resolution::Available:
          os << "available    " << r.location.describe();
          if (r.def && r.def->copy)
            os << " (a copy)";
          else if (!r.notes.empty())
            os << " (after an in-place update)";
          break;
        case Resolution::Unavailable:
          os << "unavailable  " << r.message;
          break;
        case Resolution::Error:
          os << "error        " << r.message;
          break;
        }
        os << "\n";
      }
    }
    if (!anyModel) {
      emitError(getOperation().getLoc()) << "nnx-support: no 'nnx.model'";
      return signalPassFailure();
    }
    markAllAnalysesPreserved();
  }
};
} // namespace
