"""The seed's five model-surgery primitives on ``nn.Module``s, each run by
the compiler's pass (``nnx-widen``, ``nnx-deepen``, ``nnx-drop-layer``,
``nnx-low-rank``, ``nnx-expand-embedding``), and for transformers beyond
the seed ``prune``, ``insert_block``, ``remove_block`` (the user's own tree
comes back), ``grow_attention``, ``prune_heads`` and ``widen_residual``
(a module generated from the edited IR: the forward code hard-codes the
sizes these change)::

    from nnx.surgery import widen
    new_net = widen(net, layer_name="layers.0", new_width=64)

Every primitive takes keyword-only arguments after the first positional one
and returns a fresh module; the argument, its module identities and the
global RNGs are left untouched. The module is exported to nnx IR
(:mod:`nnx.torch_export`), the pass runs on it, and the result is the
caller's own module tree, deep-copied, with the leaves the pass changed
replaced by plain modules of the same class (their ``requires_grad`` flags
and train / eval modes as the pass set them, following the seed's §7 rules)
and the modules the pass inserted (``deepen``) added under the keys it chose.
A :class:`~nnx.nets.FeedFwdNN` / :class:`~nnx.nets.ConvNN` comes back with
the descriptor the pass wrote (``new_net.params``).

A refusal raises ``ValueError`` (or ``TypeError`` where the seed does: a
non-ReLU ``deepen`` target in an ``nn.Sequential``, which the pass reports
as an error of kind ``type_error``; a ``low_rank_factorize`` argument that
is not exactly an ``nn.Linear``; an ``expand_embedding`` argument that is
not exactly an ``nn.Embedding``) whose message is the compiler's
diagnostic, the text ``nnx-opt`` prints for the same pass on the same IR
(without the locations in the exported text).

The model's input is inferred from its first layer (a Linear, convolution,
norm or embedding, at any depth of containers). A model with a custom
module (its own ``forward``) or a first layer that does not tell its input
needs ``inputs=`` (the exporter's input specs), so that its forward can be
recorded.
"""

import collections
import copy
import os
import re
import tempfile

import numpy as np

import torch
from torch import nn

from . import _nnx
from .nets import ConvNN, FeedFwdNN, FeedFwdParams
from .peft import LoraLinear
from .runtime import parse_module
from .torch_export import ExportError
from .torch_import import TensorSource, build_module

__all__ = ["widen", "deepen", "drop_layer", "low_rank_factorize",
           "expand_embedding", "prune", "insert_block", "remove_block",
           "grow_attention", "prune_heads", "widen_residual",
           "prune_channels", "widen_channels"]


# -----------------------------------------------------------------------------
# The primitives
# -----------------------------------------------------------------------------

def widen(model, *, layer_name, new_width, rng_seed=0, init="copy",
          through_batchnorm=False, inputs=None):
    """Net2WiderNet: grows ``layer_name``'s out_features (out_channels) to
    ``new_width`` and rescales its consumer's incoming columns; the forward
    output is preserved (in eval mode when dropout is configured).

    ``through_batchnorm=True`` widens a convolution through the eval-mode
    BatchNorm that follows it (Net2Net's conv-BN-ReLU-conv): each new
    channel's BatchNorm copies the statistics and affine parameters of the
    channel it replicates. Without it such a BatchNorm is refused
    (ValueError), as is one in train mode.

    Beyond the seed: a Linear inside a custom module (a transformer's MLP,
    SwiGLU's ``gate_proj`` with ``up_proj`` in lockstep) is widened where
    its forward proves the consumer, and ``init="zero"`` keeps the old
    consumer columns and gives the new units zero ones (Gesmundo & Maile)."""
    _check_name(layer_name, "layer_name")
    if init not in ("copy", "zero"):
        raise ValueError(f"init must be 'copy' or 'zero', got {init!r}")
    if not isinstance(through_batchnorm, bool):
        raise TypeError("through_batchnorm must be a bool, got "
                        f"{type(through_batchnorm).__name__}")
    edit = _Edit(model, inputs)
    option = " through-batchnorm=true" if through_batchnorm else ""
    try:
        edit.run(f"nnx-widen{{layer={layer_name} width={int(new_width)} "
                 f"seed={int(rng_seed)} init={init}{option}}}", ValueError)
    except ValueError as e:
        # The pass names its option; Python users have the argument.
        raise type(e)(str(e).replace(
            "option through-batchnorm=true",
            "through_batchnorm=True")) from None
    return edit.result()


