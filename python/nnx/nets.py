"""Built-in nets that nnx describes natively (``nnx.feed_fwd``,
``nnx.conv_nn``).

Each net is described by an immutable ``params`` descriptor
(:class:`FeedFwdParams`, :class:`ConvNNParams`), as the seed's nets are: the
net reads its sizes and per-site overrides from it, surgery returns a net
with an updated one, and ``Net.from_params(p)`` builds a fresh,
randomly initialized net it describes (then ``load_state_dict``)::

    new_net = widen(net, layer_name="layers.0", new_width=64)
    fresh = FeedFwdNN.from_params(new_net.params)
    fresh.load_state_dict(new_net.state_dict())
"""

import dataclasses
from typing import Optional, Tuple

from torch import nn
from torch.nn import functional as F

#: Activation names the ``nnx.feed_fwd`` and ``nnx.conv_nn`` descriptors
#: accept, and the PyTorch module each one stands for.
ACTIVATIONS = {
    "relu": nn.ReLU,
    "gelu": nn.GELU,
    "tanh": nn.Tanh,
    "sigmoid": nn.Sigmoid,
    "silu": nn.SiLU,
    "leaky_relu": nn.LeakyReLU,
    "softmax": lambda: nn.Softmax(dim=-1),
    "identity": nn.Identity,
}


def _override(overrides, default, i):
    """``overrides[i]`` when the per-site list is given, else ``default``."""
    return overrides[i] if overrides is not None else default


def _optional_tuple(values, cast):
    return tuple(cast(v) for v in values) if values is not None else None


def _check_length(values, n, what, sites):
    if values is not None and len(values) != n:
        raise ValueError(f"{len(values)} {what} for {n} {sites}")


def _check_activations(p, n_sites):
    for s in range(n_sites):
        if p.activation_for(s) not in ACTIVATIONS:
            raise ValueError(f"unknown activation {p.activation_for(s)!r}")


@dataclasses.dataclass(frozen=True)
class FeedFwdParams:
    """The immutable descriptor of a :class:`FeedFwdNN`: ``input_dim``, the
    ``hidden_dims`` (one per hidden Linear), ``output_dim``, the scalar
    ``activation`` / ``dropout`` defaults and their optional per-layer
    overrides ``activations`` / ``dropout_probs``. Lists are stored as
    tuples; equal descriptors compare and hash equal."""

    input_dim: int
    hidden_dims: Tuple[int, ...]
    output_dim: int
    activation: str = "relu"
    activations: Optional[Tuple[str, ...]] = None
    dropout: float = 0.0
    dropout_probs: Optional[Tuple[float, ...]] = None
    bias: bool = True

    def __post_init__(self):
        set_ = object.__setattr__
        set_(self, "input_dim", int(self.input_dim))
        set_(self, "hidden_dims", tuple(int(h) for h in self.hidden_dims))
        set_(self, "output_dim", int(self.output_dim))
        set_(self, "activations", _optional_tuple(self.activations, str))
        set_(self, "dropout", float(self.dropout))
        set_(self, "dropout_probs", _optional_tuple(self.dropout_probs, float))
        set_(self, "bias", bool(self.bias))
        n = len(self.hidden_dims)
        _check_length(self.activations, n, "activations", "hidden layers")
        _check_length(self.dropout_probs, n, "dropout_probs", "hidden layers")
        _check_activations(self, n)

    def activation_for(self, i):
        """The activation applied after hidden layer ``i``."""
        return _override(self.activations, self.activation, i)

    def dropout_for(self, i):
        """The dropout probability applied after hidden layer ``i``."""
        return _override(self.dropout_probs, self.dropout, i)


