"""Built-in nets that nnx describes natively (``nnx.feed_fwd``)."""

from torch import nn

#: Activation names the ``nnx.feed_fwd`` descriptor accepts, and the PyTorch
#: module each one stands for.
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
        if self.activations is not None:
            return self.activations[i]
        return self.activation

    def dropout_for(self, i):
        if self.dropout_probs is not None:
            return self.dropout_probs[i]
        return self.dropout

    def forward(self, x):
        n = len(self.hidden_dims)
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i < n:
                x = self._acts[i](x)
                x = nn.functional.dropout(x, self.dropout_for(i), self.training)
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
