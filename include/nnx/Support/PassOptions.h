//===- PassOptions.h - nnx passes refuse an option given twice --*- C++ -*-===//
//
// MLIR's pass option parser hands each `key=value` to llvm::cl, which lets
// an option occur any number of times and keeps the last value:
// `--nnx-widen="layer=fc1 width=4 width=8"` would widen to 8 without a word.
// Every nnx pass derives from NNXOperationPass (its ODS base,
// `NNX_Pass` in nnx/Support/PassBase.td), whose initializeOptions refuses
// a key given twice before MLIR parses the string; the nnx pipelines are
// registered through registerNNXPassPipeline, which checks theirs.
//
//===----------------------------------------------------------------------===//
#ifndef NNX_SUPPORT_PASSOPTIONS_H
#define NNX_SUPPORT_PASSOPTIONS_H

#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"

#include <functional>
#include <string>

namespace mlir::nnx {

/// Fails through `errorHandler` when a key of `options`, the option string
/// of pass or pipeline `name` ("layer=fc1 width=4"), is given more than
/// once; split as MLIR's pass option parser splits it (a value may be
/// quoted or braced and then holds spaces).
LogicalResult
checkOptionsGivenOnce(StringRef name, StringRef options,
                      function_ref<LogicalResult(const Twine &)> errorHandler);

/// mlir::OperationPass whose options are each given at most once.
template <typename OpT = void>
class NNXOperationPass : public ::mlir::OperationPass<OpT> {
public:
  LogicalResult initializeOptions(
      StringRef options,
      function_ref<LogicalResult(const Twine &)> errorHandler) override {
    if (failed(
            checkOptionsGivenOnce(this->getArgument(), options, errorHandler)))
      return failure();
    return ::mlir::OperationPass<OpT>::initializeOptions(options, errorHandler);
  }

protected:
  using ::mlir::OperationPass<OpT>::OperationPass;
};

/// PassPipelineRegistration<Options>, with the option string checked by
/// checkOptionsGivenOnce before it is parsed; `build` fills the pipeline
/// or fails through the error handler (options that do not fit together).
template <typename Options>
void registerNNXPassPipeline(
    StringRef arg, StringRef description,
    std::function<LogicalResult(OpPassManager &, const Options &,
                                function_ref<LogicalResult(const Twine &)>)>
        build) {
  std::string name = arg.str();
  registerPassPipeline(
      arg, description,
      [name, build](OpPassManager &pm, StringRef text,
                    function_ref<LogicalResult(const Twine &)> errorHandler) {
        if (failed(checkOptionsGivenOnce(name, text, errorHandler)))
          return failure();
        Options options;
        if (failed(options.parseFromString(text)))
          return failure();
        return build(pm, options, errorHandler);
      },
      [](function_ref<void(const ::mlir::detail::PassOptions &)> optHandler) {
        optHandler(Options());
      });
}

} // namespace mlir::nnx

#endif // NNX_SUPPORT_PASSOPTIONS_H
