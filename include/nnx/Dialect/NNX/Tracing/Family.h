//===- Family.h - standardized tracing names per model family ---*- C++ -*-===//
//
// A family definition maps standardized names (`layer_input`,
// `attention_output`, ...) to paths on a model's native module tree. It is
// data the user writes (JSON, see docs/Tracing.md), loaded here; no C++ per
// family.
//
//===----------------------------------------------------------------------===//
#ifndef NNX_DIALECT_NNX_TRACING_FAMILY_H
#define NNX_DIALECT_NNX_TRACING_FAMILY_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/JSON.h"
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mlir::nnx::tracing {

/// `select=`: a positional index, or a keyword argument's name.
struct Select {
  std::optional<int64_t> index;
  std::string keyword;
  bool isKeyword() const { return !index; }
  std::string str() const;
};

/// "Unavailable when the model's config says so": `config` is looked up on
/// the host module and then its ancestors (`config` dictionaries of
/// `nnx.module`s); the condition holds when the entry equals `equals`.
struct Condition {
  std::string config;
  llvm::json::Value equals = true;
  std::string reason;
};

/// One standardized value.
struct ValueDef {
  std::string name;
  std::string host; // a key of Family::hosts
  std::string path; // the path grammar (docs/Tracing.md)
  std::optional<Select> select;
  bool copy = false; // read a copy taken before in-place updates
  std::optional<std::string> unavailable;
  std::vector<Condition> unavailableIf;
  std::string conditionRef; // a key of Family::conditions, if named
  std::string description;
};

struct Family {
  std::string name;
  std::string file;
  std::string description;
  /// native -> standard. A dotted native path is taken from the root; a
  /// single key renames that key wherever it appears.
  std::map<std::string, std::string> renames;
  /// host name -> standard path pattern from the root; one `*` segment
  /// ranges over the children of a list (`layers.*`).
  std::map<std::string, std::string> hosts;
  /// host name -> the module classes the family is written for (`class` of
  /// an nnx.module, else the op name, e.g. `nnx.linear`); a host without an
  /// entry takes any class. The host of pattern "" ties the whole model.
  std::map<std::string, std::vector<std::string>> classes;
  /// Named condition lists, referenced by `unavailable_if: "<name>"`; a
  /// family that extends another overrides one list for every value.
  std::map<std::string, std::vector<Condition>> conditions;
  /// Values by standardized name (sorted).
  std::map<std::string, ValueDef> values;
};

/// The conditions of `value`: its own list or the named one.
const std::vector<Condition> &getConditions(const Family &family,
                                            const ValueDef &value);

/// The families directory: `override` if non-empty, else the directory
/// compiled in (the source tree's `families/`). No environment variable is
/// read here: drivers pass $NNX_FAMILIES_DIR as the override
/// (nnx/Support/Environment.h).
std::string getFamiliesDir(StringRef override = {});

/// Loads family `nameOrPath`: a path to a file (contains '/' or ends in
/// `.json`) or a name looked up as `<familiesDir>/<name>.json`. `extends`
/// chains are followed. On failure, returns nullopt and sets `error`.
std::optional<Family> loadFamily(StringRef nameOrPath, StringRef familiesDir,
                                 std::string &error);

} // namespace mlir::nnx::tracing

#endif // NNX_DIALECT_NNX_TRACING_FAMILY_H
