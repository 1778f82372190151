//===- Target.cpp - #nnx.target: the CPU code is generated for ------------===//
#include "nnx/Dialect/NNX/IR/Target.h"
#include "nnx/Support/TargetISA.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::nnx;

namespace {
/// A feature that, cleared, leaves at most `bits`-bit vectors.
struct VectorFeature {
  llvm::StringLiteral name;
  unsigned bits;
};
constexpr VectorFeature kVectorFeatures[] = {
    {"avx512f", 256}, {"avx2", 128}, {"fma", 128}, {"avx", 128}};
} // namespace

LogicalResult TargetAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 unsigned vectorBits, bool avx512BF16,
                                 StringRef features, StringRef cpu) {
  if (vectorBits != 128 && vectorBits != 256 && vectorBits != 512)
    return emitError() << "#nnx.target: vector_bits = " << vectorBits
                       << " is not a width nnx's CPU code knows (expected "
                          "128, 256 or 512)";
  if (avx512BF16 && vectorBits != 512)
    return emitError() << "#nnx.target: avx512_bf16 needs vector_bits = "
                          "512, got "
                       << vectorBits;
  SmallVector<StringRef> list;
  if (!features.empty())
    llvm::SplitString(features, list, ",");
  if (!features.empty() && list.size() != 1 + features.count(','))
    return emitError() << "#nnx.target: features = \"" << features
                       << "\" has an empty entry";
  for (StringRef feature : list) {
    if (!feature.starts_with("+") && !feature.starts_with("-"))
      return emitError() << "#nnx.target: feature '" << feature
                         << "' does not start with '+' or '-'";
    if (!feature.consume_front("-"))
      continue;
    for (const VectorFeature &cleared : kVectorFeatures)
      if (feature == cleared.name && vectorBits > cleared.bits)
        return emitError() << "#nnx.target: features = \"" << features
                           << "\" clear " << feature
                           << ", which vector_bits = " << vectorBits
                           << " needs";
    if (feature == "avx512bf16" && avx512BF16)
      return emitError() << "#nnx.target: features = \"" << features
                         << "\" clear avx512bf16, which avx512_bf16 needs";
  }
  return success();
}

TargetAttr mlir::nnx::getDefaultTarget(MLIRContext *context) {
  return TargetAttr::get(context, kDefaultTargetVectorBits,
                         /*avx512_bf16=*/false, /*features=*/"", /*cpu=*/"");
}

TargetAttr mlir::nnx::getModuleTarget(ModuleOp module) {
  if (auto target = module->getAttrOfType<TargetAttr>(kTargetAttrName))
    return target;
  return getDefaultTarget(module.getContext());
}

TargetAttr mlir::nnx::capTarget(TargetAttr target, unsigned capBits) {
  if (capBits == 0)
    return target;
  SmallVector<StringRef> features;
  if (!target.getFeatures().empty())
    llvm::SplitString(target.getFeatures(), features, ",");
  std::vector<std::string> cleared = capFeatures(capBits);
  for (const std::string &feature : cleared)
    if (!llvm::is_contained(features, feature))
      features.push_back(feature);
  return TargetAttr::get(target.getContext(),
                         std::min(target.getVectorBits(), capBits),
                         target.getAvx512Bf16() && capBits >= 512,
                         llvm::join(features, ","), target.getCpu());
}
