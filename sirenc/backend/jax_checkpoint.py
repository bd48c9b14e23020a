"""The checkpoint format of the JAX back end (``JaxFilter.to_bytes`` / ``JaxFilter.load``).

A checkpoint is read from files that may come from anyone, so nothing in it is unpickled or
otherwise executed: it is data, checked field by field before the filter is made from it.

    b"SIRENJAX"  u32 version  u64 header length   (little-endian)
    header       UTF-8 JSON: the filter's options, its counters, the SHA-256 and layout
                 (dtype, shape) of every array, and the trees (carry, final, history) naming them
    data         the arrays' bytes, one after another, exactly as many as the layout says

A tree is JSON: ``null``; ``{"a": i}`` (array i) or ``{"k": i}`` (a JAX key whose raw data is array i);
``{"d": [[key, tree], ...]}``, ``{"l": [...]}``, ``{"t": [...]}`` (a dict, list, tuple); or
``{"n": name, "aux": ..., "c": [...]}``, one of the back end's own list and arena nodes, rebuilt by
its ``tree_unflatten``. Keys and ``aux`` are static data: numbers, strings, null and
``{"t": [...]}`` tuples only.
"""

from __future__ import annotations

import hashlib
import json
import struct
from dataclasses import dataclass
from typing import Any

import numpy as np

from sirenc.diagnostics import SirenUsageError

MAGIC = b"SIRENJAX"
VERSION = 1
_PREFIX = struct.Struct("<8sIQ")
# What a checkpoint's arrays may be: the population's numbers, counts, flags and key words.
DTYPES = {np.dtype(t).str: np.dtype(t) for t in ("<f8", "<f4", "<i8", "<i4", "<i2", "|i1", "<u8", "<u4",
                                                "|u1", "|b1")}
MAX_NDIM = 8


class Damaged(Exception):
    """Why a checkpoint cannot be read; the caller turns it into a SirenUsageError."""


@dataclass
class KeyData:
    """The raw data of a JAX key (key arrays themselves are not NumPy arrays)."""
    data: np.ndarray


def _nodes() -> dict[str, type]:
    from sirenc.backend.jax_cells import Arena
    from sirenc.backend.jax_values import AList, JList
    return {"JList": JList, "AList": AList, "Arena": Arena}


def encode(fields: dict, trees: dict[str, Any]) -> bytes:
    """``fields`` (JSON values) and ``trees`` (pytrees of JAX or NumPy arrays) as a checkpoint."""
    import jax

    from sirenc.backend.jax_results import fetched

    nodes = {cls: name for name, cls in _nodes().items()}
    arrays: list[np.ndarray] = []

    def leaf(x: Any, tag: str) -> dict:
        arrays.append(np.asarray(fetched(x), order="C"))   # not ascontiguousarray: it makes scalars 1-D
        return {tag: len(arrays) - 1}

    def tree(x: Any) -> Any:
        if x is None:
            return None
        if isinstance(x, dict):
            return {"d": [[_aux_out(k), tree(v)] for k, v in x.items()]}
        if isinstance(x, (list, tuple)):
            return {"l" if isinstance(x, list) else "t": [tree(v) for v in x]}
        if type(x) in nodes:
            children, aux = x.tree_flatten()
            return {"n": nodes[type(x)], "aux": _aux_out(aux), "c": [tree(c) for c in children]}
        if hasattr(x, "dtype") and jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key):
            return leaf(jax.random.key_data(x), "k")
        return leaf(x, "a")

    header = dict(fields, trees={name: tree(t) for name, t in trees.items()})
    little = [a.astype(a.dtype.newbyteorder("<"), copy=False) for a in arrays]
    for a in little:
        if a.dtype.str not in DTYPES:
            raise TypeError(f"cannot save an array of {a.dtype} in a JAX checkpoint")
    data = b"".join(a.tobytes() for a in little)
    header["arrays"] = [[a.dtype.str, list(a.shape)] for a in little]
    header["sha256"] = hashlib.sha256(data).hexdigest()
    text = json.dumps(header).encode()
    return _PREFIX.pack(MAGIC, VERSION, len(text)) + text + data


def _aux_out(aux: Any) -> Any:
    if isinstance(aux, tuple):
        return {"t": [_aux_out(a) for a in aux]}
    if aux is None or isinstance(aux, (bool, int, float, str)):
        return aux
    if isinstance(aux, np.integer):
        return int(aux)
    raise TypeError(f"cannot save a {type(aux).__name__} in a JAX checkpoint")


