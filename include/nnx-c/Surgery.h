//===- Surgery.h - C API: model surgery and recipes ---------------*- C -*-===//
//
// One C function per surgery pass and recipe step (docs/Surgery.md,
// docs/Recipes.md). Each runs the pass, with the given options, on every
// nnx.model of `module`, exactly as `nnx-opt --<pass>=...` does, and returns
// whether it succeeded.
//
// Errors: on failure the diagnostics, printed as nnx-opt prints them
// (`file:line:col: error: nnx-widen: ...`, then their notes, one per line),
// are passed to `onError(text, userData)` in one call; `onError` may be
// NULL. A refused surgery leaves the module unchanged, as the passes do.
//
// Strings: an MlirStringRef with length 0 selects the pass's default.
//
//===----------------------------------------------------------------------===//
#ifndef NNX_C_SURGERY_H
#define NNX_C_SURGERY_H

#include "mlir-c/IR.h"
#include "mlir-c/Support.h"

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

//===----------------------------------------------------------------------===//
// Surgery
//===----------------------------------------------------------------------===//

/// nnx-widen: the Linear or convolution at `layer` gets `width` outputs
/// (Net2Net). `init`: "copy" (default) or "zero".
MLIR_CAPI_EXPORTED MlirLogicalResult
nnxWiden(MlirModule module, MlirStringRef layer, int64_t width, uint64_t seed,
         bool throughBatchNorm, MlirStringRef init, MlirStringCallback onError,
         void *userData);

/// nnx-prune: keep `keep` units of the Linear or convolution at `layer`, or
/// `heads` query heads of an attention module; `importance`: an .npy file of
/// one float per unit (default: the weight norms).
MLIR_CAPI_EXPORTED MlirLogicalResult
nnxPrune(MlirModule module, MlirStringRef layer, int64_t keep, int64_t heads,
         MlirStringRef importance, MlirStringCallback onError, void *userData);

/// nnx-grow-attention: `heads`, `kvHeads`, `headDim` after the edit (0: keep).
MLIR_CAPI_EXPORTED MlirLogicalResult nnxGrowAttention(
    MlirModule module, MlirStringRef layer, int64_t heads, int64_t kvHeads,
    int64_t headDim, uint64_t seed, MlirStringCallback onError, void *userData);

/// nnx-widen-residual: d_model becomes `width`.
MLIR_CAPI_EXPORTED MlirLogicalResult
nnxWidenResidual(MlirModule module, int64_t width, uint64_t seed,
                 MlirStringCallback onError, void *userData);

/// nnx-deepen: an identity layer after the ReLU at `after`; `kernelSize`:
/// the identity convolution's window after a convolution site (0: 3).
MLIR_CAPI_EXPORTED MlirLogicalResult nnxDeepen(MlirModule module,
                                               MlirStringRef after,
                                               int64_t kernelSize,
                                               MlirStringCallback onError,
                                               void *userData);

/// nnx-insert-block: a function-preserving copy of the block at `after`.
MLIR_CAPI_EXPORTED MlirLogicalResult nnxInsertBlock(MlirModule module,
                                                    MlirStringRef after,
                                                    MlirStringCallback onError,
                                                    void *userData);

/// nnx-drop-layer: the module at `layer` becomes an identity, or (`remove`)
/// a block leaves its nnx.module_list.
MLIR_CAPI_EXPORTED MlirLogicalResult nnxDropLayer(MlirModule module,
                                                  MlirStringRef layer,
                                                  bool remove,
                                                  MlirStringCallback onError,
                                                  void *userData);

/// nnx-low-rank: SVD factorization of the Linear or convolution at `layer`.
MLIR_CAPI_EXPORTED MlirLogicalResult nnxLowRank(MlirModule module,
                                                MlirStringRef layer,
                                                int64_t rank,
                                                MlirStringCallback onError,
                                                void *userData);

/// nnx-expand-embedding: the Embedding at `layer` gets `num` rows; `init`:
/// "zeros" (default) or "copy_mean".
MLIR_CAPI_EXPORTED MlirLogicalResult nnxExpandEmbedding(
    MlirModule module, MlirStringRef layer, int64_t num, MlirStringRef init,
    MlirStringCallback onError, void *userData);

