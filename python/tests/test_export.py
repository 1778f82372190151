"""torch_export: every emitted file parses with nnx-opt, tensors round-trip
bit-exactly through text and bytecode, and flags / properties are carried."""

import collections
import os
import re
import subprocess

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

from nnx import tools  # noqa: E402
from nnx.testing import CONTRACT  # noqa: E402
from nnx.nets import ConvNN, FeedFwdNN, Residual  # noqa: E402
from nnx.torch_export import ExportError, export  # noqa: E402

RESOURCE = re.compile(r'^\s*([A-Za-z_][\w.$]*): "0x([0-9A-Fa-f]*)"', re.M)


def resources(text):
    return {k: bytes.fromhex(v) for k, v in RESOURCE.findall(text)}


def roundtrip(text):
    """Text -> nnx-opt -> text, and text -> bytecode -> nnx-opt -> text."""
    printed = tools.nnx_opt(text)
    bc = subprocess.run([tools.tool_path("nnx-opt"), "-", "--emit-bytecode"],
                        input=text.encode(), capture_output=True, check=True).stdout
    from_bc = subprocess.run([tools.tool_path("nnx-opt"), "-"], input=bc,
                             capture_output=True, check=True).stdout.decode()
    return printed, from_bc


def test_parameters_roundtrip_bit_exact():
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(5, 7), nn.Tanh(), nn.Linear(7, 3))
    # Values that decimal text would not round-trip at default precision.
    with torch.no_grad():
        m[0].weight[0, 0] = 0.1
        m[0].weight[0, 1] = float(np.nextafter(np.float32(1), np.float32(2)))
        m[0].weight[0, 2] = -0.0
        m[0].weight[0, 3] = 1e-40  # subnormal
    text = export(m, [(None, 5)], name="mlp")
    expected = {
        "mlp_0_weight": m[0].weight, "mlp_0_bias": m[0].bias,
        "mlp_2_weight": m[2].weight, "mlp_2_bias": m[2].bias,
    }
    for printed in (text,) + roundtrip(text):
        blobs = resources(printed)
        for name, t in expected.items():
            raw = blobs[name]
            assert raw[:4] == (4).to_bytes(4, "little"), name
            assert raw[4:] == t.detach().numpy().astype("<f4").tobytes(), name


def test_f64_parameters_use_8_byte_alignment():
    m = nn.Sequential(nn.Linear(3, 2)).double()
    text = export(m, [(None, 3)], name="d")
    assert "tensor<?x3xf64>" in text
    blobs = resources(tools.nnx_opt(text))
    assert blobs["d_0_weight"][:4] == (8).to_bytes(4, "little")
    assert blobs["d_0_weight"][4:] == m[0].weight.detach().numpy().tobytes()


def test_sequential_keying_flags_and_requires_grad():
    m = nn.Sequential(collections.OrderedDict(
        fc=nn.Linear(4, 8), relu=nn.ReLU(), drop=nn.Dropout(0.25),
        head=nn.Linear(8, 2)))
    m.head.bias.requires_grad_(False)
    m.eval()
    m.fc.train()
    printed = tools.nnx_opt(export(m, [(None, 4)], name="cls", root="body"))
    assert "nnx.sequential @body keying = named {" in printed
    fc = re.search(r"nnx.linear @fc \{([^}]*)\}", printed).group(1)
    assert re.search(r"\btrain\b", fc)
    head = re.search(r"nnx.linear @head \{(.*)\}\n", printed).group(1)
    assert "requires_grad = {bias = false}" in head
    assert not re.search(r"\btrain\b", head)
    assert "nnx.dropout @drop {p = 2.500000e-01 : f64}" in printed

    pos = tools.nnx_opt(export(nn.Sequential(nn.Linear(4, 4), nn.ReLU()),
                               [(None, 4)]))
    assert "keying = positional attributes {train}" in pos


