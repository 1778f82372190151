"""Functionalization: in-place writes through views, written as value ops.

Model code writes into views of tensors everywhere (``x[:, 0] = cls``,
``t.narrow(1, 0, k).copy_(y)``, ``qkv_bias[n:2 * n].zero_()``,
``x.unsqueeze(0).mul_(s)``), and every other alias of the written tensor
sees the write. An exported forward is SSA on immutable tensors, so, as
PyTorch's functionalization does (``torch.func.functionalize``,
``FunctionalTensorWrapper`` and its view inverses), the recorder writes:

- the in-place op as its out-of-place form on the view (the op's handler
  does that already: ``add_`` is ``add``);
- the view's base rebuilt with the new view in place, one view step at a
  time from the view up to the tensor that owns the storage in this
  forward (the *root*): the inverse of an ``extract_slice`` is an
  ``insert_slice`` (slice_scatter / select_scatter, strides and run-time
  bounds included), of a reshape a reshape back, of a permute the inverse
  permute; a view made by any other op (``diagonal``, ``unfold``,
  ``as_strided``) is inverted by probing it on an ``arange`` of the base
  (as_strided_scatter: a constant gather and a ``where``; static shapes);
- every other alias of that storage (any view of it, taken before or after
  the write) re-derived from the new root when it is next read, by
  replaying the view call that made it.

Which tensors alias is PyTorch's own bookkeeping: a view shares its base's
storage and its version counter (``Tensor._version``), which every in-place
write bumps. The recorder keeps, per forward, the call that made each view
(:class:`Link`) and the version each tensor had when its value was bound;
a read of a tensor whose version moved since is a read of a stale value:
re-derived if it is a view, refused if the write happened where the
recording cannot see it (a module call that writes into its argument).

Writes into a parameter or a buffer of the model, or through a view of
one, are refused before anything runs: an exported forward does not change
the model's state (an eval forward has no state outputs), and the recorder
must not change the model while running it.
"""

import functools

import torch

from .export_ir import _concrete, is_empty
from .export_ops import Call, _op_name, _take, _where_op, callable_name, \
    handler_for

__all__ = ["Link", "Views", "METADATA_IN_PLACE"]

#: In-place ops that change a tensor's view of its storage, not its data.
METADATA_IN_PLACE = {"unsqueeze_", "squeeze_", "transpose_", "t_",
                     "swapdims_", "swapaxes_", "as_strided_", "detach_",
                     "requires_grad_"}

# Ops whose result shares its input's storage without being a view in
# PyTorch's sense (no `_base`).
_SHARING = {"detach", "alias"}


class Link:
    """How the view `t` was made: the torch call ``func(*args, **kwargs)``
    on `parent` (one of the call's tensors), `pick` the index of `t` in the
    call's result (None: the result itself)."""

    __slots__ = ("parent", "func", "args", "kwargs", "pick", "shape")

    def __init__(self, parent, func, args, kwargs, pick):
        self.parent, self.func = parent, func
        self.args, self.kwargs, self.pick = args, kwargs, pick
        self.shape = tuple(parent.shape)  # the parent's, when made

    def check(self, frame):
        """Refuses to make the view again (or scatter through its call)
        from a parent whose shape changed in place since (`unsqueeze_` on
        the parent itself)."""
        if tuple(self.parent.shape) != self.shape:
            raise frame.error(
                f"a view made by '{callable_name(self.func)}' of a tensor "
                "whose shape changed in place since (a metadata in-place op "
                "such as unsqueeze_ on the base) is used; reshape out of "
                "place instead")


def version(t):
    """`t`'s version counter; None where it has none (inference tensors)."""
    try:
        return t._version
    except RuntimeError:
        return None


def _tensor_leaves(x, path=()):
    if isinstance(x, torch.Tensor):
        yield path, x
    elif isinstance(x, (tuple, list)):
        for i, v in enumerate(x):
            yield from _tensor_leaves(v, path + (i,))
    elif isinstance(x, dict):
        for v in x.values():
            yield from _tensor_leaves(v, path)


def _pick(x, path):
    for i in path or ():
        x = x[i]
    return x


def _storage(t):
    return t.storage().data_ptr()


