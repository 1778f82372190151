"""Surgery on an exported Sequential convnet, checked against PyTorch.

The net is written the way an ``nn.Sequential`` convnet usually is (conv,
BatchNorm2d, ReLU(inplace=True), max pool, a global pool, ``nn.Flatten``,
dropout, a Linear head), exported by nnx.torch_export with the batch
dynamic, edited by nnx-opt (nnx-widen, nnx-deepen, nnx-low-rank), and run by
nnx-run: where Net2Net says the edit preserves the function, the edited model
agrees with the ORIGINAL PyTorch model within the 1e-5 contract at two batch
sizes. Refusals are errors that name the pass, the module and the reason.

The same edits on the built-in :class:`nnx.nets.ConvNN` (one ``nnx.conv_nn``
whose descriptor the passes update) are checked the same way, and the edited
descriptor must build a ConvNN of the edited IR's tensor shapes that, given
the edited tensors, computes the same outputs."""

import copy
import functools
import re

import numpy as np
import pytest

torch = pytest.importorskip("torch")
nn = torch.nn

from nnx.nets import ConvNN  # noqa: E402
from nnx.safetensors import read_safetensors  # noqa: E402
from nnx.testing import CONTRACT  # noqa: E402
from nnx.tools import ToolError, nnx_opt, nnx_run  # noqa: E402
from nnx.torch_export import export  # noqa: E402


def make_net():
    """A small CIFAR-style net in eval mode, with non-trivial BatchNorm
    statistics (random running mean/var, weight and bias)."""
    torch.manual_seed(0)
    net = nn.Sequential(
        nn.Conv2d(3, 8, kernel_size=3, padding=1),
        nn.BatchNorm2d(8),
        nn.ReLU(inplace=True),
        nn.MaxPool2d(2),
        nn.Conv2d(8, 12, kernel_size=3, padding=1, bias=False),
        nn.BatchNorm2d(12),
        nn.ReLU(inplace=True),
        nn.Conv2d(12, 16, kernel_size=3, stride=2, padding=1),
        nn.ReLU(inplace=True),
        nn.AdaptiveAvgPool2d((2, 2)),
        nn.Flatten(),
        nn.Dropout(0.5),
        nn.Linear(16 * 2 * 2, 10),
    )
    with torch.no_grad():
        for m in net.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 2.0)
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.3, 0.3)
    return net.eval()


@pytest.fixture(scope="module")
def exported():
    net = make_net()
    text = export(net, inputs=[(None, 3, 16, 16)], name="cnn")
    return net, text


def inputs_for(batch, size=16):
    g = torch.Generator().manual_seed(batch)
    return torch.randn(batch, 3, size, size, generator=g)


def edit(text, passes):
    """`text` after the nnx-opt pipeline `passes` (a list of pass strings)."""
    return nnx_opt(text, ["--pass-pipeline=builtin.module(nnx.model(%s))"
                          % ",".join(passes)])


def assert_preserves(net, text, passes, size=16):
    """The model `passes` make of `text` computes what `net` computes."""
    edited = text
    if passes:
        edited = edit(text, passes)
        assert edited != text
    for batch in (1, 3):
        x = inputs_for(batch, size)
        with torch.no_grad():
            want = net(x).numpy()
        got, _ = nnx_run(edited, [x.numpy()])
        np.testing.assert_allclose(got, want, **CONTRACT,
                                   err_msg=" then ".join(passes))
    return edited


def test_the_export_is_one_sequential(exported):
    """The Sequential with its Flatten and Linear head exports as one
    nnx.sequential (its chain verifies across the flatten), and runs."""
    net, text = exported
    assert len(re.findall(r"nnx\.sequential", text)) == 1
    assert "nnx.flatten" in text
    assert_preserves(net, text, [])