def prune(model, *, layer_name, keep, importance=None, inputs=None):
    """Structured pruning (beyond the seed): keeps the ``keep`` most
    important units of the Linear (or convolution) ``layer_name`` and its
    consumer's matching columns, as ``nnx-prune`` chooses them: by the
    product of each unit's row and column L2 norms, or by ``importance``,
    one score per unit (a sequence, array or tensor). Chain-preserving:
    train afterwards."""
    _check_name(layer_name, "layer_name")
    edit = _Edit(model, inputs)
    with tempfile.TemporaryDirectory() as tmp:
        edit.run(f"nnx-prune{{layer={layer_name} keep={int(keep)}"
                 f"{_importance_option(importance, tmp)}}}", ValueError)
    return edit.result()


def prune_channels(model, *, layer_name, keep, importance=None, inputs=None):
    """Structured pruning of a channel group (beyond the seed): keeps
    ``keep`` channels of the group of ``layer_name`` (what
    ``nnx-channel-groups`` prints)
    in every member - the convolutions and norms that write them (every
    block of a residual stream), depthwise convolutions, and every
    consumer's input columns - as ``nnx-prune-channels`` chooses them: by
    the L2 norm of the group's parameters per channel, or by
    ``importance``, one score per channel. The result computes what the
    original computes with the removed channels' producing weights zeroed
    (through ops that map 0 to 0, as ReLU); train afterwards."""
    _check_name(layer_name, "layer_name")
    edit = _Edit(model, inputs)
    with tempfile.TemporaryDirectory() as tmp:
        edit.run(f"nnx-prune-channels{{layer={layer_name} keep={int(keep)}"
                 f"{_importance_option(importance, tmp)}}}", ValueError)
    return edit.result()


def widen_channels(model, *, layer_name, new_width, rng_seed=0, inputs=None):
    """Net2WiderNet on a channel group (beyond the seed): grows the group
    of ``layer_name`` (what ``nnx-channel-groups`` prints) to
    ``new_width`` channels as
    ``nnx-widen-channels`` does: new channels copy chosen ones in every
    writer (a residual stream's every block, eval-mode BatchNorm
    statistics, depthwise filters) and every consumer's columns of a copied
    channel are divided by its count. The output is preserved (eval
    mode)."""
    _check_name(layer_name, "layer_name")
    edit = _Edit(model, inputs)
    edit.run(f"nnx-widen-channels{{layer={layer_name} "
             f"width={int(new_width)} seed={int(rng_seed)}}}", ValueError)
    return edit.result()


def _importance_option(importance, tmp):
    """The ``importance=`` pass option of `importance` (scores saved as an
    .npy in `tmp`), or ""."""
    if importance is None:
        return ""
    if isinstance(importance, torch.Tensor):
        importance = importance.detach().cpu().numpy()
    path = os.path.join(tmp, "importance.npy")
    np.save(path, np.asarray(importance, dtype=np.float64))
    return f" importance={path}"


def _generated(edit):
    """The edited IR as an ``nn.Module`` generated from it
    (:func:`nnx.to_torch`): for edits that change sizes a forward's own code
    hard-codes (``view(b, t, self.num_heads, self.head_dim)``)."""
    from .torch_import import to_torch
    return to_torch(edit.ir)


