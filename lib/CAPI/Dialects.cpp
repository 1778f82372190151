//===- Dialects.cpp - C API: the nnx dialect and nnx's passes -------------===//
#include "nnx-c/Dialects.h"

#include "nnx/Dialect/NNX/IR/NNXDialect.h"
#include "nnx/InitNNX.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Registration.h"

#include <mutex>

MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(NNX, nnx, mlir::nnx::NNXDialect)

void nnxRegisterAllDialects(MlirDialectRegistry registry) {
  nnx::registerNNXDialects(*unwrap(registry));
}

void nnxRegisterAllPasses(void) {
  // MLIR's registry refuses a named pipeline registered twice (a fatal
  // error), so a second call must do nothing.
  static std::once_flag once;
  std::call_once(once, [] { nnx::registerNNXPasses(); });
}
