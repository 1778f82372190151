//===- Resolver.cpp - tracing paths to locations of the forward -*- C++ -*-===//
#include "nnx/Dialect/NNX/Tracing/Resolver.h"

#include "nnx/Dialect/NNX/IR/ModuleTree.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::nnx;
using namespace mlir::nnx::tracing;

static std::string displayPath(Operation *module) {
  std::string p = getModulePath(module);
  return p.empty() ? "<root>" : p;
}

static std::string opName(Operation *op) {
  return op->getName().getStringRef().str();
}

static std::string describeOp(Operation *op) {
  std::string s;
  if (auto label = op->getAttrOfType<StringAttr>(kSourceAttrName))
    s = "'source." + label.getValue().str() + "'";
  else
    s = "an unlabeled op";
  s += " (" + opName(op) + ")";
  if (auto owner = op->getParentOfType<CustomModuleOp>())
    s += " in the forward of '" + displayPath(owner) + "'";
  return s;
}

std::string ProbeLocation::describe() const {
  if (!op)
    return "<nothing>";
  std::string s =
      (output ? "output " : "input ") + std::to_string(index) + " of ";
  if (onModule)
    return s + "module '" + displayPath(op) + "' (" + opName(op) + ")";
  return s + describeOp(op);
}

//===----------------------------------------------------------------------===//
// ExecutionOrder
//===----------------------------------------------------------------------===//

ExecutionOrder::ExecutionOrder(ModelOp model) {
  if (ModuleOpInterface root = model.getRootModule())
    visitModule(root, nullptr);
}

void ExecutionOrder::visitModule(Operation *op, Operation *call) {
  ModuleOpInterface m = resolveAlias(op);
  if (!m)
    return;
  Operation *mo = m.getOperation();
  // A module that (through aliases) calls itself would recurse forever;
  // the verifier rejects such IR elsewhere, stop here.
  if (counts.lookup(mo) > 64)
    return;
  unsigned pre = next++;
  if (counts[mo]++ == 0 && call)
    calls[mo] = call;
  if (auto custom = dyn_cast<CustomModuleOp>(mo)) {
    if (ForwardOp fwd = custom.getForward())
      for (Operation &o : fwd.getBodyBlock())
        visitOp(&o);
  } else if (auto seq = dyn_cast<SequentialOp>(mo)) {
    for (Operation &c : seq.getBody().front())
      visitModule(&c, nullptr);
  } else if (auto ff = dyn_cast<FeedFwdOp>(mo)) {
    if (ModuleListOp layers = ff.getLayers())
      for (Operation &c : layers.getBody().front())
        visitModule(&c, nullptr);
  }
  unsigned post = next++;
  spans.try_emplace(mo, pre, post);
}

void ExecutionOrder::visitOp(Operation *op) {
  unsigned pre = next++;
  counts[op]++;
  if (auto call = dyn_cast<CallOp>(op)) {
    if (ModuleOpInterface callee = call.resolveCalleeModule())
      visitModule(callee, op);
  } else {
    for (Region &r : op->getRegions())
      for (Block &b : r)
        for (Operation &o : b)
          visitOp(&o);
  }
  unsigned post = next++;
  spans.try_emplace(op, pre, post);
}

unsigned ExecutionOrder::position(const ProbeLocation &loc) const {
  auto it = spans.find(loc.op);
  if (it == spans.end())
    return 0;
  return loc.output ? it->second.second : it->second.first;
}

//===----------------------------------------------------------------------===//
// Resolver
//===----------------------------------------------------------------------===//

Resolver::Resolver(const Family &family, ModelOp model)
    : family(family), model(model), order(model) {}