def grow_attention(model, *, layer_name, heads=None, kv_heads=None,
                   head_dim=None, rng_seed=0, inputs=None):
    """Adds heads (``heads``; ``kv_heads`` under grouped-query attention)
    or widens the head dim (``head_dim``) of the attention module
    ``layer_name`` as ``nnx-grow-attention`` proves it: the output is
    preserved (the output projection's new columns, and the query's new
    head-dim rows, are zero).

    Returns an ``nn.Module`` generated from the edited IR
    (:func:`nnx.to_torch`), with the same paths, parameters, flags and
    modes: the attention's forward code hard-codes its head count and head
    dim, so the user's classes cannot run the grown weights."""
    _check_name(layer_name, "layer_name")
    opts = [f"{k}={int(v)}" for k, v in (("heads", heads),
                                         ("kv-heads", kv_heads),
                                         ("head-dim", head_dim))
            if v is not None]
    if not opts:
        raise ValueError("grow_attention: give heads=, kv_heads= or "
                         "head_dim=")
    edit = _Edit(model, inputs)
    edit.run(f"nnx-grow-attention{{layer={layer_name} {' '.join(opts)} "
             f"seed={int(rng_seed)}}}", ValueError)
    return _generated(edit)


def prune_heads(model, *, layer_name, heads, importance=None, inputs=None):
    """Keeps the ``heads`` most important query heads of the attention
    module ``layer_name`` (``nnx-prune heads=``): under grouped-query
    attention whole kv groups, ranked by the L2 norms of their projections'
    entries or by ``importance`` (one score per kv head, or per head).
    Chain-preserving: train afterwards. Returns an ``nn.Module`` generated
    from the edited IR, as :func:`grow_attention`."""
    _check_name(layer_name, "layer_name")
    edit = _Edit(model, inputs)
    with tempfile.TemporaryDirectory() as tmp:
        edit.run(f"nnx-prune{{layer={layer_name} heads={int(heads)}"
                 f"{_importance_option(importance, tmp)}}}", ValueError)
    return _generated(edit)


def widen_residual(model, *, new_width, rng_seed=0, inputs=None):
    """Grows the residual stream (d_model) of a transformer to
    ``new_width`` as ``nnx-widen-residual`` proves it: embeddings,
    projections and RMSNorms (eps and gains rescaled) grow together and the
    logits are preserved; a LayerNorm over the stream is refused
    (ValueError). Returns an ``nn.Module`` generated from the edited IR, as
    :func:`grow_attention`."""
    edit = _Edit(model, inputs)
    edit.run(f"nnx-widen-residual{{width={int(new_width)} "
             f"seed={int(rng_seed)}}}", ValueError)
    return _generated(edit)


def insert_block(model, *, after, inputs=None):
    """Inserts after the block ``after`` of an ``nn.ModuleList`` (a
    transformer's ``model.layers.3``) or of a positional ``nn.Sequential``
    (a ResNet stage's ``layer2.1``) a copy of it whose residual branches
    end in zero affine layers (Linears; a conv block's last BatchNorm), as
    ``nnx-insert-block`` proves: the output is unchanged (a block ending in
    a ReLU feeds its copy non-negative values, which the copy's final ReLU
    keeps). The copy is the block's own class (deep-copied), trainable, in
    the container's mode; the later blocks shift one index. A
    ModuleList's parent forward must run its blocks in order (``for layer
    in self.layers``), as the exported forward did."""
    _check_name(after, "after")
    edit = _Edit(model, inputs)
    edit.run(f"nnx-insert-block{{after={after}}}", ValueError)
    return edit.result(block_inserted_after=after)


def deepen(model, *, after_layer_name, inputs=None):
    """Net2DeeperNet: inserts an identity-initialized Linear (and a ReLU)
    after the ReLU site ``after_layer_name``; the forward is preserved."""
    _check_name(after_layer_name, "after_layer_name")
    edit = _Edit(model, inputs)
    edit.run(f"nnx-deepen{{after={after_layer_name}}}", ValueError)
    return edit.result(inserted_after=after_layer_name)


