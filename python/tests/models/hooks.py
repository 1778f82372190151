"""Reads and writes the standardized tracing values of a reference model with
PyTorch hooks, at the locations `families/*.json` defines.

The family files are the source of truth: a value's host and path resolve on
the PyTorch module tree as `nnx-insert-probes` resolves them on the IR (the
renames, `../` native segments, `source.<label>` calls). A location is one of

- a module's input or output: a forward pre-hook or forward hook;
- an argument or the result of a module-level function the host's forward
  calls (`source.attention_interface_0.inputs`, `source.dropout_add_0.input`):
  the function's global in the host's Python module is replaced, while the
  probes are installed, by a wrapper that counts the host's calls;
- a call inside such a call (`source.attention_interface_0.source.softmax_0`):
  the inner function is replaced for the duration of the outer call.

Reads keep a reference to the tensor (what a saved PyTorch value is: it
follows later in-place updates) unless the value says `"copy": true`, which
clones it when computed (Falcon's `mlp_output`). Writes replace the value from
that point on with a clone of the given tensor (the model may update it in
place: the caller's tensor stays as it is); a value both read and written
reads the original.

API:

    load_family(name) -> dict                    the merged family definition
    available(model, family, layer=0) -> {name: None | reason}
    locate(model, family, name, layer=0) -> Location
    Probes(model, family, layer=0, reads=None, writes=None)
        a context manager; .values: {name: Tensor} once the forward has run
    run(model, family, input_ids, layer=0, reads=None, writes=None)
        -> (logits, {name: Tensor})

Names are the family's bare names (`layer_input`, `attention_output`,
`logits`); layer values are taken at `layer`. `reads=None` reads every
available value; `writes` maps names to tensors.
"""

import json
import os
import sys
from dataclasses import dataclass
from typing import Tuple, Union

import torch

FAMILIES_DIR = os.environ.get(
    "NNX_FAMILIES_DIR",
    os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, os.pardir, "families"))

# Functions called inside a function that are not globals of its module: the
# label's name -> (namespace, attribute). `nn.functional.softmax(...)` is
# labeled `softmax_N`.
INNER_FUNCTIONS = {
    "softmax": (torch.nn.functional, "softmax"),
    "dropout": (torch.nn.functional, "dropout"),
}

POINTS = ("input", "inputs", "output")


class Unavailable(Exception):
    """A value the family does not have (or this model cannot serve)."""


# --- family files ------------------------------------------------------------

def _read_family(ref, base_dir):
    if "/" in ref or ref.endswith(".json"):
        path = ref if os.path.isabs(ref) else os.path.join(base_dir, ref)
    else:
        path = os.path.join(FAMILIES_DIR, ref + ".json")
    with open(path) as f:
        data = json.load(f)
    data.setdefault("name", os.path.splitext(os.path.basename(path))[0])
    return data, os.path.dirname(path)


def load_family(family):
    """The family's definition with its `extends` chain merged in (maps key by
    key; a redefined value keeps the inherited host and description)."""
    data, here = _read_family(family, FAMILIES_DIR)
    merged = {"rename": {}, "hosts": {}, "conditions": {}, "values": {}}
    if "extends" in data:
        merged = load_family_from(data["extends"], here)
    for key in ("rename", "hosts", "conditions"):
        merged[key] = dict(merged.get(key, {}), **data.get(key, {}))
    values = dict(merged.get("values", {}))
    for name, value in data.get("values", {}).items():
        value = dict(value)
        if name in values:
            for keep in ("host", "description"):
                if keep not in value and keep in values[name]:
                    value[keep] = values[name][keep]
        values[name] = value
    merged["values"] = values
    merged["name"] = data["name"]
    return merged


def load_family_from(ref, base_dir):
    if "/" in ref or ref.endswith(".json"):
        return load_family(os.path.normpath(os.path.join(base_dir, ref)))
    return load_family(ref)


# --- module paths ------------------------------------------------------------

