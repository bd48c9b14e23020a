"""Posterior draws for other tools: a CSV of every particle (or MH state) with its weight, and an
ArviZ ``InferenceData`` (``pip install 'sirenc[arviz]'``).

Each number of the result is one column, named by its path as summaries name it (``result``,
``result.0``, ``result.1[3]``); a list's element k is absent (an empty CSV cell, NaN for ArviZ)
in a particle whose list is no longer than k. ArviZ's diagnostics take equally weighted draws, so
a particle filter's population is resampled (systematically, with the seed given) into as
many draws as it has particles; an MH chain's states are its draws already."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from sirenc.descriptors import SCALARS, skip
from sirenc.diagnostics import SirenUsageError


def columns(result_type: str, values: np.ndarray, offsets: np.ndarray) -> dict[str, np.ndarray]:
    """Every number of the particles' flattened results (``Filter.particles(flat=True)``) as a
    column of length n (NaN where a particle's list is too short), by path."""
    n = len(offsets) - 1
    at = offsets[:-1].astype(np.int64).copy()
    out: dict[str, np.ndarray] = {}

    def walk(pos: int, who: np.ndarray, path: str) -> int:
        tag = result_type[pos]
        if tag in SCALARS:
            col = out.setdefault(path, np.full(n, np.nan))
            col[who] = values[at[who]]
            at[who] += 1
            return pos + 1
        if tag == "u":
            return pos + 1
        if tag == "P":
            return walk(walk(pos + 1, who, f"{path}.0"), who, f"{path}.1")
        if tag == "L":
            lengths = values[at[who]].astype(np.int64)
            at[who] += 1
            for k in range(int(lengths.max()) if lengths.size else 0):
                walk(pos + 1, who[lengths > k], f"{path}[{k}]")
            return skip(result_type, pos + 1)
        raise ValueError(f"bad result type descriptor {result_type!r}")

    walk(0, np.arange(n), "result")
    return out


def _table(f) -> tuple[dict[str, np.ndarray], np.ndarray]:
    (values, offsets), weights = f.particles(flat=True)
    return columns(f.model.info["result_type"], values, offsets), weights


def to_csv(f, path: str | os.PathLike) -> None:
    """Writes ``weight`` and every number of the result, one row per particle (``Filter.to_csv``)."""
    cols, weights = _table(f)
    _write_csv(path, ["weight", *cols], [weights, *cols.values()])


def steps_to_csv(history: Any, path: str | os.PathLike) -> None:
    """Writes the per-row estimates of a stepped run (``sirenc.plot.record`` of a streamable
    model; ``sirenc run --steps-csv``): a header line, then one line per data row, its number
    (from 1), the ESS and the log evidence after it, and for every number ``plot.components``
    follows (a list's newest element: a returned trajectory's current state) its posterior mean,
    ``_sd``, ``_q5`` and ``_q95``."""
    if history.row_ess is None:
        raise SirenUsageError("per-row estimates need a streamable program (one whose data rows can be "
                              "fed one at a time)")
    rows = len(history.row_ess)
    names, cols = ["row", "ess", "log_evidence"], [np.arange(1, rows + 1), history.row_ess, history.row_log_evidence]
    if history.estimate is not None:
        for k, label in enumerate(history.labels):
            names += [label, f"{label}_sd", f"{label}_q5", f"{label}_q95"]
            cols += [history.estimate[:, k], history.sd[:, k], history.lower[:, k], history.upper[:, k]]
    _write_csv(path, names, cols)


def _write_csv(path: str | os.PathLike, names: list[str], cols: list[np.ndarray]) -> None:
    """Columns of equal length; an integer column as integers, floats so that they read back
    exactly, NaN as an empty cell. Written whole or not at all (``write_atomically``): a failed
    run leaves an older file as it was."""
    from sirenc.backend.link import write_atomically

    def cell(x) -> str:
        if isinstance(x, (int, np.integer)):
            return str(int(x))
        return "" if x != x else repr(float(x))

    lines = [",".join(names)] + [",".join(cell(x) for x in row) for row in zip(*(c.tolist() for c in cols))]
    write_atomically(path, ("\n".join(lines) + "\n").encode("utf-8"))


def _systematic(weights: np.ndarray, seed: int) -> np.ndarray:
    n = weights.size
    u = (np.random.default_rng(seed).random() + np.arange(n)) / n
    return np.minimum(np.searchsorted(np.cumsum(weights), u, side="right"), n - 1)


def to_inference_data(filters: Any, seed: int = 0) -> Any:
    """An ``arviz.InferenceData`` of one filter or chain, or of several chains of one model (one
    ArviZ chain each). Its ``attrs`` say the model, the method and, for a filter, the log
    evidence and the ESS of the weights the draws were resampled from."""
    try:
        import arviz
    except ImportError:
        raise SirenUsageError("to_inference_data needs ArviZ: pip install 'sirenc[arviz]'") from None

    many = isinstance(filters, (list, tuple))
    items = list(filters) if many else [filters]
    if not items:
        raise SirenUsageError("to_inference_data needs at least one filter or chain")
    if len(items) > 1 and not all(c.states_in_order for c in items):
        raise SirenUsageError("several filters combine only as MH chains (one ArviZ chain each)")
    if len({id(c.model) for c in items}) > 1 and len({c.model.info["name"] for c in items}) > 1:
        raise SirenUsageError("the chains are of different models")
    tables, attrs = [], {"model": items[0].model.info["name"], "method": items[0].model.info["method"],
                         "inference_library": "sirenc"}
    for f in items:
        cols, weights = _table(f)
        if not f.states_in_order:   # a population: its weights resampled into draws
            pick = _systematic(weights, seed)
            cols = {k: v[pick] for k, v in cols.items()}
            attrs.update(log_evidence=float(f.log_evidence), ess=float(f.ess), particles=int(f.n_particles))
        tables.append(cols)
    draws = min(len(next(iter(t.values()))) if t else 0 for t in tables)
    names = list(tables[0])
    posterior = {name: np.stack([t.get(name, np.full(draws, np.nan))[:draws] for t in tables]) for name in names}
    return arviz.from_dict(posterior=posterior, attrs=attrs)