ModuleOpInterface Resolver::walkStandard(ModuleOpInterface from,
                                         ArrayRef<StringRef> segs,
                                         unsigned &failed) {
  ModuleOpInterface root = model.getRootModule();
  ModuleOpInterface cur = from;
  unsigned i = 0;
  while (i < segs.size()) {
    bool stepped = false;
    for (const auto &[native, standard] : family.renames) {
      SmallVector<StringRef> std = splitPath(standard);
      if (std.empty() || std.size() > segs.size() - i ||
          !llvm::equal(std, segs.slice(i, std.size())))
        continue;
      Operation *target = nullptr;
      if (StringRef(native).contains('.')) {
        if (cur != root)
          continue;
        target = lookupRegistered(root, native);
      } else {
        target = lookupChild(cur, native);
      }
      if (ModuleOpInterface m = resolveAlias(target)) {
        cur = m;
        i += std.size();
        stepped = true;
        break;
      }
    }
    if (stepped)
      continue;
    ModuleOpInterface m = resolveAlias(lookupChild(cur, segs[i]));
    if (!m) {
      failed = i;
      return {};
    }
    cur = m;
    ++i;
  }
  return cur;
}

static bool configMatches(Attribute a, const llvm::json::Value &v) {
  if (auto b = dyn_cast<BoolAttr>(a))
    return v.getAsBoolean() == std::optional<bool>(b.getValue());
  if (isa<UnitAttr>(a))
    return v.getAsBoolean() == std::optional<bool>(true);
  if (auto i = dyn_cast<IntegerAttr>(a)) {
    if (i.getType().isInteger(1))
      return v.getAsBoolean() ==
             std::optional<bool>(i.getValue().getBoolValue());
    return v.getAsInteger() == std::optional<int64_t>(i.getInt());
  }
  if (auto f = dyn_cast<FloatAttr>(a))
    return v.getAsNumber() == std::optional<double>(f.getValueAsDouble());
  if (auto s = dyn_cast<StringAttr>(a))
    return v.getAsString() == std::optional<StringRef>(s.getValue());
  return false;
}

std::optional<std::string> Resolver::unavailableReason(const ValueDef &def,
                                                       Operation *host) {
  if (def.unavailable)
    return *def.unavailable;
  for (const Condition &c : getConditions(family, def)) {
    for (Operation *cur = host; cur; cur = cur->getParentOp()) {
      auto config = cur->getAttrOfType<DictionaryAttr>("config");
      if (Attribute a = config ? config.get(c.config) : Attribute()) {
        if (configMatches(a, c.equals))
          return c.reason;
        break; // the nearest config decides
      }
      if (isa<ModelOp>(cur))
        break;
    }
  }
  return std::nullopt;
}

namespace {
struct HostPattern {
  SmallVector<StringRef> segs;
  int star = -1;
  unsigned prefixLen() const { return star < 0 ? 0 : star + 1; }
};
HostPattern parsePattern(StringRef pattern) {
  HostPattern p;
  p.segs = splitPath(pattern);
  for (auto [i, s] : llvm::enumerate(p.segs))
    if (s == "*")
      p.star = i;
  return p;
}
} // namespace

std::vector<std::string> Resolver::listNames(std::string &error) {
  std::vector<std::string> names;
  // Group values by the prefix of their host pattern ("" or "layers.*").
  std::map<std::string, std::vector<std::string>> byPrefix;
  for (const auto &[name, def] : family.values) {
    HostPattern p = parsePattern(family.hosts.at(def.host));
    std::string prefix =
        llvm::join(ArrayRef(p.segs).take_front(p.prefixLen()), ".");
    byPrefix[prefix].push_back(name);
  }
  for (const auto &[prefix, values] : byPrefix) {
    if (prefix.empty()) {
      names.insert(names.end(), values.begin(), values.end());
      continue;
    }
    SmallVector<StringRef> segs = splitPath(prefix);
    unsigned failed = 0;
    ModuleOpInterface list =
        walkStandard(model.getRootModule(), ArrayRef(segs).drop_back(), failed);
    if (!list) {
      error = ("host pattern '" + prefix + ".…': no module '" + segs[failed] +
               "' (segment " + Twine(failed) + ")")
                  .str();
      return {};
    }
    std::string base = llvm::join(ArrayRef(segs).drop_back(), ".");
    if (list->getNumRegions() == 1 && !list->getRegion(0).empty())
      for (Operation &child : list->getRegion(0).front()) {
        auto key =
            child.getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName());
        if (!key || !resolveAlias(&child))
          continue;
        for (const std::string &v : values)
          names.push_back(base + "." + key.getValue().str() + "." + v);
      }
  }
  return names;
}

