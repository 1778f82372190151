//===- Resolver.h - tracing paths to locations of the forward ---*- C++ -*-===//
//
// Resolves standardized names (through a Family) and the seed's path grammar
// to a location at structure level: a module op or an op inside an
// `nnx.forward` region, an input or output point, and an index. The
// execution order of the model's forward decides which requests are in order.
//
//===----------------------------------------------------------------------===//
#ifndef NNX_DIALECT_NNX_TRACING_RESOLVER_H
#define NNX_DIALECT_NNX_TRACING_RESOLVER_H

#include "nnx/Dialect/NNX/IR/NNXOps.h"
#include "nnx/Dialect/NNX/Tracing/Family.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::nnx::tracing {

/// Where a value lives at structure level.
struct ProbeLocation {
  Operation *op = nullptr; // a module op, or an op in a forward region
  bool onModule = false;
  bool output = true;
  unsigned index = 0;
  std::string describe() const;
};

/// A note attached to a diagnostic.
using Note = std::pair<Operation *, std::string>;

/// The model's forward as executed: every module and forward op gets a span
/// (position before, position after) and an execution count.
class ExecutionOrder {
public:
  explicit ExecutionOrder(ModelOp model);
  unsigned count(Operation *op) const { return counts.lookup(op); }
  /// Position of a location (input: before the op, output: after it).
  unsigned position(const ProbeLocation &loc) const;
  /// The `nnx.call` that runs `module`, if it runs through one.
  Operation *callSite(Operation *module) const { return calls.lookup(module); }

private:
  void visitModule(Operation *op, Operation *call);
  void visitOp(Operation *op);
  unsigned next = 0;
  llvm::DenseMap<Operation *, std::pair<unsigned, unsigned>> spans;
  llvm::DenseMap<Operation *, unsigned> counts;
  llvm::DenseMap<Operation *, Operation *> calls;
};

/// The outcome of resolving one name or path.
struct Resolution {
  enum Kind { Available, Unavailable, Error } kind = Error;
  ProbeLocation location;
  std::string message; // the reason (Unavailable) or the error (Error)
  llvm::SmallVector<Note> notes;
  const ValueDef *def = nullptr;
  bool ok() const { return kind == Available; }
};

class Resolver {
public:
  Resolver(const Family &family, ModelOp model);

  /// Every standardized name of the model (e.g. `layers.0.layer_input`), in
  /// report order: values without a list host first, then per instance.
  /// On a host that does not resolve, sets `error`.
  std::vector<std::string> listNames(std::string &error);

  /// Resolves a standardized name. `forWrite` selects write semantics (no
  /// copy redirect).
  Resolution resolve(StringRef name, bool forWrite);

  /// Resolves `path` (the grammar of docs/Tracing.md) from `host`.
  Resolution resolvePath(ModuleOpInterface host, StringRef path,
                         const std::optional<Select> &select, bool copy,
                         bool forWrite);

  const ExecutionOrder &getOrder() const { return order; }

private:
  /// The steps of one resolvePath, with the error that stops it.
  class PathWalk;

  /// Steps from `from` along standardized segments (renames, then native
  /// keys, then `nnx.alias`es). Returns the module, or null with `failed`
  /// set to the index of the segment that named nothing.
  ModuleOpInterface walkStandard(ModuleOpInterface from,
                                 ArrayRef<StringRef> segs, unsigned &failed);
  /// Unavailable with the family's reason when a condition of `def` holds
  /// on `host`; an error naming the condition when its config key is defined
  /// by no `config` of a model that has some (a typo would make it "never
  /// holds"); nullopt when none holds.
  /// An error when `host` (or the model's root) is of a class the family
  /// does not list for it (Family::classes).
  std::optional<Resolution> checkClasses(StringRef name, const ValueDef &def,
                                         Operation *host);
  std::optional<Resolution> checkConditions(StringRef name, const ValueDef &def,
                                            Operation *host);
  /// The keys of every `config` dictionary in the model, computed once; empty
  /// when the model has no config.
  const llvm::StringSet<> &getConfigKeys();
  /// The error for a `name` whose host `hostSegs` stops at segment `failed`;
  /// at a list's `*` segment it says there is no such layer and how many the
  /// list holds.
  Resolution missingHost(StringRef name, const ValueDef &def,
                         ArrayRef<StringRef> hostSegs, unsigned failed,
                         bool atStar);

  const Family &family;
  ModelOp model;
  ExecutionOrder order;
  std::optional<llvm::StringSet<>> configKeys;
};

} // namespace mlir::nnx::tracing

#endif // NNX_DIALECT_NNX_TRACING_RESOLVER_H