def _same(a, b):
    """Exact equality of two examples (NaN equal to NaN)."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    eq = a == b
    if a.is_floating_point():
        eq = eq | (torch.isnan(a) & torch.isnan(b))
    return bool(eq.all())


class Views:
    """The aliases of one forward being recorded (`frame`, a recorder
    Frame): which tensors are views of which (`links`), and the version of
    each bound tensor (`versions`)."""

    def __init__(self, frame):
        self.frame = frame
        self.links = {}  # id(view) -> Link
        self.versions = {}  # id(tensor) -> its version when bound
        self.tensors = {}  # id(tensor) -> tensor, of `versions`

    # -- tracking -------------------------------------------------------------
    def bound(self, t):
        self.versions[id(t)] = version(t)
        self.tensors[id(t)] = t

    def acknowledge(self, t, before):
        """After an op that bumped the version of `t`'s storage without
        writing it (``unsqueeze_``): the values of its aliases that were
        current before it still are."""
        now, ptr = version(t), _storage(t)
        for i, u in self.tensors.items():
            if self.versions[i] == before and _storage(u) == ptr:
                self.versions[i] = now

    def stale(self, t):
        """Whether `t` was written in place since its value was bound
        (the model's own tensors never are: writes into them are refused)."""
        if id(t) in self.frame.rec.params:
            return False
        now = version(t)
        return now is not None and self.versions.get(id(t), now) != now

    def link_results(self, func, args, kwargs, out):
        """Records every tensor of `out` that shares the storage of one of
        the call's tensors as a view of it."""
        operands = [t for _, t in _tensor_leaves((args, kwargs))]
        sharing = _op_name(func) in _SHARING
        for path, r in _tensor_leaves(out):
            if (r._base is None and not sharing) or r.numel() == 0 or \
                    any(r is a for a in operands):
                continue
            ptr = _storage(r)
            parent = next((a for a in operands if a.numel() and
                           _storage(a) == ptr), None)
            if parent is not None:
                self.links[id(r)] = Link(parent, func, args, kwargs,
                                         path if path else None)

    def refresh(self, t):
        """The value of `t` after a write into its storage: a view is made
        again from its parent's current value, by replaying its call."""
        f = self.frame
        link = self.links.get(id(t))
        if link is None:
            if id(t) not in f.rec.twins:  # a constant: its current data
                v = f.constant(t)
                f.bind(t, v)
                return v
            raise f.error(
                "reads a tensor that was written in place where the "
                "recording cannot follow the write (by a module call that "
                "writes into its argument, or through an alias made outside "
                "this forward): write the result into a new tensor instead")
        link.check(f)
        ex = f.rec._evaluate(link.func, link.args, link.kwargs)
        c = Call(link.func, None, f.to_ir(link.args), f.to_ir(link.kwargs),
                 ex, False)
        from .export_decomp import write_call
        v = _pick(write_call(handler_for(link.func), f, c), link.pick)
        f.bind(t, v)
        return v

    # -- writes ---------------------------------------------------------------
    def state_name(self, t):
        """The model tensor (parameter or buffer) `t` is or views, if any."""
        params = self.frame.rec.params
        cur = t
        while True:
            for x in (cur, cur._base):
                if x is not None and id(x) in params:
                    return params[id(x)]
            link = self.links.get(id(cur))
            if link is None:
                return None
            cur = link.parent

    def chain(self, t):
        """[(tensor, its current value)] from `t` up to its root (the
        tensor owning the storage in this forward), read before a write."""
        out, cur = [], t
        while True:
            out.append((cur, self.frame.value_of(cur)))
            link = self.links.get(id(cur))
            if link is None:
                return out
            cur = link.parent

    def prepare(self, t, what):
        """Before the in-place op `what` on `t` runs: refuses a write into
        the model's state; returns the chain the write goes up."""
        f = self.frame
        name = self.state_name(t)
        if name is not None:
            raise f.error(
                f"the in-place '{what}' writes into '{name}', a parameter or "
                "buffer of the model: an exported forward does not change "
                "the model's state; write into a copy (.clone()) instead")
        rec = f.rec
        if id(t) not in rec.twins:
            if t._base is not None:
                raise f.error(
                    f"the in-place '{what}' writes into a view of a constant "
                    "tensor made in the forward; make the tensor with a "
                    "factory (torch.zeros, ...) or clone it first")
            f.value_of(t)  # its constant, as read before the write
            with rec.plain():
                rec.twins[id(t)] = (t, t.clone())
        return self.chain(t)

    def write(self, chain, new, ex, depends, what):
        """Records the write of `new` (examples `ex`, the call's results)
        into chain[0]'s tensor: each view up the chain is scattered into
        its parent; the root is bound to the result, the views in between
        re-derived when next read."""
        f = self.frame
        root = chain[-1][0]
        if depends:
            f.rec.dependent.add(id(root))
        if len(chain) == 1:
            f.bind(root, new)
            return
        if version(root) is None:
            raise f.error(f"the in-place '{what}' writes through a view of a "
                          "tensor without a version counter (made under "
                          "torch.inference_mode()), whose other views the "
                          "recording cannot keep current; export outside "
                          "inference mode")
        val, val_ex = scatter_up(
            f, chain, new, ex, f"the in-place '{what}'",
            lambda cur, pv, v, v_ex: self._probe(pv, v, v_ex,
                                                 self.links[id(cur)], what))
        for cur, _ in chain[:-1]:  # made again from the root when read
            f.values.pop(id(cur), None)
        live = f.rec.twins[id(root)]
        if not all(_same(a, b) for a, b in zip(val_ex, live)):
            raise f.error(f"the in-place '{what}' through a view: its "
                          "functional form disagrees with PyTorch on the "
                          "example inputs (an exporter bug)")
        f.bind(root, val)

    def _probe(self, base, new, new_ex, link, what):
        """as_strided_scatter for a view made by any other op (diagonal,
        unfold, as_strided): the view call run on an arange of the base."""
        f = self.frame
        link.check(f)
        name = callable_name(link.func)
        shape = tuple(base.examples[0].shape)
        if tuple(base.examples[1].shape) != shape or \
                new_ex[0].shape != new_ex[1].shape:
            raise f.error(f"the in-place '{what}' writes into a view made by "
                          f"'{name}' of a tensor with run-time dims, which "
                          "has no scatter form (a view by indexing, "
                          "narrow, split, view/reshape or permute has one)")
        probe = torch.arange(base.examples[0].numel()).reshape(shape)
        rec = f.rec

        def sub(x):
            if x is link.parent:
                return probe
            if isinstance(x, (tuple, list)):
                return type(x)(sub(i) for i in x)
            if isinstance(x, dict):
                return {k: sub(i) for k, i in x.items()}
            return x
        from .recorder import _concrete as concrete
        with rec.plain():
            args = concrete(sub(link.args), 0, rec.twins)
            kwargs = concrete(sub(link.kwargs), 0, rec.twins)
            index = _pick(link.func(*args, **kwargs), link.pick)
        return probe_scatter(f, base, new, new_ex, index,
                             f"the in-place '{what}' into a view made by "
                             f"'{name}'")

    def retarget(self, t, func, args, kwargs):
        """`t.unsqueeze_(0)` (a metadata in-place op) on a view `t`: `t`
        becomes a view, by `func`'s out-of-place form, of a tensor standing
        for its former self."""
        f = self.frame
        link = self.links.get(id(t))
        if link is None:
            return
        rec = f.rec
        v = f.value_of(t)
        with rec.plain():
            pre = [x.as_strided(x.size(), x.stride(), x.storage_offset())
                   for x in rec.twins[id(t)]]
        rec.twins[id(pre[0])] = tuple(pre)
        if id(t) in rec.dependent:
            rec.dependent.add(id(pre[0]))
        f.bind(pre[0], v)
        self.links[id(pre[0])] = link

        def sub(x):
            return pre[0] if x is t else x
        from .export_decomp import _out_of_place
        self.links[id(t)] = Link(pre[0], _out_of_place(func),
                                 tuple(sub(a) for a in args), kwargs, None)


# -----------------------------------------------------------------------------
# Scatters: a view's new value written back into its base
# -----------------------------------------------------------------------------

def scatter_up(w, chain, new, ex, what, probe=None):
    """The root's value after the write of `new` (examples `ex`) into
    chain[0]: `chain` is [(tensor or node, its value before the write)]
    from the written view up to the root; each view is scattered into its
    parent (`probe(view, parent value, new, new examples)` where its steps
    have no inverse). Returns the new root value and its examples."""
    val, val_ex = new, tuple(e.clone() for e in ex)
    for (cur, old), (_, pv) in zip(chain, chain[1:]):
        fallback = None if probe is None else functools.partial(
            probe, cur, pv, val, val_ex)
        val, val_ex = scatter(w, pv, old, val, val_ex, what, fallback)
    return val, val_ex


def scatter(w, base, view, new, new_ex, what, fallback=None):
    """`base` with its view `view` replaced by `new` (examples `new_ex`),
    written in forward `w`: the view steps recorded on the values
    (Value.alias) from `view` back to `base` are inverted one by one;
    `fallback()` (else a refusal) where the view was made another way.
    Returns the new base and its examples."""
    steps, v = [], view
    while v is not base:
        if v.alias is None:
            if fallback is None:
                raise w.error(f"{what} writes into a view that has no "
                              "scatter form")
            return fallback()
        steps.append(v)
        v = v.alias[1]
    for v in steps:
        new, new_ex = _inverse(w, v, new, new_ex, what)
    return new, new_ex


def _inverse(w, v, new, new_ex, what):
    """One view step back: `v`'s source with `v` replaced by `new`."""
    kind, src = v.alias[0], v.alias[1]
    if kind == "reshape":
        ex = tuple(e.reshape(s.shape) for e, s in zip(new_ex, src.examples))
        return w.reshape(new, ex, w.dims(src), None, "unview"), ex
    if kind == "permute":
        perm = v.alias[2]
        inv = [perm.index(d) for d in range(len(perm))]
        ex = tuple(e.permute(inv) for e in new_ex)
        return w.permute(new, inv, ex, None, "unpermute"), ex
    if kind == "slice":
        _, _, offsets, sizes, strides = v.alias
        if new.type != v.type:
            raise w.error(f"internal: a write of {new.type} into a view of "
                          f"type {v.type}")
        return insert_slice(w, src, offsets, sizes, strides, new, new_ex)
    raise w.error(f"{what} writes into a broadcast view (expand): several "
                  "of its elements are one element of the written tensor")


def insert_slice(w, dst, offsets, sizes, strides, new, new_ex, label=None):
    """`tensor.insert_slice` of `new` into `dst` at the box of an
    `extract_slice` (offsets, sizes, strides; a size None is a dropped dim:
    select_scatter), with its examples."""
    if is_empty(new_ex):  # nothing to write
        return dst, dst.examples
    ex = []
    for k in range(2):
        index = []
        for o, s, st in zip(offsets, sizes, strides):
            o = _concrete(o, k)
            if s is None:
                index.append(o)
            else:
                n = _concrete(s, k)
                index.append(slice(o, o + (n - 1) * st + 1 if n else o, st))
        e = dst.examples[k].clone()
        e[tuple(index)] = new_ex[k]
        ex.append(e)
    ex = tuple(ex)
    lst = w.size_list
    kept = [1 if s is None else s for s in sizes]
    out = w.value("scatter", ex, f"tensor.insert_slice {new.name} into "
                  f"{dst.name}{lst(offsets)}{lst(kept)}{lst(strides)}",
                  f"{new.type} into {dst.type}", label=label)
    return out, ex


def probe_scatter(w, base, new, new_ex, index, what, label=None):
    """`base` (static shape) with the elements `index` (an int tensor of
    the view's shape: per view element, the base element it is, in
    row-major order) replaced by `new`: a constant gather of the new view
    and a `where` (as_strided_scatter, diagonal_scatter)."""
    shape = tuple(base.examples[0].shape)
    n = base.examples[0].numel()
    flat = index.reshape(-1)
    if flat.unique().numel() != flat.numel():
        raise w.error(f"{what}: several elements of the view are one "
                      "element of the written tensor")
    k = flat.numel()
    inv = torch.full((n,), -1, dtype=torch.int64)
    inv[flat] = torch.arange(k)
    pick = inv.clamp(min=0)
    nf = w.reshape(new, tuple(e.reshape(k) for e in new_ex), [k], None,
                   "flat")
    taken_ex = tuple(e.reshape(k)[pick] for e in new_ex)
    taken = _take(w, nf, w.constant(pick), 0, taken_ex, None)
    bf = w.reshape(base, tuple(e.reshape(n) for e in base.examples), [n],
                   None, "flat")
    mask = inv >= 0
    out_ex = tuple(torch.where(mask, t, b.reshape(n))
                   for t, b in zip(taken_ex, base.examples))
    flat_out = _where_op(w, w.constant(mask), taken, bf, out_ex, None)
    ex = tuple(e.reshape(shape) for e in out_ex)
    return w.reshape(flat_out, ex, list(shape), label, "scatter"), ex
