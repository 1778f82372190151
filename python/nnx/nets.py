"""Built-in nets that nnx describes natively (``nnx.feed_fwd``,
``nnx.conv_nn``)."""

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


class FeedFwdNN(nn.Module):
    """A FeedFwdNN: ``layers`` (a ModuleList of Linears) plus immutable params.

    For hidden layer ``i`` the forward applies ``layers[i]``, then
    ``activation_for(i)``, then dropout with ``dropout_for(i)``; the last
    Linear has neither. ``activations`` / ``dropout_probs`` are optional
    per-layer overrides of the scalar defaults.
    """

    def __init__(self, input_dim, hidden_dims, output_dim, activation="relu",
                 activations=None, dropout=0.0, dropout_probs=None, bias=True):
        super().__init__()
        self.input_dim = int(input_dim)
        self.hidden_dims = [int(h) for h in hidden_dims]
        self.output_dim = int(output_dim)
        self.activation = activation
        self.activations = list(activations) if activations is not None else None
        self.dropout = float(dropout)
        self.dropout_probs = (list(map(float, dropout_probs))
                              if dropout_probs is not None else None)
        n = len(self.hidden_dims)
        if self.activations is not None and len(self.activations) != n:
            raise ValueError(f"{len(self.activations)} activations for {n} hidden layers")
        if self.dropout_probs is not None and len(self.dropout_probs) != n:
            raise ValueError(f"{len(self.dropout_probs)} dropout_probs for {n} hidden layers")
        for i in range(n):
            if self.activation_for(i) not in ACTIVATIONS:
                raise ValueError(f"unknown activation {self.activation_for(i)!r}")
        dims = [self.input_dim] + self.hidden_dims + [self.output_dim]
        self.layers = nn.ModuleList(
            nn.Linear(dims[i], dims[i + 1], bias=bias) for i in range(n + 1))
        self._acts = [ACTIVATIONS[self.activation_for(i)]() for i in range(n)]

    def activation_for(self, i):
        return _override(self.activations, self.activation, i)

    def dropout_for(self, i):
        return _override(self.dropout_probs, self.dropout, i)

    def forward(self, x):
        n = len(self.hidden_dims)
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i < n:
                x = self._acts[i](x)
                x = nn.functional.dropout(x, self.dropout_for(i), self.training)
        return x


def _optional_list(values, cast):
    return [cast(v) for v in values] if values is not None else None


def _check_length(values, n, what, sites):
    if values is not None and len(values) != n:
        raise ValueError(f"{len(values)} {what} for {n} {sites}")


class ConvNN(nn.Module):
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
    ``activation`` and ``dropout``.
    """

    def __init__(self, in_channels, channels, hidden_dims, output_dim,
                 kernel_size=3, kernel_sizes=None, pool=0, pools=None,
                 activation="relu", activations=None, dropout=0.0,
                 dropout_probs=None, bias=True):
        super().__init__()
        self.in_channels = int(in_channels)
        self.channels = [int(c) for c in channels]
        self.hidden_dims = [int(h) for h in hidden_dims]
        self.output_dim = int(output_dim)
        self.kernel_size = int(kernel_size)
        self.kernel_sizes = _optional_list(kernel_sizes, int)
        self.pool = int(pool)
        self.pools = _optional_list(pools, int)
        self.activation = activation
        self.activations = _optional_list(activations, str)
        self.dropout = float(dropout)
        self.dropout_probs = _optional_list(dropout_probs, float)
        self._validate()
        c = [self.in_channels] + self.channels
        ks = [self.kernel_size_for(i) for i in range(len(self.channels))]
        self.layers = nn.ModuleList(
            nn.Conv2d(c[i], c[i + 1], k, padding=k // 2, bias=bias)
            for i, k in enumerate(ks))
        dims = [self.channels[-1]] + self.hidden_dims + [self.output_dim]
        self.fcs = nn.ModuleList(nn.Linear(dims[j], dims[j + 1], bias=bias)
                                 for j in range(len(dims) - 1))
        self._acts = [ACTIVATIONS[self.activation_for(s)]()
                      for s in range(self.num_sites())]

    def _validate(self):
        n_conv, n_sites = len(self.channels), self.num_sites()
        if n_conv < 1:
            raise ValueError("a ConvNN needs at least one conv layer")
        _check_length(self.kernel_sizes, n_conv, "kernel_sizes", "conv layers")
        _check_length(self.pools, n_conv, "pools", "conv layers")
        _check_length(self.activations, n_sites, "activations", "hidden sites")
        _check_length(self.dropout_probs, n_sites, "dropout_probs", "hidden sites")
        for i in range(n_conv):
            k, p = self.kernel_size_for(i), self.pool_for(i)
            if k <= 0 or k % 2 == 0:
                raise ValueError(f"kernel size {k} of conv {i} must be odd and positive")
            if p < 0:
                raise ValueError(f"pool {p} of conv {i} is negative")
        for s in range(n_sites):
            if self.activation_for(s) not in ACTIVATIONS:
                raise ValueError(f"unknown activation {self.activation_for(s)!r}")

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