static Resolution makeError(std::string msg, SmallVector<Note> notes = {}) {
  Resolution r;
  r.kind = Resolution::Error;
  r.message = std::move(msg);
  r.notes = std::move(notes);
  return r;
}

Resolution Resolver::resolve(StringRef name, bool forWrite) {
  SmallVector<StringRef> segs = splitPath(name);
  for (const auto &[vname, def] : family.values) {
    HostPattern p = parsePattern(family.hosts.at(def.host));
    unsigned k = p.prefixLen();
    if (segs.size() <= k ||
        llvm::join(ArrayRef(segs).drop_front(k), ".") != vname)
      continue;
    bool match = true;
    for (unsigned i = 0; i < k; ++i)
      if (p.segs[i] != "*" && p.segs[i] != segs[i])
        match = false;
    if (!match)
      continue;

    if (def.unavailable) {
      Resolution r;
      r.kind = Resolution::Unavailable;
      r.message = *def.unavailable;
      r.def = &def;
      return r;
    }
    SmallVector<StringRef> hostSegs = p.segs;
    if (p.star >= 0)
      hostSegs[p.star] = segs[p.star];
    unsigned failed = 0;
    ModuleOpInterface host =
        walkStandard(model.getRootModule(), hostSegs, failed);
    if (!host) {
      std::string parent =
          llvm::join(ArrayRef(hostSegs).take_front(failed), ".");
      Resolution r =
          makeError(("'" + name + "': its host '" + def.host + "' is '" +
                     llvm::join(hostSegs, ".") + "', and segment '" +
                     hostSegs[failed] + "' names no module in " +
                     (parent.empty() ? std::string("the root module")
                                     : "'" + parent + "'"))
                        .str());
      r.def = &def;
      return r;
    }
    if (auto reason = unavailableReason(def, host)) {
      Resolution r;
      r.kind = Resolution::Unavailable;
      r.message = *reason;
      r.def = &def;
      return r;
    }
    Resolution r = resolvePath(host, def.path, def.select, def.copy, forWrite);
    if (!r.ok())
      r.message = ("'" + name + "' (family '" + family.name + "', path '" +
                   def.path + "' on '" + displayPath(host) + "'): " + r.message)
                      .str();
    r.def = &def;
    return r;
  }
  // Unknown: suggest the spelled-out form when only the prefix is missing.
  std::string msg = ("unknown standardized name '" + name + "' for family '" +
                     family.name + "'")
                        .str();
  for (const auto &[vname, def] : family.values) {
    HostPattern p = parsePattern(family.hosts.at(def.host));
    if (name == vname && p.star >= 0) {
      SmallVector<std::string> s(p.segs.begin(),
                                 p.segs.begin() + p.prefixLen());
      s[p.star] = "<i>";
      msg += "; did you mean '" + llvm::join(s, ".") + "." + vname + "'?";
      break;
    }
  }
  return makeError(msg);
}

static unsigned numModuleValues(ModuleOpInterface m, bool outputs) {
  if (auto custom = dyn_cast<CustomModuleOp>(m.getOperation())) {
    ForwardOp fwd = custom.getForward();
    if (!fwd)
      return 0;
    return outputs ? fwd.getFunctionType().getNumResults()
                   : fwd.getFunctionType().getNumInputs();
  }
  if (isa<ModuleListOp>(m.getOperation()))
    return 0;
  if (!outputs && isa<ModelOp>(m->getParentOp()))
    return getParentModel(m).getInputTypes().size();
  return 1;
}

static bool isTerminal(StringRef s) {
  return s == "output" || s == "input" || s == "inputs";
}