@dataclasses.dataclass(frozen=True)
class ConvNNParams:
    """The immutable descriptor of a :class:`ConvNN` (see its docstring for
    how the sites are numbered)."""

    in_channels: int
    channels: Tuple[int, ...]
    hidden_dims: Tuple[int, ...]
    output_dim: int
    kernel_size: int = 3
    kernel_sizes: Optional[Tuple[int, ...]] = None
    pool: int = 0
    pools: Optional[Tuple[int, ...]] = None
    activation: str = "relu"
    activations: Optional[Tuple[str, ...]] = None
    dropout: float = 0.0
    dropout_probs: Optional[Tuple[float, ...]] = None
    bias: bool = True

    def __post_init__(self):
        set_ = object.__setattr__
        for f in ("in_channels", "output_dim", "kernel_size", "pool"):
            set_(self, f, int(getattr(self, f)))
        set_(self, "channels", tuple(int(c) for c in self.channels))
        set_(self, "hidden_dims", tuple(int(h) for h in self.hidden_dims))
        set_(self, "kernel_sizes", _optional_tuple(self.kernel_sizes, int))
        set_(self, "pools", _optional_tuple(self.pools, int))
        set_(self, "activations", _optional_tuple(self.activations, str))
        set_(self, "dropout", float(self.dropout))
        set_(self, "dropout_probs", _optional_tuple(self.dropout_probs, float))
        set_(self, "bias", bool(self.bias))
        n_conv, n_sites = len(self.channels), self.num_sites()
        if n_conv < 1:
            raise ValueError("a ConvNN needs at least one conv layer")
        _check_length(self.kernel_sizes, n_conv, "kernel_sizes", "conv layers")
        _check_length(self.pools, n_conv, "pools", "conv layers")
        _check_length(self.activations, n_sites, "activations", "hidden sites")
        _check_length(self.dropout_probs, n_sites, "dropout_probs",
                      "hidden sites")
        for i in range(n_conv):
            k, p = self.kernel_size_for(i), self.pool_for(i)
            if k <= 0 or k % 2 == 0:
                raise ValueError(
                    f"kernel size {k} of conv {i} must be odd and positive")
            if p < 0:
                raise ValueError(f"pool {p} of conv {i} is negative")
        _check_activations(self, n_sites)

    def num_sites(self):
        """L + H: the convs and the hidden Linears."""
        return len(self.channels) + len(self.hidden_dims)

    def kernel_size_for(self, i):
        return _override(self.kernel_sizes, self.kernel_size, i)

    def pool_for(self, i):
        return _override(self.pools, self.pool, i)

    def activation_for(self, s):
        return _override(self.activations, self.activation, s)

    def dropout_for(self, s):
        return _override(self.dropout_probs, self.dropout, s)


class _DescribedNet(nn.Module):
    """A net whose sizes and overrides are read from its immutable
    ``params``: ``net.hidden_dims`` is ``net.params.hidden_dims``, and so on
    for every field and ``*_for`` method."""

    _PARAMS = None

    @classmethod
    def from_params(cls, params):
        """A fresh (randomly initialized) net described by ``params``."""
        if not isinstance(params, cls._PARAMS):
            raise TypeError(f"{cls.__name__}.from_params takes a "
                            f"{cls._PARAMS.__name__}, got {type(params).__name__}")
        return cls(**dataclasses.asdict(params))

    @property
    def params(self):
        return self._params

    def __getattr__(self, name):
        params = self.__dict__.get("_params")
        if params is not None and (name in params.__dataclass_fields__
                                   or name.endswith("_for")
                                   or name == "num_sites"):
            return getattr(params, name)
        return super().__getattr__(name)


