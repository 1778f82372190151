//===- Family.cpp - load family definitions (JSON) --------------*- C++ -*-===//
#include "nnx/Dialect/NNX/Tracing/Family.h"
#include "nnx/Support/InputGuard.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include <set>

using namespace mlir;
using namespace mlir::nnx::tracing;
namespace json = llvm::json;

#ifndef NNX_FAMILIES_DIR
#define NNX_FAMILIES_DIR "families"
#endif

std::string Select::str() const {
  if (index)
    return std::to_string(*index);
  return "\"" + keyword + "\"";
}

std::string mlir::nnx::tracing::getFamiliesDir(StringRef override) {
  if (!override.empty())
    return override.str();
  return NNX_FAMILIES_DIR;
}

const std::vector<Condition> &
mlir::nnx::tracing::getConditions(const Family &family, const ValueDef &value) {
  if (!value.conditionRef.empty()) {
    auto it = family.conditions.find(value.conditionRef);
    if (it != family.conditions.end())
      return it->second;
  }
  return value.unavailableIf;
}

namespace {
struct Loader {
  std::string familiesDir;
  std::string &error;
  std::set<std::string> loading; // files on the extends chain (cycles)

  bool fail(const std::string &file, const llvm::Twine &msg) {
    error = (llvm::Twine("family file '") + file + "': " + msg).str();
    return false;
  }

  std::string locate(StringRef nameOrPath, StringRef relativeTo) {
    if (nameOrPath.contains('/') || nameOrPath.ends_with(".json")) {
      if (llvm::sys::path::is_absolute(nameOrPath) || relativeTo.empty())
        return nameOrPath.str();
      llvm::SmallString<256> p(llvm::sys::path::parent_path(relativeTo));
      llvm::sys::path::append(p, nameOrPath);
      return std::string(p);
    }
    llvm::SmallString<256> p(familiesDir);
    llvm::sys::path::append(p, nameOrPath + ".json");
    return std::string(p);
  }

  bool parseConditions(const std::string &file, const json::Array &arr,
                       StringRef where, std::vector<Condition> &out) {
    for (const json::Value &v : arr) {
      const json::Object *o = v.getAsObject();
      if (!o)
        return fail(file, where + ": a condition must be an object");
      Condition c;
      auto config = o->getString("config");
      auto reason = o->getString("reason");
      if (!config || !reason)
        return fail(file,
                    where + ": a condition needs \"config\" and \"reason\"");
      c.config = config->str();
      c.reason = reason->str();
      if (const json::Value *eq = o->get("equals"))
        c.equals = *eq;
      for (const auto &kv : *o)
        if (!llvm::is_contained({"config", "reason", "equals"},
                                StringRef(kv.first)))
          return fail(file, where + ": unknown condition key \"" +
                                StringRef(kv.first) + "\"");
      out.push_back(std::move(c));
    }
    return true;
  }

  bool parseValue(const std::string &file, StringRef name,
                  const json::Object &o, Family &family) {
    std::string where = ("value \"" + name + "\"").str();
    ValueDef v;
    auto inherited = family.values.find(name.str());
    if (inherited != family.values.end()) {
      // A redefinition keeps the host and the description.
      v.host = inherited->second.host;
      v.description = inherited->second.description;
    }
    v.name = name.str();
    for (const auto &kv : o) {
      StringRef key = kv.first;
      const json::Value &val = kv.second;
      if (key == "host" || key == "path" || key == "description" ||
          key == "unavailable") {
        auto s = val.getAsString();
        if (!s)
          return fail(file, where + ": \"" + key + "\" must be a string");
        if (key == "host")
          v.host = s->str();
        else if (key == "path")
          v.path = s->str();
        else if (key == "description")
          v.description = s->str();
        else
          v.unavailable = s->str();
      } else if (key == "select") {
        Select sel;
        if (auto i = val.getAsInteger())
          sel.index = *i;
        else if (auto s = val.getAsString())
          sel.keyword = s->str();
        else
          return fail(file,
                      where + ": \"select\" must be an integer or a string");
        if (sel.index && *sel.index < 0)
          return fail(file, where + ": \"select\" must be >= 0");
        v.select = sel;
      } else if (key == "copy") {
        auto b = val.getAsBoolean();
        if (!b)
          return fail(file, where + ": \"copy\" must be true or false");
        v.copy = *b;
      } else if (key == "unavailable_if") {
        if (auto s = val.getAsString()) {
          v.conditionRef = s->str();
        } else if (const json::Array *arr = val.getAsArray()) {
          if (!parseConditions(file, *arr, where, v.unavailableIf))
            return false;
        } else {
          return fail(file, where + ": \"unavailable_if\" must name a "
                                    "condition list or be an array");
        }
      } else {
        return fail(file, where + ": unknown key \"" + key + "\"");
      }
    }
    if (v.host.empty())
      return fail(file, where + ": no \"host\"");
    if (v.path.empty() && !v.unavailable)
      return fail(file, where + ": needs a \"path\" or \"unavailable\"");
    family.values[v.name] = std::move(v);
    return true;
  }

