"""Write a PyTorch module as nnx IR text.

    from nnx.torch_export import export
    text = export(torch_model, inputs=[(None, 4)], name="mlp")

Parameters and buffers are written either inline, as ``dense_resource<...>``
blobs in a ``{-# dialect_resources ... #-}`` section (raw little-endian bytes,
so they round-trip bit-exactly), or to a safetensors weights file, as
``#nnx.external<"key">`` with the model's ``weights`` attribute naming the
file; keys are the tensors' state_dict names (``fc1.weight``), prefixed with
``<model name>/`` when one file holds several models (as
``nnx-externalize-weights`` writes them)::

    write(torch_model, "mlp.mlir", inputs=[(None, 4)], weights="mlp.safetensors")

``weights=None`` (the default) inlines models whose tensors take at most
:data:`INLINE_WEIGHTS_LIMIT` (64 MiB) and writes larger ones to
``<stem>.safetensors`` next to the .mlir; ``weights=False`` always inlines.
:func:`export` returns a string, which has no directory: above the limit it
raises unless given ``weights=False`` or a path (then written absolute).

Per-tensor ``requires_grad`` and per-module train / eval mode are carried,
and the recorded properties surgery must refuse (hooks, parametrizations,
prune masks, a subclass with its own forward, an uninitialized lazy layer)
are written as the dialect's attributes.

Supported modules: ``nn.Sequential`` (positional or OrderedDict-named),
``nn.ModuleList``, ``nn.ModuleDict``, :class:`nnx.nets.FeedFwdNN`
(``nnx.feed_fwd``), :class:`nnx.nets.ConvNN` (``nnx.conv_nn``), the leaf
layers of :data:`LAYER_EMITTERS` (one emitter per class: ``nn.Linear``
(also lazy), ``nn.Embedding``, ``nn.LayerNorm``, ``nn.BatchNorm1d``/``2d``,
``nn.Conv1d``/``2d``, ``nn.MaxPool2d``, ``nn.AvgPool2d``,
``nn.AdaptiveAvgPool2d``, ``nn.Flatten``, ReLU, GELU, Tanh, Sigmoid, SiLU,
LeakyReLU, Softmax, Dropout, Identity, ``nn.LSTM`` (not ``proj_size``),
``nn.GRU``, ``nn.RNN``, ``nn.LSTMCell``, ``nn.GRUCell``, ``nn.RNNCell``:
``nnx.lstm`` ..., called with their state tuples flattened into operands),
and any other module as
``nnx.module`` with a forward region. That forward comes from, in order:
``forward_specs`` (by path, class or class name), a ``nnx_forward(self, F,
*xs)`` method on the module, or a recording of its ``forward`` run on
example inputs (:mod:`nnx.recorder`), in which every child is a call. A spec
is a function ``spec(F, *xs)`` over a :class:`ForwardBuilder`::

    def residual(F, x):
        return F.add(x, F.call("proj", F.call("norm", x)))
"""

import collections
import ctypes
import dataclasses
import gc
import os
import re

import torch
from torch import nn

from .export_ir import (ExportError, Value, mlir_element_type,
                        scalar_literal, tensor_type)
from .recorder import Recorder, forward_error
from .nets import ConvNN, FeedFwdNN
from .peft import LoraLinear
from .structure import flatten, is_nested, paths, unflatten
from .safetensors import write_safetensors

__all__ = ["ExportError", "Input", "ForwardBuilder", "Exporter", "export",
           "write", "INLINE_WEIGHTS_LIMIT"]

#: In the automatic weights mode (``weights=None``), models whose tensors take
#: at most this many bytes are written inline, larger ones to a weights file.
INLINE_WEIGHTS_LIMIT = 64 << 20


class _TensorEntry:
    """One parameter or buffer of the models being exported."""

    def __init__(self, source, tensor, type_str, resource, key, model):
        self.source = source  # the object given, kept alive (its id is a key)
        self.tensor = tensor  # detached, on the CPU, contiguous
        self.type = type_str
        self.resource = resource  # its dense_resource name when inline
        self.key = key  # its name in a weights file, within its model
        self.model = model  # the name of the model it first appeared in


class Input:
    """One forward input: a shape with ``None`` or a name (a string) for
    dynamic dims, a dtype.

    Dynamic dims named alike are one size (``("batch", "src_len")`` and
    ``("batch", "tgt_len")``: one batch, two lengths); a ``None`` at
    position i of the dynamic dims is the size named ``#i`` (so
    ``(None, None)`` for ids and mask: the same batch and length)."""

    def __init__(self, shape, dtype=None):
        self.shape = tuple(shape)
        self.dtype = dtype

    @staticmethod
    def of(spec):
        if isinstance(spec, Input):
            return spec
        if (isinstance(spec, tuple) and len(spec) == 2
                and isinstance(spec[1], torch.dtype)):
            return Input(spec[0], spec[1])
        return Input(spec)


_BARE_ID = re.compile(r"^[A-Za-z_][A-Za-z0-9_$]*$")


def _element_type(dtype, where):
    try:
        return mlir_element_type(dtype)
    except ExportError as e:
        raise ExportError(f"{where}: {e}") from None


def _tensor_type(shape, dtype, where):
    dims = "".join(("?" if d is None or isinstance(d, str) else str(int(d)))
                   + "x" for d in shape)
    return f"tensor<{dims}{_element_type(dtype, where)}>"


def _sym(key):
    key = str(key)
    if _BARE_ID.match(key):
        return "@" + key
    return "@" + _string(key)


# Parameterless torch.nn activations and the nnx leaf op each exports to.
_ACTIVATION_LEAVES = [
    (nn.ReLU, "relu"), (nn.Tanh, "tanh"), (nn.Sigmoid, "sigmoid"),
    (nn.SiLU, "silu"), (nn.Identity, "identity"), (nn.Hardswish, "hardswish"),
]


def _activation(name):
    """A FeedFwdNN / ConvNN activation name as the `#nnx.activation<...>` enum."""
    return f"#nnx.activation<{name}>"


def _site_attrs(m):
    """A FeedFwdNN's / ConvNN's activation and dropout descriptor attrs, the
    per-site lists only where given."""
    attrs = [f"activation = {_activation(m.activation)}"]
    if m.activations is not None:
        attrs.append("activations = [" + ", ".join(
            _activation(a) for a in m.activations) + "]")
    attrs.append(f"dropout = {_f64(m.dropout)}")
    if m.dropout_probs is not None:
        attrs.append("dropout_probs = [" + ", ".join(
            _f64(p) for p in m.dropout_probs) + "]")
    return attrs


def _conv_nn_attrs(m):
    """A ConvNN's descriptor attrs (``nnx.conv_nn``), the per-conv lists only
    where given."""
    attrs = [f"in_channels = {m.in_channels}",
             f"channels = {_i64_array(m.channels)}",
             f"hidden_dims = {_i64_array(m.hidden_dims)}",
             f"output_dim = {m.output_dim}",
             f"kernel_size = {m.kernel_size}"]
    if m.kernel_sizes is not None:
        attrs.append(f"kernel_sizes = {_i64_array(m.kernel_sizes)}")
    attrs.append(f"pool = {m.pool}")
    if m.pools is not None:
        attrs.append(f"pools = {_i64_array(m.pools)}")
    return attrs + _site_attrs(m)


def _string(s):
    out = ['"']
    for ch in str(s):
        if ch in '"\\':
            out.append("\\" + ch)
        elif ord(ch) < 0x20 or ord(ch) > 0x7e:
            out.append("".join(f"\\{b:02X}" for b in ch.encode("utf-8")))
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _f64(v):
    """An MLIR float literal (it must have a '.') typed f64."""
    v = float(v)
    if v != v or v in (float("inf"), float("-inf")):
        raise ExportError(f"non-finite attribute value {v}")
    return f"{scalar_literal(v, 'f64')} : f64"


def _i64_array(vals):
    return "array<i64" + "".join(
        (": " if i == 0 else ", ") + str(int(v)) for i, v in enumerate(vals)) + ">"


