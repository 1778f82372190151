"""Models compiled once and run many times in this process.

    import nnx
    run = nnx.compile(model, inputs=[(None, None)], family="gpt2",
                      probes=["layers.0.attention_output"], threads=2)
    logits, probes = run(ids)                    # compiled once, run many
    a = probes["layers.0.attention_output"]
    logits, _ = run(ids, patches={...})          # patch values change per call

:func:`compile` takes an ``nn.Module`` (exported first, with ``inputs=`` as
:func:`nnx.torch_export.export` takes them), a :class:`Model` (a loaded
nnx file, :func:`load`) or a path. It returns a :class:`CompiledModel`
bound over the C++ runtime (``nnx._nnx.CompiledModel``, pybind11): no
subprocess, and nothing is recompiled between calls. The machine code is
also cached across processes in ``$NNX_CACHE_DIR`` when it is set.

Arrays: numpy arrays or torch tensors (CPU; a tensor is viewed as numpy
without a copy; a ``torch.bfloat16`` tensor as the ``uint16`` array of its
bits, numpy having no bf16, and bf16 outputs come back as such arrays, or
as ``torch.bfloat16`` tensors when the inputs were tensors). Each input is copied once into the call's arguments (the
compiled code may write its inputs); outputs are returned without a copy
(numpy arrays owning the buffers the forward wrote, or torch tensors over
them when the inputs were tensors). Errors raise :class:`nnx.Error` with
the compiler's diagnostics (``err.diagnostics``).

Tensor parallelism: under ``mpirun -np N`` (N >= 2), ``compile(model, ...,
tensor_parallel=True)`` compiles this rank's part of the model split
Megatron-style over MPI_COMM_WORLD (its partial sums added with
MPI_Allreduce); every rank calls it with the same model and runs it on the
same inputs, and each gets the whole output. :attr:`CompiledModel.rank`
tells the ranks apart (e.g. to write outputs on rank 0 only). MPI is
initialized by the first such compile unless it already was (e.g. by
mpi4py), and then finalized at interpreter exit.
"""

import os
import tempfile

import numpy as np

from . import _nnx
from .structure import flatten_as, from_paths, is_nested, unflatten

__all__ = ["compile", "load", "save", "Model", "CompiledModel", "Error"]

Error = _nnx.Error
Model = _nnx.Model


def load(path):
    """Parses an nnx IR file (text or bytecode) into a :class:`Model`; its
    ``#nnx.external`` tensors are read from the weights file it names."""
    return _nnx.Model.parse_file(os.fspath(path))


def save(model, path, bytecode=False):
    """Writes `model` (a :class:`Model`) to `path` as IR text, or as MLIR
    bytecode with ``bytecode=True`` (through ``nnx-opt --emit-bytecode``)."""
    text = str(model)
    path = os.fspath(path)
    if not bytecode:
        with open(path, "w") as f:
            f.write(text)
        return
    from .tools import run_tool
    run_tool("nnx-opt", ["-", "--emit-bytecode", "-o", path], input_text=text)


