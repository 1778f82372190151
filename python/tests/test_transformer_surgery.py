"""Surgery on the six reference transformer families, exported whole by
nnx.torch_export, edited by nnx-opt and run in this process by nnx.compile.
Every model, edited or not, runs at two (batch, sequence) shapes on token
ids drawn from a seeded RNG.

- nnx-widen (init=copy and init=zero) of block 0's first MLP Linear (and
  its SwiGLU sibling) to 1.5x its width, and nnx-insert-block after block 0,
  preserve the logits of the unedited export within the 1e-5 contract.
- nnx-insert-block leaves three blocks, and the parameter count
  (nnx-param-count) grows by exactly block 0's count.
- nnx-drop-layer remove=true of block 0 leaves one block that runs with the
  logits' shape unchanged and the probe ``layers.0.layer_output`` resolved;
  the parameter count drops by exactly block 0's count.
- nnx-prune of block 0's first MLP Linear to half its units runs with the
  probe ``layers.0.mlp_output`` resolved, and the parameter count drops by
  the removed units times what each owns, computed from the exported shapes:
  a weight row and a bias entry of the Linear and of each sibling, and a
  column of the consumer.
- nnx-grow-attention (twice the heads; under GQA also twice the kv heads;
  a head dim 4 wider) and, on the RMSNorm families, nnx-widen-residual
  preserve the logits within 1e-5 (the LayerNorm families are refused);
  doubling the heads adds exactly the predicted parameters.
- nnx-prune heads= to half the heads runs with the probe
  ``layers.0.attention_probabilities`` resolved at the new head count, and
  removes exactly the predicted parameters (kv groups go with their heads).
"""

import os
import sys
import tempfile

import numpy as np
import pytest

torch = pytest.importorskip("torch")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from models import FAMILIES, build  # noqa: E402
from models.common import attention_interface, dropout_add  # noqa: E402

import nnx  # noqa: E402
from nnx.testing import CONTRACT  # noqa: E402
from nnx.tools import ToolError, run_tool  # noqa: E402
from nnx.torch_export import export  # noqa: E402

# (batch, sequence) pairs every model runs at.
SHAPES = [(1, 5), (3, 9)]
SHAPE_IDS = [f"b{b}xt{t}" for b, t in SHAPES]
BLOCK = 0
#: Optimization level of every compiled model, edited or not: 0 compiles
#: several times faster than the default and the comparison is between
#: nnx runs at the same level.
OPT_LEVEL = 0

#: family -> (its module_list, block 0's first MLP Linear, that Linear's
#: SwiGLU siblings, their consumer), the Linears relative to the block.
LAYOUT = {
    "gpt2": ("transformer.h", "mlp.c_fc", (), "mlp.c_proj"),
    "llama": ("model.layers", "mlp.gate_proj", ("mlp.up_proj",),
              "mlp.down_proj"),
    "gemma2": ("model.layers", "mlp.gate_proj", ("mlp.up_proj",),
               "mlp.down_proj"),
    "bloom": ("transformer.h", "mlp.dense_h_to_4h", (), "mlp.dense_4h_to_h"),
    "cohere": ("model.layers", "mlp.gate_proj", ("mlp.up_proj",),
               "mlp.down_proj"),
    "falcon": ("transformer.h", "mlp.dense_h_to_4h", (), "mlp.dense_4h_to_h"),
}


# -----------------------------------------------------------------------------
# Helpers
# -----------------------------------------------------------------------------

def parse_param_table(stdout):
    """nnx-param-count's table as ({path: params}, total)."""
    rows, total = {}, None
    for line in stdout.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "total":
            total = int(parts[1])
        elif len(parts) == 3 and parts[2].isdigit():
            rows[parts[0]] = int(parts[2])
    assert total is not None, f"no total line in:\n{stdout}"
    return rows, total


def subtree_params(rows, path):
    """The parameters of the module at `path` and everything below it."""
    return sum(n for p, n in rows.items()
               if p == path or p.startswith(path + "."))


def children(rows, path):
    """The keys of the modules directly below `path` in the table."""
    depth = path.count(".") + 1
    return sorted(p.split(".")[-1] for p in rows
                  if p.startswith(path + ".") and p.count(".") == depth)


