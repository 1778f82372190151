"""nnx IR back to PyTorch: :func:`to_torch` builds an ``nn.Module`` from a
model that came from IR (a ``.mlir`` or bytecode file, a rebuilt recipe)::

    net = nnx.to_torch(nnx.load("edited.mlir"))
    torch.optim.Adam(p for p in net.parameters() if p.requires_grad)

The module has the IR's keys, tensors, ``requires_grad`` flags and train /
eval modes. Leaves are PyTorch's own modules (``nn.Linear``, ``nn.Conv2d``,
``nn.LayerNorm``, ...; :class:`nnx.peft.LoraLinear` for ``nnx.lora``,
:class:`RMSNorm` for ``nnx.rms_norm``, which torch 1.13 lacks); containers
are ``nn.Sequential`` / ``nn.ModuleList`` / ``nn.ModuleDict`` /
:class:`~nnx.nets.FeedFwdNN` / :class:`~nnx.nets.ConvNN`; a custom
``nnx.module`` becomes a ``torch.fx.GraphModule`` generated from its
forward region (its ``nnx.fn`` ops, the upstream ``arith`` / ``math`` /
``tensor`` ops the exporter writes, and ``nnx.call`` of its children),
which computes what the compiled forward computes.

A custom module's ``state`` tensors become buffers where its
``nnx.buffers`` list names them (the exporter records PyTorch's ``register_buffer``), and
parameters otherwise; IR without the list keeps the old rule (floating
point and requiring grad: a parameter).
"""

import collections
import operator
import re

import numpy as np
import torch
from torch import fx, nn
from torch.nn import functional as F

from . import _nnx
from .nets import ConvNN, FeedFwdNN
from .peft import LoraLinear

__all__ = ["to_torch", "RMSNorm", "BatchNorm", "ToTorchError"]


class ToTorchError(ValueError):
    """An IR construct with no PyTorch form here (named, with its module)."""


class RMSNorm(nn.Module):
    """``x * rsqrt(mean(x^2) + eps) * weight`` over the last
    ``len(normalized_shape)`` dims (``nnx.rms_norm``)."""

    def __init__(self, normalized_shape, eps=1e-6, elementwise_affine=True):
        super().__init__()
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.weight = (nn.Parameter(torch.ones(self.normalized_shape))
                       if elementwise_affine else None)

    def forward(self, x):
        dims = tuple(range(-len(self.normalized_shape), 0))
        y = x * torch.rsqrt(x.pow(2).mean(dims, keepdim=True) + self.eps)
        return y * self.weight if self.weight is not None else y


def to_torch(model, model_name=""):
    """The ``nn.Module`` of `model` (an ``nnx.Model``, from :func:`nnx.load`,
    or a path); `model_name` picks an ``nnx.model`` of a file with several."""
    if not isinstance(model, _nnx.Model):
        model = _nnx.Model.parse_file(str(model))
    return _Builder(model, model_name).build()


# -----------------------------------------------------------------------------
# The module tree
# -----------------------------------------------------------------------------

_DTYPES = {"f32": torch.float32, "f64": torch.float64, "f16": torch.float16,
           "bf16": torch.bfloat16, "i64": torch.int64, "i32": torch.int32,
           "i16": torch.int16, "i8": torch.int8, "i1": torch.bool,
           "index": torch.int64}


class TensorSource:
    """What the module builders (:data:`BUILDERS`) read an IR model
    through: ``state`` and ``grad`` (the IR's state_dict and flags, by
    dotted key), ``ir`` and ``name`` (the parsed file and the model in it),
    ``node(path)`` (the module's lookup) and ``module(path)`` (the built
    module there). :mod:`nnx.surgery` builds the leaves a pass replaced
    through the same builders."""

    def tensor(self, path, name):
        """(tensor, requires_grad) of the IR's tensor `name` of `path`, or
        None when it has none."""
        key = _join(path, name)
        if key not in self.state:
            return None
        array, element_type = self.state[key]
        if element_type == "bf16":
            t = torch.from_numpy(array.view(np.int16).copy()).view(
                torch.bfloat16)
        else:
            t = torch.from_numpy(np.array(array, copy=True))
        return t, self.grad.get(key, True)

    def param(self, path, name):
        found = self.tensor(path, name)
        if found is None:
            return None
        value, grad = found
        return nn.Parameter(value, requires_grad=grad and value.is_floating_point())

    def set_tensors(self, m, path, names, buffers=()):
        """Sets `m`'s parameters `names` and buffers `buffers` to the IR's
        (a parameter the IR does not have becomes None)."""
        for n in names:
            p = self.param(path, n)
            if p is not None:
                setattr(m, n, p)
            elif getattr(m, n, None) is not None:
                setattr(m, n, None)
        for n in buffers:
            found = self.tensor(path, n)
            if found is not None:
                m.register_buffer(n, found[0])
        return m

    def children(self, node, path):
        return [(k, self.module(_join(path, k))) for k in node["children"]]