def compile(model, inputs=None, *, target="cpu", threads=0, probes=(),
            patches=(), family=None, weights=None, opt_level=3,
            model_name="", forward_specs=None, functions=(),
            tensor_parallel=False, method="forward", examples=None):
    """Compiles `model` once for `target` ("cpu" or "cuda").

    `model`: an ``nn.Module`` (exported with ``inputs=``, one spec per
    forward argument), a :class:`Model`, or the path of an nnx file.
    `probes` / `patches`: tracing points to read / overwrite (standardized
    names of `family`, e.g. ``"layers.0.attention_output"``, or probe paths
    without a family). `threads`: threads of the compiled code (0: one per
    hardware thread). `weights`: a safetensors file to run with instead of
    the model's own tensors. `forward_specs` / `functions` / `method` /
    `examples`: as the exporter takes them (:func:`nnx.torch_export.export`),
    for an ``nn.Module`` (or a bound method of one).
    `tensor_parallel`: True compiles this process's part of the model split
    over the ranks of an MPI job (``mpirun -np N``, N >= 2; ValueError in a
    single process, RuntimeError in an nnx built without MPI); see the
    module's docstring. CPU only."""
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 0:
        raise ValueError(f"threads must be a non-negative integer (0: one per "
                         f"hardware thread), got {threads!r}")
    if not isinstance(tensor_parallel, bool):
        raise TypeError(f"tensor_parallel must be True or False, got "
                        f"{tensor_parallel!r}")
    tmp = None
    if isinstance(model, (str, os.PathLike)):
        model = load(model)
    elif not isinstance(model, _nnx.Model):
        if inputs is None and examples is None:
            raise ValueError("compiling an nn.Module needs inputs= (one spec "
                             "per forward argument, e.g. inputs=[(None, 4)])")
        model, tmp = parse_module(model, inputs, "<nnx.compile>",
                                  forward_specs, functions, method, examples)
    elif inputs is not None or examples is not None:
        raise ValueError("inputs= and examples= are for an nn.Module; a "
                         "loaded nnx model already has its input types")
    options = dict(target=target, model_name=model_name, threads=int(threads),
                   opt_level=int(opt_level),
                   weights=os.fspath(weights) if weights else "",
                   cache_dir=os.environ.get("NNX_CACHE_DIR", ""))
    compiled = _nnx.compile(
        model, reads=list(probes), writes=list(patches),
        family=family or "", tensor_parallel=tensor_parallel, **options)
    run = CompiledModel(compiled, tmp, _nesting(model, model_name))
    # What generate() compiles prefill and decode from (read probes are
    # read and patches written on every token).
    run._source = None if tensor_parallel else (
        model, dict(options, family=family or ""))
    return run


def _nesting(model, model_name):
    """(the call's tree, the results' tree) of the root's forward, from its
    ``nnx.input_names`` / ``nnx.output_names`` (:mod:`nnx.structure`): None
    for a flat call, and for results that are not tuples nested in tuples
    (dicts and dataclasses, a dropped None: flat, in order)."""
    forward = model.forward("", model_name)
    if forward is None:
        return None, None
    args = from_paths(forward.get("input_names", []))
    results = from_paths(forward.get("output_names", []))
    return (list(args) if is_nested(args) else None,
            results if is_nested(results) else None)


def parse_module(module, inputs, source, forward_specs=None, functions=(),
                 method="forward", examples=None):
    """`module` exported (:class:`nnx.torch_export.Exporter`, with `inputs`)
    and parsed as a :class:`Model` named `source` in diagnostics, and the
    temporary directory that holds its weights file when its tensors are too
    large to inline (None otherwise); keep it alive as long as the model."""
    from .torch_export import INLINE_WEIGHTS_LIMIT, Exporter
    ex = Exporter(forward_specs, functions).add_model(
        module, inputs, name="model", root="net", method=method,
        examples=examples)
    if ex.tensor_bytes() <= INLINE_WEIGHTS_LIMIT:
        return _nnx.Model.parse(ex.text(False), source), None
    tmp = tempfile.TemporaryDirectory(prefix="nnx-weights-")
    path = os.path.join(tmp.name, "weights.safetensors")
    ex.write_weights(path)
    return _nnx.Model.parse(ex.text(path), source), tmp