def _standardize(native, rename):
    """A native module path in standard names: dotted renames from the root
    (longest first), then single-key renames of every segment."""
    path = native
    for key in sorted((k for k in rename if "." in k), key=len, reverse=True):
        if path == key or path.startswith(key + "."):
            path = rename[key] + path[len(key):]
            break
    single = {k: v for k, v in rename.items() if "." not in k}
    return ".".join(single.get(s, s) for s in path.split(".")) if path else path


def _module_maps(model, rename):
    std_to_native = {}
    for native, _ in model.named_modules():
        std_to_native.setdefault(_standardize(native, rename), native)
    return std_to_native


def _join(*parts):
    return ".".join(p for p in parts if p)


@dataclass(frozen=True)
class Location:
    """Where a value lives: `module` (native path, '' the root), `calls` (the
    labels of the calls below the module's forward, outermost first), the
    `point` ('input', 'inputs', 'output') and `select` (an index, a keyword
    name, or None: argument 0 / tuple element 0)."""
    module: str
    calls: Tuple[str, ...]
    point: str
    select: Union[int, str, None]
    copy: bool = False


def _host_path(fam, value, layer):
    host = fam["hosts"][value["host"]]
    if "*" in host:
        if layer is None:
            raise ValueError(f"value on host '{value['host']}' needs a layer")
        host = host.replace("*", str(layer))
    return host


def locate(model, family, name, layer=0):
    """The location of `name` on `model` (raises Unavailable, ValueError)."""
    fam = load_family(family) if isinstance(family, str) else family
    if name not in fam["values"]:
        raise ValueError(f"unknown value '{name}' on family '{fam['name']}'")
    reason = _unavailable(model, fam, name, layer)
    if reason:
        raise Unavailable(f"'{name}' is unavailable on family '{fam['name']}': {reason}")
    value = fam["values"][name]
    host_std = _host_path(fam, value, layer)
    std_to_native = _module_maps(model, fam["rename"])
    if host_std not in std_to_native:
        raise ValueError(f"host '{host_std}' names no module of {type(model).__name__}")
    host_native = std_to_native[host_std]

    path = value["path"]
    native_join = False
    if path.startswith("/"):
        base_std, path = "", path[1:]
    elif path.startswith("../"):
        segs = host_native.split(".") if host_native else []
        while path.startswith("../"):
            if not segs:
                raise ValueError(f"'{value['path']}' climbs above the root")
            segs.pop()
            path = path[3:]
        base_native, native_join = ".".join(segs), True
    else:
        base_std = host_std

    tokens = path.split(".")
    mods = []
    while tokens and tokens[0] not in POINTS and tokens[0] != "source":
        mods.append(tokens.pop(0))
    calls = []
    while tokens and tokens[0] == "source":
        if len(tokens) < 2:
            raise ValueError(f"'{value['path']}': 'source' needs a label")
        calls.append(tokens[1])
        tokens = tokens[2:]
    if len(tokens) != 1 or tokens[0] not in POINTS:
        raise ValueError(f"'{value['path']}' does not end in input, inputs or output")
    point = tokens[0]
    select = value.get("select")
    if point == "inputs" and select is None:
        raise ValueError(f"'{value['path']}': inputs needs select")

    if native_join:
        module = _join(base_native, ".".join(mods))
        if module not in dict(model.named_modules()):
            raise ValueError(f"'{value['path']}' names no module: '{base_native}' has no child '{'.'.join(mods)}'")
    else:
        std = _join(base_std, ".".join(mods))
        if std not in std_to_native:
            raise ValueError(f"'{value['path']}' names no module below '{host_native}'")
        module = std_to_native[std]
    return Location(module, tuple(calls), point, select, bool(value.get("copy", False)))


def _config_value(model, module_path, key):
    """The nearest `config` with `key`: on the module, then its ancestors."""
    mods = dict(model.named_modules())
    segs = module_path.split(".") if module_path else []
    while True:
        cfg = getattr(mods.get(".".join(segs)), "config", None)
        if cfg is not None:
            if isinstance(cfg, dict) and key in cfg:
                return True, cfg[key]
            if not isinstance(cfg, dict) and hasattr(cfg, key):
                return True, getattr(cfg, key)
        if not segs:
            return False, None
        segs.pop()