class _Builder(TensorSource):
    def __init__(self, ir, model_name):
        self.ir, self.name = ir, model_name
        self.state = ir.state_dict(model_name)
        self.grad = ir.requires_grad(model_name)
        self.built = {}  # IR path -> module (aliases share one object)

    def build(self):
        # Building a PyTorch layer draws its default init from the global
        # RNG, which the caller's must not see.
        with torch.random.fork_rng(devices=[]):
            return self.module("")

    def node(self, path):
        return self.ir.lookup(path, self.name)

    def module(self, path):
        node = self.node(path)
        target = node["target"]
        if target in self.built:
            return self.built[target]
        m = build_module(self, node, target)
        self.built[target] = m
        return m


def build_module(source, node, path):
    """The PyTorch module of the IR `node` at `path`, read through `source`
    (a :class:`TensorSource`), in the node's own train / eval mode (its
    children have theirs)."""
    build = BUILDERS.get(node["kind"])
    if build is None:
        raise ToTorchError(f"module '{path or '<root>'}' is a {node['kind']}, "
                           "which has no PyTorch form here")
    m = build(source, node, path)
    m.training = node["train"]
    return m


def _join(path, name):
    return f"{path}.{name}" if path else name


def _attr(node, name, default=None):
    return node["attributes"].get(name, default)


def _linear(b, node, path):
    w = b.tensor(path, "weight")[0]
    m = nn.Linear(w.shape[1], w.shape[0], bias="bias" in node["tensors"],
                  dtype=w.dtype)
    return b.set_tensors(m, path, ["weight", "bias"])


def _lora(b, node, path):
    w = b.tensor(path, "weight")[0]
    a = b.tensor(path, "lora_A")[0]
    m = LoraLinear(w.shape[1], w.shape[0], a.shape[0], _attr(node, "alpha"),
                   bias="bias" in node["tensors"],
                   merged=bool(_attr(node, "merged", False)), dtype=w.dtype)
    return b.set_tensors(m, path, ["weight", "bias", "lora_A", "lora_B"])


def _embedding(b, node, path):
    w = b.tensor(path, "weight")[0]
    m = nn.Embedding(w.shape[0], w.shape[1],
                     padding_idx=_attr(node, "padding_idx"), dtype=w.dtype)
    return b.set_tensors(m, path, ["weight"])


def _conv(cls):
    def build(b, node, path):
        w = b.tensor(path, "weight")[0]
        rank = w.dim() - 2
        groups = _attr(node, "groups", 1)
        m = cls(w.shape[1] * groups, w.shape[0], tuple(w.shape[2:]),
                stride=tuple(_attr(node, "stride", [1] * rank)),
                padding=tuple(_attr(node, "padding", [0] * rank)),
                dilation=tuple(_attr(node, "dilation", [1] * rank)),
                groups=groups, bias="bias" in node["tensors"], dtype=w.dtype)
        return b.set_tensors(m, path, ["weight", "bias"])
    return build


def _layer_norm(b, node, path):
    affine = "weight" in node["tensors"]
    m = nn.LayerNorm(tuple(_attr(node, "normalized_shape")),
                     eps=_attr(node, "eps", 1e-5), elementwise_affine=affine)
    if affine and "bias" not in node["tensors"]:
        m.bias = None
    return b.set_tensors(m, path, ["weight", "bias"])


def _rms_norm(b, node, path):
    m = RMSNorm(_attr(node, "normalized_shape"), eps=_attr(node, "eps", 1e-6),
                elementwise_affine="weight" in node["tensors"])
    return b.set_tensors(m, path, ["weight"])


class BatchNorm(nn.modules.batchnorm._BatchNorm):
    """``nnx.batch_norm``: BatchNorm over dimension 1 of an input of rank 2
    or more (BatchNorm1d / 2d / 3d alike)."""

    def _check_input_dim(self, x):
        if x.dim() < 2:
            raise ValueError(f"expected an input of rank 2 or more, got {x.dim()}")