class CompiledModel:
    """A compiled forward: ``outputs, probes = compiled(*inputs,
    patches={name: array})``. `outputs` is the output when the forward has
    one, else a tuple; `probes` maps each read probe's name to its value.

    A model exported from a call with tuple or list arguments (an LSTM's
    ``(h, c)``) takes them nested the same way, and results that are
    tuples nested in tuples come back nested so (`nesting`: the two trees
    of :mod:`nnx.structure`, None for flat)."""

    def __init__(self, compiled, tmp=None, nesting=(None, None)):
        self._c = compiled
        self._source = None
        self._generation = {}
        self._tmp = tmp
        self._weights_tmp = None
        self._patch_names = [p["name"] for p in compiled.write_probes]
        self._call, self._results = nesting

    # -- what it takes and gives ----------------------------------------------
    @property
    def inputs(self):
        """One dict per input: name, dtype, shape (None: dynamic), type."""
        return self._c.inputs

    @property
    def outputs(self):
        return self._c.outputs

    @property
    def probes(self):
        """The names of the read probes, in order."""
        return [p["name"] for p in self._c.read_probes]

    @property
    def patches(self):
        """The names of the write probes (patches), in order."""
        return list(self._patch_names)

    @property
    def parameter_keys(self):
        """The key each parameter is bound by (:meth:`bind_weights`)."""
        return self._c.parameter_keys

    @property
    def compile_seconds(self):
        """Wall-clock seconds compile() took (once)."""
        return self._c.compile_seconds

    @property
    def from_cache(self):
        return self._c.from_cache

    @property
    def ranks(self):
        """The MPI ranks the model is split over (``tensor_parallel=True``:
        the size of MPI_COMM_WORLD); 1 for a model compiled whole."""
        return self._c.ranks

    @property
    def rank(self):
        """This process's rank among :attr:`ranks` (0 for a model compiled
        whole): e.g. write outputs only where it is 0."""
        return self._c.rank

    # -- running ---------------------------------------------------------------
    def _leaves(self, inputs):
        """The call's tensors, in order (checked against its nesting)."""
        if self._call is None:
            return list(inputs)
        if len(inputs) != len(self._call):
            raise TypeError(f"the model takes {len(self._call)} arguments "
                            f"(as the exported call), got {len(inputs)}")
        return [leaf for i, (tree, x) in enumerate(zip(self._call, inputs))
                for leaf in flatten_as(tree, x, f"argument {i}")]

    def _arguments(self, inputs, patches):
        arrays = [_as_numpy(x, f"input {i}") for i, x in enumerate(inputs)]
        given = check_patch_names(patches, self._patch_names, "this call")
        writes = [_as_numpy(given[n], f"patch '{n}'")
                  for n in self._patch_names]
        return arrays, writes

    def __call__(self, *inputs, patches=None):
        outputs, probes, _ = self._run(inputs, patches, 1)
        return outputs, probes

    def time(self, *inputs, patches=None, repeat=10):
        """Runs the forward `repeat` times; the seconds of each call
        (excluding the copies in and out)."""
        return self._run(inputs, patches, repeat)[2]

    def _run(self, inputs, patches, repeat):
        try:
            inputs = self._leaves(inputs)
            arrays, writes = self._arguments(inputs, patches)
        except Exception as e:
            # Tensor parallelism: the other ranks' calls fail too, instead
            # of waiting for this one.
            self._c.fail_call(str(e))
            raise
        outs, reads, seconds = self._c.run(arrays, writes, repeat)
        if any(_is_tensor(x) for x in inputs):
            outs = [_to_torch(a, s) for a, s in zip(outs, self.outputs)]
            reads = [_to_torch(a, s)
                     for a, s in zip(reads, self._c.read_probes)]
        values = dict(zip(self.probes, reads))
        if self._results is not None:
            return unflatten(self._results, outs), values, seconds
        return (outs[0] if len(outs) == 1 else tuple(outs)), values, seconds

    # -- generation -------------------------------------------------------------
    def generate(self, ids, max_new_tokens, *, eos_token_id=None,
                 max_length=None, do_sample=False, temperature=1.0,
                 top_k=None, seed=None, return_logits=False, patches=None):
        """Generates from the prompts `ids` (B x T integers, prompts of
        equal length) with a KV cache that the compiler derives from this
        model's causal forward (nnx-derive-kv-cache, docs/Generation.md):
        one prefill of the prompts, then one decode per new token. Returns
        the prompts followed by the new tokens, as an int64 array (B x (T +
        n)); with ``return_logits=True`` also the logits of each step's
        last position, stacked (n x B x vocab). A model compiled with
        ``probes=`` reads them on every step: the result is then a tuple
        whose last item maps each probe's name to its values, one array per
        step (the prompt's positions, then one new token's), and
        :func:`nnx.generate.along_sequence` joins them into the whole
        sequence's. A model compiled with ``patches=`` takes a value for
        each on every step: ``patches={name: v}`` where `v` is a sequence
        of arrays, one per step (the prompt's positions, then one new
        token's), or a callable ``(step, value) -> value`` (step 0 is the
        prompt) that gets the value the step computes there (steering,
        ablation). See :mod:`nnx.generate`."""
        from .generate import generate
        return generate(self, ids, max_new_tokens, eos_token_id=eos_token_id,
                        max_length=max_length, do_sample=do_sample,
                        temperature=temperature, top_k=top_k, seed=seed,
                        return_logits=return_logits, patches=patches)

    def generation(self, max_length, reads=None, writes=None):
        """The (prefill, decode) pair compiled for a cache of `max_length`
        positions, reading the probes `reads` and writing the patches
        `writes` (default: those this model was compiled with); compiled on
        first use, then kept."""
        if self._source is None:
            raise ValueError("generate() needs a model compiled without "
                             "tensor_parallel")
        reads = self.probes if reads is None else list(reads)
        writes = self.patches if writes is None else list(writes)
        key = (int(max_length), tuple(reads), tuple(writes))
        if key not in self._generation:
            model, options = self._source
            self._generation[key] = tuple(
                CompiledModel(_nnx.compile(model, generate=which,
                                           max_length=int(max_length),
                                           reads=reads, writes=writes,
                                           **options), self._tmp)
                for which in ("prefill", "decode"))
        return self._generation[key]

    # -- weights ----------------------------------------------------------------
    def bind_weights(self, weights):
        """Runs with other tensors from now on: a safetensors file's path, or
        a state_dict (name -> tensor / array, keyed as
        :attr:`parameter_keys`). Every parameter must be there with its
        dtype and shape (checked before anything changes)."""
        if isinstance(weights, (str, os.PathLike)):
            self._c.bind_weights(os.fspath(weights))
            return
        from .safetensors import write_safetensors
        tensors = {k: (v.detach().cpu() if _is_tensor(v) else np.asarray(v))
                   for k, v in dict(weights).items()}
        tmp = tempfile.TemporaryDirectory(prefix="nnx-weights-")
        path = os.path.join(tmp.name, "weights.safetensors")
        write_safetensors(path, tensors)
        self._c.bind_weights(path)
        self._weights_tmp = tmp  # the file stays mapped while bound