  bool load(StringRef nameOrPath, StringRef relativeTo, Family &family) {
    std::string file = locate(nameOrPath, relativeTo);
    if (!loading.insert(file).second)
      return fail(file, "\"extends\" forms a cycle");
    auto buffer = llvm::MemoryBuffer::getFile(file);
    if (!buffer) {
      error = ("cannot read family '" + nameOrPath + "' (" + file +
               "): " + buffer.getError().message())
                  .str();
      return false;
    }
    // llvm::json::parse recurses once per level: refuse deep nesting first.
    StringRef text = (*buffer)->getBuffer();
    if (std::optional<size_t> at = mlir::nnx::findJsonDepthOverflow(
            text, mlir::nnx::kMaxJsonNestingDepth))
      return fail(file, "nesting deeper than " +
                            llvm::Twine(mlir::nnx::kMaxJsonNestingDepth) +
                            " levels at offset " + llvm::Twine(*at) +
                            " (the limit for JSON files, docs/Reliability.md)");
    json::Value root = nullptr;
    if (auto parsed = json::parse(text))
      root = std::move(*parsed);
    else
      return fail(file, llvm::toString(parsed.takeError()));
    const json::Object *o = root.getAsObject();
    if (!o)
      return fail(file, "the top level must be an object");

    if (const json::Value *ext = o->get("extends")) {
      auto s = ext->getAsString();
      if (!s)
        return fail(file, "\"extends\" must be a string");
      if (!load(*s, file, family))
        return false;
    }
    family.file = file;
    family.name = llvm::sys::path::stem(file).str();
    for (const auto &kv : *o) {
      StringRef key = kv.first;
      const json::Value &val = kv.second;
      if (key == "extends")
        continue;
      if (key == "name" || key == "description") {
        auto s = val.getAsString();
        if (!s)
          return fail(file, "\"" + key + "\" must be a string");
        (key == "name" ? family.name : family.description) = s->str();
      } else if (key == "rename" || key == "hosts") {
        const json::Object *m = val.getAsObject();
        if (!m)
          return fail(file, "\"" + key + "\" must be an object of strings");
        for (const auto &e : *m) {
          auto s = e.second.getAsString();
          if (!s)
            return fail(file, "\"" + key + "\": entry \"" + StringRef(e.first) +
                                  "\" must be a string");
          if (key == "rename")
            family.renames[e.first.str()] = s->str();
          else
            family.hosts[e.first.str()] = s->str();
        }
      } else if (key == "classes") {
        if (!parseClasses(file, val, family))
          return false;
      } else if (key == "conditions") {
        const json::Object *m = val.getAsObject();
        if (!m)
          return fail(file, "\"conditions\" must be an object of arrays");
        for (const auto &e : *m) {
          const json::Array *arr = e.second.getAsArray();
          if (!arr)
            return fail(file, "condition list \"" + StringRef(e.first) +
                                  "\" must be an array");
          std::vector<Condition> list;
          if (!parseConditions(
                  file, *arr, "condition list \"" + e.first.str() + "\"", list))
            return false;
          family.conditions[e.first.str()] = std::move(list);
        }
      } else if (key == "values") {
        const json::Object *m = val.getAsObject();
        if (!m)
          return fail(file, "\"values\" must be an object");
        for (const auto &e : *m) {
          const json::Object *vo = e.second.getAsObject();
          if (!vo)
            return fail(file, "value \"" + StringRef(e.first) +
                                  "\" must be an object");
          if (!parseValue(file, e.first, *vo, family))
            return false;
        }
      } else {
        return fail(file, "unknown key \"" + key + "\"");
      }
    }
    loading.erase(file);
    return true;
  }

  /// `"classes": {"<host>": ["<class>", ...]}`.
  bool parseClasses(const std::string &file, const json::Value &val,
                    Family &family) {
    const json::Object *m = val.getAsObject();
    if (!m)
      return fail(file, "\"classes\" must be an object of arrays of strings");
    for (const auto &e : *m) {
      const json::Array *arr = e.second.getAsArray();
      std::vector<std::string> names;
      for (const json::Value &c : arr ? *arr : json::Array()) {
        std::optional<StringRef> s = c.getAsString();
        if (!s || s->empty())
          return fail(file, "\"classes\": host \"" + StringRef(e.first) +
                                "\" must list non-empty strings");
        names.push_back(s->str());
      }
      if (!arr || names.empty())
        return fail(file, "\"classes\": host \"" + StringRef(e.first) +
                              "\" must be a non-empty array of strings");
      family.classes[e.first.str()] = std::move(names);
    }
    return true;
  }

  bool check(Family &family) {
    for (auto &[name, v] : family.values) {
      if (!family.hosts.count(v.host))
        return fail(family.file,
                    "value \"" + name + "\": unknown host \"" + v.host + "\"");
      if (!v.conditionRef.empty() && !family.conditions.count(v.conditionRef))
        return fail(family.file, "value \"" + name +
                                     "\": unknown condition list \"" +
                                     v.conditionRef + "\"");
    }
    for (auto &[host, classes] : family.classes)
      if (!family.hosts.count(host))
        return fail(family.file, "\"classes\": unknown host \"" + host + "\"");
    for (auto &[host, pattern] : family.hosts)
      if (llvm::count(pattern, '*') > 1)
        return fail(family.file,
                    "host \"" + host + "\": at most one '*' segment");
    return true;
  }
};
} // namespace

std::optional<Family> mlir::nnx::tracing::loadFamily(StringRef nameOrPath,
                                                     StringRef familiesDir,
                                                     std::string &error) {
  if (nameOrPath.empty()) {
    error = "no family given (family=<name or file>)";
    return std::nullopt;
  }
  Loader loader{familiesDir.str(), error, {}};
  Family family;
  if (!loader.load(nameOrPath, "", family) || !loader.check(family))
    return std::nullopt;
  return family;
}