class FeedFwdNN(_DescribedNet):
    """A FeedFwdNN: ``layers`` (a ModuleList of Linears) plus immutable
    ``params`` (:class:`FeedFwdParams`).

    For hidden layer ``i`` the forward applies ``layers[i]``, then
    ``activation_for(i)``, then dropout with ``dropout_for(i)``; the last
    Linear has neither. ``activations`` / ``dropout_probs`` are optional
    per-layer overrides of the scalar defaults.
    """

    _PARAMS = FeedFwdParams

    def __init__(self, input_dim, hidden_dims, output_dim, activation="relu",
                 activations=None, dropout=0.0, dropout_probs=None, bias=True):
        super().__init__()
        self._params = FeedFwdParams(input_dim, hidden_dims, output_dim,
                                     activation, activations, dropout,
                                     dropout_probs, bias)
        p = self._params
        dims = [p.input_dim, *p.hidden_dims, p.output_dim]
        self.layers = nn.ModuleList(
            nn.Linear(dims[i], dims[i + 1], bias=p.bias)
            for i in range(len(dims) - 1))
        self._set_activations()

    def _set_activations(self):
        self._acts = [ACTIVATIONS[self.activation_for(i)]()
                      for i in range(len(self.hidden_dims))]

    def forward(self, x):
        n = len(self.hidden_dims)
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i < n:
                x = self._acts[i](x)
                x = nn.functional.dropout(x, self.dropout_for(i), self.training)
        return x


class ConvNN(_DescribedNet):
    """A ConvNN: ``layers`` (a ModuleList of "same"-padded Conv2d), a global
    average pool, then ``fcs`` (a ModuleList of Linears), plus immutable
    params.

    Hidden sites are numbered 0..L-1 (the convs) then L..L+H-1 (the hidden
    Linears, all of ``fcs`` but the last). Conv site ``i`` applies
    ``layers[i]``, ``activation_for(i)``, dropout with ``dropout_for(i)``,
    then ``F.max_pool2d(x, pool_for(i))`` when ``pool_for(i) > 1``; hidden
    Linear ``j`` applies ``fcs[j]``, ``activation_for(L + j)`` and
    ``dropout_for(L + j)``; the last Linear has neither. ``kernel_sizes`` and
    ``pools`` are optional per-conv overrides of ``kernel_size`` and
    ``pool``; ``activations`` / ``dropout_probs`` per-site overrides of
    ``activation`` and ``dropout``. The descriptor is ``params``
    (:class:`ConvNNParams`).
    """

    _PARAMS = ConvNNParams

    def __init__(self, in_channels, channels, hidden_dims, output_dim,
                 kernel_size=3, kernel_sizes=None, pool=0, pools=None,
                 activation="relu", activations=None, dropout=0.0,
                 dropout_probs=None, bias=True):
        super().__init__()
        self._params = ConvNNParams(
            in_channels, channels, hidden_dims, output_dim, kernel_size,
            kernel_sizes, pool, pools, activation, activations, dropout,
            dropout_probs, bias)
        p = self._params
        c = [p.in_channels, *p.channels]
        ks = [p.kernel_size_for(i) for i in range(len(p.channels))]
        self.layers = nn.ModuleList(
            nn.Conv2d(c[i], c[i + 1], k, padding=k // 2, bias=p.bias)
            for i, k in enumerate(ks))
        dims = [p.channels[-1], *p.hidden_dims, p.output_dim]
        self.fcs = nn.ModuleList(nn.Linear(dims[j], dims[j + 1], bias=p.bias)
                                 for j in range(len(dims) - 1))
        self._set_activations()

    def _set_activations(self):
        self._acts = [ACTIVATIONS[self.activation_for(s)]()
                      for s in range(self.num_sites())]

    def _site(self, s, x):
        x = self._acts[s](x)
        return F.dropout(x, self.dropout_for(s), self.training)

    def forward(self, x):
        n_conv, n_hidden = len(self.layers), len(self.hidden_dims)
        for i, conv in enumerate(self.layers):
            x = self._site(i, conv(x))
            p = self.pool_for(i)
            if p > 1:
                x = F.max_pool2d(x, p)
        x = F.adaptive_avg_pool2d(x, 1).flatten(1)
        for j, fc in enumerate(self.fcs):
            x = fc(x)
            if j < n_hidden:
                x = self._site(n_conv + j, x)
        return x


class Residual(nn.Module):
    """A pre-norm residual block, x + proj(norm(x)): the custom module (own
    forward, exported as an ``nnx.module``) the tests and examples use."""

    def __init__(self, d):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.proj = nn.Linear(d, d)

    def forward(self, x):
        return x + self.proj(self.norm(x))