def _batch_norm(b, node, path):
    mean = b.tensor(path, "running_mean")[0]
    affine = "weight" in node["tensors"]
    m = BatchNorm(mean.shape[0], eps=_attr(node, "eps", 1e-5),
                  momentum=(None if "cumulative_average" in node["attributes"]
                            else _attr(node, "momentum", 0.1)),
                  affine=affine)
    b.set_tensors(m, path, ["weight", "bias"] if affine else [],
                  ["running_mean", "running_var"])
    return m


def _pool(cls, names):
    def build(b, node, path):
        kw = {n: tuple(_attr(node, n)) for n in names if _attr(node, n)}
        if _attr(node, "ceil_mode"):
            kw["ceil_mode"] = True
        if cls is nn.AvgPool2d:
            kw["count_include_pad"] = bool(_attr(node, "count_include_pad",
                                                 False))
        return cls(**kw)
    return build


_GELU = {"none": "none", "tanh": "tanh"}


def _sequential(b, node, path):
    items = b.children(node, path)
    if all(k.isdigit() for k, _ in items):
        return nn.Sequential(*[m for _, m in items])
    return nn.Sequential(collections.OrderedDict(items))


def _feed_fwd(b, node, path):
    a = node["attributes"]
    net = FeedFwdNN(a["input_dim"], a["hidden_dims"], a["output_dim"],
                    activation=a.get("activation", "relu"),
                    activations=a.get("activations"),
                    dropout=a.get("dropout", 0.0),
                    dropout_probs=a.get("dropout_probs"))
    net.layers = b.module(_join(path, "layers"))
    return net


def _conv_nn(b, node, path):
    a = node["attributes"]
    fields = {k: a[k] for k in ("kernel_size", "kernel_sizes", "pool", "pools",
                                "activation", "activations", "dropout",
                                "dropout_probs") if k in a}
    net = ConvNN(a["in_channels"], a["channels"], a.get("hidden_dims", []),
                 a["output_dim"], **fields)
    net.layers = b.module(_join(path, "layers"))
    net.fcs = b.module(_join(path, "fcs"))
    return net


def _recurrent(cls):
    def build(b, node, path):
        w = b.tensor(path, "weight_ih_l0")[0]
        kwargs = {}
        if cls is nn.RNN:
            kwargs["nonlinearity"] = _attr(node, "nonlinearity", "tanh")
        m = cls(_attr(node, "input_size"), _attr(node, "hidden_size"),
                num_layers=_attr(node, "num_layers", 1),
                bias=_attr(node, "bias", True),
                batch_first=bool(_attr(node, "batch_first", False)),
                dropout=_attr(node, "dropout", 0.0),
                bidirectional=bool(_attr(node, "bidirectional", False)),
                dtype=w.dtype, **kwargs)
        return b.set_tensors(m, path, list(m._flat_weights_names))
    return build


def _cell(cls):
    def build(b, node, path):
        w = b.tensor(path, "weight_ih")[0]
        kwargs = {}
        if cls is nn.RNNCell:
            kwargs["nonlinearity"] = _attr(node, "nonlinearity", "tanh")
        m = cls(_attr(node, "input_size"), _attr(node, "hidden_size"),
                bias="bias_ih" in node["tensors"], dtype=w.dtype, **kwargs)
        return b.set_tensors(m, path,
                             ["weight_ih", "weight_hh", "bias_ih", "bias_hh"])
    return build


