"""The answers of a JAX filter in the native filter's forms: the per-particle flattening of the
results (``Filter.particles``), weighted means as the native estimate computes them, the
resampling history."""

from __future__ import annotations

from typing import Any

import numpy as np

from sirenc.diagnostics import SirenUsageError


def weighted_means(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Each column's weighted mean as the native estimate computes it: zero weights skipped, and
    the sum taken relative to the first live value, so that a column of equal values gives that
    value exactly (a sum of plain products where a value is infinite)."""
    live = w > 0
    x, w = x[live], w[live]
    if not len(w):
        return np.zeros(x.shape[1])
    base = x[0]
    total = w.sum()
    with np.errstate(invalid="ignore"):
        relative = base + (w[:, None] * (x - base)).sum(axis=0) / total
    plain = (w[:, None] * x).sum(axis=0) / total
    return np.where(np.isinf(x).any(axis=0), plain, relative)


def step_history(hists):
    """Per-step history arrays (steps x barriers per step) in order, one entry per barrier."""
    return tuple(fetched(h).reshape(-1) for h in hists)


def fetched(value: Any) -> np.ndarray:
    """A device array's numbers in this process. One sharded over the devices of several processes
    (a population split over hosts with jax.distributed, docs/jax.md) is gathered from all of them
    first: a collective, which every process reaches at the same call, as a program run on every
    host does."""
    import jax

    if isinstance(value, jax.Array) and not value.is_fully_addressable:
        from jax.experimental import multihost_utils
        value = multihost_utils.process_allgather(value, tiled=True)
    return np.asarray(value)


def host(value):
    from sirenc.backend.jax_values import JList

    if isinstance(value, JList):
        return ([fetched(c) for c in value.cols], fetched(value.length))
    return fetched(value)


def leaf_count(desc: str) -> int:
    """How many entries of a program's results a value of type ``desc`` takes: one a number, one
    (columns, length) a list, none a unit."""
    from sirenc.descriptors import SCALARS, skip

    count, pos = 0, 0
    while pos < len(desc):
        tag = desc[pos]
        count += tag in SCALARS or tag == "L"
        pos = skip(desc, pos + 1) if tag == "L" else pos + 1
    return count


def flatten(desc: str, results: list, n: int):
    """The C ABI's per-particle preorder flattening of the results (a list: its length, then
    its elements head first), for all particles at once: each piece is an (n, width) block with
    a mask of the entries a particle has, and a particle's values are its masked row."""
    from sirenc.descriptors import SCALARS, skip

    blocks, masks = [], []
    values = iter(results)

    def walk(pos: int) -> int:
        tag = desc[pos]
        if tag in SCALARS:
            blocks.append(np.broadcast_to(next(values), (n,)).astype(np.float64)[:, None])
            masks.append(np.ones((n, 1), dtype=bool))
            return pos + 1
        if tag == "u":
            return pos + 1
        if tag == "P":
            return walk(walk(pos + 1))
        if tag == "L":
            cols, length = next(values)
            length = np.broadcast_to(length, (n,)).astype(np.int64)
            blocks.append(length.astype(np.float64)[:, None])
            masks.append(np.ones((n, 1), dtype=bool))
            cap = cols[0].shape[-1]
            j = np.arange(cap)
            at = np.clip(length[:, None] - 1 - j, 0, max(cap - 1, 0))          # element j, head first
            elements = np.stack([np.take_along_axis(np.broadcast_to(c, (n, cap)), at, axis=1) for c in cols], axis=2)
            blocks.append(elements.reshape(n, cap * len(cols)).astype(np.float64))
            masks.append(np.repeat(j[None, :] < length[:, None], len(cols), axis=1))
            return skip(desc, pos + 1)
        raise SirenUsageError(f"bad result type descriptor {desc!r}")
    walk(0)
    if not blocks:
        return np.empty(0), np.zeros(n + 1, dtype=np.int64)
    block, mask = np.concatenate(blocks, axis=1), np.concatenate(masks, axis=1)
    offsets = np.zeros(n + 1, dtype=np.int64)
    offsets[1:] = np.cumsum(mask.sum(axis=1))
    return block[mask], offsets


def means(summary: Any) -> Any:
    from sirenc.summary import Summary

    if isinstance(summary, Summary):
        return summary.mean
    if summary is None:
        return None
    if isinstance(summary, tuple):
        return tuple(means(s) for s in summary)
    items = [means(s) for s in summary]
    if all(isinstance(x, float) for x in items):
        return np.asarray(items, dtype=np.float64)
    return items