def keys(n):
    """The keys of an n-element module_list, in the order children() gives."""
    return sorted(str(i) for i in range(n))


def tensor_shapes(text, name):
    """Dotted tensor name -> shape, of the model in `text`."""
    model = nnx.Model.parse(text, name)
    return {k: a.shape for k, (a, _) in model.state_dict().items()}


def nnx_opt_with_count(text, passes):
    """(edited IR text, parsed param table) of `text` after the nnx.model
    passes `passes` (none: the count only)."""
    pipeline = "builtin.module(%snnx-param-count)" % (
        f"nnx.model({passes})," if passes else "")
    with tempfile.TemporaryDirectory(prefix="nnx-surgery-") as tmp:
        out = os.path.join(tmp, "edited.mlir")
        proc = run_tool("nnx-opt", [f"--pass-pipeline={pipeline}", "-",
                                    "-o", out], input_text=text)
        with open(out) as f:
            edited = f.read()
    return edited, parse_param_table(proc.stdout)


def token_ids(vocab, batch, seq):
    """(batch, seq) ids in [0, vocab), seeded by the shape."""
    rng = np.random.default_rng(batch * 100 + seq)
    return rng.integers(0, vocab, size=(batch, seq)).astype(np.int64)


class Family:
    """One family's export, its unedited logits at SHAPES and the models
    edits make of it (each edit run by nnx-opt and compiled once)."""

    def __init__(self, name):
        self.name = name
        model = build(name)
        self.text = export(model, [((None, None), torch.int64)], name=name,
                           functions=[attention_interface, dropout_add])
        self.blocks, first, siblings, consumer = LAYOUT[name]
        self.block = f"{self.blocks}.{BLOCK}"
        self.target = f"{self.block}.{first}"
        self.siblings = [f"{self.block}.{s}" for s in siblings]
        self.consumer = f"{self.block}.{consumer}"
        self.shapes = tensor_shapes(self.text, name)
        _, (self.rows, self.total) = nnx_opt_with_count(self.text, "")
        self._edits = {}
        self._compiled = {}
        self.ids = {s: token_ids(model.lm_head.out_features, *s)
                    for s in SHAPES}
        run = self.compile(self.text)
        self.logits = {s: run(ids)[0] for s, ids in self.ids.items()}

    def units(self):
        """Output units of the target Linear."""
        return self.shapes[self.target + ".weight"][0]

    def hidden(self):
        """Width of the residual stream (the consumer's output features)."""
        return self.shapes[self.consumer + ".weight"][0]

    def compile(self, text, probes=()):
        return nnx.compile(nnx.Model.parse(text, self.name), threads=1,
                           opt_level=OPT_LEVEL,
                           family=self.name if probes else None,
                           probes=list(probes))

    def edit(self, passes):
        """(edited text, (param rows, total)) of `passes`, made once."""
        if passes not in self._edits:
            self._edits[passes] = nnx_opt_with_count(self.text, passes)
        return self._edits[passes]

    def run_edited(self, passes, shape, probes=()):
        """(logits, probes) of the edited model at `shape`; the model is
        compiled once per (passes, probes)."""
        key = (passes, tuple(probes))
        if key not in self._compiled:
            self._compiled[key] = self.compile(self.edit(passes)[0], probes)
        return self._compiled[key](self.ids[shape])


@pytest.fixture(scope="module", params=list(FAMILIES))
def family(request):
    """A :class:`Family`, exported and run unedited once per family."""
    return Family(request.param)


def widened(fam):
    """1.5x the target's units."""
    return fam.units() * 3 // 2


def widen_pass(fam, init):
    return (f"nnx-widen{{layer={fam.target} width={widened(fam)} "
            f"seed=1 init={init}}}")


def insert_pass(fam):
    return f"nnx-insert-block{{after={fam.block}}}"


def drop_pass(fam):
    return f"nnx-drop-layer{{layer={fam.block} remove=true}}"


def prune_pass(fam):
    return f"nnx-prune{{layer={fam.target} keep={fam.units() // 2}}}"


def assert_preserves_logits(fam, passes, shape):
    got, _ = fam.run_edited(passes, shape)
    want = fam.logits[shape]
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, **CONTRACT,
                               err_msg=f"{fam.name}: {passes} at {shape}")


