//===- ModuleTree.h - dotted paths, aliases, shapes, counts -----*- C++ -*-===//
//
// The C++ API over the module tree that verifiers, passes, tools and the
// Python bindings share: dotted-path lookup over nested symbol tables, alias
// resolution, the forward type function of every module, and parameter counts.
//
//===----------------------------------------------------------------------===//
#ifndef NNX_DIALECT_NNX_IR_MODULETREE_H
#define NNX_DIALECT_NNX_IR_MODULETREE_H

#include "nnx/Dialect/NNX/IR/NNXOps.h"
#include <optional>
#include <string>

namespace mlir::nnx {

/// Splits a dotted path ("layers.0") into its segments; "" gives none.
llvm::SmallVector<llvm::StringRef> splitPath(llvm::StringRef path);

/// True for what a container registers under a key: modules and aliases.
/// An `nnx.module`'s `nnx.forward` is a symbol of the same table (named
/// `@forward`) but not a child.
bool isRegisteredChild(Operation *op);

/// True for the containers with no forward of their own (`nnx.module_list`,
/// `nnx.module_dict`): their owner's forward runs their children by path.
bool isForwardlessContainer(Operation *op);

/// The module or `nnx.alias` registered under `key` directly inside
/// `container`, or null.
Operation *lookupChild(Operation *container, llvm::StringRef key);

/// Follows an alias to the module it names (paths from the root module);
/// returns `op` itself if it is a module, null if the alias dangles. Each
/// alias is followed at most once per resolution, so this terminates on any
/// IR: when the target path runs through an alias that is being resolved (an
/// alias cycle, e.g. `@a = @a::@r`), returns null and sets `*cycle` to that
/// alias.
ModuleOpInterface resolveAlias(Operation *op, AliasOp *cycle = nullptr);

/// The op `ref` names below `scope`: the root reference is a child of
/// `scope`, each nested reference a child of the module before it (aliases on
/// the way are followed as `resolveAlias` does; a final alias is returned as
/// is). Null if a step names nothing; `*cycle` as for `resolveAlias`.
Operation *resolveReference(Operation *scope, SymbolRefAttr ref,
                            AliasOp *cycle = nullptr);

/// A module reachable from `from` (`from` itself, its children and theirs,
/// aliases followed, each module visited once) that is `op` or one of its
/// ancestors, or null. Non-null means that `op` running or registering
/// `from` would make a module contain (or run) itself.
ModuleOpInterface findContainerReachableFrom(ModuleOpInterface from,
                                             Operation *op);

/// The op registered at `path` below `root` (aliases inside the path are
/// followed; the last segment may name an alias, which is returned as is).
/// On failure, `failedSegment` receives the index of the segment that named
/// nothing.
Operation *lookupRegistered(ModuleOpInterface root, llvm::StringRef path,
                            unsigned *failedSegment = nullptr);

/// The module at dotted `path` of `model` ("" is the root), aliases resolved.
/// Returns failure with a message naming the failing segment.
FailureOr<ModuleOpInterface> lookupModule(ModelOp model, llvm::StringRef path,
                                          std::string *whyNot = nullptr);

/// The dotted path of `op` relative to its model's root module ("" for the
/// root itself).
std::string getModulePath(Operation *op);

/// The enclosing model of any op in the tree, or null.
ModelOp getParentModel(Operation *op);

/// How messages name the module of `op`: its dotted path, or "<root>".
std::string getDisplayPath(Operation *op);

/// `op->emitOpError()` prefixed with where `op` is in its model: "at
/// 'body.fc': " for a module or an alias, "in the forward of 'body': " for
/// an op of a forward region, nothing outside a model.
InFlightDiagnostic emitModuleError(Operation *op);

/// Every `nnx.alias` in the model that resolves to `module`.
llvm::SmallVector<AliasOp> getAliasesOf(ModuleOpInterface module);

/// Every `nnx.alias` in the model that resolves to `module` or to one of the
/// modules that contain it: each one is another path that reaches `module`.
llvm::SmallVector<AliasOp> getAliasesReaching(ModuleOpInterface module);

/// Parameter elements of `module` and all modules below it; a module reached
/// through an alias is counted once; nullopt when the count overflows 64 bits.
std::optional<int64_t> getParameterCount(ModuleOpInterface module);

/// The forward type function: the types `module` returns for `inputs`. On
/// failure, emits an error at `loc` if one is given (StableHLO's
/// emitOptionalError pattern), so verifiers and passes share one check.
FailureOr<llvm::SmallVector<Type>>
inferForwardTypes(Operation *module, TypeRange inputs,
                  std::optional<Location> loc);

/// Feature sizes (last dimension) a module consumes and produces, where
/// the module fixes them (leaves answer through LayerOpInterface).
FeatureSignature getFeatureSignature(Operation *module);

/// How a leaf layer's output features depend on its input features
/// (LayerOpInterface); std::nullopt for containers and aliases.
std::optional<FeatureDependence> getFeatureDependence(Operation *op);

/// True for layers whose FeatureDependence is Elementwise (activations
/// except softmax, dropout, identity).
bool isElementwiseModule(Operation *op);

} // namespace mlir::nnx

#endif // NNX_DIALECT_NNX_IR_MODULETREE_H