def _unavailable(model, fam, name, layer):
    value = fam["values"][name]
    if "unavailable" in value:
        return value["unavailable"]
    conds = value.get("unavailable_if")
    if conds is None:
        return None
    if isinstance(conds, str):
        conds = fam["conditions"].get(conds, [])
    std_to_native = _module_maps(model, fam["rename"])
    host = std_to_native.get(_host_path(fam, value, layer), "")
    for cond in conds:
        found, v = _config_value(model, host, cond["config"])
        if found and v == cond.get("equals", True):
            return cond["reason"]
    return None


def available(model, family, layer=0):
    """{name: None if the model serves it, else the reason} for every value."""
    fam = load_family(family)
    return {name: _unavailable(model, fam, name, layer) for name in fam["values"]}


# --- probes ------------------------------------------------------------------

class _Site:
    """The reads and writes at one point: [(name, copy)] and [(name, tensor)]."""

    def __init__(self):
        self.reads, self.writes = [], []

    def apply(self, values, current):
        for name, copy in self.reads:
            values[name] = current.detach().clone() if copy else current.detach()
        for name, tensor in self.writes:
            current = tensor.detach().clone().to(current.dtype)
        return current


class _CallNode:
    """The sites of one labeled call: at its inputs, its output, inner calls."""

    def __init__(self):
        self.inputs = {}   # select (int | str) -> _Site
        self.output = {}   # tuple index -> _Site
        self.children = {}  # label -> _CallNode


def _split_label(label):
    fname, _, idx = label.rpartition("_")
    if not fname or not idx.isdigit():
        raise ValueError(f"label '{label}' is not <function>_<n>")
    return fname, int(idx)


def _apply_output(sites, values, out):
    for idx, site in sorted(sites.items()):
        if isinstance(out, tuple):
            out = out[:idx] + (site.apply(values, out[idx]),) + out[idx + 1:]
        elif idx == 0:
            out = site.apply(values, out)
        else:
            raise ValueError(f"output {idx} of a call returning one tensor")
    return out


def _run_call(node, orig, args, kwargs, values):
    args, kwargs = list(args), dict(kwargs)
    for sel, site in node.inputs.items():
        if isinstance(sel, str):
            kwargs[sel] = site.apply(values, kwargs[sel])
        else:
            args[sel] = site.apply(values, args[sel])
    restore = []
    try:
        for fname in {(_split_label(l)[0]) for l in node.children}:
            ns, attr = _inner_target(orig, fname)
            inner = getattr(ns, attr) if not isinstance(ns, dict) else ns[attr]
            labels = {l: n for l, n in node.children.items() if _split_label(l)[0] == fname}
            wrapper = _counting_wrapper(inner, fname, labels, values)
            restore.append((ns, attr, inner))
            if isinstance(ns, dict):
                ns[attr] = wrapper
            else:
                setattr(ns, attr, wrapper)
        out = orig(*args, **kwargs)
    finally:
        for ns, attr, inner in reversed(restore):
            if isinstance(ns, dict):
                ns[attr] = inner
            else:
                setattr(ns, attr, inner)
    return _apply_output(node.output, values, out)


def _inner_target(fn, fname):
    globs = getattr(fn, "__globals__", {})
    if fname in globs:
        return globs, fname
    if fname in INNER_FUNCTIONS:
        return INNER_FUNCTIONS[fname]
    raise ValueError(f"no function '{fname}' to instrument inside {getattr(fn, '__name__', fn)}")


def _counting_wrapper(inner, fname, labels, values):
    count = [0]

    def wrapper(*args, **kwargs):
        label = f"{fname}_{count[0]}"
        count[0] += 1
        if label in labels:
            return _run_call(labels[label], inner, args, kwargs, values)
        return inner(*args, **kwargs)
    return wrapper


