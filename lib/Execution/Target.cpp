//===- Target.cpp - target names and dispatch
//------------------------------===//
#include "nnx/Execution/Target.h"

#include "nnx/Pipelines/Pipelines.h"

#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace mlir::nnx;

StringRef mlir::nnx::stringifyTarget(Target target) {
  switch (target) {
  case Target::CPU:
    return "cpu";
  case Target::CUDA:
    return "cuda";
  }
  llvm_unreachable("unknown target");
}

std::optional<Target> mlir::nnx::parseTarget(StringRef name) {
  return llvm::StringSwitch<std::optional<Target>>(name)
      .Case("cpu", Target::CPU)
      .Case("cuda", Target::CUDA)
      .Default(std::nullopt);
}

llvm::Error mlir::nnx::getTargetConfig(Target target, TargetConfig &config) {
  switch (target) {
  case Target::CPU:
    return configureCPUTarget(config);
  case Target::CUDA:
    return configureCUDATarget(config);
  }
  llvm_unreachable("unknown target");
}

llvm::Error mlir::nnx::parsePipelineOptions(mlir::detail::PassOptions &options,
                                            llvm::StringRef name,
                                            llvm::StringRef text) {
  std::string message;
  llvm::raw_string_ostream os(message);
  if (succeeded(options.parseFromString(text, os)))
    return llvm::Error::success();
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(), "%s options '%s': %s", name.str().c_str(),
      text.str().c_str(), llvm::StringRef(message).trim().str().c_str());
}

llvm::Error mlir::nnx::buildTargetStage(OpPassManager &pm,
                                        llvm::StringRef target,
                                        llvm::StringRef options) {
  NNXCompilePipelineOptions compile;
  compile.target = target.str();
  compile.targetOptions = options.str();
  std::string message;
  auto collect = [&](const llvm::Twine &error) {
    message = error.str();
    return failure();
  };
  if (failed(addNNXTargetStage(pm, compile, collect)))
    return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
  return llvm::Error::success();
}