@pytest.mark.parametrize("module,expect", [
    (nn.ReLU(), r'nnx.relu @"0"'),
    (nn.GELU(), r'nnx.gelu @"0"$'),
    (nn.GELU(approximate="tanh"), r'nnx.gelu @"0" \{approximate = #nnx.gelu_approximation<tanh>'),
    (nn.Tanh(), r'nnx.tanh @"0"'),
    (nn.Sigmoid(), r'nnx.sigmoid @"0"'),
    (nn.SiLU(), r'nnx.silu @"0"'),
    (nn.LeakyReLU(0.3), r'nnx.leaky_relu @"0" \{negative_slope = 3.000000e-01 : f64'),
    (nn.Softmax(dim=1), r'nnx.softmax @"0" \{dim = 1 : i64'),
    (nn.Identity(), r'nnx.identity @"0"'),
    (nn.Dropout(0.25), r'nnx.dropout @"0" \{p = 2.500000e-01 : f64'),
    (nn.Dropout(0.5), r'nnx.dropout @"0"$'),
])
def test_every_activation_parses(module, expect):
    m = nn.Sequential(module).eval()
    printed = tools.nnx_opt(export(m, [(None, 6)]))
    assert re.search(expect, printed, re.M), printed


def test_norms_and_embedding():
    bn = nn.BatchNorm1d(6, eps=1e-3, momentum=0.2)
    with torch.no_grad():
        bn.running_mean.uniform_(-1, 1)
        bn.running_var.uniform_(0.5, 2)
    m = nn.Sequential(nn.Embedding(11, 6, padding_idx=0), nn.LayerNorm(6),
                      nn.Flatten(0, 0) if False else nn.Identity())
    text = export(m.eval(), [((None, 4), torch.int64)], name="e")
    printed = tools.nnx_opt(text)
    assert "inputs(tensor<?x4xi64>)" in printed
    assert re.search(r'nnx.embedding @"0" \{padding_idx = 0 : i64, weight = '
                     r'dense_resource<e_0_weight> : tensor<11x6xf32>\}', printed)
    assert "normalized_shape = array<i64: 6>" in printed

    text = export(nn.Sequential(bn).eval(), [(None, 6)], name="b")
    printed = tools.nnx_opt(text)
    assert re.search(r"eps = 1.000000e-03 : f64", printed)
    assert re.search(r"momentum = 2.000000e-01 : f64", printed)
    blobs = resources(printed)
    assert blobs["b_0_running_mean"][4:] == bn.running_mean.numpy().tobytes()
    assert blobs["b_0_running_var"][4:] == bn.running_var.numpy().tobytes()


def test_feed_fwd_descriptor():
    net = FeedFwdNN(4, [8, 6], 3, activation="gelu", activations=["relu", "tanh"],
                    dropout=0.1, dropout_probs=[0.2, 0.0])
    printed = tools.nnx_opt(export(net.eval(), [(None, 4)], name="ff"))
    assert "nnx.feed_fwd @net attributes {" in printed
    for s in ('activation = #nnx.activation<gelu>', 'activations = [#nnx.activation<relu>, #nnx.activation<tanh>]',
              "hidden_dims = array<i64: 8, 6>", "input_dim = 4 : i64",
              "output_dim = 3 : i64", "dropout_probs = [2.000000e-01, 0.000000e+00]"):
        assert s in printed, s
    assert len(re.findall(r'nnx.linear @"\d"', printed)) == 3


def _conv_nn_head(text):
    return next(line.strip() for line in text.splitlines()
                if "nnx.conv_nn" in line)


def test_conv_nn_descriptor_optional_attrs_absent():
    """Only the scalar params: no kernel_sizes / pools / activations /
    dropout_probs attribute; the convs and Linears are the leaf ops."""
    torch.manual_seed(0)
    net = ConvNN(3, [8, 16], [32], 10, pool=2)
    text = export(net.eval(), [(None, 3, 8, 8)], name="cnn")
    assert _conv_nn_head(text) == (
        "nnx.conv_nn @net attributes {in_channels = 3, channels = "
        "array<i64: 8, 16>, hidden_dims = array<i64: 32>, output_dim = 10, "
        "kernel_size = 3, pool = 2, activation = #nnx.activation<relu>, "
        "dropout = 0.0 : f64} {")
    assert re.findall(r"nnx\.module_list @(\w+)", text) == ["layers", "fcs"]
    assert len(re.findall(r'nnx\.conv2d @"\d" \{in_channels', text)) == 2
    assert "padding = array<i64: 1, 1>" in text
    assert len(re.findall(r'nnx\.linear @"\d"', text)) == 2