class Probes:
    """Reads (and writes) standardized values during the forwards run inside
    the `with` block; `values` holds the reads of the last forward."""

    def __init__(self, model, family, layer=0, reads=None, writes=None):
        self.model, self.family, self.layer = model, family, layer
        fam = load_family(family)
        if reads is None:
            reads = [n for n, r in available(model, family, layer).items() if r is None]
        self.reads, self.writes = list(reads), dict(writes or {})
        self.locations = {n: locate(model, fam, n, layer) for n in list(self.reads) + list(self.writes)}
        self.values = {}
        self._handles, self._patches, self._stack, self._registry = [], [], [], {}

    # Installation.
    def __enter__(self):
        modules = dict(self.model.named_modules())
        module_sites = {}  # (module, point, select) -> _Site
        call_roots = {}    # module -> {label: _CallNode}
        for kind, items in (("read", [(n, None) for n in self.reads]), ("write", list(self.writes.items()))):
            for name, tensor in items:
                loc = self.locations[name]
                if loc.calls:
                    node = call_roots.setdefault(loc.module, {}).setdefault(loc.calls[0], _CallNode())
                    for label in loc.calls[1:]:
                        node = node.children.setdefault(label, _CallNode())
                    table = node.output if loc.point == "output" else node.inputs
                    site = table.setdefault(loc.select if loc.select is not None else 0, _Site())
                else:
                    key = (loc.module, "output" if loc.point == "output" else "input",
                           loc.select if loc.select is not None else 0)
                    site = module_sites.setdefault(key, _Site())
                if kind == "read":
                    site.reads.append((name, loc.copy))
                else:
                    site.writes.append((name, tensor))
        try:
            for (path, point, sel), site in module_sites.items():
                self._hook_module(modules[path], point, sel, site)
            for path, labels in call_roots.items():
                self._hook_calls(modules[path], labels)
        except Exception:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc):
        for h in self._handles:
            h.remove()
        for pymod, attr, orig in reversed(self._patches):
            setattr(pymod, attr, orig)
        self._handles, self._patches, self._stack, self._registry = [], [], [], {}
        return False

    def _hook_module(self, module, point, sel, site):
        values = self.values
        if point == "input":
            if isinstance(sel, str):
                raise ValueError("modules are called with positional arguments only")

            def pre_hook(mod, args):
                args = list(args)
                args[sel] = site.apply(values, args[sel])
                return tuple(args)
            self._handles.append(module.register_forward_pre_hook(pre_hook))
        else:
            def hook(mod, args, out):
                return _apply_output({sel: site}, values, out)
            self._handles.append(module.register_forward_hook(hook))

    def _hook_calls(self, module, labels):
        """Tracks `module` as the running host; replaces each labeled function
        in its Python module by a wrapper counting this host's calls."""
        stack = self._stack

        def push(mod, args):
            stack.append((mod, {}))

        def pop(mod, args, out):
            if stack and stack[-1][0] is mod:
                stack.pop()
        self._handles.append(module.register_forward_pre_hook(push))
        self._handles.append(module.register_forward_hook(pop))

        pymod = sys.modules[type(module).__module__]
        for fname in {_split_label(l)[0] for l in labels}:
            if not hasattr(pymod, fname):
                raise ValueError(f"{type(module).__name__}'s module {pymod.__name__} has no function '{fname}'")
            key = (id(pymod), fname)
            registry = self._registry
            if key not in registry:
                orig = getattr(pymod, fname)
                per_host = {}
                registry[key] = per_host
                self._patches.append((pymod, fname, orig))
                setattr(pymod, fname, self._dispatcher(orig, fname, per_host))
            registry[key][module] = {l: n for l, n in labels.items() if _split_label(l)[0] == fname}

    def _dispatcher(self, orig, fname, per_host):
        stack, values = self._stack, self.values

        def wrapper(*args, **kwargs):
            if stack:
                host, counts = stack[-1]
                if host in per_host:
                    idx = counts.get(fname, 0)
                    counts[fname] = idx + 1
                    node = per_host[host].get(f"{fname}_{idx}")
                    if node is not None:
                        return _run_call(node, orig, args, kwargs, values)
            return orig(*args, **kwargs)
        wrapper.__wrapped__ = orig
        return wrapper


def run(model, family, input_ids, layer=0, reads=None, writes=None):
    """One forward with probes: (logits, {name: Tensor})."""
    with torch.no_grad(), Probes(model, family, layer, reads, writes) as probes:
        logits = model(input_ids)
    return logits, dict(probes.values)