BUILDERS = {
    "nnx.lstm": _recurrent(nn.LSTM),
    "nnx.gru": _recurrent(nn.GRU),
    "nnx.rnn": _recurrent(nn.RNN),
    "nnx.lstm_cell": _cell(nn.LSTMCell),
    "nnx.gru_cell": _cell(nn.GRUCell),
    "nnx.rnn_cell": _cell(nn.RNNCell),
    "nnx.linear": _linear,
    "nnx.lora": _lora,
    "nnx.embedding": _embedding,
    "nnx.conv1d": _conv(nn.Conv1d),
    "nnx.conv2d": _conv(nn.Conv2d),
    "nnx.layer_norm": _layer_norm,
    "nnx.rms_norm": _rms_norm,
    "nnx.batch_norm": _batch_norm,
    "nnx.max_pool2d": _pool(nn.MaxPool2d, ("kernel_size", "stride", "padding",
                                           "dilation")),
    "nnx.avg_pool2d": _pool(nn.AvgPool2d, ("kernel_size", "stride", "padding")),
    "nnx.adaptive_avg_pool2d": lambda b, n, p: nn.AdaptiveAvgPool2d(
        tuple(_attr(n, "output_size"))),
    "nnx.flatten": lambda b, n, p: nn.Flatten(_attr(n, "start_dim", 1),
                                              _attr(n, "end_dim", -1)),
    "nnx.relu": lambda b, n, p: nn.ReLU(),
    "nnx.tanh": lambda b, n, p: nn.Tanh(),
    "nnx.sigmoid": lambda b, n, p: nn.Sigmoid(),
    "nnx.silu": lambda b, n, p: nn.SiLU(),
    "nnx.identity": lambda b, n, p: nn.Identity(),
    "nnx.hardswish": lambda b, n, p: nn.Hardswish(),
    "nnx.gelu": lambda b, n, p: nn.GELU(
        approximate=_GELU.get(_attr(n, "approximate", "none"), "none")),
    "nnx.leaky_relu": lambda b, n, p: nn.LeakyReLU(
        _attr(n, "negative_slope", 0.01)),
    "nnx.softmax": lambda b, n, p: nn.Softmax(dim=_attr(n, "dim", -1)),
    "nnx.dropout": lambda b, n, p: nn.Dropout(_attr(n, "p", 0.5)),
    "nnx.sequential": _sequential,
    "nnx.module_list": lambda b, n, p: nn.ModuleList(
        [m for _, m in b.children(n, p)]),
    "nnx.module_dict": lambda b, n, p: nn.ModuleDict(
        collections.OrderedDict(b.children(n, p))),
    "nnx.feed_fwd": _feed_fwd,
    "nnx.conv_nn": _conv_nn,
}


class Uncalled(nn.Module):
    """A module the model's forward never called when it was exported
    (``nnx.uncalled``): its children and tensors, and no forward."""

    def __init__(self, class_name, path):
        super().__init__()
        self.class_name = class_name
        self.path = path

    def forward(self, *args, **kwargs):
        raise ToTorchError(
            f"module '{self.path}' ({self.class_name}) was never called by "
            "the model's forward when it was exported, so nnx has no forward "
            "for it")


def _custom(b, node, path):
    forward = b.ir.forward(path or "", b.name)
    uncalled = "nnx.uncalled" in node["attributes"]
    if forward is None and not uncalled:
        raise ToTorchError(f"custom module '{path or '<root>'}' has no forward")
    root = Uncalled(node["attributes"].get("class_name", "Module"),
                    path or "<root>") if uncalled else nn.Module()
    for key, child in b.children(node, path):
        root.add_module(key, child)
    buffers = node["attributes"].get("nnx.buffers")
    for name in _state_names(b, path):
        value, grad = b.tensor(path, name)
        if buffers is not None:
            parameter = name not in buffers
        else:  # IR written before `buffers` existed
            parameter = value.is_floating_point() and grad
        if parameter:
            root.register_parameter(name, nn.Parameter(value, grad))
        else:
            root.register_buffer(name, value)
    if uncalled:
        return root
    graph = _Graph(path, forward).build()
    gm = fx.GraphModule(root, graph, class_name=_class_name(node))
    entry = forward.get("entry")
    if entry and entry != "forward" and not hasattr(gm, entry):
        # Exported through another method (`encode_image`): callable by
        # that name too.
        setattr(gm, entry, gm.forward)
    # The graph keeps only what it reads: put every child and tensor back,
    # in the IR's order (the state_dict keys and their order).
    gm._modules = collections.OrderedDict(root._modules)
    gm._parameters = collections.OrderedDict(root._parameters)
    gm._buffers = collections.OrderedDict(root._buffers)
    return gm


BUILDERS["nnx.module"] = _custom


def _class_name(node):
    name = node["attributes"].get("class_name", "Module")
    return re.sub(r"\W", "_", name) or "Module"


def _state_names(b, path):
    prefix = f"{path}." if path else ""
    names = []
    for key in b.state:
        rest = key[len(prefix):] if key.startswith(prefix) else None
        if rest and "." not in rest:
            names.append(rest)
    return names


