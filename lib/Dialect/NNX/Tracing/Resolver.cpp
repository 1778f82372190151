//===- Resolver.cpp - tracing paths to locations of the forward -*- C++ -*-===//
#include "nnx/Dialect/NNX/Tracing/Resolver.h"

#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "nnx/Dialect/NNX/IR/ModuleTree.h"
#include "nnx/Dialect/NNX/IR/NNXRecurrentOps.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::nnx;
using namespace mlir::nnx::tracing;

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
    s += " in the forward of '" + getDisplayPath(owner) + "'";
  return s;
}

std::string ProbeLocation::describe() const {
  if (!op)
    return "<nothing>";
  std::string s =
      (output ? "output " : "input ") + std::to_string(index) + " of ";
  if (onModule)
    return s + "module '" + getDisplayPath(op) + "' (" + opName(op) + ")";
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
  } else if (auto net = dyn_cast<StockNetOpInterface>(mo)) {
    for (Operation *list : net.getLayerLists())
      if (list)
        for (Operation &c : list->getRegion(0).front())
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

const llvm::StringSet<> &Resolver::getConfigKeys() {
  if (!configKeys) {
    configKeys.emplace();
    model.walk([&](Operation *op) {
      if (auto config = op->getAttrOfType<DictionaryAttr>("config"))
        for (NamedAttribute entry : config)
          configKeys->insert(entry.getName().getValue());
    });
  }
  return *configKeys;
}

static Resolution makeResolution(Resolution::Kind kind, std::string message,
                                 const ValueDef &def) {
  Resolution r;
  r.kind = kind;
  r.message = std::move(message);
  r.def = &def;
  return r;
}

/// The class a family names a module by: an nnx.module's `class`, else the
/// op name (`nnx.linear`).
static std::string getModuleClass(Operation *module) {
  if (auto custom = dyn_cast<CustomModuleOp>(module))
    return custom.getClassName().str();
  return opName(module);
}

std::optional<Resolution>
Resolver::checkClasses(StringRef name, const ValueDef &def, Operation *host) {
  auto mismatch = [&](StringRef hostName,
                      Operation *module) -> std::optional<Resolution> {
    auto it = family.classes.find(hostName.str());
    std::string cls = getModuleClass(module);
    if (it == family.classes.end() || llvm::is_contained(it->second, cls))
      return std::nullopt;
    return makeResolution(
        Resolution::Error,
        ("'" + name + "' (family '" + family.name + "'): host '" + hostName +
         "' is '" + getDisplayPath(module) + "', a module of class '" + cls +
         "', but the family is written for " + llvm::join(it->second, ", ") +
         ": it would read another model's values under these names; use the "
         "family written for this model")
            .str(),
        def);
  };
  Operation *root = model.getRootModule();
  for (const auto &[hostName, pattern] : family.hosts)
    if (pattern.empty() && root)
      if (std::optional<Resolution> r = mismatch(hostName, root))
        return r;
  if (!host)
    return std::nullopt;
  return mismatch(def.host, host);
}

std::optional<Resolution> Resolver::checkConditions(StringRef name,
                                                    const ValueDef &def,
                                                    Operation *host) {
  for (const Condition &c : getConditions(family, def)) {
    const llvm::StringSet<> &keys = getConfigKeys();
    if (!keys.empty() && !keys.contains(c.config)) {
      SmallVector<StringRef> known(keys.keys());
      llvm::sort(known);
      std::string list = def.conditionRef.empty()
                             ? std::string("its 'unavailable_if'")
                             : "condition list '" + def.conditionRef + "'";
      return makeResolution(
          Resolution::Error,
          ("'" + name + "' (family '" + family.name + "'): " + list +
           " tests config key '" + c.config + "' (reason: '" + c.reason +
           "'), which no config in the model defines (keys: " +
           llvm::join(known, ", ") + "); a misspelt key would never hold")
              .str(),
          def);
    }
    for (Operation *cur = host; cur; cur = cur->getParentOp()) {
      auto config = cur->getAttrOfType<DictionaryAttr>("config");
      if (Attribute a = config ? config.get(c.config) : Attribute()) {
        if (configMatches(a, c.equals))
          return makeResolution(Resolution::Unavailable, c.reason, def);
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

Resolution Resolver::missingHost(StringRef name, const ValueDef &def,
                                 ArrayRef<StringRef> hostSegs, unsigned failed,
                                 bool atStar) {
  std::string parent = llvm::join(hostSegs.take_front(failed), ".");
  std::string where =
      parent.empty() ? std::string("the root module") : "'" + parent + "'";
  std::string msg = ("'" + name + "': ").str();
  if (atStar) {
    unsigned unused = 0;
    unsigned count = 0;
    ModuleOpInterface list = walkStandard(model.getRootModule(),
                                          hostSegs.take_front(failed), unused);
    if (list && list->getNumRegions() == 1 && !list->getRegion(0).empty())
      for (Operation &child : list->getRegion(0).front())
        count += isRegisteredChild(&child);
    msg +=
        ("no such layer: its host '" + def.host + "' is '" +
         llvm::join(hostSegs, ".") + "', and " + where + " holds " +
         Twine(count) + " module(s), none under key '" + hostSegs[failed] + "'")
            .str();
  } else {
    msg += ("its host '" + def.host + "' is '" + llvm::join(hostSegs, ".") +
            "', and segment '" + hostSegs[failed] + "' names no module in " +
            where)
               .str();
  }
  return makeResolution(Resolution::Error, msg, def);
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

    SmallVector<StringRef> hostSegs = p.segs;
    if (p.star >= 0)
      hostSegs[p.star] = segs[p.star];
    unsigned failed = 0;
    ModuleOpInterface host =
        walkStandard(model.getRootModule(), hostSegs, failed);
    // A value the family marks unavailable needs no host, but its layer must
    // exist: `layers.5.x` on a 2-layer model names no layer.
    if (!host && (!def.unavailable || static_cast<int>(failed) <= p.star))
      return missingHost(name, def, hostSegs, failed,
                         static_cast<int>(failed) == p.star);
    if (std::optional<Resolution> r = checkClasses(name, def, host))
      return *r;
    if (def.unavailable)
      return makeResolution(Resolution::Unavailable, *def.unavailable, def);
    if (std::optional<Resolution> r = checkConditions(name, def, host))
      return *r;
    Resolution r = resolvePath(host, def.path, def.select, def.copy, forWrite);
    if (!r.ok())
      r.message =
          ("'" + name + "' (family '" + family.name + "', path '" + def.path +
           "' on '" + getDisplayPath(host) + "'): " + r.message)
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
  if (isForwardlessContainer(m))
    return 0;
  if (!outputs && isa<ModelOp>(m->getParentOp()))
    return getParentModel(m).getInputTypes().size();
  if (auto recurrent = dyn_cast<RecurrentLayerOpInterface>(m.getOperation());
      recurrent && outputs)
    return recurrent.getNumOutputs();
  return 1;
}

static bool isTerminal(StringRef s) {
  return s == "output" || s == "input" || s == "inputs";
}

/// The op of `fwd` labeled `label` (null if none); every label of `fwd` is
/// collected in `labels`.
static Operation *findLabeledOp(ForwardOp fwd, StringRef label,
                                SmallVectorImpl<std::string> &labels) {
  Operation *found = nullptr;
  fwd.walk([&](Operation *op) {
    if (auto l = op->getAttrOfType<StringAttr>(kSourceAttrName)) {
      labels.push_back(l.getValue().str());
      if (l.getValue() == label)
        found = op;
    }
  });
  return found;
}

/// The use of `v` by an op that overwrites it in place (Python's `t += u`),
/// or null.
static OpOperand *findInPlaceUpdate(Value v) {
  for (OpOperand &use : v.getUses()) {
    Operation *u = use.getOwner();
    auto a = u->getAttrOfType<IntegerAttr>(kInPlaceAttrName);
    if (a && a.getInt() == use.getOperandNumber() && u->getNumResults() != 0)
      return &use;
  }
  return nullptr;
}

/// The SSA value at `loc`: an operand or result of the op, or for a module
/// the operand or result of the `nnx.call` that runs it (null without one).
static Value valueAt(const ProbeLocation &loc, const ExecutionOrder &order) {
  if (!loc.onModule)
    return loc.output ? loc.op->getResult(loc.index)
                      : loc.op->getOperand(loc.index);
  Operation *call = order.callSite(loc.op);
  if (!call)
    return Value();
  if (loc.output)
    return loc.index < call->getNumResults() ? call->getResult(loc.index)
                                             : Value();
  return loc.index < call->getNumOperands() ? call->getOperand(loc.index)
                                            : Value();
}

/// A read without a copy sees the tensor's final state when a later op
/// overwrites it in place (Python's `t += u`): moves the location of `r` to
/// the last such update, with a note at each.
static void followInPlaceUpdates(Resolution &r, const ExecutionOrder &order) {
  Value v = valueAt(r.location, order);
  if (!v)
    return;
  while (OpOperand *update = findInPlaceUpdate(v)) {
    Operation *u = update->getOwner();
    r.notes.push_back({u, "overwrites the value in place; the read sees the "
                          "updated tensor (a family value with \"copy\": true "
                          "reads it before)"});
    r.location = {u, false, true, 0};
    v = u->getResult(0);
  }
}

/// One walk of a path (the grammar of docs/Tracing.md) from a host module,
/// step by step: where it starts ('/', '../' or the host), the module
/// segments, the 'source.<label>' steps into forward regions, the terminal
/// and the selected value. A step that fails sets `error` and returns
/// failure.
class Resolver::PathWalk {
public:
  PathWalk(Resolver &resolver, ModuleOpInterface host)
      : resolver(resolver), root(resolver.model.getRootModule()), host(host),
        start(host) {}

  /// Consumes a leading '/' (the root) or '../'s (native keys above the
  /// host) and splits the rest of `path` into tokens.
  LogicalResult parseStart(StringRef path);
  /// Resolves the module segments to `module`.
  LogicalResult resolveModule();
  /// Follows the 'source.<label>' steps from `module` to `op`.
  LogicalResult followSources();
  /// Consumes the terminal ('output', 'input' or 'inputs'), the last token.
  LogicalResult parseTerminal();
  /// The index of the value `select` names among the location's inputs or
  /// outputs.
  FailureOr<unsigned> selectIndex(const std::optional<Select> &select);
  /// Refuses a location the model's forward runs never or more than once.
  LogicalResult checkRunsOnce(const ProbeLocation &loc);

  /// The module the module segments name.
  ModuleOpInterface module;
  /// That module, or the op that the 'source.<label>' steps name.
  Operation *op = nullptr;
  /// Whether `op` is the module (no 'source.<label>' step).
  bool onModule = true;
  /// Whether the terminal is 'output'.
  bool output = false;
  /// Why the last step failed.
  Resolution error;

private:
  LogicalResult fail(std::string msg, SmallVector<Note> notes = {}) {
    error = makeError(std::move(msg), std::move(notes));
    return failure();
  }
  LogicalResult resolveNativeModule(ArrayRef<StringRef> segs);
  LogicalResult resolveStandardModule(ArrayRef<StringRef> segs);
  LogicalResult stepIntoSource(StringRef label);
  FailureOr<unsigned> selectKeyword(const std::string &keyword);
  FailureOr<unsigned> selectPositional(unsigned index, unsigned count);
  /// "module '<path>' (<op>)" or the labeled op, for messages.
  std::string describeTarget() const;

  Resolver &resolver;
  ModuleOpInterface root;
  ModuleOpInterface host;
  /// Where standardized module segments start: the host or the root.
  ModuleOpInterface start;
  /// After '../': the module segments are native keys below `base`.
  bool native = false;
  std::string base;
  SmallVector<StringRef> tokens;
  /// The next token to consume.
  size_t next = 0;
  StringRef terminal;
  /// "source.a.source.b" so far, for messages.
  std::string source;
};

LogicalResult Resolver::PathWalk::parseStart(StringRef path) {
  StringRef rest = path;
  if (rest.consume_front("/")) {
    start = root;
  } else {
    unsigned ups = 0;
    while (rest.consume_front("../"))
      ++ups;
    if (ups) {
      std::string hostPath = getModulePath(host);
      SmallVector<StringRef> hs = splitPath(hostPath);
      if (ups > hs.size())
        return fail(("'../' steps above the root: the host '" +
                     getDisplayPath(host) + "' is " + Twine(hs.size()) +
                     " level(s) deep")
                        .str());
      native = true;
      base = llvm::join(ArrayRef(hs).drop_back(ups), ".");
    }
  }
  tokens = splitPath(rest);
  if (tokens.empty())
    return fail("the path is empty");
  return success();
}

LogicalResult Resolver::PathWalk::resolveModule() {
  SmallVector<StringRef> modSegs;
  while (next < tokens.size() && !isTerminal(tokens[next]) &&
         tokens[next] != "source")
    modSegs.push_back(tokens[next++]);
  return native ? resolveNativeModule(modSegs) : resolveStandardModule(modSegs);
}

LogicalResult
Resolver::PathWalk::resolveNativeModule(ArrayRef<StringRef> segs) {
  std::string full = base;
  for (StringRef s : segs)
    full += (full.empty() ? "" : ".") + s.str();
  unsigned failed = 0;
  SmallVector<StringRef> fullSegs = splitPath(full);
  module = resolveAlias(lookupRegistered(root, full, &failed));
  if (module)
    return success();
  std::string parent = llvm::join(ArrayRef(fullSegs).take_front(failed), ".");
  return fail(
      ("segment '../" + (failed < fullSegs.size() ? fullSegs[failed] : "") +
       "' names no module: '" + (parent.empty() ? "<root>" : parent) +
       "' has no child '" + (failed < fullSegs.size() ? fullSegs[failed] : "") +
       "' (above the host, paths use native names)")
          .str(),
      {{host, "the host is here"}});
}

LogicalResult
Resolver::PathWalk::resolveStandardModule(ArrayRef<StringRef> segs) {
  unsigned failed = 0;
  module = resolver.walkStandard(start, segs, failed);
  if (module)
    return success();
  ModuleOpInterface parent =
      resolver.walkStandard(start, segs.take_front(failed), failed);
  return fail(("segment '" + segs[failed] + "' names no module: '" +
               getDisplayPath(parent) + "' has no child or alias '" +
               segs[failed] + "'")
                  .str(),
              {{parent, "looked in this module"}});
}

LogicalResult Resolver::PathWalk::followSources() {
  op = module;
  while (next < tokens.size() && tokens[next] == "source") {
    if (++next >= tokens.size())
      return fail("'source' must be followed by an op label");
    if (failed(stepIntoSource(tokens[next++])))
      return failure();
    if (next >= tokens.size())
      return fail(("the path ends after '" + source +
                   "': add 'output', 'input' or 'inputs'"));
  }
  return success();
}

/// Steps from the module, or from the `nnx.call` reached so far, into its
/// forward region, to the op labeled `label`.
LogicalResult Resolver::PathWalk::stepIntoSource(StringRef label) {
  ModuleOpInterface scope;
  if (onModule) {
    scope = module;
  } else {
    auto call = dyn_cast<CallOp>(op);
    if (!call)
      return fail(("'" + source + "' (" + opName(op) +
                   ") is not an nnx.call: only a call has a source"),
                  {{op, "this op"}});
    scope = call.resolveCalleeModule();
  }
  source += (source.empty() ? "" : ".") + ("source." + label).str();
  auto custom = dyn_cast_or_null<CustomModuleOp>(scope.getOperation());
  ForwardOp fwd = custom ? custom.getForward() : ForwardOp();
  if (!fwd)
    return fail(("module '" + getDisplayPath(scope) + "' (" + opName(scope) +
                 ") has no forward region to take '" + source + "' from"),
                {{scope, "this module"}});
  SmallVector<std::string> labels;
  Operation *found = findLabeledOp(fwd, label, labels);
  if (!found)
    return fail(
        ("segment 'source." + label + "' names no op: the forward of '" +
         getDisplayPath(scope) + "' has no op labeled '" + label +
         "' (labels: " +
         (labels.empty() ? std::string("none") : llvm::join(labels, ", ")) +
         ")")
            .str(),
        {{scope, "this module"}});
  op = found;
  onModule = false;
  return success();
}

LogicalResult Resolver::PathWalk::parseTerminal() {
  if (next == tokens.size())
    return fail("the path ends without 'output', 'input' or 'inputs'");
  terminal = tokens[next++];
  if (!isTerminal(terminal))
    return fail(
        ("unexpected segment '" + terminal + "' after '" + source + "'").str());
  if (next < tokens.size())
    return fail(
        ("unexpected segment '" + tokens[next] + "' after '" + terminal + "'")
            .str());
  output = terminal == "output";
  return success();
}

std::string Resolver::PathWalk::describeTarget() const {
  return onModule ? "module '" + getDisplayPath(module) + "' (" +
                        opName(module) + ")"
                  : describeOp(op);
}

/// The inputs of op `op` a path can select: its operands, but not the
/// destinations (`outs`) of a destination-style op such as linalg.generic,
/// which it writes rather than reads.
static unsigned numOpInputs(Operation *op) {
  if (auto dps = dyn_cast<DestinationStyleOpInterface>(op))
    return dps.getNumDpsInputs();
  return op->getNumOperands();
}

FailureOr<unsigned>
Resolver::PathWalk::selectIndex(const std::optional<Select> &select) {
  unsigned count = onModule ? numModuleValues(module, output)
                            : (output ? op->getNumResults() : numOpInputs(op));
  if (count == 0) {
    std::string why;
    if (isForwardlessContainer(op))
      why = " (a " + op->getName().stripDialect().str() + " has no forward)";
    return fail(describeTarget() + " has no " +
                    (output ? "outputs" : "inputs") + why,
                {{op, "this op"}});
  }
  if (terminal == "inputs" && !select)
    return fail("'inputs' is the whole (args, kwargs) pair, not one "
                "tensor: give \"select\" (an index or a keyword)");
  if (select && select->isKeyword())
    return selectKeyword(select->keyword);
  return selectPositional(select ? *select->index : 0, count);
}

/// The operand of the op's keyword argument `keyword` (its trailing operands
/// are named by `nnx.kwargs`).
FailureOr<unsigned>
Resolver::PathWalk::selectKeyword(const std::string &keyword) {
  if (output)
    return fail("'output' takes an index as \"select\", not a "
                "keyword");
  if (onModule)
    return fail("keyword \"select\" on a module's inputs: take the "
                "argument at its call instead, "
                "'source.<call>.inputs'");
  auto kwargs = op->getAttrOfType<ArrayAttr>(kKwargsAttrName);
  unsigned numKw = kwargs ? kwargs.size() : 0;
  SmallVector<std::string> names;
  std::optional<unsigned> pos;
  if (kwargs)
    for (auto [i, a] : llvm::enumerate(kwargs))
      if (auto s = dyn_cast<StringAttr>(a)) {
        names.push_back(s.getValue().str());
        if (s.getValue() == keyword)
          pos = i;
      }
  if (!pos || numKw > op->getNumOperands())
    return fail(
        (describeTarget() + " has no keyword argument '" + keyword +
         "' (keywords: " +
         (names.empty() ? std::string("none") : llvm::join(names, ", ")) + ")"),
        {{op, "this op"}});
  return op->getNumOperands() - numKw + *pos;
}

/// Output `index`, or positional input `index` (before any keyword
/// arguments) of the `count` inputs.
FailureOr<unsigned> Resolver::PathWalk::selectPositional(unsigned index,
                                                         unsigned count) {
  auto kwargs = op->getAttrOfType<ArrayAttr>(kKwargsAttrName);
  unsigned numKw = (!onModule && kwargs) ? kwargs.size() : 0;
  unsigned limit = output ? count : count - std::min(count, numKw);
  if (index >= limit)
    return fail((describeTarget() + " has " + Twine(limit) + " " +
                 (output  ? "output(s)"
                  : numKw ? "positional input(s)"
                          : "input(s)") +
                 ": select=" + Twine(index) + " is out of range")
                    .str(),
                {{op, "this op"}});
  return index;
}

LogicalResult Resolver::PathWalk::checkRunsOnce(const ProbeLocation &loc) {
  unsigned runs = resolver.order.count(loc.op);
  if (runs == 0)
    return fail((loc.describe() +
                 " is never computed: the model's forward does not "
                 "run it"),
                {{loc.op, "this op"}});
  if (runs > 1)
    return fail((loc.describe() + " is computed " + Twine(runs) +
                 " times in one forward (a shared module, e.g. "
                 "through an alias): a probe there would fire at "
                 "every call")
                    .str(),
                {{loc.op, "this op"}});
  return success();
}

Resolution Resolver::resolvePath(ModuleOpInterface host, StringRef path,
                                 const std::optional<Select> &select, bool copy,
                                 bool forWrite) {
  PathWalk walk(*this, host);
  if (failed(walk.parseStart(path)) || failed(walk.resolveModule()) ||
      failed(walk.followSources()) || failed(walk.parseTerminal()))
    return walk.error;
  FailureOr<unsigned> index = walk.selectIndex(select);
  if (failed(index))
    return walk.error;

  Resolution r;
  r.kind = Resolution::Available;
  r.location = {walk.op, walk.onModule, walk.output, *index};
  if (failed(walk.checkRunsOnce(r.location)))
    return walk.error;
  if (!forWrite && !copy)
    followInPlaceUpdates(r, order);
  return r;
}
