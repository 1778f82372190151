"""Pure-Python safetensors files (json + struct + numpy), as nnx writes them.

    from nnx.safetensors import read_safetensors, write_safetensors
    write_safetensors("m.safetensors", {"fc.weight": w, "fc.bias": b})
    tensors = read_safetensors("m.safetensors")   # {name: numpy.ndarray}

Format: an 8-byte little-endian u64 header length N, N bytes of a JSON
object ``{"name": {"dtype": "F32", "shape": [8, 4], "data_offsets": [begin,
end]}, ..., "__metadata__": {str: str}}`` (offsets relative to the data
region), then the data region of raw little-endian row-major bytes.

Like nnx's C++ writer (``include/nnx/Support/SafeTensors.h``), the header is
padded with spaces so the data region starts at a multiple of 64 bytes and
every tensor starts at a multiple of 64 in the data region (zero padding
between tensors), so the runtime can map the file and use it in place.

Dtypes: F64 F32 F16 BF16 I64 I32 I16 I8 U8 BOOL. numpy has no bfloat16, so a
BF16 tensor is read as a ``uint16`` array of the raw bit patterns whose dtype
carries the marker :data:`BF16` (``a.dtype == BF16``); writing such an array,
or a ``torch.bfloat16`` tensor, stores BF16. :func:`bf16_bits` marks a
``uint16`` / ``int16`` array of bit patterns as bf16. Any other ``uint16``
array is refused (nnx has no U16 tensors).
"""

import json
import os
import struct
import tempfile

import numpy as np

__all__ = ["SafeTensorsError", "BF16", "bf16_bits", "read_safetensors",
           "write_safetensors", "ALIGNMENT"]

#: Byte alignment of the data region and of every tensor in it.
ALIGNMENT = 64

#: The dtype of a BF16 tensor read from a file: uint16 bit patterns, marked.
BF16 = np.dtype("<u2", metadata={"safetensors": "BF16"})

_DTYPES = {
    "F64": np.dtype("<f8"), "F32": np.dtype("<f4"), "F16": np.dtype("<f2"),
    "BF16": BF16, "I64": np.dtype("<i8"), "I32": np.dtype("<i4"),
    "I16": np.dtype("<i2"), "I8": np.dtype("i1"), "U8": np.dtype("u1"),
    "BOOL": np.dtype("?"),
}

_HEADER_LIMIT = 100 << 20  # a header larger than 100 MiB is not a header


class SafeTensorsError(ValueError):
    """A malformed safetensors file (the message names the file and, where
    there is one, the tensor) or a tensor that cannot be written."""


def bf16_bits(bits):
    """`bits` (uint16 or int16 bit patterns) as an array that
    :func:`write_safetensors` stores as BF16."""
    bits = np.asarray(bits)
    if bits.dtype.itemsize != 2 or bits.dtype.kind not in "iu":
        raise TypeError(f"bf16 bit patterns must be 16-bit integers, "
                        f"not {bits.dtype}")
    return _contiguous(bits).view(BF16)


def _contiguous(arr):
    """`arr` C-contiguous (np.ascontiguousarray would make a 0-d array 1-d)."""
    return arr if arr.flags.c_contiguous else arr.copy(order="C")


def _dtype_name(dt):
    """The safetensors name of numpy dtype `dt`, or None."""
    if dt.metadata and dt.metadata.get("safetensors") == "BF16":
        return "BF16"
    for name, known in _DTYPES.items():
        if name != "BF16" and known.kind == dt.kind and \
                known.itemsize == dt.itemsize:
            return name
    return None


def _as_array(name, value):
    """(dtype name, little-endian C-contiguous numpy array) for one tensor;
    a torch tensor is detached and moved to the CPU, bf16 as bit patterns."""
    if type(value).__module__.startswith("torch"):
        import torch
        t = value.detach().cpu().contiguous()
        if t.dtype == torch.bfloat16:
            return "BF16", t.view(torch.int16).numpy().view(BF16)
        value = t.numpy()
    arr = np.asarray(value)
    dtype = _dtype_name(arr.dtype)
    if dtype is None:
        raise SafeTensorsError(
            f"tensor '{name}': dtype {arr.dtype} has no safetensors form "
            f"nnx reads ({' '.join(_DTYPES)}; bf16 through bf16_bits())")
    if dtype != "BF16":
        arr = arr.astype(_DTYPES[dtype], copy=False)
    return dtype, _contiguous(arr)


def _round_up(n, k=ALIGNMENT):
    return (n + k - 1) // k * k


def _layout(tensors, metadata):
    """(header bytes padded, [(begin, array)]) for `tensors` in order."""
    header, placed, offset = {}, [], 0
    if metadata:
        for k, v in metadata.items():
            if not isinstance(k, str) or not isinstance(v, str):
                raise SafeTensorsError(f"__metadata__ must map str to str, "
                                       f"got {k!r}: {v!r}")
        header["__metadata__"] = dict(metadata)
    for name, value in tensors.items():
        if not isinstance(name, str) or not name:
            raise SafeTensorsError(f"tensor name {name!r} is not a non-empty str")
        if name == "__metadata__":
            raise SafeTensorsError("'__metadata__' cannot name a tensor")
        dtype, arr = _as_array(name, value)
        begin = _round_up(offset)
        offset = begin + arr.nbytes
        header[name] = {"dtype": dtype, "shape": list(arr.shape),
                        "data_offsets": [begin, offset]}
        placed.append((begin, arr))
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    # 8 + len(header) is a multiple of ALIGNMENT: the data region is aligned.
    text += b" " * (_round_up(8 + len(text)) - 8 - len(text))
    return text, placed