def drop_layer(model, *, layer_name, importance=None, inputs=None):
    """Replaces the module at ``layer_name`` with ``nn.Identity`` (chain-
    preserving only). ``importance``, the seed's optional score of the
    dropped layer, is accepted and not used by the edit."""
    _check_name(layer_name, "layer_name")
    if importance is not None and not isinstance(importance, (int, float)):
        raise TypeError(f"importance must be a number or None, got "
                        f"{type(importance).__name__}")
    edit = _Edit(model, inputs)
    edit.run(f"nnx-drop-layer{{layer={layer_name}}}", ValueError)
    return edit.result()


def remove_block(model, *, layer_name, inputs=None):
    """Takes the block ``layer_name`` out of its ``nn.ModuleList`` (beyond
    the seed, whose ``drop_layer`` leaves an ``nn.Identity`` in the slot),
    as ``nnx-drop-layer{remove=true}`` does: the later blocks shift one
    index down. Chain-preserving only."""
    _check_name(layer_name, "layer_name")
    edit = _Edit(model, inputs)
    edit.run(f"nnx-drop-layer{{layer={layer_name} remove=true}}", ValueError)
    return edit.result(block_removed=layer_name)


def low_rank_factorize(linear, *, rank, method="svd"):
    """SVD truncation: ``nn.Sequential(Linear(in, rank, bias=False),
    Linear(rank, out))``; exact at ``rank = min(in, out)``, the best rank-r
    approximation below (Eckart-Young).

    Beyond the seed, which takes Linears only: an ``nn.Conv1d`` /
    ``nn.Conv2d`` with ``groups=1`` is factorized as nnx-low-rank does it, a
    k x k conv into ``C_in -> rank`` (k x k, no bias) then ``rank -> C_out``
    (1 x 1, the bias)."""
    if method != "svd":
        raise ValueError(f"method must be 'svd', got {method!r}")
    edit = _leaf_edit(linear, "low_rank_factorize takes an nn.Linear")
    # TypeError where the compiler does not see exactly a Linear (another
    # module, a subclass with its own forward); a refusal of a Linear (its
    # rank, a parametrization, a prune mask) is a ValueError, whatever
    # class object carries it (parametrize swaps in a subclass).
    edit.run(f"nnx-low-rank{{layer=target rank={int(rank)}}}",
             edit.error_class_for("nnx.linear"))
    return edit.result().target


def expand_embedding(emb, *, new_num_embeddings, init="zeros"):
    """Grows ``emb`` to ``new_num_embeddings`` rows, keeping the original
    rows exactly; the new rows are zeros (``init="zeros"``) or the mean of
    the old ones (``"copy_mean"``). Returns ``(nn.Embedding, frozen_mask)``,
    the mask True for the rows that came from ``emb``."""
    if init not in ("zeros", "copy_mean"):
        raise ValueError(f"init must be 'zeros' or 'copy_mean', got {init!r}")
    edit = _leaf_edit(emb, "expand_embedding takes an nn.Embedding")
    edit.run(f"nnx-expand-embedding{{layer=target "
             f"num={int(new_num_embeddings)} init={init}}}",
             edit.error_class_for("nnx.embedding"))
    new = edit.result().target
    rows = edit.ir.lookup("target")["attributes"].get("frozen_rows")
    mask = torch.tensor(rows if rows is not None
                        else [True] * new.num_embeddings, dtype=torch.bool)
    return new, mask


def _same_class(user, built):
    """`built` (a BatchNorm the IR describes, resized by an edit) as a
    module of `user`'s own class (a BatchNorm2d stays a BatchNorm2d), in
    its mode, with `built`'s tensors and trainability."""
    new = type(user)(built.num_features, eps=built.eps,
                     momentum=built.momentum, affine=built.affine,
                     track_running_stats=built.track_running_stats)
    new.load_state_dict(built.state_dict())
    for name, p in built.named_parameters():
        getattr(new, name).requires_grad_(p.requires_grad)
    return new.train(user.training)


