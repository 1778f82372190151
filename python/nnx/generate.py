"""Generation with a KV cache the compiler derives (docs/Generation.md).

    run = nnx.compile(model, inputs=[(None, None)])
    tokens = run.generate(ids, max_new_tokens=32, eos_token_id=50256)

``nnx-derive-kv-cache`` writes two functions from the model's forward:
``prefill(ids) -> (logits, caches...)`` and ``decode(new ids, position,
caches...) -> logits``, which writes the new rows into the caches in place
(prefill's arrays, bound without a copy). :func:`generate` runs the first on the
prompts and the second once per new token, choosing each token from the
logits of the last position: greedily (``do_sample=False``, the default),
or sampled with ``temperature`` and ``top_k`` from a numpy generator seeded
with ``seed``.
"""
import numpy as np

__all__ = ["generate", "along_sequence"]


def _as_float(logits):
    """`logits` as floats: bf16 comes as the uint16 array of its bits."""
    logits = np.asarray(logits)
    if logits.dtype == np.uint16:
        return (logits.astype(np.uint32) << 16).view(np.float32)
    return logits


def _choose(logits, do_sample, temperature, top_k, rng):
    """The next token of each row of `logits` (B x vocab)."""
    logits = _as_float(logits)
    if not do_sample:
        return np.argmax(logits, axis=-1).astype(np.int64)
    if temperature <= 0:
        raise ValueError(f"temperature must be positive, got {temperature}")
    z = logits.astype(np.float64) / temperature
    if top_k is not None:
        k = min(int(top_k), z.shape[-1])
        kth = np.sort(z, axis=-1)[:, -k][:, None]
        z = np.where(z < kth, -np.inf, z)
    p = np.exp(z - z.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)
    return np.array([rng.choice(len(row), p=row) for row in p], np.int64)


def _check(ids, max_new_tokens, max_length):
    ids = np.asarray(ids)
    if ids.ndim != 2 or not np.issubdtype(ids.dtype, np.integer):
        raise ValueError(f"ids must be a B x T integer array (prompts of "
                         f"equal length), got {ids.dtype} {ids.shape}")
    if isinstance(max_new_tokens, bool) or not isinstance(
            max_new_tokens, (int, np.integer)) or max_new_tokens < 1:
        raise ValueError(f"max_new_tokens must be a positive integer, got "
                         f"{max_new_tokens!r}")
    need = ids.shape[1] + int(max_new_tokens)
    if max_length is None:
        max_length = need
    if max_length < need:
        raise ValueError(f"max_length {max_length} is less than the prompt "
                         f"({ids.shape[1]}) plus max_new_tokens "
                         f"({max_new_tokens})")
    return ids.astype(np.int64), int(max_length)


def along_sequence(steps, axis=1):
    """One probe's per-step values (:func:`generate`) joined along the
    sequence axis: the values the forward on the whole sequence would give
    (for a value with one row per position)."""
    return np.concatenate([np.asarray(s) for s in steps], axis=axis)


def _split_patches(run, patches, max_new_tokens):
    """The compiled patches' values: (arrays per step, callables), each a
    dict by name; every patch the model was compiled with needs one."""
    from .runtime import check_patch_names
    given = check_patch_names(
        patches, run.patches, "generate()",
        " (an array per step, or a callable (step, value) -> value)")
    arrays, callables = {}, {}
    for name, value in given.items():
        if callable(value):
            callables[name] = value
            continue
        if isinstance(value, np.ndarray) or len(value) < max_new_tokens:
            raise ValueError(
                f"patch '{name}' needs one array per step ({max_new_tokens}: "
                f"the prompt's, then one per new token but the last) or a "
                f"callable (step, value) -> value")
        arrays[name] = value
    return arrays, callables


class _Steps:
    """Runs prefill or decode for one step with the patches: arrays as they
    are; callables on the value the step computes. The value at a patch
    depends only on what comes before it, so a step with callables first
    runs a *reader* (it reads the callables' values, the arrays written),
    then, for each further callable, a run that writes every patch (those
    not yet called: the value read) and reads them again, and last the
    step itself with every patch written. Each callable sees its value with
    the earlier patches applied (patches are in the forward's order). Each
    run writes the same cache rows (the step's positions): the last run's
    stand."""

    def __init__(self, run, max_length, arrays, callables):
        self.user_reads = list(run.probes)
        self.arrays = arrays
        self.order = [n for n in run.patches if n in callables]
        self.callables = callables
        self.final = run.generation(max_length)
        if callables:
            self.reader = run.generation(
                max_length, reads=self.order,
                writes=[n for n in run.patches if n in arrays])
        if len(callables) > 1:
            self.again = run.generation(max_length, reads=self.order)

    def __call__(self, which, step, *args):
        written = {n: seq[step] for n, seq in self.arrays.items()}
        if self.callables:
            _, values = self.reader[which](*args, patches=written)
            for i, name in enumerate(self.order):
                if i:
                    _, values = self.again[which](*args, patches=dict(
                        written, **{n: values[n] for n in self.order[i:]}))
                written[name] = self.callables[name](step, values[name])
        return self.final[which](*args, patches=written)


def generate(run, ids, max_new_tokens, *, eos_token_id=None, max_length=None,
             do_sample=False, temperature=1.0, top_k=None, seed=None,
             return_logits=False, patches=None):
    """See :meth:`nnx.CompiledModel.generate`."""
    ids, max_length = _check(ids, max_new_tokens, max_length)
    arrays, callables = _split_patches(run, patches, int(max_new_tokens))
    run_step = _Steps(run, max_length, arrays, callables)
    decode = run_step.final[1]
    rng = np.random.default_rng(seed)
    probes = {name: [] for name in run_step.user_reads}
    outs, values = run_step(0, 0, ids)
    for name, value in values.items():
        probes[name].append(value)
    logits = outs[0]
    n_caches = len(decode.inputs) - 2
    caches = list(outs[len(outs) - n_caches:])
    position = ids.shape[1]
    done = np.zeros(ids.shape[0], bool)
    tokens, steps = [], []
    for step in range(int(max_new_tokens)):
        last = np.asarray(logits)[:, -1, :]
        steps.append(last)
        token = _choose(last, do_sample, temperature, top_k, rng)
        if eos_token_id is not None:
            token = np.where(done, eos_token_id, token)
            done |= token == eos_token_id
        tokens.append(token)
        if done.all() or step + 1 == max_new_tokens:
            break
        # Decode updates the caches in place (bound without a copy, as
        # arrays prefill returned) and returns the logits.
        outs, values = run_step(1, step + 1, token[:, None],
                                np.array(position, np.int64), *caches)
        for name, value in values.items():
            probes[name].append(value)
        logits = outs[0] if isinstance(outs, tuple) else outs
        position += 1
    result = [np.concatenate([ids, np.stack(tokens, axis=1)], axis=1)]
    if return_logits:
        result.append(np.stack(steps))
    if probes:
        result.append(probes)
    return result[0] if len(result) == 1 else tuple(result)