@pytest.mark.parametrize("passes", [
    # Through the batch norm (the option) and ReLU, max pool to conv 4.
    ["nnx-widen{layer=0 width=13 seed=1 through-batchnorm=true}"],
    # Through a batch norm, a ReLU to the strided conv 7.
    ["nnx-widen{layer=4 width=20 seed=2 through-batchnorm=true}"],
    # Through ReLU, the global pool, flatten and dropout to the Linear: each
    # channel owns 2 x 2 columns.
    ["nnx-widen{layer=7 width=23 seed=3}"],
    ["nnx-deepen{after=2}"],
    ["nnx-deepen{after=8 kernel-size=1}"],
    # At the maximum rank (min(12, 8 * 9) = 12; min(16, 12 * 9) = 16).
    ["nnx-low-rank{layer=4 rank=12}"],
    ["nnx-low-rank{layer=7 rank=16}"],
    # A sequence: an identity conv after the first block, widened, then the
    # first conv widened into it.
    ["nnx-deepen{after=2}", "nnx-widen{layer=3 width=11 seed=4}",
     "nnx-widen{layer=0 width=10 seed=5 through-batchnorm=true}"],
], ids=["widen-bn", "widen-bn-strided", "widen-flatten", "deepen",
        "deepen-1x1", "low-rank-4", "low-rank-7", "sequence"])
def test_edits_preserve_the_pytorch_outputs(exported, passes):
    net, text = exported
    assert_preserves(net, text, passes)


def test_low_rank_below_the_maximum_changes_the_output(exported):
    """A rank-2 factorization is not exact: the check above can fail."""
    net, text = exported
    with pytest.raises(AssertionError):
        assert_preserves(net, text, ["nnx-low-rank{layer=7 rank=2}"])


@pytest.mark.parametrize("passes, message", [
    ("nnx-widen{layer=0 width=13}",
     "nnx-widen: module on the path '1' (nnx.batch_norm) is width-dependent: "
     "duplicating units through it changes the output (option "
     "through-batchnorm=true"),
    ("nnx-widen{layer=12 width=13}",
     "nnx-widen: target '12' (nnx.linear) has no consumer"),
    ("nnx-deepen{after=6 kernel-size=4}", "must be odd and positive"),
    ("nnx-drop-layer{layer=3}",
     "nnx-drop-layer: layer '3' (nnx.max_pool2d) changes the size of spatial "
     "dim 2"),
], ids=["widen-batchnorm", "widen-last", "deepen-even", "drop-pool"])
def test_refusals_name_the_module_and_reason(exported, passes, message):
    _, text = exported
    with pytest.raises(ToolError) as info:
        edit(text, [passes])
    assert message in str(info.value)


# -----------------------------------------------------------------------------
# ConvNN: the built-in convnet, exported as one nnx.conv_nn whose descriptor
# (channels, hidden_dims, the per-conv and per-site lists) every edit keeps
# describing the edited model.
# -----------------------------------------------------------------------------

CNN_IMAGE = 12

#: ConvNN's descriptor params: the nnx.conv_nn attributes and their defaults
#: where the printed IR may leave one out.
DESCRIPTOR_DEFAULTS = {
    "in_channels": None, "channels": None, "hidden_dims": None,
    "output_dim": None, "kernel_size": 3, "kernel_sizes": None, "pool": 0,
    "pools": None, "activation": "relu", "activations": None,
    "dropout": 0.0, "dropout_probs": None,
}

CONV_NN_VARIANTS = {
    # The scalar defaults only: every conv pools by 2 (12 -> 6 -> 3).
    "scalar": dict(pool=2, dropout=0.25),
    # Per-conv and per-site lists: a 5x5 first conv, no pool after the
    # second, per-site dropout.
    "lists": dict(pool=2, pools=[2, 0], kernel_sizes=[5, 3], dropout=0.25,
                  dropout_probs=[0.25, 0.0, 0.5]),
    # Per-site activation overrides: tanh after conv 1 (site 1).
    "tanh": dict(pool=2, dropout=0.25, activations=["relu", "tanh", "relu"]),
}