def _leaf_edit(module, takes):
    """The edit of one module, exported as the only child ``target`` of a
    Sequential; `takes` ("low_rank_factorize takes an nn.Linear") starts
    the TypeError for a module that is none."""
    if not isinstance(module, nn.Module):
        raise TypeError(f"{takes}, got {type(module).__name__}")
    return _Edit(nn.Sequential(collections.OrderedDict(target=module)), None,
                 leaf=takes)


def _check_name(name, what):
    if not isinstance(name, str):
        raise TypeError(f"{what} must be a dotted path string, got "
                        f"{type(name).__name__}")
    if _PIPELINE_CHARS.search(name):
        raise ValueError(f"{what} {name!r} is not a dotted module path (it "
                         "holds whitespace or one of '{},=')")


_PIPELINE_CHARS = re.compile(r"[\s{},=]")


# -----------------------------------------------------------------------------
# One edit: export, run the pass, rebuild the module tree
# -----------------------------------------------------------------------------

class _Edit(TensorSource):
    """Exports `model`, runs one pass on it and builds the edited copy."""

    def __init__(self, model, inputs, leaf=None):
        """`leaf`: for a one-module edit (the module wrapped as ``target``),
        the primitive's "takes an ..." text, for a module it cannot export
        on its own."""
        if not isinstance(model, nn.Module):
            raise TypeError(f"surgery takes an nn.Module, got "
                            f"{type(model).__name__}")
        self.model = model
        self._leaf = leaf
        self._tmp = None
        self.ir = self._export(model, inputs)

    #: The nnx.model of `ir` the result is read from ("": the first).
    model_name = ""

    @classmethod
    def on_ir(cls, model, ir, model_name=""):
        """The edit of `model` whose IR (`ir`, a parsed model of it) the
        caller prepared and transforms itself (nnx.transforms); the result
        is read from the IR's model `model_name`."""
        edit = cls.__new__(cls)
        edit.model, edit._leaf, edit._tmp, edit.ir = model, None, None, ir
        edit.model_name = model_name
        return edit

    def _export(self, model, inputs):
        # Reading a parametrized tensor runs its parametrization, and a
        # spectral_norm in train mode then steps its power iteration (_u,
        # _v buffers) in place: the source's buffers are restored after.
        buffers = [(b, b.detach().clone()) for b in model.buffers()]
        try:
            with torch.random.fork_rng(devices=[]):
                return self._export_text(model, inputs)
        finally:
            with torch.no_grad():
                for b, saved in buffers:
                    if not torch.equal(b, saved):
                        b.copy_(saved)

    def _export_text(self, model, inputs):
        try:
            if inputs is None:
                try:
                    inputs = [_infer_input(model)]
                except ValueError:
                    if not self._leaf:
                        raise
                    raise TypeError(f"{self._leaf}, got "
                                    f"{type(model.target).__name__}") from None
            ir, self._tmp = parse_module(model, inputs, "<nnx.surgery>")
            return ir
        except ExportError as e:
            raise (TypeError if self._leaf else ValueError)(str(e)) from None

    def error_class_for(self, kind):
        """ValueError when the one-module edit's target is exported as
        `kind`, else TypeError."""
        return (ValueError if self.ir.lookup("target")["kind"] == kind
                else TypeError)

    def run(self, pipeline, error_class):
        """Runs `pipeline`; a refusal raises `error_class`, an error of
        another kind (the diagnostic's kind, as data: ``e.kinds``) the
        exception class of that kind (:data:`ERROR_CLASSES`)."""
        try:
            self.ir.run_pipeline(pipeline)
        except _nnx.Error as e:
            raise error_class_of(e, error_class)(
                diagnostic_message(e.diagnostics)) from None

    # -- the result -----------------------------------------------------------
    def result(self, inserted_after=None, block_inserted_after=None,
               block_removed=None):
        # Building a fresh leaf draws its default init from the global RNG,
        # which the caller's must not see.
        with torch.random.fork_rng(devices=[]):
            return self._result(inserted_after, block_inserted_after,
                                block_removed)

    def _result(self, inserted_after, block_inserted_after, block_removed):
        self.state = self.ir.state_dict(self.model_name)
        self.grad = self.ir.requires_grad(self.model_name)
        moved = (inserted_after, block_inserted_after, block_removed)
        # An edit that moves modules (deepen, insert_block, remove_block)
        # changes their paths: the copy starts as a plain copy there.
        new = copy.deepcopy(self.model, None if any(
            m is not None for m in moved) else self._ir_values())
        self._root = new
        if inserted_after is not None:
            new = self._insert_after(new, inserted_after)
            self._root = new
        if block_inserted_after is not None or block_removed is not None:
            self._edit_list(new, block_inserted_after or block_removed,
                            insert=block_inserted_after is not None)
        self._synced = {}
        return self._sync(new, "")

    def _node(self, path):
        return self.ir.lookup(path, self.model_name)

    def _ir_values(self):
        """A ``copy.deepcopy`` memo that gives the copy, for each parameter
        and buffer the sync would overwrite with the IR's value (its key in
        the state dict, the same shape and dtype), that value itself,
        sharing the state dict's memory: the model's weights are then not
        copied only to be overwritten (a large model held three times, as
        source, copy and state dict). The sync (:meth:`_sync`) reads the
        same keys: the module's first path, or the path its alias names."""
        memo = {}
        for path, module in self.model.named_modules():
            try:
                node = self._node(path)
            except KeyError:
                continue
            base = node["target"] if node.get("alias") else path
            for n, t in _own_tensors(module):
                if id(t) in memo:
                    continue
                value = self._shared_value(_join(base, n), t)
                if value is not None:
                    memo[id(t)] = (nn.Parameter(value, t.requires_grad)
                                   if type(t) is nn.Parameter else value)
        return memo

    def _shared_value(self, key, t):
        """The state dict's array of `key` as a tensor sharing its memory,
        where it can stand for a deep copy of `t` (a plain dense contiguous
        parameter or buffer of the same shape and dtype); else None."""
        entry = self.state.get(key)
        if (entry is None or type(t) not in (nn.Parameter, torch.Tensor)
                or t.__dict__ or t.layout != torch.strided
                or not t.is_contiguous() or t.device.type != "cpu"):
            return None
        array, element_type = entry
        if element_type == "bf16":  # its bits, as TensorSource.tensor reads
            value = torch.from_numpy(array.view(np.int16)).view(torch.bfloat16)
        else:
            value = torch.from_numpy(array)
        if value.dtype != t.dtype or value.shape != t.shape:
            return None
        return value.requires_grad_(t.requires_grad) \
            if type(t) is torch.Tensor else value

    def _sync(self, module, path):
        """Makes `module` (at `path`, already a copy) what the IR holds
        there; returns the module to keep in its slot. A module registered
        in several slots is synced once, at the path the IR keeps its
        tensors under (an alias's target), and every slot gets that one
        result."""
        done = self._synced.get(id(module))
        if done is not None:
            return done[1]
        node = self._node(path)
        if node.get("alias"):
            path = node["target"]
        synced = self._sync_module(module, node, path)
        # The module itself is kept too, so that its id is not reused.
        self._synced[id(module)] = (module, synced)
        return synced

    def _sync_module(self, module, node, path):
        kind = node["kind"]
        if kind == "nnx.identity" and not isinstance(module, nn.Identity):
            return self._fresh(node, path)
        leaf = _kind_of(module)
        if leaf is not None and _LEAF_KINDS[leaf] != kind:
            # Low-rank: a leaf became two; a recipe's lora: a Linear became
            # an nnx.lora.
            return self._fresh(node, path)
        if isinstance(module, (FeedFwdNN, ConvNN)):
            self._sync_descriptor(module, node)
        for key, child in list(module._modules.items()):
            if child is None:
                continue
            synced = self._sync(child, _join(path, key))
            if synced is not child:
                _replace_everywhere(self._root, child, synced)
        if _own_tensor_names(module):
            return self._sync_leaf(module, node, path)
        return module

    def _sync_leaf(self, module, node, path):
        names = _own_tensor_names(module)
        shapes_match = all(
            _join(path, n) in self.state
            and tuple(getattr(module, n).shape)
            == self.state[_join(path, n)][0].shape
            for n in names if getattr(module, n) is not None)
        if not shapes_match:
            if isinstance(module, nn.modules.batchnorm._BatchNorm):
                return _same_class(module, self._fresh(node, path))
            return self._fresh(node, path)
        for n in names:
            t = getattr(module, n)
            key = _join(path, n)
            if t is None or key not in self.state:
                continue
            value = self.tensor(path, n)[0]
            if not torch.equal(t.detach(), value):
                with torch.no_grad():
                    t.copy_(value)
            if isinstance(t, nn.Parameter):
                t.requires_grad_(self.grad.get(key, True))
        return module

    def _fresh(self, node, path):
        """A new plain module built from the IR node at `path`."""
        return build_module(self, node, path)

    # TensorSource: the builders read the edited IR through these.
    def node(self, path):
        return self._node(path)

    def module(self, path):
        return self._fresh(self._node(path), path)

    @property
    def name(self):
        return self.model_name

    def _sync_descriptor(self, net, node):
        a = node["attributes"]
        p = net.params
        fields = {f: a[f] for f in p.__dataclass_fields__ if f in a}
        if isinstance(p, FeedFwdParams):
            fields.setdefault("activations", None)
            fields.setdefault("dropout_probs", None)
        else:
            for f in ("activations", "dropout_probs", "kernel_sizes", "pools"):
                fields.setdefault(f, None)
        new = type(p)(**{**_descriptor_fields(p), **fields})
        if new != p:
            object.__setattr__(net, "_params", new)
            net._set_activations()

    @staticmethod
    def _edit_list(new, path, insert):
        """Mirrors nnx-insert-block (a deep copy of the block at `path`
        after it, in the list's mode) or nnx-drop-layer{remove} (the block
        taken out) on the copy `new`'s ModuleList; the sync then reads the
        copy's tensors and flags from the IR."""
        parent_path, _, key = path.rpartition(".")
        container = new.get_submodule(parent_path) if parent_path else new
        positional = (isinstance(container, nn.Sequential)
                      and all(k.isdigit() for k in container._modules))
        if not (isinstance(container, nn.ModuleList) or positional):
            raise ValueError(f"'{parent_path}' is a "
                             f"{type(container).__name__}, not an "
                             "nn.ModuleList or a positional nn.Sequential")
        index = int(key)
        if insert:
            block = copy.deepcopy(container[index])
            block.train(container.training)
            container.insert(index + 1, block)
        else:
            del container[index]

    def _insert_after(self, new, site):
        """Adds the modules nnx-deepen inserted after `site` to the copy `new`
        (by position in a positional container, under the pass's keys in a
        named one); the new root (the rebuilt container when it is the
        root)."""
        parent_path, _, key = site.rpartition(".")
        container = new.get_submodule(parent_path) if parent_path else new
        ir_keys = self._node(parent_path)["children"]
        old_keys = [k for k, m in container._modules.items() if m is not None]
        index = old_keys.index(key)
        added = [k for k in ir_keys[index + 1:index + 3]]
        modules = [self._fresh(self._node(_join(parent_path, k)),
                               _join(parent_path, k)) for k in added]
        children = list(container._modules.items())
        at = [k for k, _ in children].index(key) + 1
        if isinstance(container, nn.ModuleList):
            # A FeedFwdNN / ConvNN list: the new Linear (or conv) only; the
            # site's activation comes from the descriptor.
            items = [m for _, m in children]
            items[at:at] = modules[:1]
            rebuilt = nn.ModuleList(items)
        elif all(k.isdigit() for k, _ in children):
            items = [m for _, m in children]
            items[at:at] = modules
            rebuilt = nn.Sequential(*items)
        else:
            items = children[:at] + list(zip(added, modules)) + children[at:]
            rebuilt = nn.Sequential(collections.OrderedDict(items))
        # The container's own mode only: .train() would recurse and reset
        # the modes of the children it keeps (and of the inserted ones,
        # which already have the mode the pass gave them).
        rebuilt.training = container.training
        if not parent_path:
            return rebuilt
        _replace_everywhere(new, container, rebuilt)
        return new


