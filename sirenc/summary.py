"""Posterior summaries of a filter's result: weighted mean, variance and quantiles of every
number in it, from the particles' own values and normalised weights (``Filter.summary``).

The walk follows the result type descriptor (``f b S u P<a><b> L<a>``) over all particles at
once: each particle's values are its slice of the flattened array the runtime returns (a list
is its length, then its elements), and ``at`` holds every particle's position in its slice.
Particles of zero weight take no part, as in the estimator; a list's element k is summarised
over the particles whose list is longer than k, with their weights renormalised."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from sirenc.descriptors import SCALARS, skip

DEFAULT_QUANTILES = (0.05, 0.5, 0.95)


@dataclass(frozen=True)
class Summary:
    """The weighted posterior of one number (for a bool, of its 0/1 value: ``mean`` is the
    probability of ``true``). ``quantiles`` maps each level q to the smallest value whose
    weighted cumulative probability reaches q; ``particles`` counts those of nonzero weight."""

    mean: float
    variance: float
    quantiles: dict[float, float] = field(default_factory=dict)
    particles: int = 0

    @property
    def sd(self) -> float:
        return float(np.sqrt(self.variance))


def weighted_summary(x: np.ndarray, w: np.ndarray, levels: Sequence[float]) -> Summary:
    keep = w > 0
    x, w = x[keep], w[keep]
    if x.size == 0:
        return Summary(float("nan"), float("nan"), {q: float("nan") for q in levels}, 0)
    w = w / w.sum()
    with np.errstate(invalid="ignore", over="ignore"):
        # Offsets from one particle's value, as the estimator does: a value every particle agrees
        # on comes out exact (mean 2.0, variance 0.0), and less is lost to cancellation.
        base = x[0]
        mean = float(base + np.dot(w, x - base)) if np.isfinite(base) else float(np.dot(w, x))
        variance = float(np.dot(w, (x - mean) ** 2)) if np.isfinite(mean) else float("nan")
    order = np.argsort(x, kind="stable")
    cum = np.cumsum(w[order])
    cum[-1] = 1.0  # rounding must not leave the top level unreached
    quantiles = {q: float(x[order][min(np.searchsorted(cum, q, side="left"), x.size - 1)]) for q in levels}
    return Summary(mean, max(variance, 0.0) if variance == variance else variance, quantiles, int(x.size))


def summarize(result_type: str, values: np.ndarray, offsets: np.ndarray, weights: np.ndarray,
              levels: Sequence[float] = DEFAULT_QUANTILES) -> Any:
    """The result's shape with a ``Summary`` for every float or bool, ``None`` for unit."""
    at = offsets[:-1].astype(np.int64).copy()
    who = np.flatnonzero(weights > 0)
    value, pos = _walk(result_type, 0, values, at, who, weights, tuple(levels))
    return value


def _walk(desc: str, pos: int, values: np.ndarray, at: np.ndarray, who: np.ndarray, w: np.ndarray,
          levels: tuple) -> tuple[Any, int]:
    tag = desc[pos]
    if tag in SCALARS:
        x = values[at[who]]
        at[who] += 1
        return weighted_summary(x, w[who], levels), pos + 1
    if tag == "u":
        return None, pos + 1
    if tag == "P":
        first, pos = _walk(desc, pos + 1, values, at, who, w, levels)
        second, pos = _walk(desc, pos, values, at, who, w, levels)
        return (first, second), pos
    if tag == "L":
        lengths = values[at[who]].astype(np.int64)
        at[who] += 1
        items, end = [], skip(desc, pos + 1)
        for k in range(int(lengths.max()) if lengths.size else 0):
            item, _ = _walk(desc, pos + 1, values, at, who[lengths > k], w, levels)
            items.append(item)
        return items, end
    raise ValueError(f"bad result type descriptor {desc!r}")


def leaves(summary: Any, path: str = "result") -> list[tuple[str, Summary]]:
    """The summaries in a summarised result, each with its path (``result.0``, ``result.1[3]``),
    in the order of the flattened estimate."""
    if isinstance(summary, Summary):
        return [(path, summary)]
    if isinstance(summary, tuple):
        return leaves(summary[0], f"{path}.0") + leaves(summary[1], f"{path}.1")
    if isinstance(summary, list):
        return [leaf for k, item in enumerate(summary) for leaf in leaves(item, f"{path}[{k}]")]
    return []   # unit


def table(summary: Any, limit: int = 20) -> list[str]:
    """A readable table of the leaves: path, mean, sd and the quantiles; at most ``limit`` rows."""
    rows = leaves(summary)
    if not rows:
        return ["(nothing to summarise: the result holds no number)"]
    levels = list(rows[0][1].quantiles)
    head = ["", "mean", "sd", *(f"q{100 * q:g}" for q in levels)]
    body = [[path, f"{s.mean:.6g}", f"{s.sd:.6g}", *(f"{s.quantiles[q]:.6g}" for q in levels)]
            for path, s in rows[:limit]]
    widths = [max(len(r[i]) for r in [head, *body]) for i in range(len(head))]
    lines = ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip()
             for r in [head, *body]]
    if len(rows) > limit:
        lines.append(f"... {len(rows) - limit} more (all of them with --json)")
    return lines


def jsonable(summary: Any) -> Any:
    """The summarised result for JSON: each Summary as a dict, lists and pairs as lists."""
    if isinstance(summary, Summary):
        return {"mean": summary.mean, "variance": summary.variance,
                "quantiles": {f"{q:g}": v for q, v in summary.quantiles.items()}, "particles": summary.particles}
    if isinstance(summary, (tuple, list)):
        return [jsonable(s) for s in summary]
    return None