def assert_runs_with_probe(fam, passes, shape, probe, probe_shape):
    """The edited model runs at `shape` with finite logits of the unedited
    shape, and `probe` resolves with `probe_shape`."""
    logits, probes = fam.run_edited(passes, shape, [probe])
    assert logits.shape == fam.logits[shape].shape
    assert np.isfinite(logits).all()
    assert probes[probe].shape == probe_shape


def unit_entries(fam):
    """Parameters one unit of the target owns: a weight row and a bias
    entry of the target and of each sibling, a column of the consumer."""
    entries = 0
    for linear in [fam.target] + fam.siblings:
        entries += fam.shapes[linear + ".weight"][1]
        entries += int((linear + ".bias") in fam.shapes)
    return entries + fam.shapes[fam.consumer + ".weight"][0]


# -----------------------------------------------------------------------------
# Function-preserving edits
# -----------------------------------------------------------------------------

@pytest.mark.parametrize("shape", SHAPES, ids=SHAPE_IDS)
@pytest.mark.parametrize("init", ["copy", "zero"])
def test_mlp_widen_preserves_the_logits(family, init, shape):
    passes = widen_pass(family, init)
    assert_preserves_logits(family, passes, shape)
    width = widened(family)
    shapes = tensor_shapes(family.edit(passes)[0], family.name)
    for linear in [family.target] + family.siblings:
        assert shapes[linear + ".weight"][0] == width, linear
    assert shapes[family.consumer + ".weight"][1] == width


@pytest.mark.parametrize("shape", SHAPES, ids=SHAPE_IDS)
def test_insert_block_preserves_the_logits(family, shape):
    assert_preserves_logits(family, insert_pass(family), shape)


def test_insert_block_adds_one_copy_of_the_block(family):
    _, (rows, total) = family.edit(insert_pass(family))
    before = children(family.rows, family.blocks)
    assert children(rows, family.blocks) == keys(len(before) + 1)
    block_params = subtree_params(family.rows, family.block)
    assert block_params > 0
    assert total - family.total == block_params
    # The copy sits after block 0; the later blocks shift one key.
    for key in before:
        new = f"{family.blocks}.{int(key) + 1}"
        assert (subtree_params(rows, new)
                == subtree_params(family.rows, f"{family.blocks}.{key}"))


# -----------------------------------------------------------------------------
# Edits that change the function
# -----------------------------------------------------------------------------

@pytest.mark.parametrize("shape", SHAPES, ids=SHAPE_IDS)
def test_drop_layer_runs_with_a_probe(family, shape):
    assert_runs_with_probe(family, drop_pass(family), shape,
                           "layers.0.layer_output", shape + (family.hidden(),))


def test_drop_layer_removes_the_block_parameters(family):
    _, (rows, total) = family.edit(drop_pass(family))
    before = children(family.rows, family.blocks)
    assert children(rows, family.blocks) == keys(len(before) - 1)
    block_params = subtree_params(family.rows, family.block)
    assert block_params > 0
    assert family.total - total == block_params


@pytest.mark.parametrize("shape", SHAPES, ids=SHAPE_IDS)
def test_mlp_prune_runs_with_a_probe(family, shape):
    assert_runs_with_probe(family, prune_pass(family), shape,
                           "layers.0.mlp_output", shape + (family.hidden(),))


def test_mlp_prune_removes_the_predicted_parameters(family):
    keep = family.units() // 2
    text, (_, total) = family.edit(prune_pass(family))
    removed = (family.units() - keep) * unit_entries(family)
    assert family.total - total == removed
    shapes = tensor_shapes(text, family.name)
    for linear in [family.target] + family.siblings:
        assert shapes[linear + ".weight"][0] == keep, linear
    assert shapes[family.consumer + ".weight"][1] == keep


# -----------------------------------------------------------------------------
# Attention and the residual width (the dim provenance)
# -----------------------------------------------------------------------------