def _path(prefix, key):
    return f"{prefix}.{key}" if prefix else str(key)


def _where(path):
    return f"module at '{path or '<root>'}'"


# Hook objects of these kinds are recorded as the property they implement
# (a parametrization or a prune mask), not as user hooks.
def _is_prune_hook(h):
    try:
        from torch.nn.utils import prune
    except ImportError:  # pragma: no cover
        return False
    return isinstance(h, prune.BasePruningMethod)


def _old_style_parametrization(h):
    name = type(h).__name__
    if name == "WeightNorm":
        return "weight_norm"
    if name == "SpectralNorm":
        return "spectral_norm"
    return None


_PARAMETRIZATION_NAMES = {
    "_WeightNorm": "weight_norm", "_SpectralNorm": "spectral_norm",
    "_Orthogonal": "orthogonal",
}


def _config_value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return f"{v} : i64"
    if isinstance(v, float) and v == v and abs(v) != float("inf"):
        return _f64(v)
    if isinstance(v, str):
        return _string(v)
    return None


def _config_attr(config):
    """A module's ``config`` (a dataclass, a dict or an object with scalar
    attributes, as HF models carry) as ``config = {...}``: the booleans,
    ints, finite floats and strings, which family conditions can test."""
    if config is None:
        return None
    if dataclasses.is_dataclass(config):
        items = dataclasses.asdict(config)
    elif isinstance(config, dict):
        items = config
    else:
        items = {k: v for k, v in vars(config).items() if not k.startswith("_")}
    entries = []
    for k, v in sorted(items.items()):
        text = _config_value(v)
        if text is not None and _BARE_ID.match(str(k)):
            entries.append(f"{k} = {text}")
    return "config = {" + ", ".join(entries) + "}" if entries else None


class _NoGrad:
    """Gradient recording off while a kept function is interpreted."""

    def __enter__(self):
        self._grad = torch.is_grad_enabled()
        torch.set_grad_enabled(False)

    def __exit__(self, *exc):
        torch.set_grad_enabled(self._grad)
        return False


class _Frozen:
    """Runs a model for shapes without changing it: every module in eval
    mode (no running-statistics updates), buffers restored afterwards."""

    def __init__(self, model):
        self._model = model

    def __enter__(self):
        mods = list(self._model.modules())
        self._modes = [(m, m.training) for m in mods]
        self._buffers = [(b, b.detach().clone()) for b in self._model.buffers()]
        for m in mods:
            m.training = False
        self._grad = torch.is_grad_enabled()
        torch.set_grad_enabled(False)
        return self._model

    def __exit__(self, *exc):
        torch.set_grad_enabled(self._grad)
        for m, mode in self._modes:
            m.training = mode
        for b, saved in self._buffers:
            b.copy_(saved)
        return False


def _type_of_examples(examples, where):
    return tensor_type(examples, where)


class ForwardBuilder:
    """Builds the ``nnx.forward`` region of a custom module.

    ``call(child, *xs)`` runs a child module (a dotted path below the custom
    module, e.g. ``"h.0"``); ``add`` / ``sub`` / ``mul`` are elementwise ops
    on equal types. Every op gets an ``nnx.source`` label (``add_0``,
    ``self_proj_0``, ...) unless one is given.
    """

    def __init__(self, module, path):
        self._module = module
        self._path = path
        self._lines = []
        self._counter = 0
        self._labels = collections.Counter()

    # -- values -------------------------------------------------------------
    def _fresh(self):
        self._counter += 1
        return f"%v{self._counter - 1}"

    def _label(self, base, given):
        if given is not None:
            return given
        base = re.sub(r"[^A-Za-z0-9_]", "_", base)
        n = self._labels[base]
        self._labels[base] += 1
        return f"{base}_{n}"

    def argument(self, i, examples):
        return Value(f"%arg{i}", examples,
                     _type_of_examples(examples, _where(self._path)))

    # -- ops ----------------------------------------------------------------
    def call(self, child, *args, source=None):
        """Calls the child registered at dotted path `child`; one result."""
        segs = str(child).split(".")
        target = self._module
        for s in segs:
            sub = target._modules.get(s) if hasattr(target, "_modules") else None
            if sub is None:
                raise ExportError(f"{_where(self._path)}: forward calls "
                                  f"'{child}', which is not a child module")
            target = sub
        args = [self._check(a) for a in args]
        examples = tuple(target(*[a.examples[k] for a in args])
                         for k in range(2))
        where = f"{_where(self._path)}, call of '{child}'"
        res = Value(self._fresh(), examples, _type_of_examples(examples, where))
        callee = "::".join(_sym(s) for s in segs)
        label = self._label("self_" + "_".join(segs), source)
        operands = ", ".join(a.name for a in args)
        in_types = ", ".join(a.type for a in args)
        self._lines.append(
            f"{res.name} = nnx.call {callee}({operands}) "
            f"{{nnx.source = {_string(label)}}} : ({in_types}) -> {res.type}")
        return res

    def _binary(self, kind, torch_fn, a, b, source):
        a, b = self._check(a), self._check(b)
        if a.type != b.type:
            raise ExportError(f"{_where(self._path)}: {kind} of {a.type} and "
                              f"{b.type} (broadcasting is not supported)")
        is_float = a.examples[0].is_floating_point()
        op = f"arith.{kind}{'f' if is_float else 'i'}"
        examples = tuple(torch_fn(a.examples[k], b.examples[k]) for k in range(2))
        res = Value(self._fresh(), examples, a.type)
        label = self._label(kind, source)
        self._lines.append(f"{res.name} = {op} {a.name}, {b.name} "
                           f"{{nnx.source = {_string(label)}}} : {a.type}")
        return res

    def add(self, a, b, source=None):
        return self._binary("add", torch.add, a, b, source)

    def sub(self, a, b, source=None):
        return self._binary("sub", torch.sub, a, b, source)

    def mul(self, a, b, source=None):
        return self._binary("mul", torch.mul, a, b, source)

    def _check(self, v):
        if not isinstance(v, Value):
            raise ExportError(f"{_where(self._path)}: forward spec used a "
                              f"{type(v).__name__} where a value was expected")
        return v


