//===- Dialects.h - C API: the nnx dialect and nnx's passes -------*- C -*-===//
//
// Registration in the style of upstream's mlir-c/Dialect/*.h: a dialect
// handle for the nnx dialect, every dialect nnx IR uses (the C counterpart
// of nnx::registerNNXDialects) and nnx's passes and named pipelines, so that
// mlirParsePassPipeline and mlirOpPassManagerAddPipeline find them by name.
//
// These functions live in libNNXCAPI.a; the upstream C API they are used
// with (mlirContextCreate, mlirModuleCreateParse, ...) comes from MLIR's
// libMLIRCAPI*.a archives, which NNXCAPI links, on top of the shared
// libMLIR.so that nnx itself uses (docs/CAPI.md).
//
//===----------------------------------------------------------------------===//
#ifndef NNX_C_DIALECTS_H
#define NNX_C_DIALECTS_H

#include "mlir-c/IR.h"

#ifdef __cplusplus
extern "C" {
#endif

/// mlirGetDialectHandle__nnx__(): the nnx dialect alone (the structure
/// level: nnx.model, nnx.linear, ...).
MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(NNX, nnx);

/// Inserts into `registry` every dialect nnx IR uses at its three levels
/// (structure, forward, lowered) with their external interface models: what
/// nnx-opt registers. Append it to a context (mlirContextAppendDialectRegistry)
/// before parsing nnx IR or running nnx's passes.
MLIR_CAPI_EXPORTED void nnxRegisterAllDialects(MlirDialectRegistry registry);

/// Registers nnx's passes and named pipelines (nnx-widen, nnx-cpu-pipeline,
/// ...) and the upstream passes its pipelines name, in MLIR's global pass
/// registry. Idempotent.
MLIR_CAPI_EXPORTED void nnxRegisterAllPasses(void);

#ifdef __cplusplus
}
#endif

#endif // NNX_C_DIALECTS_H