#: family -> (attention module relative to a block, its query projection
#: (fused: the q/k/v one), query heads, kv heads (None: one per query head;
#: 1: multi-query), head dim, whether the norms over d_model are RMSNorms).
ATTENTION = {
    "gpt2": ("attn", "attn.c_attn", 4, None, 8, False),
    "llama": ("self_attn", "self_attn.q_proj", 4, 2, 8, True),
    "gemma2": ("self_attn", "self_attn.q_proj", 4, 2, 16, True),
    "bloom": ("self_attention", "self_attention.query_key_value", 4, None, 8,
              False),
    "cohere": ("self_attn", "self_attn.q_proj", 4, 2, 8, False),
    "falcon": ("self_attention", "self_attention.query_key_value", 4, 1, 8,
               False),
}


def attention(fam):
    return f"{fam.block}.{ATTENTION[fam.name][0]}"


def grow_pass(fam, what):
    _, _, heads, kv, head_dim, _ = ATTENTION[fam.name]
    if what == "heads":
        opts = f"heads={2 * heads}"
    elif what == "kv-heads":
        opts = f"heads={2 * heads} kv-heads={2 * kv}"
    else:
        opts = f"head-dim={head_dim + 4}"
    return f"nnx-grow-attention{{layer={attention(fam)} {opts} seed=4}}"


def head_prune_pass(fam):
    heads = ATTENTION[fam.name][2]
    return f"nnx-prune{{layer={attention(fam)} heads={heads // 2}}}"


@pytest.mark.parametrize("shape", SHAPES, ids=SHAPE_IDS)
@pytest.mark.parametrize("what", ["heads", "kv-heads", "head-dim"])
def test_grow_attention_preserves_the_logits(family, what, shape):
    kv = ATTENTION[family.name][3]
    if what == "kv-heads" and not (kv and kv > 1):
        pytest.skip("kv heads grow only under grouped-query attention")
    assert_preserves_logits(family, grow_pass(family, what), shape)


def test_grow_attention_adds_the_predicted_parameters(family):
    """Doubling the heads adds, per new query head, head_dim rows (with
    bias entries) of the query projection - of each of q, k and v where
    every query head has its own kv head - and head_dim columns of the
    output projection; multi-query and grouped-query keep the kv heads."""
    _, q, heads, kv, head_dim, _ = ATTENTION[family.name]
    hidden = family.hidden()
    q = f"{family.block}.{q}"
    bias = int(q + ".bias" in family.shapes)
    per_projection = heads * head_dim * (hidden + bias)
    projections = 3 if kv is None else 1
    expected = projections * per_projection + heads * head_dim * hidden
    _, (_, total) = family.edit(grow_pass(family, "heads"))
    assert total - family.total == expected


@pytest.mark.parametrize("shape", SHAPES, ids=SHAPE_IDS)
def test_widen_residual_preserves_the_logits_with_rms_norms(family, shape):
    passes = f"nnx-widen-residual{{width={family.hidden() + 16} seed=5}}"
    if not ATTENTION[family.name][5]:
        with pytest.raises(ToolError, match="is not an RMSNorm"):
            family.edit(passes)
        return
    assert_preserves_logits(family, passes, shape)
    shapes = tensor_shapes(family.edit(passes)[0], family.name)
    assert shapes["lm_head.weight"][1] == family.hidden() + 16


@pytest.mark.parametrize("shape", SHAPES, ids=SHAPE_IDS)
def test_head_prune_runs_with_a_probe(family, shape):
    heads = ATTENTION[family.name][2] // 2
    assert_runs_with_probe(family, head_prune_pass(family), shape,
                           "layers.0.attention_probabilities",
                           (shape[0], heads, shape[1], shape[1]))


def test_head_prune_removes_the_predicted_parameters(family):
    """Half the heads leave: their query rows (and bias entries), their
    output columns, and - where kv heads go with them - their key and
    value rows."""
    _, q, heads, kv, head_dim, _ = ATTENTION[family.name]
    hidden = family.hidden()
    q = f"{family.block}.{q}"
    bias = int(q + ".bias" in family.shapes)
    removed = heads // 2
    removed_kv = removed if kv is None else (kv // 2 if kv > 1 else 0)
    expected = (removed * head_dim * (hidden + bias)
                + 2 * removed_kv * head_dim * (hidden + bias)
                + removed * head_dim * hidden)
    _, (_, total) = family.edit(head_prune_pass(family))
    assert family.total - total == expected