def check_patch_names(patches, names, who, hint=""):
    """`patches` as a dict, checked to give a value for each of `names`
    (the compiled patches) and for nothing else; `who` ("this call") and
    `hint` word the error."""
    given = dict(patches or {})
    unknown = sorted(set(given) - set(names))
    if unknown:
        raise ValueError(f"no patch named {', '.join(map(repr, unknown))} "
                         f"(compiled with patches={list(names)})")
    missing = [n for n in names if n not in given]
    if missing:
        raise ValueError(f"{who} gives no value for the patch"
                         f"{'es' if len(missing) > 1 else ''} "
                         f"{', '.join(map(repr, missing))}{hint}")
    return given


def _is_tensor(x):
    try:
        import torch
    except ImportError:
        return False
    return isinstance(x, torch.Tensor)


def _as_numpy(x, what):
    if _is_tensor(x):
        if x.device.type != "cpu":
            raise ValueError(f"{what} is on {x.device}; nnx takes CPU tensors")
        import torch
        if x.dtype == torch.bfloat16:  # numpy has no bf16: its bits
            return x.detach().view(torch.int16).numpy().view(np.uint16)
        return x.detach().numpy()
    return np.asarray(x)


def _to_torch(a, spec):
    """Array `a` of the output or probe `spec` as a torch tensor (bf16
    arrays are their bits)."""
    import torch
    if spec.get("element") == "bfloat16":
        return torch.from_numpy(a.view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(a)