def write_safetensors(path, tensors, metadata=None):
    """Writes `tensors` ({name: numpy array or torch tensor}, in that order)
    to `path` atomically: a temporary file in the same directory, then
    ``os.replace``. `metadata` is an optional {str: str}. Returns the number
    of bytes written. Raises :class:`SafeTensorsError` (nothing written) for
    an empty or reserved name, non-str metadata or an unsupported dtype."""
    header, placed = _layout(tensors, metadata)
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".",
                               suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(struct.pack("<Q", len(header)))
            f.write(header)
            pos = 0
            for begin, arr in placed:
                f.write(b"\0" * (begin - pos))
                # The array's own buffer (bf16 bits included), no copy.
                f.write(memoryview(arr.reshape(-1).view(np.uint8)))
                pos = begin + arr.nbytes
            size = f.tell()
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return size


def _unique_object(pairs):
    out = {}
    for k, v in pairs:
        if k in out:
            raise ValueError(f"duplicate key {k!r}")
        out[k] = v
    return out


def _parse_header(path, raw, data_len):
    """[(name, dtype name, shape, begin, end)] and metadata from `raw`."""
    def fail(msg):
        raise SafeTensorsError(f"{path}: {msg}")

    try:
        header = json.loads(raw.decode("utf-8"), object_pairs_hook=_unique_object)
    except (UnicodeDecodeError, ValueError) as e:
        fail(f"the header is not valid JSON: {e}")
    if not isinstance(header, dict):
        fail(f"the header is a JSON {type(header).__name__}, not an object")
    metadata = header.pop("__metadata__", None) or {}
    if not isinstance(metadata, dict) or not all(
            isinstance(v, str) for v in metadata.values()):
        fail("__metadata__ is not an object of strings")
    entries = []
    for name, info in header.items():
        where = f"tensor '{name}'"
        if not isinstance(info, dict) or \
                set(info) != {"dtype", "shape", "data_offsets"}:
            fail(f"{where}: expected an object with exactly dtype, shape and "
                 f"data_offsets, got {json.dumps(info)[:200]}")
        dtype, shape, offsets = info["dtype"], info["shape"], info["data_offsets"]
        if dtype not in _DTYPES:
            fail(f"{where}: unknown dtype {dtype!r} (expected one of "
                 f"{' '.join(_DTYPES)})")
        if not isinstance(shape, list) or not all(
                type(d) is int and d >= 0 for d in shape):
            fail(f"{where}: shape {shape!r} is not a list of non-negative integers")
        if not isinstance(offsets, list) or len(offsets) != 2 or not all(
                type(o) is int for o in offsets):
            fail(f"{where}: data_offsets {offsets!r} is not [begin, end]")
        begin, end = offsets
        if not 0 <= begin <= end <= data_len:
            fail(f"{where}: data_offsets [{begin}, {end}] are outside the "
                 f"data region of {data_len} bytes (file truncated?)")
        want = int(np.prod(shape, dtype=np.int64)) * _DTYPES[dtype].itemsize
        if end - begin != want:
            fail(f"{where}: {end - begin} bytes for {dtype} {shape}, which "
                 f"needs {want}")
        entries.append((name, dtype, tuple(shape), begin, end))
    previous = None
    for e in sorted((e for e in entries if e[4] > e[3]), key=lambda e: e[3:]):
        if previous is not None and e[3] < previous[4]:
            fail(f"tensors '{previous[0]}' [{previous[3]}, {previous[4]}] and "
                 f"'{e[0]}' [{e[3]}, {e[4]}] overlap")
        previous = e
    return entries, metadata


def read_header(path):
    """({name: (dtype name, shape)}, metadata) of the file at `path`,
    validated as by :func:`read_safetensors`, without reading the data."""
    entries, metadata, _ = _open(path)
    return {n: (d, s) for n, d, s, _, _ in entries}, metadata


def _open(path):
    path = os.fspath(path)
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        head = f.read(8)
        if len(head) < 8:
            raise SafeTensorsError(f"{path}: {size} bytes, too short for the "
                                   "8-byte header length")
        (n,) = struct.unpack("<Q", head)
        if n > min(size - 8, _HEADER_LIMIT):
            raise SafeTensorsError(
                f"{path}: header length {n} exceeds the file's remaining "
                f"{size - 8} bytes (truncated or not a safetensors file)")
        raw = f.read(n)
    entries, metadata = _parse_header(path, raw, size - 8 - n)
    return entries, metadata, 8 + n


def read_safetensors(path, with_metadata=False):
    """{name: numpy array} of the safetensors file at `path` (copies, in file
    order); with `with_metadata`, also returns the ``__metadata__`` dict.

    Validated before anything is read: the header length within the file, a
    JSON object without duplicate keys, known dtypes, ``data_offsets`` inside
    the data region, ``end - begin == numel * itemsize``, no two tensors
    overlapping, BOOL bytes 0 or 1. Every problem raises
    :class:`SafeTensorsError` naming the file (and the tensor). BF16 tensors
    come back as ``uint16`` bit patterns with dtype :data:`BF16`."""
    entries, metadata, data_start = _open(path)
    out = {}
    with open(path, "rb") as f:
        for name, dtype, shape, begin, end in entries:
            arr = np.empty(shape, dtype=_DTYPES[dtype])
            f.seek(data_start + begin)
            if f.readinto(memoryview(arr.reshape(-1).view(np.uint8))) != end - begin:
                raise SafeTensorsError(f"{path}: tensor '{name}': short read "
                                       "(the file changed while reading?)")
            if dtype == "BOOL" and arr.view(np.uint8).max(initial=0) > 1:
                raise SafeTensorsError(f"{path}: tensor '{name}': BOOL bytes "
                                       "other than 0 and 1")
            out[name] = arr
    return (out, metadata) if with_metadata else out
