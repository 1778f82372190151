//===- MulAdd.h - the multiply-add body of a contraction --------*- C++ -*-===//
//
// The body the CPU matmul schedule recognizes (nnx-apply-cpu-schedule), and
// that nnx's elementwise fusion therefore never fuses into.
//
//===----------------------------------------------------------------------===//
#ifndef NNX_CONVERSION_LINALGTOCPU_MULADD_H
#define NNX_CONVERSION_LINALGTOCPU_MULADD_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::nnx {

/// Whether `op`'s body is `out + a * b` on floats (either order of either
/// operation), `a` and `b` its two inputs (each possibly `arith.extf`-ed: a
/// bf16 / f16 contraction accumulating in f32) and `out` its init.
bool isMulAddBody(linalg::GenericOp op);

} // namespace mlir::nnx

#endif // NNX_CONVERSION_LINALGTOCPU_MULADD_H
