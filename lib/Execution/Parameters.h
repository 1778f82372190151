//===- Parameters.h - a compiled forward's weights --------------*- C++ -*-===//
//
// A forward built with parameters as arguments (nnx-build-forward's
// default) takes each parameter after its inputs. ParameterBindings holds
// what the compiled model binds there: the stored bytes of each tensor (a
// mapped safetensors file, shared; inline tensors copied once) and the
// layout the compiled code asked for (`nnx.parameter_layouts`: the CPU
// schedule reads a Linear's weight as K x N and a conv's as kh x kw x C x
// F). The runtime (nnx-aot/Runtime.h, nnx_aot_bind) permutes them once into
// that layout and places them in the target's memory when it has its own.
//
//===----------------------------------------------------------------------===//
#ifndef NNX_LIB_EXECUTION_PARAMETERS_H
#define NNX_LIB_EXECUTION_PARAMETERS_H

#include "nnx/Dialect/NNX/IR/Weights.h"
#include "nnx/Execution/CompiledModel.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace mlir::nnx {

/// The spec of a forward argument or result of type `type` (CompiledModel.cpp).
llvm::Expected<TensorSpec> makeTensorSpec(Type type, std::string name);

class ParameterBindings {
public:
  /// The layout an argument wants: the stored row-major tensor viewed as
  /// `view` (the stored shape, or a split of it), then permuted by `perm`
  /// (empty: as stored).
  struct Layout {
    llvm::SmallVector<int64_t, 4> view, perm;
  };

  /// Reads the parameters `forward` lists (`nnx.parameters`, arguments
  /// `numInputs`... of it) and, with `readData`, binds their stored bytes
  /// (diagnostics at the layer, through the forward's argument locations).
  llvm::Error readForward(func::FuncOp forward, size_t numInputs,
                          bool readData);
  /// Binds the tensors of the safetensors file at `path` instead: each
  /// parameter's key must be there with its dtype and shape.
  llvm::Error readWeightsFile(llvm::StringRef path);
  /// Reads the layouts the lowered forward asks for (`nnx.parameter_layouts`
  /// of `forward`, any function-like op).
  llvm::Error readLayouts(Operation *forward);
  /// The same from that attribute (null: every parameter as stored).
  llvm::Error readLayouts(DictionaryAttr layouts);
  /// Drops from memory the pages of the mapped tensors the code reads in
  /// another layout (madvise), once the runtime has permuted them.
  void dropPermutedPages() const;

  llvm::ArrayRef<TensorSpec> getSpecs() const { return specs; }
  llvm::ArrayRef<std::string> getKeys() const { return keys; }
  /// The slice of its stored tensor each parameter is (none: the whole
  /// tensor, or not an #nnx.external parameter).
  llvm::ArrayRef<TensorSlices> getSlices() const { return slices; }
  /// The bound bytes of each parameter, as stored (empty when the forward
  /// was read without its data).
  llvm::ArrayRef<TensorData> getStored() const { return stored; }
  /// The layouts readLayouts() read, one per parameter.
  llvm::ArrayRef<Layout> getLayouts() const { return layouts; }

private:
  /// As stored: dtype, shape (the model's), dotted name.
  std::vector<TensorSpec> specs;
  /// The key of each parameter in a weights file.
  std::vector<std::string> keys;
  std::vector<TensorSlices> slices;
  /// The bound bytes, as stored.
  std::vector<TensorData> stored;
  std::vector<Layout> layouts;
};

/// Prints `module` without what differs between copies of one program:
/// the parameters' tensors (`nnx.parameters`: a tensor-parallel rank's
/// slices, another checkpoint) and the weights file's path (a host's),
/// which the lowered code takes as arguments and never reads; with the
/// locations when `withLocations` (run-time errors quote them).
void printProgram(ModuleOp module, llvm::raw_ostream &os, bool withLocations);

} // namespace mlir::nnx

#endif // NNX_LIB_EXECUTION_PARAMETERS_H