def make_conv_nn(channels=(6, 8), seed=0, **kw):
    """ConvNN(3, channels, [12], 5, ...) in eval mode, seeded."""
    torch.manual_seed(seed)
    return ConvNN(3, list(channels), [12], 5, **kw).eval()


def export_conv_nn(net, name="convnn"):
    return export(net, inputs=[(None, 3, CNN_IMAGE, CNN_IMAGE)], name=name)


@functools.lru_cache(maxsize=None)
def conv_nn_variant(variant):
    """(net, its export) of CONV_NN_VARIANTS[variant], made once."""
    net = make_conv_nn(**CONV_NN_VARIANTS[variant])
    return net, export_conv_nn(net, "convnn_" + variant)


@pytest.fixture(params=["scalar", "lists"])
def conv_nn(request):
    return conv_nn_variant(request.param)


@pytest.fixture
def conv_nn_tanh():
    return conv_nn_variant("tanh")


def _split_top(s):
    """`s` split at the commas outside brackets."""
    items, depth, start = [], 0, 0
    for i, ch in enumerate(s):
        depth += (ch in "[{<(") - (ch in "]}>)")
        if ch == "," and depth == 0:
            items.append(s[start:i].strip())
            start = i + 1
    items.append(s[start:].strip())
    return [x for x in items if x]


def _balanced(text, start):
    """The text inside the brace at `start` and its match."""
    depth = 0
    for i in range(start, len(text)):
        depth += (text[i] == "{") - (text[i] == "}")
        if depth == 0:
            return text[start + 1:i]
    raise AssertionError("unbalanced braces")


def _attr_value(v):
    if v.startswith("array<i64"):
        return [int(x) for x in re.findall(r"-?\d+", v[len("array<i64"):])]
    if v.startswith("["):
        return [_attr_value(x) for x in _split_top(v[1:-1])]
    act = re.fullmatch(r"#nnx\.activation<(\w+)>", v)
    if act:
        return act.group(1)
    num = v.partition(" : ")[0]
    return float(num) if re.search(r"[.eE]", num) else int(num)


def conv_nn_descriptor(text):
    """The nnx.conv_nn's descriptor in `text` as ConvNN's arguments (an
    absent attribute as its default)."""
    m = re.search(r"nnx\.conv_nn @\S+ attributes \{", text)
    assert m, "no nnx.conv_nn with attributes"
    desc = dict(DESCRIPTOR_DEFAULTS)
    for item in _split_top(_balanced(text, m.end() - 1)):
        key, _, value = item.partition(" = ")
        if key in desc:
            desc[key] = _attr_value(value)
    return desc


def descriptor_of(net):
    """The net's descriptor as the IR's (lists where the params hold
    tuples), to compare with and edit like conv_nn_descriptor's."""
    def plain(v):
        return list(v) if isinstance(v, tuple) else copy.deepcopy(v)
    return {k: plain(getattr(net, k)) for k in DESCRIPTOR_DEFAULTS}


_TENSOR = re.compile(r"\b(weight|bias) = \S*?<[^>]*> : tensor<([0-9x]+)x[a-z]\w*>")


def ir_param_shapes(text):
    """{"layers.0.weight": shape, ...}: the tensors of the conv_nn's
    module_lists as the IR types them."""
    shapes, group = {}, None
    for line in text.splitlines():
        g = re.search(r"nnx\.module_list @(\w+)", line)
        if g:
            group = g.group(1)
            continue
        m = re.search(r'nnx\.\w+ @"(\d+)" \{(.*)\}', line)
        for t, dims in _TENSOR.findall(m.group(2)) if m and group else []:
            shapes[f"{group}.{m.group(1)}.{t}"] = tuple(map(int, dims.split("x")))
    return shapes


def _options(p):
    """("nnx-widen", {"layer": ..., ...}) of a pass string."""
    name, _, rest = p.partition("{")
    return name, dict(kv.split("=", 1) for kv in rest.rstrip("}").split())


def _site_of(desc, path):
    """(group, index in it, site number) of "layers.i" / "fcs.j"."""
    group, i = path.split(".")
    i = int(i)
    return group, i, i if group == "layers" else len(desc["channels"]) + i