# -----------------------------------------------------------------------------
# Forward regions as torch.fx graphs
# -----------------------------------------------------------------------------

_TYPE = re.compile(r"^tensor<((?:[0-9?]+x)*)([a-z0-9]+)>$")


def _parse_type(text):
    """(shape with None for dynamic, torch dtype) of a tensor type text, or
    (None, dtype) for a scalar type."""
    m = _TYPE.match(text)
    if m is None:
        return None, _DTYPES.get(text)
    dims = [None if d == "?" else int(d) for d in m.group(1).split("x") if d]
    return dims, _DTYPES.get(m.group(2))


_DYNAMIC = -(2 ** 63)


class _Graph:
    """One forward region as an fx.Graph."""

    def __init__(self, path, forward):
        self.path, self.forward = path, forward
        self.graph = fx.Graph()
        self.env = {}

    def build(self):
        for i, _ in enumerate(self.forward["arguments"]):
            self.env[i] = self.graph.placeholder(f"arg{i}")
        for op in self.forward["ops"]:
            if op["name"] == "nnx.return":
                vals = [self.env[o] for o in op["operands"]]
                self.graph.output(vals[0] if len(vals) == 1 else tuple(vals))
                continue
            self.emit(op)
        return self.graph

    def where(self, op):
        src = op["attributes"].get("nnx.source")
        return (f"'{op['name']}'" + (f" ({src})" if src else "") +
                f" in the forward of '{self.path or '<root>'}'")

    def call(self, fn, *args, **kwargs):
        return self.graph.call_function(fn, tuple(args), kwargs)

    def method(self, name, *args, **kwargs):
        return self.graph.call_method(name, tuple(args), kwargs)

    def emit(self, op):
        name, ins = op["name"], [self.env.get(o) for o in op["operands"]]
        handler = _OPS.get(name)
        if handler is None:
            raise ToTorchError(f"{self.where(op)} has no PyTorch form here")
        out = handler(self, op, ins)
        results = op["results"]
        if len(results) == 1:
            self.env[results[0]] = out
        else:
            for i, r in enumerate(results):
                self.env[r] = self.call(operator.getitem, out, i)

    def result_type(self, op, i=0):
        return _parse_type(op["types"][i])


def _cast_to_result(g, op, value):
    _, dtype = g.result_type(op)
    return g.method("to", value, dtype) if dtype is not None else value


def _binary(fn):
    def emit(g, op, ins):
        return _cast_to_result(g, op, g.call(fn, ins[0], ins[1]))
    return emit


def _binary_index(fn):
    """An arith op on sizes (index scalars, not tensors)."""
    def emit(g, op, ins):
        if g.result_type(op)[0] is not None:
            raise ToTorchError(f"{g.where(op)} on tensors has no PyTorch "
                               "form here")
        return g.call(fn, ins[0], ins[1])
    return emit


def _unary(fn):
    return lambda g, op, ins: g.call(fn, ins[0])


def _constant(g, op, ins):
    value = op["attributes"]["value"]
    shape, dtype = g.result_type(op)
    if shape is None:  # a scalar (an index, an integer, a float)
        return value
    t = torch.from_numpy(np.array(value, copy=True)).to(dtype).reshape(shape)
    node = g.graph.create_node("call_function", torch.tensor,
                               (t.tolist(),), {"dtype": dtype})
    return node


def _sizes(g, op, ins, attr, first=1):
    """A shape list: static sizes from `attr`, the dynamic ones from the
    operands after the first `first`."""
    dynamic = iter(ins[first:])
    return [next(dynamic) if s == _DYNAMIC else s for s in op["attributes"][attr]]


def _reshape(g, op, ins):
    return g.call(torch.reshape, ins[0], _sizes(g, op, ins, "static_shape"))


def _expand(g, op, ins):
    return g.method("expand", ins[0], *_sizes(g, op, ins, "static_shape"))


def _permute(g, op, ins):
    return g.call(torch.permute, ins[0], tuple(op["attributes"]["permutation"]))


def _reduce(fn):
    def emit(g, op, ins):
        a = op["attributes"]
        return g.call(fn, ins[0], tuple(a["dims"]),
                      keepdim=bool(a.get("keepdim", False)))
    return emit


def _softmax(g, op, ins):
    return g.call(torch.softmax, ins[0], op["attributes"].get("dim", -1))


def _cumsum(g, op, ins):
    return g.call(torch.cumsum, ins[0], op["attributes"]["dim"])