class Exporter:
    """Collects one or more models and prints them as one nnx IR file."""

    def __init__(self, forward_specs=None, functions=()):
        self._method = "forward"
        self._entry_root = None
        self._ran = True
        self._forward_specs = dict(forward_specs or {})
        self._functions = tuple(functions)
        self._models = []  # [(name, header text, body lines)]
        self._tensors = []  # [_TensorEntry], in order of first use
        self._tensor_index = {}  # id(tensor object) -> index in _tensors
        self._resource_names = set()

    # -- tensors --------------------------------------------------------------
    def _resource_name(self, hint):
        base = re.sub(r"[^A-Za-z0-9_]", "_", hint) or "t"
        if not re.match(r"[A-Za-z_]", base):
            base = "t_" + base
        name, n = base, 1
        while name in self._resource_names:
            name, n = f"{base}_{n}", n + 1
        self._resource_names.add(name)
        return name

    def tensor(self, t, hint, where, key=None):
        """A placeholder for tensor `t` in the model text, replaced when the
        text is printed by ``dense_resource<name> : tensor<...>`` (bytes kept
        exact) or ``#nnx.external<"key"> : tensor<...>``. `key` is its name
        in a weights file (default: `hint`). The same tensor object given
        twice (tied weights) is one entry, printed the same way both times."""
        src = t
        t = t.detach().cpu().contiguous()
        ty = _tensor_type(t.shape, t.dtype, where)
        index = self._tensor_index.get(id(src))
        if index is None:
            index = len(self._tensors)
            # `src` is kept so that its id is not reused by another object.
            self._tensors.append(_TensorEntry(
                src, t, ty, self._resource_name(hint), key or hint,
                getattr(self, "_model_name", None)))
            self._tensor_index[id(src)] = index
        return f"\0{index}\0"

    def tensor_bytes(self):
        """Bytes of all the tensors added so far (a tied tensor once)."""
        return sum(e.tensor.numel() * e.tensor.element_size()
                   for e in self._tensors)

    def state_dict(self):
        """{key: tensor} of what a weights file of these models holds, in
        order: keys are PyTorch state_dict names relative to the model
        (``fc1.weight``, ``0.bias``), prefixed with ``<model name>/`` when
        the exporter holds several models."""
        return collections.OrderedDict(
            (self._key(e), e.tensor) for e in self._tensors)

    def _key(self, e):
        if len(self._models) > 1:
            return f"{e.model}/{e.key}"
        return e.key

    @staticmethod
    def _resource_hex(t):
        if t.dtype == torch.bfloat16:
            raw = t.view(torch.int16).numpy().astype("<i2").tobytes()
        else:
            arr = t.numpy()
            raw = arr.astype(arr.dtype.newbyteorder("<"), copy=False).tobytes()
        header = t.element_size().to_bytes(4, "little").hex()
        return "0x" + header + raw.hex().upper()

    # -- models ---------------------------------------------------------------
    def add_model(self, model, inputs=None, name="model", root="net",
                  method="forward", examples=None):
        """Adds `model` as ``nnx.model @name`` with root module key `root`.

        `inputs`: one spec per forward argument, each a shape with ``None``
        for dynamic dims (e.g. ``(None, 4)``), an :class:`Input`, or
        ``(shape, dtype)``; for an argument that is a tuple or a list of
        tensors (an LSTM's ``(h, c)``), a tuple or a list of specs, nested
        like it. The dtype defaults to the model's first floating
        parameter's (f32 if none). The IR takes the tensors flattened in
        order (:mod:`nnx.structure`); the root forward's ``nnx.input_names``
        keeps their places in the call.

        `method`: the entry point, when it is not ``forward`` (a two-tower
        model's ``encode_image``, a VAE's ``decode``); a bound method given
        as `model` names both. The root is then a custom module whose
        forward is that method, and the modules it never calls are kept,
        marked ``nnx.uncalled``.

        `examples`: the two example inputs the model is run on (a pair, each
        a tensor or a tuple with one value per argument: a tensor, or a
        tuple or list of them, nested alike in both), where the exporter's
        own (small, random) ones do not suit the model. Their dynamic dims
        must differ, their static ones match `inputs`; without `inputs`, the
        dims that differ are the dynamic ones.
        """
        model, method = _entry_point(model, method)
        self._method = method
        self._entry_root = model if method != "forward" else None
        default = next((p.dtype for p in model.parameters()
                        if p.is_floating_point()), torch.float32)
        fn = getattr(model, method)
        if examples is not None:
            inputs, examples, self._tree = _given_examples(inputs, examples,
                                                           fn)
        elif inputs is None:
            raise ExportError("export needs `inputs` (the input shapes) or "
                              "`examples` (two example inputs)")
        else:
            inputs, self._tree = _argument_specs(inputs, fn)
        types = [_tensor_type(inp.shape, inp.dtype or default, f"input {i}")
                 for i, inp in enumerate(inputs)]
        if examples is None:
            examples = self._choose_examples(model, inputs, default,
                                             self._run_fn(model))
        else:
            examples = [tuple(e.to(inp.dtype or default) for e in pair)
                        for inp, pair in zip(inputs, examples)]
        if any(m[0] == name for m in self._models):
            raise ExportError(f"a model named '{name}' was already added")
        self._model_name = name
        self._model_prefix = re.sub(r"[^A-Za-z0-9_]", "_", name)
        self._ran = not _has_lazy(model)
        self._examples = self._record_examples(model, examples,
                                               self._run_fn(model)) \
            if self._uses_specs(model) else {}
        self._forwards = self._record_forwards(model, examples)
        self._emitted = {}
        self._calls = {}
        lines = []
        self._emit(model, root, "", 1, lines)
        lines.append("}")
        self._models.append((name, f"nnx.model {_sym(name)} inputs("
                             f"{', '.join(types)})", lines))
        return self

    def _run_fn(self, model):
        """The model's entry point as a plain call on the flattened
        arguments."""
        fn = getattr(model, self._method) if self._method != "forward" \
            else model
        tree = self._tree
        return lambda *leaves: fn(*unflatten(tree, leaves))

    @staticmethod
    def _record_examples(model, examples, run):
        """Runs a copy of `model` on the two example inputs and records, per
        module path, the inputs of the module's first call in each run."""
        from torch.nn.modules.lazy import LazyModuleMixin
        if any(isinstance(mod, LazyModuleMixin) and mod.has_uninitialized_params()
               for mod in model.modules()):
            return {}  # running it would initialize (change) the model
        calls = [{}, {}]
        which = [0]
        handles = []
        for mpath, mod in model.named_modules():
            def pre(mod, args, mpath=mpath):
                calls[which[0]].setdefault(mpath, tuple(args))
            handles.append(mod.register_forward_pre_hook(pre))
        try:
            with _Frozen(model):
                for k in range(2):
                    which[0] = k
                    run(*[ex[k] for ex in examples])
        except ExportError:
            raise
        except Exception as e:
            raise forward_error(e) from None
        finally:
            for h in handles:
                h.remove()
        out = {}
        for mpath, args0 in calls[0].items():
            args1 = calls[1].get(mpath)
            if args1 is not None and len(args0) == len(args1):
                out[mpath] = [(a, b) for a, b in zip(args0, args1)]
        return out

    @classmethod
    def _choose_examples(cls, model, inputs, default, run):
        """The two example inputs per forward argument whose runs tell
        static dims from dynamic ones. A dynamic spatial dim (a dim after
        the first two of a rank >= 3 input: an image's height and width, a
        signal's length) takes the first sizes of :data:`_SPATIAL_SIZES`
        the model runs on in both runs: small in the first run and large in
        the second, so that strides and pools do not shrink both runs to
        the same size (which would read as static); both small for a model
        with a length limit; then larger pairs, for models whose pools and
        strides need a minimum size (SqueezeNet, DenseNet, Inception v3)."""

        def names(inp):
            i = 0
            for pos, d in enumerate(inp.shape):
                if d is None or isinstance(d, str):
                    yield pos, f"#{i}" if d is None else d
                    i += 1

        def make(spatial, sizes):
            symbols = {}
            return [tuple(cls._example(inp.shape, inp.dtype or default, k,
                                       symbols, spatial, sizes)
                          for k in range(2)) for inp in inputs]
        spatial = {name for inp in inputs if len(inp.shape) >= 3
                   for pos, name in names(inp) if pos >= 2}
        if not spatial or _has_lazy(model):
            return make((), None)
        error = None
        for sizes in _SPATIAL_SIZES:
            examples = make(spatial, sizes)
            try:
                with _Frozen(model):
                    for k in range(2):
                        run(*[ex[k] for ex in examples])
                return examples
            except ExportError:
                raise
            except Exception as e:  # the model's own limit: try others
                error = e
        raise forward_error(error, None, "on every example size the exporter "
                            "tried (" + ", ".join(
                                f"{f(0, 0)} and {f(0, 1)}"
                                for f in _SPATIAL_SIZES) + " pixels)")

    @staticmethod
    def _example(shape, dtype, k, symbols, spatial=(), sizes=None):
        gen = torch.Generator().manual_seed(1234 + k)
        # Each size symbol gets its own size, different in the two runs, so
        # the recorded sizes tell batch from sequence (run 0: 2, 3, 4, ...;
        # run 1: 3, 7, 11, ...: the pairs of different symbols grow apart,
        # so a size derived from one (a strided conv's length, (3, 7) ->
        # (2, 4)) does not repeat another's pair, (2, 3), and get taken for
        # it); a symbol in `spatial` is sizes(j, k) instead.
        dims, i = [], 0
        for d in shape:
            if d is None or isinstance(d, str):
                name = f"#{i}" if d is None else d
                j = symbols.setdefault(name, len(symbols))
                if name in spatial and sizes is not None:
                    dims.append(sizes(j, k))
                else:
                    dims.append(2 + j if k == 0 else 3 + 4 * j)
                i += 1
            else:
                dims.append(int(d))
        if dtype.is_floating_point:
            return torch.randn(dims, generator=gen).to(dtype)
        return torch.zeros(dims, dtype=dtype)

    def text(self, weights=False):
        """The IR text of the models added so far.

        `weights` False: every tensor inline, as a ``dense_resource`` blob.
        A string: every tensor as ``#nnx.external<"key">`` and each model
        with ``attributes {weights = "<the string>"}``; the caller writes
        the file (:meth:`state_dict` gives its contents, :meth:`write` does
        both). None: inline if :meth:`tensor_bytes` is at most
        :data:`INLINE_WEIGHTS_LIMIT`, else an :class:`ExportError` (a string
        has no directory to put a weights file in)."""
        weights = self.weights_target(weights)
        external = weights is not False
        if external:
            subst = [f"#nnx.external<{_string(self._key(e))}> : {e.type}"
                     for e in self._tensors]
            attrs = f" attributes {{weights = {_string(os.fspath(weights))}}}"
        else:
            subst = [f"dense_resource<{e.resource}> : {e.type}"
                     for e in self._tensors]
            attrs = ""
        placeholder = re.compile(r"\0([0-9]+)\0")
        models = []
        for _, header, lines in self._models:
            body = "\n".join(lines)
            body = placeholder.sub(lambda m: subst[int(m.group(1))], body)
            models.append(f"{header}{attrs} {{\n{body}")
        out = "\n\n".join(models) + "\n"
        if self._tensors and not external:
            out += "\n{-#\n  dialect_resources: {\n    builtin: {\n"
            out += ",\n".join(f"      {e.resource}: \"{self._resource_hex(e.tensor)}\""
                               for e in self._tensors)
            out += "\n    }\n  }\n#-}\n"
        return out

    def write(self, path, weights=None):
        """Writes the models' IR to `path` and, when the tensors go to a
        weights file, that file first. Returns the IR text.

        `weights`: None (automatic: inline when :meth:`tensor_bytes` is at
        most :data:`INLINE_WEIGHTS_LIMIT`, else ``<stem>.safetensors`` next
        to `path`), False (inline), True (``<stem>.safetensors``), or a path
        of the safetensors file; a relative one is relative to the directory
        of `path` and written into the IR as given."""
        path = os.fspath(path)
        stem = os.path.splitext(os.path.basename(path))[0]
        weights = self.weights_target(weights, stem)
        text = self.text(weights)
        if weights is not False:
            self.write_weights(os.path.join(
                os.path.dirname(os.path.abspath(path)), os.fspath(weights)))
        with open(path, "w") as f:
            f.write(text)
        return text

    def weights_target(self, weights, stem=None):
        """The weights policy, in one place: False (inline), or the weights
        file the IR names. `weights` None: inline if :meth:`tensor_bytes`
        is at most :data:`INLINE_WEIGHTS_LIMIT`, else ``<stem>.safetensors``
        (an :class:`ExportError` without a `stem`: a string has no
        directory); True: ``<stem>.safetensors``; False or a path: itself."""
        if weights is None:
            weights = self.tensor_bytes() > INLINE_WEIGHTS_LIMIT
            if weights and stem is None:
                raise ExportError(
                    f"the models' tensors take {self.tensor_bytes()} bytes, "
                    f"more than INLINE_WEIGHTS_LIMIT ({INLINE_WEIGHTS_LIMIT}) "
                    "to inline automatically: write() them with a weights "
                    "file, give export() weights=<path>, or weights=False "
                    "to inline them anyway")
        if weights is True:
            if stem is None:
                raise ExportError("weights=True needs a file name: give a "
                                  "path, or use write()")
            weights = stem + ".safetensors"
        return weights

    def write_weights(self, target):
        """The models' tensors as a safetensors file at `target`."""
        write_safetensors(target, self.state_dict(), metadata={
            "format": "pt", "producer": "nnx.torch_export"})

    # -- modules --------------------------------------------------------------
    def _common(self, m, path, tensor_names):
        """The ModuleAttrs every module op carries, as `name = value` texts."""
        attrs = []
        if m.training:
            attrs.append("train")
        hooks, param_kinds, pruned = [], {}, []
        for kind, table in (("forward_pre", m._forward_pre_hooks),
                            ("forward", m._forward_hooks),
                            ("backward", m._backward_hooks)):
            for h in table.values():
                if _is_prune_hook(h):
                    pruned.append(h._tensor_name)
                    continue
                if getattr(h, "__name__", "") == "_infer_parameters":
                    continue  # a lazy layer's own initializer, recorded as `lazy`
                pk = _old_style_parametrization(h)
                if pk is not None:
                    param_kinds[getattr(h, "name", "weight")] = pk
                    continue
                hooks.append(f"{kind}:{getattr(h, '__name__', type(h).__name__)}")
        if hooks:
            attrs.append("hooks = [" + ", ".join(_string(h) for h in hooks) + "]")
        rg = []
        for t in tensor_names:
            p = m._parameters.get(t)
            if p is None:
                for alt in (t + "_orig", t + "_v"):
                    p = m._parameters.get(alt)
                    if p is not None:
                        break
            if p is None and hasattr(m, "parametrizations") and \
                    t in getattr(m, "parametrizations", {}):
                p = m.parametrizations[t].original
            if p is not None and not p.requires_grad:
                rg.append(f"{t} = false")
        if rg:
            attrs.append("requires_grad = {" + ", ".join(rg) + "}")
        if hasattr(m, "parametrizations") and \
                isinstance(m.parametrizations, nn.ModuleDict):
            for t, plist in m.parametrizations.items():
                names = [_PARAMETRIZATION_NAMES.get(type(p).__name__,
                                                    type(p).__name__)
                         for p in plist]
                param_kinds[t] = "+".join(names)
        if param_kinds:
            attrs.append("parametrizations = {" + ", ".join(
                f"{k} = {_string(v)}" for k, v in param_kinds.items()) + "}")
        if pruned:
            attrs.append("pruned = [" + ", ".join(_string(p) for p in pruned) + "]")
        return attrs

    def _t(self, m, path, tname):
        return self.tensor(getattr(m, tname),
                           f"{self._model_prefix}.{path}.{tname}"
                           if path else f"{self._model_prefix}.{tname}",
                           f"{_where(path)}, tensor '{tname}'",
                           key=_path(path, tname))

    @staticmethod
    def _own_forward(m, base):
        return type(m).forward is not base.forward

    def _subclass(self, m, base, attrs):
        if type(m) is not base and self._own_forward(m, base):
            attrs.append(f"subclass = {_string(type(m).__name__)}")

    def _leaf(self, lines, ind, op, key, attrs):
        pad = "  " * ind
        body = f" {{{', '.join(attrs)}}}" if attrs else ""
        lines.append(f"{pad}nnx.{op} {_sym(key)}{body}")

    @staticmethod
    def _own_names(m):
        return [n for n, t in list(m._parameters.items()) +
                list(m._buffers.items()) if t is not None]

    def _state(self, m, path, attrs):
        own = [(n, t) for n, t in list(m._parameters.items()) +
               list(m._buffers.items()) if t is not None]
        if own:
            attrs.append("state = {" + ", ".join(
                f"{n} = {self._t(m, path, n)}" for n, _ in own) + "}")
        buffers = [n for n, t in m._buffers.items() if t is not None]
        if buffers:
            attrs.append("nnx.buffers = [" + ", ".join(
                _string(n) for n in buffers) + "]")

    def _container(self, lines, ind, head, attrs, children, path):
        pad = "  " * ind
        kw = f" attributes {{{', '.join(attrs)}}}" if attrs else ""
        lines.append(f"{pad}{head}{kw} {{")
        for ckey, child in children:
            if child is not None:
                self._emit(child, ckey, _path(path, ckey), ind + 1, lines)
        lines.append(f"{pad}}}")

    def _emit(self, m, key, path, ind, lines):
        pad = "  " * ind
        if id(m) in self._emitted:
            target = self._emitted[id(m)]
            if not target:
                raise ExportError(f"{_where(path)}: registers the root module "
                                  "again, which nnx cannot alias")
            ref = "::".join(_sym(s) for s in target.split("."))
            lines.append(f"{pad}nnx.alias {_sym(key)} = {ref}")
            return
        self._emitted[id(m)] = path
        if self._spec_for(m, path) is not None or m is self._entry_root or (
                isinstance(m, _CONTAINERS) and not _is_container(m)):
            self._custom(m, key, path, ind, lines)
            return
        if isinstance(m, FeedFwdNN):
            attrs = self._common(m, path, self._own_names(m))
            attrs += [f"input_dim = {m.input_dim}",
                      f"hidden_dims = {_i64_array(m.hidden_dims)}",
                      f"output_dim = {m.output_dim}"] + _site_attrs(m)
            self._state(m, path, attrs)
            self._container(lines, ind, f"nnx.feed_fwd {_sym(key)}", attrs,
                            [("layers", m.layers)], path)
            return
        if isinstance(m, ConvNN):
            attrs = self._common(m, path, self._own_names(m)) + _conv_nn_attrs(m)
            self._state(m, path, attrs)
            self._container(lines, ind, f"nnx.conv_nn {_sym(key)}", attrs,
                            [("layers", m.layers), ("fcs", m.fcs)], path)
            return
        if isinstance(m, nn.Sequential):
            keys = list(m._modules.keys())
            positional = keys == [str(i) for i in range(len(keys))]
            attrs = self._common(m, path, self._own_names(m))
            self._subclass(m, nn.Sequential, attrs)
            self._state(m, path, attrs)
            keying = "positional" if positional else "named"
            self._container(lines, ind, f"nnx.sequential {_sym(key)} keying = {keying}",
                            attrs, list(m._modules.items()), path)
            return
        if isinstance(m, (nn.ModuleList, nn.ModuleDict)):
            attrs = self._common(m, path, self._own_names(m))
            self._state(m, path, attrs)
            op = "module_list" if isinstance(m, nn.ModuleList) else "module_dict"
            self._container(lines, ind, f"nnx.{op} {_sym(key)}", attrs,
                            list(m._modules.items()), path)
            return
        leaf = self._leaf_attrs(m, path)
        if leaf is not None:
            op, tensor_names, extra, base = leaf
            attrs = self._common(m, path, tensor_names) + extra
            self._subclass(m, base, attrs)
            self._leaf(lines, ind, op, key, attrs)
            return
        self._custom(m, key, path, ind, lines)

    def _leaf_attrs(self, m, path):
        """(op, tensor names, attrs, base class) for a leaf layer, or None:
        the emitter registered for the nearest class in `m`'s MRO."""
        emit = _layer_emitter(m)
        return None if emit is None else emit(self, m, path, _where(path))

    def _spec_for(self, m, path):
        specs = self._forward_specs
        for k in (path, type(m), type(m).__name__):
            if k in specs:
                return specs[k]
        return None

    def _custom(self, m, key, path, ind, lines):
        """`m` as ``nnx.module`` with its forward: from a spec (``forward_specs``
        or an ``nnx_forward`` method), else from the recording of its calls.
        A module the model's forward never calls (torchvision's
        ``StochasticDepth`` on a block without residual, GoogLeNet's
        auxiliary heads in eval) is kept, with its children and tensors,
        marked ``nnx.uncalled`` and without a forward."""
        spec = self._spec_for(m, path)
        if spec is None and hasattr(m, "nnx_forward"):
            spec = lambda F, *xs: m.nnx_forward(F, *xs)  # noqa: E731
        pad = "  " * ind
        attrs = self._common(m, path, self._own_names(m))
        self._state(m, path, attrs)
        config = _config_attr(getattr(m, "config", None))
        if config:
            attrs.append(config)
        uncalled = not self._was_called(m, path, spec)
        if uncalled:
            attrs.append("nnx.uncalled")
        head = f"{pad}nnx.module {_sym(key)} class = {_string(type(m).__name__)}"
        lines.append(head + (f" attributes {{{', '.join(attrs)}}}" if attrs else "")
                     + " {")
        names, inputs, kept = None, None, {}
        if uncalled:
            pass
        elif spec is not None:
            args, results, body, kept = self._spec_forward(m, path, spec)
        else:
            rec = self._forwards[id(m)]
            args, results, body, kept = rec.args, rec.results, rec.lines, \
                rec.kept
            names = rec.output_names
            if not path and is_nested(self._tree):
                inputs = paths(self._tree)
        for ckey, child in m._modules.items():
            if child is not None:
                self._emit(child, ckey, _path(path, ckey), ind + 1, lines)
        for fname, krec in kept.items():
            self._function_module(krec, fname, ind + 1, lines)
        if not uncalled:
            self._forward(lines, ind + 1, args, results, body, names,
                          self._method if not path else None, inputs)
        lines.append(f"{pad}}}")

    def _was_called(self, m, path, spec):
        """Whether the model's forward calls custom module `m` (so that its
        forward is known); an ExportError where that cannot be known (the
        model was not run: an uninitialized lazy layer) or where the root
        itself is never run."""
        if spec is not None:
            called = path in self._calls or path in self._examples
        else:
            called = id(m) in self._forwards
        if called:
            return True
        if not path or not self._ran:
            raise ExportError(
                f"{_where(path)}: custom module {type(m).__name__} is never "
                "called by the model's forward, so its forward types are "
                "unknown" + ("" if path else " (the root must be run)"))
        return False

    def _forward(self, lines, ind, args, results, body, output_names=None,
                 entry=None, input_names=None):
        pad = "  " * ind
        arg_text = ", ".join(f"{a.name}: {a.type}" for a in args)
        res_types = [r.type for r in results]
        arrow = res_types[0] if len(res_types) == 1 else f"({', '.join(res_types)})"
        fattrs = []
        if input_names is not None:
            # The root called with a tuple or list argument: each argument's
            # place in the call (nnx.structure).
            fattrs.append("nnx.input_names = [" + ", ".join(
                _string(n) for n in input_names) + "]")
        if output_names is not None:
            fattrs.append("nnx.output_names = [" + ", ".join(
                _string(n) for n in output_names) + "]")
        if entry is not None and entry != "forward":
            # The root exported through another method (`encode_image`):
            # the model's forward is that method.
            fattrs.append(f"nnx.entry = {_string(entry)}")
        attrs = f" attributes {{{', '.join(fattrs)}}}" if fattrs else ""
        lines.append(f"{pad}nnx.forward @forward({arg_text}) -> {arrow}{attrs} {{")
        for line in body:
            lines.append(f"{pad}  {line}")
        lines.append(f"{pad}  nnx.return {', '.join(r.name for r in results)} : "
                     f"{', '.join(res_types)}")
        lines.append(f"{pad}}}")

    def _call_record(self, m, path):
        """(example pairs of the tensor arguments, constant arguments, names
        of the tensor arguments or None for the first ones) of the first
        call of the module at `path`."""
        call = self._calls.get(path)
        if call is not None:
            return call
        examples = self._examples.get(path)
        if examples is None:
            raise ExportError(
                f"{_where(path)}: custom module {type(m).__name__} is never "
                "called by the model's forward, so its forward types are unknown")
        return examples, {}, None

    def _spec_forward(self, m, path, spec):
        examples = self._call_record(m, path)[0]
        F = ForwardBuilder(m, path)
        args = [F.argument(i, ex) for i, ex in enumerate(examples)]
        with _Frozen(m):
            result = spec(F, *args)
        results = list(result) if isinstance(result, (list, tuple)) else [result]
        for r in results:
            F._check(r)
        return args, results, F._lines, {}

    def _function_module(self, rec, key, ind, lines):
        """A kept function as a parameterless child module."""
        pad = "  " * ind
        lines.append(f"{pad}nnx.module {_sym(key)} class = {_string(key)} {{")
        for fname, krec in rec.kept.items():
            self._function_module(krec, fname, ind + 1, lines)
        self._forward(lines, ind + 1, rec.args, rec.results, rec.lines,
                      rec.output_names)
        lines.append(f"{pad}}}")

    def _uses_specs(self, model):
        return any(self._spec_for(m, p) is not None or hasattr(m, "nnx_forward")
                   for p, m in model.named_modules())

    def _is_custom(self, m, path=None):
        """Modules written as ``nnx.module`` with a recorded forward."""
        if hasattr(m, "nnx_forward") or any(
                k in self._forward_specs for k in (type(m), type(m).__name__)):
            return False
        if self._entry_root is not None and m is self._entry_root:
            return True  # exported through another method than forward
        if isinstance(m, _CONTAINERS):
            return not _is_container(m)
        return self._leaf_kind(m) is None

    def _leaf_kind(self, m):
        return _layer_emitter(m)

    def _record_forwards(self, model, examples):
        """Runs `model` under the recorder; the forwards of its custom
        modules by id."""
        from torch.nn.modules.lazy import LazyModuleMixin
        if any(isinstance(mod, LazyModuleMixin) and mod.has_uninitialized_params()
               for mod in model.modules()):
            return {}  # running it would initialize (change) the model
        if self._method == "forward" and not any(
                self._is_custom(mod) for mod in model.modules()):
            # Nothing to record (and a float16 model, which PyTorch 1.13
            # cannot run on the CPU, still exports).
            return {}
        rec = Recorder(model, self._is_custom,
                       lambda m: not self._is_custom(m) and not _is_container(
                           m),
                       self._functions, self._method)
        with _Frozen(model):
            rec.run([tuple(e.clone() for e in ex) for ex in examples],
                    self._tree)
        forwards, held = rec.forwards, rec.held_bytes()
        del rec
        if held > _COLLECT_BYTES:
            _free_recording()
        return forwards


