"""Forward arguments and results that are nested tuples and lists of
tensors.

The IR's signature is flat: one tensor per leaf, in order (depth first, as
``torch.utils._pytree`` flattens tuples and lists). A *tree* says how the
leaves nest: ``None`` is a leaf, a tuple or a list of trees a tuple or a
list; the call ``model(x, (h, c))`` has the tree ``[None, (None, None)]``
(a list: the call's arguments). Each leaf's *path* is its positions, dotted
(``0``, ``1.0``, ``1.1``); the IR keeps them (``nnx.input_names``,
``nnx.output_names``) and the compiled callable rebuilds the nesting from
them (:func:`from_paths`).

No torch here: the runtime uses it too.
"""

__all__ = ["flatten", "flatten_as", "unflatten", "paths", "from_paths",
           "is_nested"]


def flatten(value, is_leaf, bad, path=()):
    """(leaves, tree) of `value`: `is_leaf(x)` tells the leaves; anything
    that is neither a leaf nor a tuple or a list is given to
    ``bad(path, x)``, which raises (`path`: its positions in `value`)."""
    if is_leaf(value):
        return [value], None
    if not isinstance(value, (tuple, list)):
        bad(path, value)
    leaves, trees = [], []
    for i, v in enumerate(value):
        got, tree = flatten(v, is_leaf, bad, path + (i,))
        leaves += got
        trees.append(tree)
    return leaves, trees if isinstance(value, list) else tuple(trees)


def flatten_as(tree, value, where):
    """The leaves of `value`, nested as `tree`; a TypeError naming `where`
    (and the positions below it) where it is not."""
    if tree is None:
        return [value]
    if not isinstance(value, (tuple, list)) or len(value) != len(tree):
        got = (f"{len(value)}" if isinstance(value, (tuple, list))
               else type(value).__name__)
        raise TypeError(f"{where} must be a tuple or a list of "
                        f"{len(tree)}, as the exported call took it; got "
                        f"{got}")
    return [leaf for i, (t, v) in enumerate(zip(tree, value))
            for leaf in flatten_as(t, v, f"{where}[{i}]")]


def unflatten(tree, leaves):
    """The leaves (in order) nested as `tree`."""
    it = iter(leaves)

    def build(t):
        if t is None:
            return next(it)
        return type(t)(build(s) for s in t)
    return build(tree)


def paths(tree, prefix=""):
    """The dotted path of every leaf of `tree`, in order."""
    if tree is None:
        return [prefix]
    return [p for i, t in enumerate(tree)
            for p in paths(t, f"{prefix}.{i}" if prefix else str(i))]


def from_paths(names):
    """The tree (a tuple of trees) whose leaves have the dotted paths
    `names`, in that order; None where `names` are not exactly that (a
    component that is not a position, a position skipped, e.g. by a dropped
    None, a leaf out of order)."""
    root = {}
    try:
        for name in names:
            *parents, last = [int(p) if p.isdigit() else None
                              for p in name.split(".")]
            node = root
            for p in parents:
                node = node.setdefault(p, {})
            node[last] = None
        tree = _tuples(root)
    except (TypeError, AttributeError, ValueError):
        return None  # a name (not a position), or a leaf that has items
    return tree if paths(tree) == list(names) else None


def _tuples(node):
    """A trie of positions as a tree; ValueError where a position is
    missing."""
    if sorted(node) != list(range(len(node))):
        raise ValueError("not the positions 0 ... n-1")
    return tuple(None if node[i] is None else _tuples(node[i])
                 for i in range(len(node)))


def is_nested(tree):
    """Whether an item of `tree` (the call's arguments, or a result tuple)
    is itself a tuple or a list."""
    return tree is not None and any(t is not None for t in tree)