//===----------------------------------------------------------------------===//
// Recipes and LoRA
//===----------------------------------------------------------------------===//

/// nnx-record-base: each model's structure becomes its base descriptor.
MLIR_CAPI_EXPORTED MlirLogicalResult nnxRecordBase(MlirModule module,
                                                   MlirStringCallback onError,
                                                   void *userData);

/// Appends a pending `lora` operation (targets, r, alpha) to the recipe of
/// the module's only nnx.model (an empty in-place recipe when it has none).
/// Only the recipe changes: nnxValidateRecipe checks it,
/// nnxMaterializeRecipe applies it, both check r, alpha and the targets.
/// Refused: a module without exactly one model, no targets.
MLIR_CAPI_EXPORTED MlirLogicalResult nnxRecipeAddLora(
    MlirModule module, const MlirStringRef *targets, intptr_t numTargets,
    int64_t r, double alpha, MlirStringCallback onError, void *userData);

/// Appends a pending `low_rank` operation (targets, rank), as above.
MLIR_CAPI_EXPORTED MlirLogicalResult nnxRecipeAddLowRank(
    MlirModule module, const MlirStringRef *targets, intptr_t numTargets,
    int64_t rank, MlirStringCallback onError, void *userData);

/// nnx-validate-recipe: every problem of the pending operations, reported;
/// nothing changes.
MLIR_CAPI_EXPORTED MlirLogicalResult nnxValidateRecipe(
    MlirModule module, MlirStringCallback onError, void *userData);

/// nnx-materialize-recipe: applies the pending operations (all or nothing).
MLIR_CAPI_EXPORTED MlirLogicalResult
nnxMaterializeRecipe(MlirModule module, uint64_t seed,
                     MlirStringCallback onError, void *userData);

/// nnx-rebuild: each model rebuilt from base descriptor + recorded recipe,
/// its own tensors loaded into it.
MLIR_CAPI_EXPORTED MlirLogicalResult nnxRebuild(MlirModule module,
                                                MlirStringCallback onError,
                                                void *userData);

/// LoRA in one step, what PEFT's get_peft_model does: records the base
/// descriptor (unless the model has one), appends a `lora` operation and
/// materializes the recipe. All or nothing: on failure the module is left
/// as it was.
MLIR_CAPI_EXPORTED MlirLogicalResult
nnxLoraApply(MlirModule module, const MlirStringRef *targets,
             intptr_t numTargets, int64_t r, double alpha, uint64_t seed,
             MlirStringCallback onError, void *userData);

/// nnx-lora-merge: folds the adapter of the nnx.lora at `layer` (every one
/// when empty) into its weight.
MLIR_CAPI_EXPORTED MlirLogicalResult nnxLoraMerge(MlirModule module,
                                                  MlirStringRef layer,
                                                  MlirStringCallback onError,
                                                  void *userData);

/// nnx-lora-unmerge: the inverse of nnxLoraMerge, up to rounding.
MLIR_CAPI_EXPORTED MlirLogicalResult nnxLoraUnmerge(MlirModule module,
                                                    MlirStringRef layer,
                                                    MlirStringCallback onError,
                                                    void *userData);

//===----------------------------------------------------------------------===//
// Any pipeline
//===----------------------------------------------------------------------===//

/// Runs a textual pass pipeline anchored on the module, as nnx-opt's
/// --pass-pipeline takes it ("builtin.module(nnx.model(nnx-widen{layer=fc1
/// width=16}))"), with the same error reporting as the functions above: a
/// pipeline that does not parse (an unknown pass or option) reports why.
/// The passes must be registered (nnxRegisterAllPasses).
MLIR_CAPI_EXPORTED MlirLogicalResult
nnxRunPassPipeline(MlirModule module, MlirStringRef pipeline,
                   MlirStringCallback onError, void *userData);

#ifdef __cplusplus
}
#endif

#endif // NNX_C_SURGERY_H
