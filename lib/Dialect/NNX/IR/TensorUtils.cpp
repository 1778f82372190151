//===- TensorUtils.cpp - reading and making parameter tensors ---*- C++ -*-===//
#include "nnx/Dialect/NNX/IR/TensorUtils.h"

#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

using namespace mlir;

static double toDouble(APFloat v) {
  bool lost = false;
  v.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &lost);
  return v.convertToDouble();
}

/// The raw row-major bytes behind a dense_resource attribute, if loaded.
static std::optional<ArrayRef<char>> resourceData(ElementsAttr attr) {
  auto res = dyn_cast<DenseResourceElementsAttr>(attr);
  if (!res)
    return std::nullopt;
  AsmResourceBlob *blob = res.getRawHandle().getBlob();
  if (!blob)
    return std::nullopt;
  return blob->getData();
}

FailureOr<std::vector<double>> mlir::nnx::decodeFloatTensor(ArrayRef<char> data,
                                                            ShapedType type) {
  auto fty = dyn_cast<FloatType>(type.getElementType());
  if (!fty)
    return failure();
  unsigned bits = fty.getWidth();
  int64_t n = type.getNumElements();
  if ((bits != 16 && bits != 32 && bits != 64) ||
      (int64_t)data.size() != n * (int64_t)(bits / 8))
    return failure();
  std::vector<double> out;
  out.reserve(n);
  const char *p = data.data();
  for (int64_t i = 0; i < n; ++i) {
    if (bits == 32) {
      float f;
      std::memcpy(&f, p + 4 * i, 4);
      out.push_back(f);
    } else if (bits == 64) {
      double d;
      std::memcpy(&d, p + 8 * i, 8);
      out.push_back(d);
    } else {
      uint16_t raw;
      std::memcpy(&raw, p + 2 * i, 2);
      out.push_back(toDouble(APFloat(fty.getFloatSemantics(), APInt(16, raw))));
    }
  }
  return out;
}

FailureOr<std::vector<double>> mlir::nnx::readTensor(ElementsAttr attr) {
  auto type = cast<ShapedType>(attr.getType());
  auto fty = dyn_cast<FloatType>(type.getElementType());
  if (!fty)
    return failure();
  if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
    std::vector<double> out;
    out.reserve(type.getNumElements());
    if (fty.isF32() && !dense.isSplat()) {
      for (float v : dense.getValues<float>())
        out.push_back(v);
      return out;
    }
    for (APFloat v : dense.getValues<APFloat>())
      out.push_back(toDouble(v));
    return out;
  }
  std::optional<ArrayRef<char>> data = resourceData(attr);
  if (!data)
    return failure();
  return decodeFloatTensor(*data, type);
}

/// The row-major little-endian bytes of `values` rounded to `fty`.
static std::vector<char> encodeFloats(FloatType fty, ArrayRef<double> values) {
  std::vector<char> raw;
  unsigned bytes = fty.getWidth() / 8;
  raw.resize(values.size() * bytes);
  for (auto [i, v] : llvm::enumerate(values)) {
    if (fty.isF64()) {
      std::memcpy(&raw[i * 8], &v, 8);
      continue;
    }
    if (fty.isF32()) {
      float f = static_cast<float>(v);
      std::memcpy(&raw[i * 4], &f, 4);
      continue;
    }
    APFloat a(v);
    bool lost = false;
    a.convert(fty.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
    uint64_t word = a.bitcastToAPInt().getZExtValue();
    std::memcpy(&raw[i * bytes], &word, bytes);
  }
  return raw;
}

ElementsAttr mlir::nnx::makeTensor(ShapedType type, ArrayRef<double> values) {
  auto fty = cast<FloatType>(type.getElementType());
  std::vector<char> raw = encodeFloats(fty, values);
  bool splat = llvm::all_equal(values);
  if (splat || raw.size() <= kMaxDenseTensorBytes) {
    if (splat && !values.empty())
      raw.resize(fty.getWidth() / 8);
    return DenseElementsAttr::getFromRawBuffer(type, raw);
  }
  // A blob in the resource section, never a uniqued DenseElementsAttr.
  return DenseResourceElementsAttr::get(
      type, "nnx_tensor",
      HeapAsmResourceBlob::allocateAndCopyWithAlign(raw, fty.getWidth() / 8));
}

DenseElementsAttr mlir::nnx::toDenseElements(ElementsAttr attr) {
  if (auto dense = dyn_cast<DenseElementsAttr>(attr))
    return dense;
  std::optional<ArrayRef<char>> data = resourceData(attr);
  auto type = cast<ShapedType>(attr.getType());
  if (!data || type.getElementType().isInteger(1))
    return {};
  unsigned bits = type.getElementTypeBitWidth();
  if ((int64_t)data->size() != type.getNumElements() * (int64_t)(bits / 8))
    return {};
  return DenseElementsAttr::getFromRawBuffer(type, *data);
}