def _aux_in(aux: Any) -> Any:
    if isinstance(aux, dict) and set(aux) == {"t"} and isinstance(aux["t"], list):
        return tuple(_aux_in(a) for a in aux["t"])
    if aux is None or isinstance(aux, (bool, int, float, str)):
        return aux
    raise Damaged("a tree has malformed static data")


def decode(data: bytes) -> tuple[dict, dict[str, Any]]:
    """``(header, trees)``: the trees with NumPy arrays and ``KeyData`` at their leaves. Raises
    ``Damaged`` (or a SirenUsageError for what is no checkpoint of this back end at all)."""
    import jax

    key_words = np.asarray(jax.random.key_data(jax.random.key(0)))
    if len(data) < _PREFIX.size or data[:8] != MAGIC:
        raise SirenUsageError("this is not a sirenc checkpoint of the JAX back end")
    _, version, length = _PREFIX.unpack_from(data)
    if version != VERSION:
        raise Damaged(f"it has format version {version}; this sirenc reads version {VERSION}")
    if _PREFIX.size + length > len(data):
        raise Damaged("it is truncated")
    try:
        header = json.loads(data[_PREFIX.size:_PREFIX.size + length].decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise Damaged("its header is not JSON") from None
    if not isinstance(header, dict) or not isinstance(header.get("arrays"), list) \
            or not isinstance(header.get("trees"), dict):
        raise Damaged("its header lacks the arrays or the trees")
    body = memoryview(data)[_PREFIX.size + length:]
    if hashlib.sha256(body).hexdigest() != header.get("sha256"):
        raise Damaged("its arrays do not match their SHA-256 (truncated or altered)")
    arrays, at = [], 0
    for spec in header["arrays"]:
        if not (isinstance(spec, list) and len(spec) == 2 and spec[0] in DTYPES and isinstance(spec[1], list)
                and len(spec[1]) <= MAX_NDIM and all(isinstance(d, int) and 0 <= d < 2**40 for d in spec[1])):
            raise Damaged(f"it describes an array as {spec!r}")
        dtype, shape = DTYPES[spec[0]], tuple(spec[1])
        size = dtype.itemsize * int(np.prod(shape, dtype=np.int64))
        if at + size > len(body):
            raise Damaged("its arrays are larger than the file")
        arrays.append(np.frombuffer(body, dtype, int(np.prod(shape, dtype=np.int64)), at).reshape(shape).copy())
        at += size
    if at != len(body):
        raise Damaged("it holds bytes that no array describes")
    nodes, used = _nodes(), set()

    def index(i: Any) -> int:
        if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < len(arrays) or i in used:
            raise Damaged("a tree names a missing or reused array")
        used.add(i)
        return i

    def tree(t: Any, depth: int = 0) -> Any:
        if depth > 64:
            raise Damaged("its trees are nested too deeply")
        if t is None:
            return None
        if not isinstance(t, dict) or len(t) not in (1, 3):
            raise Damaged("a tree is malformed")
        if "a" in t:
            return arrays[index(t["a"])]
        if "k" in t:
            words = arrays[index(t["k"])]
            if words.dtype != key_words.dtype or words.shape[-key_words.ndim:] != key_words.shape:
                raise Damaged("a random key has the wrong shape or type")
            return KeyData(words)
        if "d" in t and isinstance(t["d"], list) and all(isinstance(p, list) and len(p) == 2 for p in t["d"]):
            return {_aux_in(k): tree(v, depth + 1) for k, v in t["d"]}
        if "l" in t and isinstance(t["l"], list):
            return [tree(v, depth + 1) for v in t["l"]]
        if "t" in t and isinstance(t["t"], list):
            return tuple(tree(v, depth + 1) for v in t["t"])
        if t.keys() == {"n", "aux", "c"} and t["n"] in nodes and isinstance(t["c"], list):
            try:
                return nodes[t["n"]].tree_unflatten(_aux_in(t["aux"]), [tree(c, depth + 1) for c in t["c"]])
            except (TypeError, ValueError, IndexError):
                raise Damaged(f"a {t['n']} node is malformed") from None
        raise Damaged("a tree is malformed")

    trees = {name: tree(t) for name, t in header["trees"].items()}
    if len(used) != len(arrays):
        raise Damaged("it holds arrays that no tree names")
    return header, trees
