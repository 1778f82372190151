//===- ModelJIT.h - machine code of a lowered model, cached -----*- C++ -*-===//
//
// The compiled code of a model: its LLVM-dialect module translated to LLVM
// IR, optimized and compiled to an object for the host, then loaded into an
// ORC LLJIT. The object can be kept in a compile cache, a directory of
// objects keyed by a SHA-256 of everything that decides the machine code
// (the LLVM IR before optimization, the optimization level, the target
// triple, CPU and features, the LLVM version). A later compile of the same
// IR for the same machine loads the object instead of running LLVM's
// optimizer and code generator again, which is most of the compile time.
//
// An entry holds a header (a magic word and the SHA-256 of its object), so
// a truncated or corrupt file is recompiled and replaced, never loaded.
// Entries are written to a temporary file and renamed into place: compiles
// running concurrently against one cache never see half an entry
// (CompileCache.h, which also keeps the lowerings that name the objects).
//
// The module's constructors and destructors (`llvm.global_ctors`, e.g. the
// CUDA pipeline's module load) become two functions the object exports and
// the JIT calls after loading and before unloading: they run the same from
// a fresh compile and from a cached object.
//
//===----------------------------------------------------------------------===//
#ifndef NNX_LIB_EXECUTION_MODELJIT_H
#define NNX_LIB_EXECUTION_MODELJIT_H

#include "mlir/IR/BuiltinOps.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ExecutionEngine/Orc/Core.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"
#include "llvm/Support/Error.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace llvm {
class JITEventListener;
class TargetMachine;
namespace orc {
class JITTargetMachineBuilder;
class LLJIT;
} // namespace orc
} // namespace llvm

namespace mlir::nnx {

/// The prefix of the C-interface functions (`llvm.emit_c_interface`): the
/// entry points drivers call, each taking its memrefs as descriptors. Only
/// they get a packed wrapper (`_mlir_<prefix><name>`, lookupPacked).
inline constexpr llvm::StringLiteral kCInterfacePrefix = "_mlir_ciface_";

/// How a module becomes machine code.
struct ModelJITOptions {
  /// LLVM's optimization and code generation level (0-3).
  unsigned optLevel = 3;
  /// Shared libraries the code calls into (libomp), loaded for good.
  llvm::ArrayRef<std::string> sharedLibPaths;
  /// Symbols the JIT defines for the code (the allocator, run-time checks).
  llvm::ArrayRef<
      std::function<llvm::orc::SymbolMap(llvm::orc::MangleAndInterner)>>
      symbolMaps;
  /// A directory of cached objects (created if absent); empty: none.
  std::string cacheDir;
  /// Register the code with `perf` (a jitdump file).
  bool perfListener = false;
};

/// Compiles `module` (LLVM dialect) to a relocatable, position-independent
/// object for the host, ahead of time: the same translation, packed
/// wrappers, optimization and code generation as the JIT (so the code
/// computes the same bits), then every definition internal except the
/// packed wrappers of `exported` (`_mlir_<name>`) and the constructor and
/// destructor functions, which are renamed `<prefix><symbol>`
/// (`<prefix>__nnx_jit_init`, `<prefix>__nnx_jit_fini`), so that several
/// models link into one program. A non-empty `embedded` is added as the
/// exported constant bytes `<prefix>weights` (64-byte aligned). `features`
/// gets those of `checkedFeatures` (LLVM's names: "avx2", ...) the code may
/// use: the host's, less what the functions' `target-features` turn off
/// (a max-isa cap).
llvm::Expected<std::string>
compileObjectAheadOfTime(ModuleOp module, unsigned optLevel,
                         llvm::ArrayRef<std::string> exported,
                         llvm::StringRef prefix, llvm::StringRef embedded,
                         llvm::ArrayRef<llvm::StringRef> checkedFeatures,
                         std::vector<std::string> &features);

/// What decides the machine code the JIT makes of a module at `optLevel`
/// besides the module: the LLVM version, the host's triple, CPU and
/// features, the level, the optimizer's pipeline (part of both cache keys,
/// CompileCache.h).
llvm::Expected<std::string> describeHostMachine(unsigned optLevel);

/// A loaded object; runs the module's destructors when destroyed.
class ModelJIT {
public:
  /// Compiles `module` (LLVM dialect) for the host, or loads its object from
  /// the cache, runs its constructors and returns it.
  static llvm::Expected<std::unique_ptr<ModelJIT>>
  create(ModuleOp module, const ModelJITOptions &options);
  /// Loads the object cached under `objectKey` in `options.cacheDir` and
  /// runs its constructors; null when the cache has no whole entry of it.
  static llvm::Expected<std::unique_ptr<ModelJIT>>
  createFromCache(llvm::StringRef objectKey, const ModelJITOptions &options);
  ~ModelJIT();

  /// The packed wrapper of function `name` (`void(void **)`: a pointer to
  /// each argument, then one to the result), as upstream's ExecutionEngine
  /// names it (`_mlir_<name>`).
  llvm::Expected<void (*)(void **)> lookupPacked(llvm::StringRef name) const;

  /// The object code (ELF) of the module.
  llvm::StringRef getObject() const;
  /// Whether the object came from the compile cache.
  bool isFromCache() const { return fromCache; }
  /// The object's key in the compile cache (empty: compiled without one).
  llvm::StringRef getObjectKey() const { return objectKey; }

private:
  ModelJIT();
  /// What gives a new ModelJIT's object for the host's machine (null:
  /// none, then no ModelJIT either).
  using ObjectSource =
      llvm::function_ref<llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>(
          llvm::TargetMachine &, const ModelJITOptions &, ModelJIT &)>;
  /// A ModelJIT of `getObject`'s object, loaded, or null.
  static llvm::Expected<std::unique_ptr<ModelJIT>>
  createWith(const ModelJITOptions &options, ObjectSource getObject);
  /// Loads `object` into a JIT for `machine` and runs its constructors.
  llvm::Error load(llvm::orc::JITTargetMachineBuilder builder,
                   llvm::TargetMachine &machine,
                   const ModelJITOptions &options);

  std::unique_ptr<llvm::orc::LLJIT> jit;
  std::unique_ptr<llvm::MemoryBuffer> object;
  /// LLVM's (a static instance): registered, never deleted.
  llvm::JITEventListener *perfListener = nullptr;
  std::string objectKey;
  bool fromCache = false;
  bool initialized = false;
};

} // namespace mlir::nnx

#endif // NNX_LIB_EXECUTION_MODELJIT_H
