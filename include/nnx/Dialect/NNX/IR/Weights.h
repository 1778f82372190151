//===- Weights.h - where a parameter tensor's bytes come from ---*- C++ -*-===//
//
// A parameter or buffer of a model is a tensor attribute of one of three
// kinds: `dense<...>` (small tensors written inline), `dense_resource<...>`
// (a blob in the file's resource section) or `#nnx.external<"key">` (a
// tensor of the model's safetensors weights file). This header gives every
// tool one way to reach the bytes of any of them without copying: the
// runner passes them to the compiled forward, surgery reads their values.
// It also lists a model's tensors (getModelTensors), the one enumeration the
// weights passes (nnx-externalize-weights, nnx-internalize-weights) share.
//
//===----------------------------------------------------------------------===//
#ifndef NNX_DIALECT_NNX_IR_WEIGHTS_H
#define NNX_DIALECT_NNX_IR_WEIGHTS_H

#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "mlir/Support/LLVM.h"

#include "llvm/ADT/StringMap.h"

#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace mlir::nnx {

class ExternalTensorAttr;
class ModelOp;
class SafeTensorsFile;
struct SafeTensorInfo;

/// The weights files open in a context (NNXDialect::getWeightsFiles()), by
/// absolute path.
class WeightsFileCache {
public:
  std::shared_ptr<SafeTensorsFile> lookup(StringRef path);
  void insert(StringRef path, std::shared_ptr<SafeTensorsFile> file);
  void erase(StringRef path);

private:
  std::mutex mutex;
  llvm::StringMap<std::shared_ptr<SafeTensorsFile>> files;
};

/// The bytes of a tensor, row-major and little-endian, as stored: a view of
/// the attribute's storage, of the mapped weights file, or of a copy that
/// `owner` keeps alive (a splat expanded, a misaligned tensor realigned).
/// `bytes.data()` is aligned to the element size.
struct TensorData {
  ArrayRef<char> bytes;
  std::shared_ptr<const void> owner;
  /// Whether `bytes` view a read-only file mapping (a weights file).
  bool mapped = false;
};

/// The absolute path of `model`'s weights file: its `weights` attribute, a
/// relative path taken relative to the directory of the file the model was
/// parsed from (its location), else to the current directory. nullopt if
/// the model names none.
std::optional<std::string> resolveWeightsPath(ModelOp model);

/// The safetensors file at `path`, mapped once per context and shared; a
/// missing or malformed file is a diagnostic at `loc`.
FailureOr<std::shared_ptr<SafeTensorsFile>>
openWeightsFile(MLIRContext *context, StringRef path, Location loc);

/// Drops `path` from the context's cache of open weights files (a tool that
/// rewrites the file calls this first).
void forgetWeightsFile(MLIRContext *context, StringRef path);

/// The bytes a tensor of `type` takes as nnx stores it (row-major, i1 as a
/// byte), or nullopt when the shape is dynamic or the size overflows.
std::optional<uint64_t> getStoredByteSize(ShapedType type);

/// The largest inline tensor (a `dense<...>` splat is one element in the IR)
/// whose bytes getTensorData materializes.
inline constexpr uint64_t kMaxExpandedTensorBytes = uint64_t(16) << 30;

/// The bytes of `attr`. An #nnx.external tensor is looked up in
/// `weightsPath` (empty: there is no weights file, an error) and its dtype
/// and shape checked against the attribute's type; a sliced one's runs are
/// checked against the stored shape and gathered into an owned copy (a
/// whole one is a view of the mapping). Problems are diagnostics
/// at `loc` naming `what` ("tensor 'weight' of 'body.fc'").
FailureOr<TensorData> getTensorData(ElementsAttr attr, StringRef weightsPath,
                                    Location loc, const Twine &what);

/// The slice an #nnx.external tensor names, per dim of the stored tensor:
/// runs (start, length, start, length, ...) gathered in order; an empty
/// list takes the whole dim. No entries: the whole stored tensor.
using TensorSlices = SmallVector<SmallVector<int64_t, 4>, 4>;

/// The `slices` of `ext` (none when it names the whole stored tensor).
TensorSlices getTensorSlices(ExternalTensorAttr ext);

/// Whether `slices` of a stored tensor of shape `stored` give a tensor of
/// shape `shape`: the same rank, an empty entry's stored dim equal to the
/// shape's, every run inside its stored dim, a non-empty entry's lengths
/// summing to the shape's dim. The problem in words ("dim 0's run (start
/// 80, length 32) runs past the stored dim of 96"), or "" when none.
std::string checkTensorSlices(ArrayRef<int64_t> stored,
                              const TensorSlices &slices,
                              ArrayRef<int64_t> shape);

/// The elements `slices` (checked: checkTensorSlices) pick from the tensor
/// `info` of `file`, gathered row-major into an owned buffer aligned to 64
/// bytes.
TensorData gatherTensorSlices(const SafeTensorsFile &file,
                              const SafeTensorInfo &info,
                              const TensorSlices &slices);

/// getTensorData for the tensor `name` of `op`, an op inside an nnx.model
/// whose weights file holds its #nnx.external tensors.
FailureOr<TensorData> getTensorData(Operation *op, StringRef name);

/// The weights file of the nnx.model enclosing `op` (resolveWeightsPath),
/// or "" when there is no model or it names no file.
std::string getEnclosingWeightsPath(Operation *op);

//===----------------------------------------------------------------------===//
// The tensors of a model
//===----------------------------------------------------------------------===//

/// One tensor attribute of a module: a leaf's parameter or buffer (an
/// attribute of the op), or an entry of a container's `state`.
struct ModelTensor {
  Operation *module;
  StringAttr name;
  ElementsAttr value;
  /// True for an entry of the container's `state` dictionary.
  bool inState;

  /// "tensor 'weight' of 'body.fc'" (the root module is '<root>').
  std::string describe() const;
  /// The dotted name: the module's path, ".", the tensor's name (just the
  /// name for the root module's tensors), as nnx-build-forward names
  /// parameters.
  std::string getDottedName() const;
};

/// Every tensor of the modules of `model`: modules in pre-order (a module
/// reached through an alias is listed once, at its own path), a leaf's
/// parameters then buffers in declaration order, a container's `state` in
/// name order. Tensors a leaf does not set are not listed.
SmallVector<ModelTensor> getModelTensors(ModelOp model);

/// Checks that the external tensors among `tensors` (of `model`) have a
/// weights file to be read from: when the model names none or its file is
/// missing or malformed, emits one error, on the module of the first
/// external tensor, naming that tensor (after `prefix`), its key and the
/// file, so that a tool reading every tensor reports the file once.
/// Succeeds when no tensor is external.
LogicalResult checkWeightsFile(ModelOp model, ArrayRef<ModelTensor> tensors,
                               StringRef prefix);

/// Replaces the value of `tensor` (the attribute of a leaf, the entry of a
/// container's `state`) by `value`.
void setModelTensor(const ModelTensor &tensor, ElementsAttr value);

} // namespace mlir::nnx

#endif // NNX_DIALECT_NNX_IR_WEIGHTS_H