def test_conv_nn_descriptor_optional_attrs_present():
    net = ConvNN(3, [4, 6], [5], 2, kernel_size=5, kernel_sizes=[3, 1],
                 pools=[2, 0], activation="gelu",
                 activations=["relu", "tanh", "silu"], dropout=0.1,
                 dropout_probs=[0.2, 0.0, 0.3], bias=False)
    text = export(net.eval(), [(None, 3, 8, 8)], name="cnn")
    assert _conv_nn_head(text) == (
        "nnx.conv_nn @net attributes {in_channels = 3, channels = "
        "array<i64: 4, 6>, hidden_dims = array<i64: 5>, output_dim = 2, "
        "kernel_size = 5, kernel_sizes = array<i64: 3, 1>, pool = 0, "
        "pools = array<i64: 2, 0>, activation = #nnx.activation<gelu>, "
        "activations = [#nnx.activation<relu>, #nnx.activation<tanh>, "
        "#nnx.activation<silu>], dropout = 0.1 : f64, dropout_probs = "
        "[0.2 : f64, 0.0 : f64, 0.3 : f64]} {")
    assert "kernel_size = array<i64: 1, 1>, stride = array<i64: 1, 1>, " \
        "padding = array<i64: 0, 0>" in text
    assert "bias" not in text


def test_conv_nn_descriptor_parses():
    """nnx-opt reads the descriptor back (the optional lists only where
    written) and keeps the two module_lists."""
    plain = ConvNN(3, [8, 16], [32], 10, pool=2)
    printed = tools.nnx_opt(export(plain.eval(), [(None, 3, 8, 8)], name="a"))
    for s in ("channels = array<i64: 8, 16>", "hidden_dims = array<i64: 32>",
              "in_channels = 3 : i64", "output_dim = 10 : i64"):
        assert s in printed, s
    for s in ("kernel_sizes", "pools", "activations", "dropout_probs"):
        assert s not in printed, s
    lists = ConvNN(3, [4, 6], [], 2, kernel_sizes=[3, 1], pools=[2, 0],
                   activations=["relu", "tanh"], dropout_probs=[0.2, 0.0])
    printed = tools.nnx_opt(export(lists.eval(), [(None, 3, 8, 8)], name="b"))
    for s in ("kernel_sizes = array<i64: 3, 1>", "pools = array<i64: 2, 0>",
              "activations = [#nnx.activation<relu>, #nnx.activation<tanh>]",
              "dropout_probs = [2.000000e-01, 0.000000e+00]"):
        assert s in printed, s
    assert re.findall(r"nnx\.module_list @(\w+)", printed) == ["layers", "fcs"]


@pytest.mark.parametrize("kwargs, message", [
    (dict(channels=[]), "at least one conv layer"),
    (dict(kernel_size=4), "must be odd and positive"),
    (dict(kernel_sizes=[3, 0]), "must be odd and positive"),
    (dict(kernel_sizes=[3]), "1 kernel_sizes for 2 conv layers"),
    (dict(pools=[2]), "1 pools for 2 conv layers"),
    (dict(pool=-1), "is negative"),
    (dict(pools=[2, -2]), "is negative"),
    (dict(activations=["relu", "relu"]), "2 activations for 3 hidden sites"),
    (dict(dropout_probs=[0.1] * 4), "4 dropout_probs for 3 hidden sites"),
    (dict(activation="swish"), "unknown activation 'swish'"),
    (dict(activations=["relu", "mish", "relu"]), "unknown activation 'mish'"),
])
def test_conv_nn_rejects_bad_params(kwargs, message):
    args = dict(in_channels=3, channels=[4, 6], hidden_dims=[5], output_dim=2)
    args.update(kwargs)
    with pytest.raises(ValueError, match=re.escape(message)):
        ConvNN(**args)