#: Bytes of example values a finished recording may leave to Python's
#: next full collection (above it they are collected at once).
_COLLECT_BYTES = 64 << 20


def _free_recording():
    """Frees a finished recording's values now: its frames hold every
    value of both example runs in reference cycles, which would wait for
    Python's next full collection, and the C heap keeps what they freed
    unless trimmed (glibc), while the caller goes on to copy the model."""
    gc.collect()
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (AttributeError, OSError):
        pass  # not glibc: the memory is reused by later allocations


#: Sizes tried, in order, for a dynamic spatial dim (the `j`-th size
#: symbol) in example run `k`: (small, large) first, then both small (a
#: model with a length limit), then larger pairs (a model that pools or
#: strides below its minimum size on small images).
_SPATIAL_SIZES = (
    lambda j, k: (2 + j, 64 + 3 * j)[k],
    lambda j, k: (2 + j, 3 + 4 * j)[k],
    lambda j, k: (64 + 3 * j, 97 + 5 * j)[k],
    lambda j, k: (160 + 3 * j, 227 + 5 * j)[k],
    lambda j, k: (299 + 3 * j, 331 + 5 * j)[k],
)


def _has_lazy(model):
    from torch.nn.modules.lazy import LazyModuleMixin
    return any(isinstance(m, LazyModuleMixin) and m.has_uninitialized_params()
               for m in model.modules())


