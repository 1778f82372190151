//===- Window.cpp - sliding windows of convolutions and pooling -----------===//
#include "nnx/Dialect/NNX/IR/Window.h"
#include "nnx/Dialect/NNX/IR/WindowRange.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/Support/CheckedArithmetic.h"

using namespace mlir;
using namespace mlir::nnx;

LogicalResult
mlir::nnx::verifyWindowRange(const Window &w,
                             function_ref<InFlightDiagnostic()> emitError,
                             unsigned dim) {
  if (w.stride > kMaxWindowStride)
    return emitError() << "stride " << w.stride << " in dim " << dim
                       << " is more than 2^62 (" << kMaxWindowStride << ")";
  // 2 p + d (k - 1) + 1, in checked arithmetic.
  std::optional<int64_t> reach = llvm::checkedMul(w.dilation, w.kernel - 1);
  std::optional<int64_t> pads = llvm::checkedMul<int64_t>(2, w.padding);
  std::optional<int64_t> extent =
      reach && pads ? llvm::checkedAdd(*reach, *pads) : std::nullopt;
  if (!extent || *extent >= kMaxWindowExtent)
    return emitError() << "window in dim " << dim << " spans more than 2^60 ("
                       << kMaxWindowExtent << ") with its padding: 2 * padding "
                       << w.padding << " + dilation " << w.dilation
                       << " * (kernel_size " << w.kernel << " - 1) + 1";
  return success();
}

LogicalResult mlir::nnx::verifyWindowedSize(
    int64_t size, function_ref<InFlightDiagnostic()> emitError, unsigned dim) {
  if (size <= kMaxWindowExtent)
    return success();
  return emitError() << "takes an input of size " << size << " in dim " << dim
                     << ", more than 2^60 (" << kMaxWindowExtent << ")";
}

int64_t Window::outputSize(int64_t size) const {
  if (ShapedType::isDynamic(size))
    return size;
  int64_t room = size + 2 * padding - span();
  if (room < 0)
    return 0;
  int64_t steps = (room + (ceilMode ? stride - 1 : 0)) / stride;
  // torch: in ceil mode the last window must start inside the input or its
  // left padding.
  if (ceilMode && steps * stride >= size + padding)
    --steps;
  return steps + 1;
}

Value Window::outputSize(OpBuilder &b, Location loc, Value size) const {
  auto c = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  Value room = arith::SubIOp::create(
      b, loc, arith::AddIOp::create(b, loc, size, c(2 * padding)), c(span()));
  if (ceilMode)
    room = arith::AddIOp::create(b, loc, room, c(stride - 1));
  Value steps = arith::DivUIOp::create(b, loc, room, c(stride));
  if (ceilMode) {
    Value start = arith::MulIOp::create(b, loc, steps, c(stride));
    Value limit = arith::AddIOp::create(b, loc, size, c(padding));
    Value past =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, start, limit);
    Value one = c(1);
    steps = arith::SubIOp::create(
        b, loc, steps, arith::SelectOp::create(b, loc, past, one, c(0)));
  }
  return arith::AddIOp::create(b, loc, steps, c(1));
}

Value Window::extraPadding(OpBuilder &b, Location loc, Value size,
                           Value outputSize) const {
  auto c = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  if (!ceilMode)
    return c(0);
  // (out - 1) s + span - (size + 2 p), at least 0.
  Value last = arith::MulIOp::create(
      b, loc, arith::SubIOp::create(b, loc, outputSize, c(1)), c(stride));
  Value need = arith::SubIOp::create(
      b, loc, arith::AddIOp::create(b, loc, last, c(span())),
      arith::AddIOp::create(b, loc, size, c(2 * padding)));
  return arith::MaxSIOp::create(b, loc, need, c(0));
}