def _insert(desc, name, scalar, n, at, value, materialize):
    """`value` into the list `name` at `at`; an absent list is first made
    of `n` copies of `scalar`'s value when `materialize`, else left out."""
    if desc[name] is None:
        if not materialize:
            return
        desc[name] = [desc[scalar]] * n
    desc[name].insert(at, value)


def _expect_deepen(desc, after, k):
    group, i, site = _site_of(desc, after)
    n_conv = len(desc["channels"])
    n_sites = n_conv + len(desc["hidden_dims"])
    if group == "layers":
        desc["channels"].insert(i + 1, desc["channels"][i])
        _insert(desc, "kernel_sizes", "kernel_size", n_conv, i + 1, k,
                k != desc["kernel_size"])
        _insert(desc, "pools", "pool", n_conv, i + 1, 0, desc["pool"] != 0)
    else:
        desc["hidden_dims"].insert(i + 1, desc["hidden_dims"][i])
    _insert(desc, "activations", "activation", n_sites, site + 1, "relu",
            desc["activation"] != "relu")
    _insert(desc, "dropout_probs", "dropout", n_sites, site + 1, 0.0,
            desc["dropout"] != 0.0)


def expected_descriptor(net, passes):
    """The descriptor `passes` should leave: widen records the new width,
    deepen inserts the new site's entries."""
    desc = descriptor_of(net)
    for p in passes:
        name, opts = _options(p)
        if name == "nnx-widen":
            group, i, _ = _site_of(desc, opts["layer"])
            dims = desc["channels" if group == "layers" else "hidden_dims"]
            dims[i] = int(opts["width"])
        elif name == "nnx-deepen":
            _expect_deepen(desc, opts["after"], int(opts.get("kernel-size", 3)))
    return desc


def ir_as_conv_nn(text, tmp_path):
    """The ConvNN `text`'s descriptor builds, its tensors from the IR (moved
    to a safetensors file by nnx-externalize-weights)."""
    path = str(tmp_path / "w.safetensors")
    nnx_opt(text, [f"--nnx-externalize-weights=file={path}"])
    net = ConvNN(**conv_nn_descriptor(text)).eval()
    state = {k: torch.from_numpy(v) for k, v in read_safetensors(path).items()}
    net.load_state_dict(state)
    return net


def test_conv_nn_exports_as_one_conv_nn(conv_nn, conv_nn_tanh):
    """One nnx.conv_nn holding the two module_lists; it runs like PyTorch."""
    for net, text in (conv_nn, conv_nn_tanh):
        assert len(re.findall(r"nnx\.conv_nn @", text)) == 1
        assert len(re.findall(r"nnx\.module_list @", text)) == 2
        assert conv_nn_descriptor(text) == descriptor_of(net)
        assert conv_nn_descriptor(nnx_opt(text)) == descriptor_of(net)
        assert_preserves(net, text, [], CNN_IMAGE)


CONV_NN_EDITS = [
    # A conv's widened channels feed the next conv.
    ["nnx-widen{layer=layers.0 width=9 seed=1}"],
    # The last conv's feed fcs.0, through the global pool.
    ["nnx-widen{layer=layers.1 width=11 seed=2}"],
    ["nnx-widen{layer=fcs.0 width=15 seed=3}"],
    # An identity conv after conv site 0, one of 1x1 after the last conv,
    # an identity Linear after the hidden fc.
    ["nnx-deepen{after=layers.0}"],
    ["nnx-deepen{after=layers.1 kernel-size=1}"],
    ["nnx-deepen{after=fcs.0}"],
    # The new identity conv widened into the old layers.1.
    ["nnx-deepen{after=layers.0}", "nnx-widen{layer=layers.1 width=10 seed=4}"],
]
CONV_NN_EDIT_IDS = ["widen-conv", "widen-last-conv", "widen-fc", "deepen-conv",
                    "deepen-last-conv-1x1", "deepen-fc", "deepen-widen"]