def _entry_point(model, method):
    """(module, method name) of what export was given: a module and a method
    name, or a bound method of a module (``model.encode_image``)."""
    import inspect
    if inspect.ismethod(model) and isinstance(model.__self__, nn.Module):
        if method not in ("forward", model.__func__.__name__):
            raise ExportError(f"export was given the bound method "
                              f"'{model.__func__.__name__}' and method="
                              f"'{method}'")
        model, method = model.__self__, model.__func__.__name__
    if not isinstance(model, nn.Module):
        raise ExportError(f"export needs an nn.Module or a bound method of "
                          f"one, not a {type(model).__name__}")
    fn = getattr(model, method, None)
    if not callable(fn):
        raise ExportError(f"{type(model).__name__} has no method '{method}' "
                          "to export")
    return model, method


def _is_spec(x):
    """Whether `x` specifies one tensor: an Input, ``(shape, dtype)`` or a
    shape (ints, ``None`` and size names)."""
    if isinstance(x, Input):
        return True
    if not isinstance(x, (tuple, list)):
        return False
    if len(x) == 2 and isinstance(x[1], torch.dtype):
        return True
    return all(d is None or isinstance(d, str) or (
        isinstance(d, int) and not isinstance(d, bool)) for d in x)


def _argument(fn, path):
    """The forward's argument at `path` (positions in the call) by name,
    with the line its forward is defined at."""
    import inspect
    params = list(inspect.signature(fn).parameters.values())
    positional = [p.name for p in params if p.kind in (
        p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    rest = [p.name for p in params if p.kind is p.VAR_POSITIONAL]
    i = path[0]
    name = positional[i] if i < len(positional) else (
        f"{rest[0]}[{i - len(positional)}]" if rest else f"#{i}")
    name += "".join(f"[{j}]" for j in path[1:])
    code = inspect.unwrap(getattr(fn, "__func__", fn)).__code__
    return (f"argument '{name}' of {fn.__qualname__} (at "
            f"{os.path.abspath(code.co_filename)}:{code.co_firstlineno})")


def _refuse(fn, given, takes):
    """A `bad` for :func:`nnx.structure.flatten`: an ExportError naming the
    value's place in `given` (``inputs``, ``examples[0]``) and the forward's
    argument there."""
    def bad(path, value):
        where = given + "".join(f"[{i}]" for i in path)
        arg = f", for {_argument(fn, path)}" if path else ""
        kind = type(value).__name__
        article = "an" if kind[0] in "aeiou" else "a"
        raise ExportError(f"{where}: {article} {kind}, not {takes}"
                          f"{arg}; nnx exports forward arguments that are "
                          "tensors, or tuples and lists of them")
    return bad


def _flatten_call(args, is_leaf, bad):
    """(leaves, tree) of a call's arguments `args` (:mod:`nnx.structure`;
    the tree a list, one item per argument)."""
    leaves, tree = [], []
    for i, arg in enumerate(args):
        got, t = flatten(arg, is_leaf, bad, (i,))
        leaves += got
        tree.append(t)
    return leaves, tree


def _argument_specs(inputs, fn):
    """(one Input per tensor, the call's tree) of `inputs`: a spec per
    forward argument, nested like a tuple or list argument."""
    if isinstance(inputs, Input) or (isinstance(inputs, tuple)
                                     and _is_spec(inputs)):
        inputs = [inputs]
    if not isinstance(inputs, (tuple, list)):
        _refuse(fn, "inputs", "a list of input specs")((), inputs)
    leaves, tree = _flatten_call(inputs, _is_spec, _refuse(
        fn, "inputs", "a shape, (shape, dtype), an Input or a tuple or list "
        "of them"))
    return [Input.of(x) for x in leaves], tree


def _given_examples(inputs, examples, fn):
    """(input specs, example pairs, the call's tree) from the user's two
    example inputs."""
    if not isinstance(examples, (tuple, list)) or len(examples) != 2:
        raise ExportError("examples= must be two example inputs (a pair, "
                          "each a tensor or a tuple of arguments)")
    runs, trees = [], []
    for k, e in enumerate(examples):
        leaves, tree = _flatten_call(
            e if isinstance(e, (tuple, list)) else [e],
            lambda x: isinstance(x, torch.Tensor),
            _refuse(fn, f"examples[{k}]", "a tensor"))
        runs.append(leaves)
        trees.append(tree)
    names = paths(trees[0])
    if paths(trees[1]) != names:
        raise ExportError(f"examples= must nest their tensors alike in both "
                          f"example inputs (at {', '.join(names)} and at "
                          f"{', '.join(paths(trees[1]))} of the call)")
    if inputs is None:
        inputs, pairs = [], {}
        for a, b in zip(*runs):
            if a.dim() != b.dim():
                raise ExportError(f"examples: tensors of ranks {a.dim()} and "
                                  f"{b.dim()} for one input")
            shape = []
            for da, db in zip(a.shape, b.shape):
                shape.append(da if da == db else pairs.setdefault(
                    (da, db), f"s{len(pairs)}"))
            inputs.append(Input(shape, a.dtype))
        specs = inputs
    else:
        specs, spec_tree = _argument_specs(inputs, fn)
        if paths(spec_tree) != names:
            raise ExportError(
                f"inputs= specifies tensors at {', '.join(paths(spec_tree))} "
                f"of the call, examples= gives them at {', '.join(names)}")
    seen = {}
    for i, inp, a, b in zip(names, specs, *runs):
        if a.dim() != len(inp.shape) or b.dim() != len(inp.shape):
            raise ExportError(f"examples: input {i} has rank "
                              f"{len(inp.shape)}, the examples {a.dim()} and "
                              f"{b.dim()}")
        n = 0
        for d, (spec, da, db) in enumerate(zip(inp.shape, a.shape, b.shape)):
            if spec is None or isinstance(spec, str):
                name = f"#{n}" if spec is None else spec
                n += 1
                if da == db:
                    raise ExportError(
                        f"examples: dynamic dim {d} of input {i} has size "
                        f"{da} in both examples; give examples whose dynamic "
                        "sizes differ, so that the runs tell them from static "
                        "ones")
                if seen.setdefault(name, (da, db)) != (da, db):
                    raise ExportError(
                        f"examples: dim {d} of input {i} is size '{name}', "
                        f"but its sizes ({da}, {db}) differ from that size's "
                        f"elsewhere {seen[name]}")
            elif da != int(spec) or db != int(spec):
                raise ExportError(f"examples: static dim {d} of input {i} is "
                                  f"{spec}, the examples have {da} and {db}")
    if len(set(seen.values())) != len(seen):
        raise ExportError("examples: two different dynamic sizes have the "
                          "same sizes in both examples, so the runs cannot "
                          "tell them apart; give them different sizes")
    pairs = [(a.detach().clone().to(inp.dtype or a.dtype),
              b.detach().clone().to(inp.dtype or b.dtype))
             for inp, a, b in zip(specs, *runs)]
    return specs, pairs, trees[0]


# Containers: no forward of their own (run without writing IR).
_CONTAINERS = (FeedFwdNN, ConvNN, nn.Sequential, nn.ModuleList, nn.ModuleDict)


def _is_container(m):
    """A container as its class defines it: a subclass that overrides the
    forward (an ``nn.Sequential`` subclass with its own) is a custom module
    whose children are the container's."""
    for base in _CONTAINERS:
        if isinstance(m, base):
            return type(m).forward is base.forward
    return False

def export(model, inputs=None, name="model", root="net", forward_specs=None,
           weights=None, functions=(), method="forward", examples=None):
    """`model` as nnx IR text (one ``nnx.model``).

    `weights`: None (inline ``dense_resource`` blobs if the tensors take at
    most :data:`INLINE_WEIGHTS_LIMIT` bytes, else an :class:`ExportError`:
    a string has no directory for a weights file), False (always inline), or
    a path: the tensors are written there as safetensors and the IR refers
    to them as ``#nnx.external`` with the file's absolute path (the text may
    be saved anywhere). :func:`write` keeps relative paths."""
    ex = Exporter(forward_specs, functions).add_model(
        model, inputs, name, root, method, examples)
    target = ex.weights_target(weights)
    if target is False:
        return ex.text(False)
    target = os.path.abspath(os.fspath(target))
    text = ex.text(target)
    ex.write_weights(target)
    return text


def write(model, path, inputs=None, name="model", root="net",
          forward_specs=None, weights=None, functions=(), method="forward",
          examples=None):
    """Writes `model` as nnx IR to `path`; returns the text.

    `weights` (see :meth:`Exporter.write`): None (automatic: inline up to
    :data:`INLINE_WEIGHTS_LIMIT` bytes of tensors, else
    ``<stem>.safetensors`` next to `path`), False (inline), True
    (``<stem>.safetensors``), or the weights file's path, relative to the
    directory of `path`."""
    return Exporter(forward_specs, functions).add_model(
        model, inputs, name, root, method, examples).write(path, weights)


# -----------------------------------------------------------------------------
# Leaf layers: one emitter per nn.Module class
# -----------------------------------------------------------------------------

#: nn.Module class -> emitter(exporter, module, path, where) giving
#: (nnx op, tensor names, attribute texts, base class).
LAYER_EMITTERS = {}


def _layer(*classes):
    def register(fn):
        for cls in classes:
            if cls is not None:
                LAYER_EMITTERS[cls] = fn
        return fn
    return register


def _layer_emitter(m):
    """The emitter of the nearest class in `m`'s MRO that has one; None if
    there is none, or if `m`'s class overrides that class's forward (its own
    forward is then recorded as a custom module's)."""
    for cls in type(m).__mro__:
        fn = LAYER_EMITTERS.get(cls)
        if fn is not None:
            return fn if type(m).forward is cls.forward else None
    return None


@_layer(nn.Linear)
def _linear_layer(ex, m, path, where):
    from torch.nn.modules.lazy import LazyModuleMixin
    if isinstance(m, LazyModuleMixin) and m.has_uninitialized_params():
        return ("linear", [], ["lazy", f"out_features = {m.out_features}"],
                type(m))
    extra = [f"weight = {ex._t(m, path, 'weight')}"]
    if m.bias is not None:
        extra.append(f"bias = {ex._t(m, path, 'bias')}")
    return ("linear", ["weight", "bias"], extra, nn.Linear)


@_layer(LoraLinear)
def _lora_layer(ex, m, path, where):
    extra = [f"weight = {ex._t(m, path, 'weight')}"]
    if m.bias is not None:
        extra.append(f"bias = {ex._t(m, path, 'bias')}")
    extra += [f"lora_A = {ex._t(m, path, 'lora_A')}",
              f"lora_B = {ex._t(m, path, 'lora_B')}",
              f"alpha = {_f64(m.alpha)}"]
    if m.merged:
        extra.append("merged")
    return ("lora", ["weight", "bias", "lora_A", "lora_B"], extra, LoraLinear)


@_layer(nn.Embedding)
def _embedding_layer(ex, m, path, where):
    if m.max_norm is not None:
        raise ExportError(f"{where}: nn.Embedding with max_norm (it "
                          "renormalizes rows during forward) has no nnx form")
    extra = [f"weight = {ex._t(m, path, 'weight')}"]
    if m.padding_idx is not None:
        extra.append(f"padding_idx = {int(m.padding_idx)}")
    return ("embedding", ["weight"], extra, nn.Embedding)


@_layer(nn.LayerNorm)
def _layer_norm_layer(ex, m, path, where):
    extra = [f"normalized_shape = {_i64_array(m.normalized_shape)}",
             f"eps = {_f64(m.eps)}"]
    if m.weight is not None:
        extra.append(f"weight = {ex._t(m, path, 'weight')}")
    if m.bias is not None:
        extra.append(f"bias = {ex._t(m, path, 'bias')}")
    return ("layer_norm", ["weight", "bias"], extra, nn.LayerNorm)


@_layer(getattr(nn, "RMSNorm", None))  # torch >= 2.4
def _rms_norm_layer(ex, m, path, where):
    if m.eps is None:
        raise ExportError(f"{where}: nn.RMSNorm with eps=None (the dtype's "
                          "machine epsilon) has no nnx form")
    extra = [f"normalized_shape = {_i64_array(m.normalized_shape)}",
             f"eps = {_f64(m.eps)}"]
    if m.weight is not None:
        extra.append(f"weight = {ex._t(m, path, 'weight')}")
    return ("rms_norm", ["weight"], extra, nn.RMSNorm)


@_layer(nn.BatchNorm1d, nn.BatchNorm2d)
def _batch_norm_layer(ex, m, path, where):
    if m.running_mean is None or m.running_var is None:
        raise ExportError(f"{where}: {_batch_norm_base(m).__name__} without "
                          "running statistics "
                          "(track_running_stats=False) has no nnx form")
    # momentum=None (a cumulative average) never touches an eval forward:
    # recorded, for to_torch and training.
    momentum = ("cumulative_average" if m.momentum is None
                else f"momentum = {_f64(m.momentum)}")
    extra = [f"running_mean = {ex._t(m, path, 'running_mean')}",
             f"running_var = {ex._t(m, path, 'running_var')}",
             f"eps = {_f64(m.eps)}", momentum]
    if m.weight is not None:
        extra.append(f"weight = {ex._t(m, path, 'weight')}")
    if m.bias is not None:
        extra.append(f"bias = {ex._t(m, path, 'bias')}")
    return ("batch_norm", ["weight", "bias"], extra, _batch_norm_base(m))


def _batch_norm_base(m):
    return nn.BatchNorm2d if isinstance(m, nn.BatchNorm2d) else nn.BatchNorm1d


def _activation_layer(op, cls):
    @_layer(cls)
    def emit(ex, m, path, where):
        return (op, [], [], cls)
    return emit


for _cls, _op in _ACTIVATION_LEAVES:
    _activation_layer(_op, _cls)


@_layer(nn.GELU)
def _gelu_layer(ex, m, path, where):
    return ("gelu", [], [f"approximate = #nnx.gelu_approximation<"
                         f"{m.approximate}>"], nn.GELU)


@_layer(nn.LeakyReLU)
def _leaky_relu_layer(ex, m, path, where):
    return ("leaky_relu", [], [f"negative_slope = {_f64(m.negative_slope)}"],
            nn.LeakyReLU)


@_layer(nn.Softmax)
def _softmax_layer(ex, m, path, where):
    if m.dim is None:
        raise ExportError(f"{where}: nn.Softmax needs an explicit dim")
    return ("softmax", [], [f"dim = {int(m.dim)} : i64"], nn.Softmax)


@_layer(nn.Dropout)
def _dropout_layer(ex, m, path, where):
    return ("dropout", [], [f"p = {_f64(m.p)}"], nn.Dropout)


def _pair(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


def _conv_padding(m, where, rank):
    """The symmetric zero padding of a Conv1d/Conv2d, one entry per spatial
    dim: ints as given, 'valid' as 0, 'same' as d (k - 1) / 2 where that is
    whole (torch pads an odd total one more on the right: refused)."""
    name = type(m).__name__
    if m.padding_mode != "zeros":
        raise ExportError(f"{where}: {name} with padding_mode="
                          f"'{m.padding_mode}' has no nnx form (only zeros)")
    if m.padding == "valid":
        return (0,) * rank
    if m.padding == "same":
        total = [d * (k - 1) for d, k in zip(m.dilation, m.kernel_size)]
        if any(t % 2 for t in total):
            raise ExportError(f"{where}: {name} with padding='same' and an "
                              "even kernel span pads unevenly, which has no "
                              "nnx form")
        return tuple(t // 2 for t in total)
    return tuple(m.padding)


@_layer(nn.Conv1d, nn.Conv2d)
def _conv_layer(ex, m, path, where):
    cls = nn.Conv2d if isinstance(m, nn.Conv2d) else nn.Conv1d
    rank = 2 if cls is nn.Conv2d else 1
    extra = [f"in_channels = {m.in_channels} : i64",
             f"out_channels = {m.out_channels} : i64",
             f"kernel_size = {_i64_array(m.kernel_size)}",
             f"stride = {_i64_array(m.stride)}",
             f"padding = {_i64_array(_conv_padding(m, where, rank))}",
             f"dilation = {_i64_array(m.dilation)}",
             f"groups = {m.groups} : i64",
             f"weight = {ex._t(m, path, 'weight')}"]
    if m.bias is not None:
        extra.append(f"bias = {ex._t(m, path, 'bias')}")
    return (f"conv{rank}d", ["weight", "bias"], extra, cls)


def _pool_window(m, where):
    stride = m.stride if m.stride is not None else m.kernel_size
    extra = [f"kernel_size = {_i64_array(_pair(m.kernel_size))}",
             f"stride = {_i64_array(_pair(stride))}",
             f"padding = {_i64_array(_pair(m.padding))}"]
    if m.ceil_mode:
        extra.append("ceil_mode")
    return extra


@_layer(nn.MaxPool2d)
def _max_pool2d_layer(ex, m, path, where):
    if m.return_indices:
        raise ExportError(f"{where}: nn.MaxPool2d with return_indices has no "
                          "nnx form")
    extra = _pool_window(m, where)
    extra.insert(3, f"dilation = {_i64_array(_pair(m.dilation))}")
    return ("max_pool2d", [], extra, nn.MaxPool2d)


@_layer(nn.AvgPool2d)
def _avg_pool2d_layer(ex, m, path, where):
    if m.divisor_override is not None:
        raise ExportError(f"{where}: nn.AvgPool2d with divisor_override has "
                          "no nnx form")
    extra = _pool_window(m, where)
    if m.count_include_pad:
        extra.append("count_include_pad")
    return ("avg_pool2d", [], extra, nn.AvgPool2d)


@_layer(nn.AdaptiveAvgPool2d)
def _adaptive_avg_pool2d_layer(ex, m, path, where):
    size = _pair(m.output_size)
    if any(v is None for v in size):
        raise ExportError(f"{where}: nn.AdaptiveAvgPool2d with a None output "
                          "size has no nnx form (give both sizes)")
    return ("adaptive_avg_pool2d", [],
            [f"output_size = {_i64_array(size)}"], nn.AdaptiveAvgPool2d)


@_layer(nn.Flatten)
def _flatten_layer(ex, m, path, where):
    return ("flatten", [], [f"start_dim = {int(m.start_dim)} : i64",
                            f"end_dim = {int(m.end_dim)} : i64"], nn.Flatten)


# Recurrent layers: the tensors keep PyTorch's names (weight_ih_l0, ...,
# bias_hh_l1_reverse; a cell's weight_ih, ...), so state_dict keys match.
_RECURRENT_OPS = [(nn.LSTM, "lstm"), (nn.GRU, "gru"), (nn.RNN, "rnn")]


def _recurrent_kind(m, table):
    for cls, op in table:
        if isinstance(m, cls):
            return cls, op
    raise ExportError(f"{type(m).__name__} is not a recurrent layer")


@_layer(nn.LSTM, nn.GRU, nn.RNN)
def _recurrent_layer(ex, m, path, where):
    cls, op = _recurrent_kind(m, _RECURRENT_OPS)
    if getattr(m, "proj_size", 0):
        raise ExportError(f"{where}: nn.LSTM with proj_size={m.proj_size} "
                          "(a projected hidden state) has no nnx form")
    extra = [f"input_size = {m.input_size}",
             f"hidden_size = {m.hidden_size}",
             f"num_layers = {m.num_layers}"]
    if not m.bias:
        extra.append("bias = false")
    if m.batch_first:
        extra.append("batch_first")
    if m.bidirectional:
        extra.append("bidirectional")
    if m.dropout:
        extra.append(f"dropout = {_f64(m.dropout)}")
    if cls is nn.RNN:
        extra.append(f"nonlinearity = {_activation(m.nonlinearity)}")
    names = list(m._flat_weights_names)
    extra += [f"{n} = {ex._t(m, path, n)}" for n in names]
    return (op, names, extra, cls)


_CELL_OPS = [(nn.LSTMCell, "lstm_cell"), (nn.GRUCell, "gru_cell"),
             (nn.RNNCell, "rnn_cell")]


@_layer(nn.LSTMCell, nn.GRUCell, nn.RNNCell)
def _cell_layer(ex, m, path, where):
    cls, op = _recurrent_kind(m, _CELL_OPS)
    extra = [f"input_size = {m.input_size}",
             f"hidden_size = {m.hidden_size}"]
    if cls is nn.RNNCell:
        extra.append(f"nonlinearity = {_activation(m.nonlinearity)}")
    names = ["weight_ih", "weight_hh"] + (["bias_ih", "bias_hh"]
                                          if m.bias else [])
    extra += [f"{n} = {ex._t(m, path, n)}" for n in names]
    return (op, names, extra, cls)