Resolution Resolver::resolvePath(ModuleOpInterface host, StringRef path,
                                 const std::optional<Select> &select, bool copy,
                                 bool forWrite) {
  ModuleOpInterface root = model.getRootModule();
  StringRef rest = path;
  ModuleOpInterface cur = host;
  bool native = false;
  std::string base;
  if (rest.consume_front("/")) {
    cur = root;
  } else {
    unsigned ups = 0;
    while (rest.consume_front("../"))
      ++ups;
    if (ups) {
      std::string hostPath = getModulePath(host);
      SmallVector<StringRef> hs = splitPath(hostPath);
      if (ups > hs.size())
        return makeError(("'../' steps above the root: the host '" +
                          displayPath(host) + "' is " + Twine(hs.size()) +
                          " level(s) deep")
                             .str());
      native = true;
      base = llvm::join(ArrayRef(hs).drop_back(ups), ".");
    }
  }
  SmallVector<StringRef> tokens = splitPath(rest);
  if (tokens.empty())
    return makeError("the path is empty");
  size_t t = 0;
  SmallVector<StringRef> modSegs;
  while (t < tokens.size() && !isTerminal(tokens[t]) && tokens[t] != "source")
    modSegs.push_back(tokens[t++]);

  ModuleOpInterface m;
  if (native) {
    std::string full = base;
    for (StringRef s : modSegs)
      full += (full.empty() ? "" : ".") + s.str();
    unsigned failed = 0;
    SmallVector<StringRef> fullSegs = splitPath(full);
    m = resolveAlias(lookupRegistered(root, full, &failed));
    if (!m) {
      std::string parent =
          llvm::join(ArrayRef(fullSegs).take_front(failed), ".");
      return makeError(
          ("segment '../" + (failed < fullSegs.size() ? fullSegs[failed] : "") +
           "' names no module: '" + (parent.empty() ? "<root>" : parent) +
           "' has no child '" +
           (failed < fullSegs.size() ? fullSegs[failed] : "") +
           "' (above the host, paths use native names)")
              .str(),
          {{host, "the host is here"}});
    }
  } else {
    unsigned failed = 0;
    m = walkStandard(cur, modSegs, failed);
    if (!m) {
      ModuleOpInterface parent =
          walkStandard(cur, ArrayRef(modSegs).take_front(failed), failed);
      return makeError(("segment '" + modSegs[failed] + "' names no module: '" +
                        displayPath(parent) + "' has no child or alias '" +
                        modSegs[failed] + "'")
                           .str(),
                       {{parent, "looked in this module"}});
    }
  }
  if (t == tokens.size())
    return makeError("the path ends without 'output', 'input' or 'inputs'");

  Operation *curOp = m;
  bool onModule = true;
  std::string source; // "source.a.source.b" so far, for messages
  while (tokens[t] == "source") {
    if (++t >= tokens.size())
      return makeError("'source' must be followed by an op label");
    StringRef label = tokens[t++];
    ModuleOpInterface scope;
    if (onModule) {
      scope = m;
    } else {
      auto call = dyn_cast<CallOp>(curOp);
      if (!call)
        return makeError(("'" + source + "' (" + opName(curOp) +
                          ") is not an nnx.call: only a call has a source"),
                         {{curOp, "this op"}});
      scope = call.resolveCalleeModule();
    }
    source += (source.empty() ? "" : ".") + ("source." + label).str();
    auto custom = dyn_cast_or_null<CustomModuleOp>(scope.getOperation());
    ForwardOp fwd = custom ? custom.getForward() : ForwardOp();
    if (!fwd)
      return makeError(("module '" + displayPath(scope) + "' (" +
                        opName(scope) + ") has no forward region to take '" +
                        source + "' from"),
                       {{scope, "this module"}});
    Operation *found = nullptr;
    SmallVector<std::string> labels;
    fwd.walk([&](Operation *op) {
      if (auto l = op->getAttrOfType<StringAttr>(kSourceAttrName)) {
        labels.push_back(l.getValue().str());
        if (l.getValue() == label)
          found = op;
      }
    });
    if (!found)
      return makeError(
          ("segment 'source." + label + "' names no op: the forward of '" +
           displayPath(scope) + "' has no op labeled '" + label +
           "' (labels: " +
           (labels.empty() ? std::string("none") : llvm::join(labels, ", ")) +
           ")")
              .str(),
          {{scope, "this module"}});
    curOp = found;
    onModule = false;
    if (t >= tokens.size())
      return makeError(("the path ends after '" + source +
                        "': add 'output', 'input' or 'inputs'"));
  }
  StringRef terminal = tokens[t++];
  if (!isTerminal(terminal))
    return makeError(
        ("unexpected segment '" + terminal + "' after '" + source + "'").str());
  if (t < tokens.size())
    return makeError(
        ("unexpected segment '" + tokens[t] + "' after '" + terminal + "'")
            .str());

  bool out = terminal == "output";
  std::string what = onModule
                         ? "module '" + displayPath(m) + "' (" + opName(m) + ")"
                         : describeOp(curOp);
  unsigned count =
      onModule ? numModuleValues(m, out)
               : (out ? curOp->getNumResults() : curOp->getNumOperands());
  if (count == 0)
    return makeError((what + " has no " + (out ? "outputs" : "inputs") +
                      (isa<ModuleListOp>(curOp)
                           ? std::string(" (a module_list has no forward)")
                           : std::string())),
                     {{curOp, "this op"}});
  if (terminal == "inputs" && !select)
    return makeError("'inputs' is the whole (args, kwargs) pair, not one "
                     "tensor: give \"select\" (an index or a keyword)");
  unsigned index = 0;
  auto kwargs = curOp->getAttrOfType<ArrayAttr>(kKwargsAttrName);
  unsigned numKw = (!onModule && kwargs) ? kwargs.size() : 0;
  if (select && select->isKeyword()) {
    if (out)
      return makeError("'output' takes an index as \"select\", not a "
                       "keyword");
    if (onModule)
      return makeError("keyword \"select\" on a module's inputs: take the "
                       "argument at its call instead, "
                       "'source.<call>.inputs'");
    SmallVector<std::string> names;
    std::optional<unsigned> pos;
    if (kwargs)
      for (auto [i, a] : llvm::enumerate(kwargs))
        if (auto s = dyn_cast<StringAttr>(a)) {
          names.push_back(s.getValue().str());
          if (s.getValue() == select->keyword)
            pos = i;
        }
    if (!pos || numKw > curOp->getNumOperands())
      return makeError(
          (what + " has no keyword argument '" + select->keyword +
           "' (keywords: " +
           (names.empty() ? std::string("none") : llvm::join(names, ", ")) +
           ")"),
          {{curOp, "this op"}});
    index = curOp->getNumOperands() - numKw + *pos;
  } else {
    index = select ? *select->index : 0;
    unsigned limit = out ? count : count - std::min(count, numKw);
    if (index >= limit)
      return makeError((what + " has " + Twine(limit) + " " +
                        (out     ? "output(s)"
                         : numKw ? "positional input(s)"
                                 : "input(s)") +
                        ": select=" + Twine(index) + " is out of range")
                           .str(),
                       {{curOp, "this op"}});
  }

  Resolution r;
  r.kind = Resolution::Available;
  r.location = {curOp, onModule, out, index};

  unsigned runs = order.count(curOp);
  if (runs == 0)
    return makeError((r.location.describe() +
                      " is never computed: the model's forward does not "
                      "run it"),
                     {{curOp, "this op"}});
  if (runs > 1)
    return makeError((r.location.describe() + " is computed " + Twine(runs) +
                      " times in one forward (a shared module, e.g. "
                      "through an alias): a probe there would fire at "
                      "every call")
                         .str(),
                     {{curOp, "this op"}});

  // A read without a copy sees the tensor's final state when a later op
  // overwrites it in place (Python's `t += u`): follow such updates.
  if (!forWrite && !copy) {
    Value v;
    if (!onModule)
      v = out ? curOp->getResult(index) : curOp->getOperand(index);
    else if (Operation *call = order.callSite(curOp))
      v = out ? (index < call->getNumResults() ? call->getResult(index)
                                               : Value())
              : (index < call->getNumOperands() ? call->getOperand(index)
                                                : Value());
    bool moved = true;
    while (v && moved) {
      moved = false;
      for (OpOperand &use : v.getUses()) {
        Operation *u = use.getOwner();
        auto a = u->getAttrOfType<IntegerAttr>(kInPlaceAttrName);
        if (!a || a.getInt() != use.getOperandNumber() ||
            u->getNumResults() == 0)
          continue;
        r.notes.push_back({u,
                           "overwrites the value in place; the read sees the "
                           "updated tensor (a family value with \"copy\": true "
                           "reads it before)"});
        r.location = {u, false, true, 0};
        v = u->getResult(0);
        moved = true;
        break;
      }
    }
  }
  return r;
}