@pytest.mark.parametrize("passes", CONV_NN_EDITS, ids=CONV_NN_EDIT_IDS)
def test_conv_nn_edits_preserve_and_keep_the_descriptor(conv_nn, passes,
                                                       tmp_path):
    """The edited model computes the original PyTorch net's outputs; its
    descriptor is the edit's, and builds a ConvNN with the edited IR's
    tensor shapes that, given the edited tensors, computes them too."""
    net, text = conv_nn
    edited = assert_preserves(net, text, passes, CNN_IMAGE)
    desc = conv_nn_descriptor(edited)
    assert desc == expected_descriptor(net, passes)
    built = {n: tuple(p.shape) for n, p in ConvNN(**desc).named_parameters()}
    assert built == ir_param_shapes(edited)
    rebuilt = ir_as_conv_nn(edited, tmp_path)
    x = inputs_for(3, CNN_IMAGE)
    with torch.no_grad():
        np.testing.assert_allclose(rebuilt(x).numpy(), net(x).numpy(),
                                   **CONTRACT)


@pytest.mark.parametrize("passes", [
    ["nnx-widen{layer=layers.1 width=11 seed=2}"],
    ["nnx-deepen{after=layers.0}"],
    ["nnx-deepen{after=fcs.0}"],
], ids=["widen-tanh-conv", "deepen-conv", "deepen-fc"])
def test_conv_nn_edits_keep_per_site_activations(conv_nn_tanh, passes):
    """A tanh override at site 1: widen through it, deepen at relu sites;
    the activations list stays aligned with "relu" at the new site."""
    net, text = conv_nn_tanh
    edited = assert_preserves(net, text, passes, CNN_IMAGE)
    assert conv_nn_descriptor(edited) == expected_descriptor(net, passes)


def test_conv_nn_drop_layer_leaves_an_identity():
    """Dropping a 6 -> 6 conv: an nnx.identity in its slot, the activation,
    dropout and pool of its site still applied, as PyTorch computes with
    layers[1] = nn.Identity()."""
    net = make_conv_nn(channels=(6, 6), pool=2, dropout=0.25)
    edited = edit(export_conv_nn(net), ["nnx-drop-layer{layer=layers.1}"])
    assert re.search(r'nnx\.identity @"1"', edited)
    assert conv_nn_descriptor(edited) == descriptor_of(net)
    dropped = copy.deepcopy(net)
    dropped.layers[1] = nn.Identity()
    assert_preserves(dropped, edited, [], CNN_IMAGE)


@pytest.mark.parametrize("variant, passes, messages", [
    ("scalar", "nnx-widen{layer=fcs.1 width=7}",
     ["nnx-widen: target 'fcs.1' (nnx.linear) has no consumer"]),
    ("tanh", "nnx-deepen{after=layers.1}",
     ["nnx-deepen: ", "activation_for(1) = 'tanh'",
      "deepen only preserves the function after a ReLU"]),
    ("scalar", "nnx-deepen{after=fcs.1}",
     ["nnx-deepen: site 'fcs.1'", "no activation follows it"]),
    ("scalar", "nnx-deepen{after=layers.0 kernel-size=4}",
     ["nnx-deepen: site 'layers.0'", "must be odd and positive"]),
    ("scalar", "nnx-low-rank{layer=layers.0 rank=2}",
     ["nnx-low-rank: target 'layers.0'", "conv_nn", "cannot describe"]),
    ("scalar", "nnx-drop-layer{layer=layers.1}",
     ["nnx-drop-layer: layer 'layers.1'", "maps 6 to 8",
      "an identity in its place would break the chain"]),
], ids=["widen-last-fc", "deepen-tanh", "deepen-output", "deepen-even",
        "low-rank-conv", "drop-resizing-conv"])
def test_conv_nn_refusals(variant, passes, messages):
    _, text = conv_nn_variant(variant)
    with pytest.raises(ToolError) as info:
        edit(text, [passes])
    for message in messages:
        assert message in str(info.value)