def _descriptor_fields(p):
    return {f: getattr(p, f) for f in p.__dataclass_fields__}


#: The leaf classes the pass may replace, by their nnx kind.
_LEAF_KINDS = {LoraLinear: "nnx.lora", nn.Linear: "nnx.linear",
               nn.Conv1d: "nnx.conv1d",
               nn.Conv2d: "nnx.conv2d", nn.Embedding: "nnx.embedding"}


def _kind_of(module):
    return next((c for c in _LEAF_KINDS if isinstance(module, c)), None)


def _own_tensors(module):
    """(name, tensor) of `module`'s own parameters and buffers (None
    ones left out)."""
    return [(n, t) for n, t in list(module._parameters.items())
            + list(module._buffers.items()) if t is not None]


def _own_tensor_names(module):
    return [n for n, _ in module.named_parameters(recurse=False)] + [
        n for n, _ in module.named_buffers(recurse=False)]


def _replace_everywhere(root, old, new):
    """Points every slot of `root`'s tree that holds `old` at `new` (a
    module registered in several slots stays one object)."""
    if root is None:
        return
    for m in root.modules():
        for k, child in m._modules.items():
            if child is old:
                m._modules[k] = new


def _join(path, name):
    return f"{path}.{name}" if path else name


def _infer_input(model):
    """The input spec of `model`'s forward, from its first layer."""
    if isinstance(model, FeedFwdNN):
        return (None, model.input_dim)
    if isinstance(model, ConvNN):
        return (None, model.in_channels, None, None)
    first = model
    while True:
        if isinstance(first, (nn.Linear, LoraLinear)):
            return ((None, first.in_features), first.weight.dtype)
        if isinstance(first, nn.Conv2d):
            return ((None, first.in_channels, None, None), first.weight.dtype)
        if isinstance(first, nn.Conv1d):
            return ((None, first.in_channels, None), first.weight.dtype)
        if isinstance(first, nn.Embedding):
            return ((None, None), torch.int64)
        if isinstance(first, nn.LayerNorm):
            return ((None, *first.normalized_shape), None)
        if isinstance(first, (nn.Sequential, nn.ModuleList)) and len(first):
            first = next(m for m in first.children())
            continue
        raise ValueError(
            f"cannot tell the input of {type(model).__name__} from its first "
            f"layer ({type(first).__name__}); pass inputs= (the exporter's "
            "input specs, e.g. inputs=[(None, 8)])")


_LOCATION = re.compile(r"^\S+:\d+:\d+: ")

#: The Python exception class of each kind of compiler error
#: (nnx/Support/ErrorKind.h); a refusal's is the caller's.
ERROR_CLASSES = {"type_error": TypeError, "bad_input": ValueError,
                 "resource": MemoryError}


def error_class_of(error, refusal_class):
    """The exception class for `error` (an ``nnx._nnx.Error``): that of the
    kind of its first error diagnostic, `refusal_class` for a refusal."""
    kinds = getattr(error, "kinds", None) or ["refusal"]
    return ERROR_CLASSES.get(kinds[0], refusal_class)


def diagnostic_message(diagnostics):
    """The compiler's diagnostics without the locations in the exported IR
    text (which the user never sees): ``error: ...`` lines become the
    message, notes follow as ``note: ...``."""
    lines = []
    for line in diagnostics.splitlines():
        line = _LOCATION.sub("", line)
        if line.startswith("error: "):
            line = line[len("error: "):]
        lines.append(line)
    return "\n".join(lines).strip()
