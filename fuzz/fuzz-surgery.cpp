//===- fuzz-surgery.cpp - the surgery passes with options from the input --===//
//
// The input is one line naming a surgery pass and its options, then the IR:
//
//   widen layer=body.0 width=8 seed=3
//   nnx.model @m { ... }
//
// The pass runs the way nnx-opt runs it, with the verifier after it: a pass
// on one model (nnx-widen, nnx-deepen, nnx-drop-layer, nnx-low-rank,
// nnx-expand-embedding, nnx-prune, nnx-insert-block, nnx-grow-attention,
// nnx-widen-residual, nnx-shard-tensor-parallel, nnx-lora-merge,
// nnx-lora-unmerge, nnx-record-base, nnx-validate-recipe, nnx-rebuild) on
// each top-level nnx.model in turn, a pass on the module
// (nnx-materialize-recipe, nnx-convert-float) on the module. Besides
// crashes, a finding is a refusal that changed the IR: each pass checks
// everything before it edits (Surgery.h), for one model at a time
// (nnx-materialize-recipe: for each model with a recipe).
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"

#include "nnx/Dialect/NNX/IR/NNXOps.h"
#include "nnx/InitNNX.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <cstdint>
#include <optional>

using namespace mlir;

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  ::nnx::registerNNXPasses();
  return 0;
}

namespace {
/// The pass a header line names.
struct Surgery {
  /// The pass's name without `nnx-`.
  std::string pass;
  /// `nnx-<pass>{<options>}`.
  std::string pipeline;
  /// Whether the pass runs on the module (else on each nnx.model).
  bool onModule;
  /// Whether a refusal must leave the whole module as it was (false for
  /// nnx-materialize-recipe over several models with recipes: each model's
  /// recipe is all or nothing, not the pass).
  bool wholeModuleRefusal = true;
};
} // namespace

/// The pass of the header line `line`, or none when it names no surgery
/// pass or holds characters an option value never needs.
static std::optional<Surgery> parseHeader(llvm::StringRef line) {
  auto [pass, options] = line.split(' ');
  bool onModule =
      llvm::is_contained({"materialize-recipe", "convert-float"}, pass);
  if (!onModule &&
      !llvm::is_contained(
          {"widen", "deepen", "drop-layer", "low-rank", "expand-embedding",
           "prune", "insert-block", "grow-attention", "widen-residual",
           "shard-tensor-parallel", "lora-merge", "lora-unmerge", "record-base",
           "validate-recipe", "rebuild"},
          pass))
    return std::nullopt;
  for (char c : options)
    if (!llvm::isAlnum(c) && !llvm::is_contained("_.=- ", c))
      return std::nullopt;
  return Surgery{pass.str(), ("nnx-" + pass + "{" + options + "}").str(),
                 onModule};
}

/// Runs `pm` on `op` (the module or one of its models); a refusal that
/// changed `module` is a finding.
static void runChecked(PassManager &pm, Operation *op, ModuleOp module,
                       const Surgery &surgery) {
  std::string before = nnxfuzz::printOp(module);
  if (succeeded(pm.run(op)))
    return;
  if (surgery.wholeModuleRefusal && nnxfuzz::printOp(module) != before)
    nnxfuzz::fail("surgery",
                  ("'" + surgery.pipeline + "' on '" +
                   op->getName().getStringRef() + "' failed and changed the IR")
                      .str());
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  auto [line, ir] =
      llvm::StringRef(reinterpret_cast<const char *>(data), size).split('\n');
  std::optional<Surgery> surgery = parseHeader(line);
  if (!surgery || ir.starts_with("ML\xEFR"))
    return -1;
  std::unique_ptr<MLIRContext> context = nnxfuzz::makeContext();
  PassManager pm(context.get(), surgery->onModule
                                    ? ModuleOp::getOperationName()
                                    : mlir::nnx::ModelOp::getOperationName());
  if (failed(parsePassPipeline(surgery->pipeline, pm, llvm::nulls())))
    return 0;
  OwningOpRef<ModuleOp> module;
  switch (nnxfuzz::parseInput(*context, ir, module)) {
  case nnxfuzz::ParseOutcome::ContainedCrash:
    nnxfuzz::fail("surgery", "MLIR's parser crashed on text that passed "
                             "checkParserInput");
  case nnxfuzz::ParseOutcome::Refused:
    return 0;
  case nnxfuzz::ParseOutcome::Parsed:
    break;
  }
  auto models = llvm::to_vector(module->getOps<mlir::nnx::ModelOp>());
  if (surgery->onModule) {
    surgery->wholeModuleRefusal =
        surgery->pass != "materialize-recipe" ||
        llvm::count_if(models, [](mlir::nnx::ModelOp m) {
          return bool(m.getRecipeAttr());
        }) <= 1;
    runChecked(pm, *module, *module, *surgery);
  } else {
    for (mlir::nnx::ModelOp model : models)
      runChecked(pm, model, *module, *surgery);
  }
  (void)nnxfuzz::printOp(*module);
  return 0;
}