def _gather(g, op, ins):
    return g.call(torch.gather, ins[0], op["attributes"]["dim"], ins[1])


def _index_select(g, op, ins):
    return g.call(torch.index_select, ins[0], op["attributes"]["dim"], ins[1])


def _where(g, op, ins):
    return _cast_to_result(g, op, g.call(torch.where, *ins))


def _gelu(g, op, ins):
    approx = op["attributes"].get("approximate", "none")
    return g.call(F.gelu, ins[0], approximate=_GELU.get(approx, "none"))


def _dropout(g, op, ins):
    a = op["attributes"]
    return g.call(F.dropout, ins[0], a.get("p", 0.5),
                  training=bool(a.get("train", False)))


def _arange(g, op, ins):
    _, dtype = g.result_type(op)
    return g.call(torch.arange, ins[0], dtype=dtype)


def _topk(g, op, ins):
    a = op["attributes"]
    return g.call(torch.topk, ins[0], a["k"], a["dim"],
                  largest=bool(a.get("largest", False)),
                  sorted=bool(a.get("sorted", False)))


def _triangle(fn):
    def emit(g, op, ins):
        return g.call(fn, ins[0], op["attributes"].get("diagonal", 0))
    return emit


def _dim(g, op, ins):
    return g.method("size", ins[0], ins[1])


def _state(g, op, ins):
    name = op["attributes"]["name"]
    of = op["attributes"].get("nnx.of")
    if of is not None:  # a tensor of a module below: `q_proj.bias`
        name = _symbol_path(of) + "." + name
    return g.graph.create_node("get_attr", name)


def _symbol_path(ref):
    """`@a::@"0"` (a printed symbol reference) as the dotted path `a.0`."""
    keys = []
    for part in str(ref).split("::"):
        part = part.strip().lstrip("@")
        if part.startswith('"') and part.endswith('"'):
            part = part[1:-1].replace('\\"', '"').replace("\\\\", "\\")
        keys.append(part)
    return ".".join(keys)


def _call(g, op, ins):
    return g.graph.call_module(op["callee"], tuple(ins))


def _concat(g, op, ins):
    return g.call(torch.cat, list(ins), op["attributes"]["dim"])


def _to_type(g, op, ins):
    return _cast_to_result(g, op, ins[0])


def _splat(g, op, ins):
    shape, dtype = g.result_type(op)
    dynamic = iter(ins[1:])
    sizes = [next(dynamic) if d is None else d for d in shape]
    return g.call(torch.full, sizes, ins[0], dtype=dtype)


def _slice_args(g, op, ins, first):
    """The (offset, size, stride) of each dim of an extract / insert slice
    (static values from the attributes, dynamic ones from the operands)."""
    a = op["attributes"]
    dyn = iter(ins[first:])
    out = []
    for key in ("static_offsets", "static_sizes", "static_strides"):
        out.append([next(dyn) if v == _DYNAMIC else v for v in a[key]])
    return out


def _slice_index(g, offsets, sizes, strides):
    index = []
    for o, s, st in zip(offsets, sizes, strides):
        if any(isinstance(v, fx.Node) for v in (o, s, st)):
            end = g.call(operator.add, o, g.call(operator.mul, s, st))
            index.append(g.call(slice, o, end, st))
        else:
            index.append(slice(o, o + s * st, st))
    return tuple(index)


def _extract_slice(g, op, ins):
    offsets, sizes, strides = _slice_args(g, op, ins, 1)
    value = g.call(operator.getitem, ins[0],
                   _slice_index(g, offsets, sizes, strides))
    shape, _ = g.result_type(op)
    if len(shape) != len(sizes):  # rank-reducing: drop the unit dims
        dims = [i for i, s in enumerate(sizes) if s == 1]
        drop = len(sizes) - len(shape)
        for d in reversed(dims[:drop]):
            value = g.call(torch.squeeze, value, d)
    return value


def _insert_slice(g, op, ins):
    offsets, sizes, strides = _slice_args(g, op, ins, 2)
    return g.call(_insert, ins[1], ins[0],
                  _slice_index(g, offsets, sizes, strides), tuple(sizes))


def _insert(dest, source, index, sizes):
    out = dest.clone()
    out[index] = source.reshape(sizes)
    return out