def _conv_nn_as_sequential(net):
    """The forward ConvNN documents, written out as an nn.Sequential over
    `net`'s own layers."""
    mods = []
    for i, conv in enumerate(net.layers):
        mods += [conv, net._acts[i], nn.Dropout(net.dropout_for(i))]
        if net.pool_for(i) > 1:
            mods.append(nn.MaxPool2d(net.pool_for(i)))
    mods += [nn.AdaptiveAvgPool2d(1), nn.Flatten()]
    n = len(net.layers)
    for j, fc in enumerate(net.fcs):
        mods.append(fc)
        if j < len(net.hidden_dims):
            mods += [net._acts[n + j], nn.Dropout(net.dropout_for(n + j))]
    return nn.Sequential(*mods)


@pytest.mark.parametrize("kwargs", [
    dict(pool=2),
    dict(kernel_sizes=[5, 1, 3], pools=[2, 0, 1], dropout=0.5,
         activations=["tanh", "relu", "gelu", "sigmoid", "relu"]),
], ids=["scalar", "lists"])
def test_conv_nn_forward_is_the_layers_in_order(kwargs):
    torch.manual_seed(0)
    net = ConvNN(3, [4, 6, 5], [7, 6], 3, **kwargs).eval()
    assert [m.padding for m in net.layers] == [
        (k // 2, k // 2) for k in map(net.kernel_size_for, range(3))]
    seq = _conv_nn_as_sequential(net).eval()
    x = torch.randn(2, 3, 12, 12)
    with torch.no_grad():
        assert torch.equal(net(x), seq(x))
    net.train()  # dropout is F.dropout with the site's probability
    torch.manual_seed(1)
    a = net(x)
    torch.manual_seed(1)
    assert torch.equal(a, seq.train()(x))

def test_custom_module_forward_from_fx_and_spec():
    block = Residual(8)
    printed = tools.nnx_opt(export(block.eval(), [(None, 8)], name="r", root="block"))
    assert 'nnx.module @block class = "Residual"' in printed
    assert re.search(r"%(\d+) = nnx.call @norm\(%arg0\) \{nnx.source = \"self_norm_0\"\}",
                     printed)
    assert re.search(r'nnx.fn.add %arg0, %\d+ \{nnx.source = "add_0"\} : '
                     r'tensor<\?x8xf32>, tensor<\?x8xf32> -> tensor<\?x8xf32>',
                     printed)

    # An explicit spec wins over the traced forward (here: computes x*y with
    # y = proj(norm(x)) to prove the spec, not the fx trace, was used).
    def spec(F, x):
        return F.mul(x, F.call("proj", F.call("norm", x)), source="scale_0")
    printed = tools.nnx_opt(export(block.eval(), [(None, 8)],
                                   forward_specs={Residual: spec}))
    assert 'arith.mulf %arg0, %1 {nnx.source = "scale_0"}' in printed
    assert "arith.addf" not in printed


class _Downsample(nn.Module):
    """Two strided convs and a pool in a custom forward: 32x smaller."""

    def __init__(self, limit=None):
        super().__init__()
        self.limit = limit
        self.stem = nn.Conv2d(3, 4, 7, stride=2, padding=3)
        self.pool = nn.MaxPool2d(3, stride=2, padding=1)
        self.down = nn.Conv2d(4, 4, 3, stride=8, padding=1)

    def forward(self, x):
        if self.limit is not None:
            assert x.shape[-1] <= self.limit, "image too large"
        return self.down(self.pool(self.stem(x)))


@pytest.mark.parametrize("limit", [None, 16], ids=["any", "at_most_16"])
def test_dynamic_image_sizes_stay_dynamic_through_downsampling(limit):
    # Small example images (3 x 4, 5 x 7) would come out 1 x 1 from both
    # runs and read as static; a model that refuses large images still
    # exports, from small runs.
    block = _Downsample(limit).eval()
    printed = tools.nnx_opt(export(block, [(None, 3, None, None)], name="d",
                                   root="block"))
    signature = re.search(r"nnx.forward @forward\(%arg0: (\S+)\) -> (\S+) \{",
                          printed)
    assert signature, printed
    assert signature.group(1) == "tensor<?x3x?x?xf32>"
    if limit is None:
        assert signature.group(2) == "tensor<?x4x?x?xf32>", printed
    else:  # exported; the small runs cannot tell these sizes apart
        assert signature.group(2).startswith("tensor<?x4x"), printed


class _StridedHeads(nn.Module):
    """(batch, length, 8) features through a strided Conv1d whose output
    length is, on both example runs, the batch's size (lengths 3 and 7 give
    2 and 3, the batches 2 and 3), then a per-head view of ``*x.shape[:2]``
    as attention modules write it."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(8, 8, kernel_size=2, stride=3, padding=1)
        self.proj = nn.Linear(8, 8)

    def forward(self, x):
        x = self.proj(self.conv(x.permute(0, 2, 1)).permute(0, 2, 1))
        return x.view(*x.shape[:2], 2, -1).permute(0, 2, 1, 3)


def test_a_derived_length_equal_to_the_batch_stays_its_own_size():
    torch.manual_seed(0)
    model = _StridedHeads().eval()
    text = export(model, [(None, None, 8)], name="heads")
    # The view's dims 0 and 1 are two sizes, not the batch's twice.
    view = re.search(r"nnx.fn.reshape %\S+ \[(%\S+), (%\S+), 2, 4\]", text)
    assert view and view.group(1) != view.group(2), text
    for batch, length in [(1, 20), (4, 5)]:
        x = torch.randn(batch, length, 8)
        got, _ = tools.nnx_run(text, [x.numpy()])
        with torch.no_grad():
            want = model(x).numpy()
        np.testing.assert_allclose(got, want, **CONTRACT)


def test_custom_module_calls_nested_children_and_aliases():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.h = nn.ModuleList([nn.Linear(4, 4), nn.Linear(4, 4)])
            self.tied = self.h[0]

        def forward(self, x):
            return self.h[1](x) + self.tied(x)

    def spec(F, x):
        return F.add(F.call("h.1", x), F.call("tied", x))
    printed = tools.nnx_opt(export(Net(), [(None, 4)], forward_specs={"": spec}))
    assert 'nnx.call @h::@"1"(%arg0)' in printed
    assert 'nnx.alias @tied = @h::@"0"' in printed


def test_recorded_properties():
    from torch.nn.utils import prune
    m = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 2))
    m[1].register_forward_hook(lambda mod, i, o: None)
    prune.l1_unstructured(m[2], "weight", amount=0.5)
    printed = tools.nnx_opt(export(m, [(None, 4)]))
    assert re.search(r'nnx.relu @"1" \{hooks = \["forward:<lambda>"\]', printed)
    assert 'pruned = ["weight"]' in printed
    # The exported weight is the masked one.
    blob = resources(printed)["model_2_weight"][4:]
    assert blob == (m[2].weight.detach().numpy().tobytes())

    class MySeq(nn.Sequential):
        def forward(self, x):
            return super().forward(x) * 2
    # A Sequential subclass with its own forward is a custom module over
    # the Sequential's children (python/tests/test_export_modules.py).
    printed = tools.nnx_opt(export(MySeq(nn.Linear(4, 4)), [(None, 4)]))
    assert 'nnx.module @net class = "MySeq"' in printed
    assert 'nnx.call @"0"' in printed and "subclass" not in printed

    lazy = nn.Sequential(nn.LazyLinear(3), nn.ReLU())
    printed = tools.nnx_opt(export(lazy, [(None, 4)]))
    assert re.search(r'nnx.linear @"0" \{lazy, out_features = 3 : i64, train\}', printed)
    assert lazy[0].has_uninitialized_params()  # exporting did not run it


def test_refusals_name_the_module():
    with pytest.raises(ExportError, match=r"module at '1'.*Softmax needs an explicit dim"):
        export(nn.Sequential(nn.Linear(4, 4), nn.Softmax()), [(None, 4)])
    with pytest.raises(ExportError, match=r"module at '0'.*track_running_stats"):
        export(nn.Sequential(nn.BatchNorm1d(4, track_running_stats=False)), [(None, 4)])
    with pytest.raises(ExportError, match=r"module at '0'.*max_norm"):
        export(nn.Sequential(nn.Embedding(4, 4, max_norm=1.0)),
               [((None, 2), torch.int64)])

    class Odd(nn.Module):
        def forward(self, x):
            return x.sort(dim=-1).values
    # The module path, the construct and the user's source line.
    line = Odd.forward.__code__.co_firstlineno + 1
    with pytest.raises(ExportError, match=r"module at '<root>': 'Tensor.sort' "
                       r"has no nnx form .*\(at .*test_export.py:%d\)" % line):
        export(Odd(), [(None, 4)])


def test_nnx_forward_method_parametrizations_and_state():
    class Gated(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Linear(4, 4)
            self.b = nn.Sigmoid()
            self.scale = nn.Parameter(torch.ones(4), requires_grad=False)

        def forward(self, x):
            return self.a(x) * self.b(x)

        def nnx_forward(self, F, x):
            return F.mul(F.call("a", x), F.call("b", x), source="gate_0")

    printed = tools.nnx_opt(export(Gated(), [(None, 4)], name="g", root="gate"))
    assert 'arith.mulf %0, %1 {nnx.source = "gate_0"}' in printed
    assert re.search(r'nnx.module @gate class = "Gated" attributes \{requires_grad = '
                     r'\{scale = false\}, state = \{scale = dense_resource<g_scale> : '
                     r'tensor<4xf32>\}, train\}', printed), printed

    from torch.nn.utils import weight_norm
    from torch.nn.utils.parametrizations import spectral_norm
    m = nn.Sequential(weight_norm(nn.Linear(4, 4)), spectral_norm(nn.Linear(4, 2)))
    printed = tools.nnx_opt(export(m.eval(), [(None, 4)]))
    assert re.search(r'nnx.linear @"0" \{[^}]*parametrizations = \{weight = "weight_norm"\}',
                     printed), printed
    assert re.search(r'nnx.linear @"1" \{[^}]*parametrizations = \{weight = "spectral_norm"\}',
                     printed), printed


def test_support_table_in_the_docs_is_the_registry():
    """docs/Python.md's table is generated from the handler registry."""
    import subprocess
    import sys as _sys
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    proc = subprocess.run([_sys.executable, os.path.join(
        root, "utils", "nnx-export-support.py"), "--check"],
        capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


class _Stateful(nn.Module):
    """Python state the recorder cannot see: each call is another path."""

    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        return x * 2 if self.calls < 2 else x * 3


def test_another_path_on_the_second_inputs_is_refused():
    """The model run again on the second example inputs must give what the
    recording computed for them: a forward that takes another path (here
    on its own state) is refused, not exported wrong."""
    with pytest.raises(ExportError, match="takes another path on the second "
                                          "example inputs"):
        export(_Stateful(), [(None, 4)])


def test_same_path_is_normwise():
    """The second run's check takes rounding for rounding: a few ulps of the
    largest element in an element near zero (vit_h_14's 2.3e-6 of 2.3) is
    the same path; a change of an element's own size is not."""
    from nnx.recorder import _same_path
    real = torch.tensor([2.3, 2.4e-6, float("inf"), float("nan")])
    assert _same_path(torch.tensor([2.3, 1e-7, float("inf"), float("nan")]),
                      real)
    assert not _same_path(torch.tensor([2.3, 0.5, float("inf"),
                                        float("nan")]), real)
    assert not _same_path(torch.tensor([2.3, 1e-7, float("inf"), 0.0]), real)
    assert _same_path(torch.tensor([3, 4]), torch.tensor([3, 4]))
    assert not _same_path(torch.tensor([3, 4]), torch.tensor([3, 5]))