# arith.cmpi's predicates (nnx.fn.guard's attribute), by value.
_PREDICATES = [operator.eq, operator.ne, operator.lt, operator.le,
               operator.gt, operator.ge]


def _check_guard(predicate, a, b, message):
    """`nnx.fn.guard`: what the exported forward assumed of its sizes; a
    call taking the other way fails with the exporter's message."""
    if predicate >= len(_PREDICATES):  # unsigned: sizes are not negative
        a, b, predicate = a % 2**64, b % 2**64, predicate - 4
    if not _PREDICATES[predicate](a, b):
        raise RuntimeError(message.replace("{0}", str(a)).replace(
            "{1}", str(b)))


def _guard(g, op, ins):
    a = op["attributes"]
    return g.call(_check_guard, a["predicate"], ins[0], ins[1], a["message"])


_MATH = {"math.exp": torch.exp, "math.log": torch.log,
         "math.rsqrt": torch.rsqrt, "math.sqrt": torch.sqrt,
         "math.tanh": torch.tanh, "math.sin": torch.sin, "math.cos": torch.cos,
         "math.erf": torch.erf, "math.absf": torch.abs, "math.absi": torch.abs,
         "math.log1p": torch.log1p, "math.expm1": torch.expm1,
         "math.floor": torch.floor, "math.ceil": torch.ceil,
         "math.round": torch.round, "math.atan": torch.atan,
         "arith.negf": torch.neg, "arith.negi": torch.neg}

_OPS = {
    "nnx.fn.add": _binary(torch.add), "nnx.fn.sub": _binary(torch.sub),
    "nnx.fn.mul": _binary(torch.mul), "nnx.fn.div": _binary(torch.div),
    "nnx.fn.pow": _binary(torch.pow), "nnx.fn.maximum": _binary(torch.maximum),
    "nnx.fn.minimum": _binary(torch.minimum), "nnx.fn.eq": _binary(torch.eq),
    "nnx.fn.ne": _binary(torch.ne), "nnx.fn.lt": _binary(torch.lt),
    "nnx.fn.le": _binary(torch.le), "nnx.fn.gt": _binary(torch.gt),
    "nnx.fn.ge": _binary(torch.ge),
    "nnx.fn.logical_and": _binary(torch.logical_and),
    "nnx.fn.logical_or": _binary(torch.logical_or),
    "nnx.fn.logical_xor": _binary(torch.logical_xor),
    "nnx.fn.where": _where,
    "nnx.fn.matmul": _binary(torch.matmul),
    "nnx.fn.reshape": _reshape, "nnx.fn.expand": _expand,
    "nnx.fn.permute": _permute, "nnx.fn.softmax": _softmax,
    "nnx.fn.mean": _reduce(torch.mean), "nnx.fn.sum": _reduce(torch.sum),
    "nnx.fn.amax": _reduce(torch.amax), "nnx.fn.amin": _reduce(torch.amin),
    "nnx.fn.gather": _gather, "nnx.fn.index_select": _index_select,
    "nnx.fn.cumsum": _cumsum, "nnx.fn.topk": _topk,
    "nnx.fn.relu": _unary(torch.relu), "nnx.fn.sigmoid": _unary(torch.sigmoid),
    "nnx.fn.silu": _unary(F.silu), "nnx.fn.gelu": _gelu,
    "nnx.fn.dropout": _dropout, "nnx.fn.arange": _arange,
    "nnx.fn.tril": _triangle(torch.tril), "nnx.fn.triu": _triangle(torch.triu),
    "arith.constant": _constant, "tensor.dim": _dim,
    "arith.sitofp": _to_type, "arith.uitofp": _to_type,
    "arith.fptosi": _to_type, "arith.extf": _to_type, "arith.truncf": _to_type,
    "arith.index_cast": lambda g, op, ins: ins[0],
    "tensor.concat": _concat, "tensor.splat": _splat,
    "tensor.extract_slice": _extract_slice,
    "tensor.insert_slice": _insert_slice,
    "nnx.state": _state, "nnx.call": _call, "nnx.fn.guard": _guard,
    # Index arithmetic on sizes (floordivsi: Python's floor division).
    "arith.addi": _binary_index(operator.add),
    "arith.subi": _binary_index(operator.sub),
    "arith.muli": _binary_index(operator.mul),
    "arith.floordivsi": _binary_index(operator.floordiv),
}
_OPS.update({k: _unary(v) for k, v in _MATH.items()})
