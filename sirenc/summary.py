"""Posterior summaries of a filter's result: mean, variance and quantiles of every number in it,
as the weighted mixture of the particles' own posteriors (``Filter.summary``).

A particle's posterior of a number is its *atom* (``sirenrt_filter_posterior``, ``ATOM_WORDS``
numbers): ``mean, kind, p0, p1, p2, scale, shift``. A number the particle drew, or computed from
drawn values, is a point (``kind`` ``ATOM_POINT``); a number it keeps symbolic is ``scale * X +
shift`` with X from distribution family ``kind`` (``sirenc.distributions``' ids) of parameters
``p0..p2``, so that a particle filter whose particles hold Beta(9, 3) reports that Beta's spread
and quantiles, not zero. ``ATOM_MEAN`` marks a symbolic number known by its mean alone (no affine
function of one variable); the summary then counts it as a point and says so (``spread_exact``).

The mixture's variance is the law of total variance (the particles' own variances, plus the
spread of their means); its quantile q is the smallest x at which the mixture's distribution
function reaches q, found by bisection between the particles' own q-quantiles, which bracket it.

The walk follows the result type descriptor (``f b S u P<a><b> L<a>``) over all particles at
once: each particle's atoms are its slice of the flattened array (a list is its length, then its
elements), and ``at`` holds every particle's position in its slice. Particles of zero weight take
no part, as in the estimator; a list's element k is summarised over the particles whose list is
longer than k, with their weights renormalised."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from sirenc.descriptors import SCALARS, skip
from sirenc.diagnostics import SirenUsageError
from sirenc.distributions import FAMILIES
from sirenc.distributions import family as family_named

DEFAULT_QUANTILES = (0.05, 0.5, 0.95)

# sirenrt.h's SIRENRT_ATOM_WORDS, SIRENRT_ATOM_POINT and SIRENRT_ATOM_MEAN.
ATOM_WORDS, ATOM_POINT, ATOM_MEAN = 7, -1, -2
GAUSSIAN = family_named("gaussian").id


@dataclass(frozen=True)
class Summary:
    """The weighted posterior of one number (for a bool, of its 0/1 value: ``mean`` is the
    probability of ``true``). ``quantiles`` maps each level q to the smallest value whose
    posterior probability of being at or below it reaches q; ``particles`` counts those of
    nonzero weight. ``spread_exact`` is False where some particle knew this number by its mean
    alone (a symbolic value that is no affine function of one variable): the variance and
    quantiles then leave out that particle's own spread.

    ``mcse`` is the Monte Carlo standard error of ``mean`` and ``ess`` its effective sample size
    (the number of independent exact draws that would estimate the mean as well). For a weighted
    population they are the importance-sampling estimates: mcse^2 = sum_i w_i^2 (m_i - mean)^2
    over the particles' means m_i, ess = sum_i w_i (m_i - mean)^2 / mcse^2. Particles that hold
    one exact distribution each add no Monte Carlo error: where all their means agree, mcse is 0
    and ess infinite. Where all particles hold one point, mcse is 0 and ess NaN: the population
    cannot tell an exact answer from one collapsed onto a single ancestor. A population knows
    nothing of its ancestry, so after resampling these are optimistic (particles descended from
    one ancestor count as independent); ``sirenc.runs`` measures the error across independent
    runs instead. For an MH chain, ess is the
    autocorrelation estimate of the draws (``sirenc.chain_stats.effective_size``) and
    mcse = sd / sqrt(ess)."""

    mean: float
    variance: float
    quantiles: dict[float, float] = field(default_factory=dict)
    particles: int = 0
    spread_exact: bool = True
    mcse: float = float("nan")
    ess: float = float("nan")

    @property
    def sd(self) -> float:
        return float(np.sqrt(self.variance))


def quantile_levels(quantiles: Any) -> tuple[float, ...]:
    """The levels of ``summary(quantiles=...)``: one number or a sequence, each in [0, 1]."""
    try:
        levels = tuple(float(q) for q in np.atleast_1d(np.asarray(quantiles, dtype=np.float64)))
    except (TypeError, ValueError):
        raise SirenUsageError(f"quantiles must be a number or a sequence of numbers in [0, 1], "
                              f"not {quantiles!r}") from None
    if not all(0.0 <= q <= 1.0 for q in levels):
        raise SirenUsageError(f"quantile levels must lie in [0, 1], not {quantiles!r}")
    return levels


def expand_atoms(result_type: str, values: np.ndarray, offsets: np.ndarray, side: str | None = None,
                 side_values: np.ndarray | None = None, side_offsets: np.ndarray | None = None
                 ) -> tuple[np.ndarray, np.ndarray]:
    """The atoms of particles' flattened results (as ``sirenrt_filter_posterior`` gives them),
    from their side values of type ``side`` (a tier-2 program's frame, after the result): a
    leaf's side is a full atom, or its variance alone (a Gaussian about the leaf's value; a point
    where it is 0, known by its mean alone where it is NaN). Without a side every number is a point."""
    n = len(offsets) - 1
    at = offsets[:-1].astype(np.int64).copy()
    sat = side_offsets[:-1].astype(np.int64).copy() if side is not None else None
    count = np.zeros(n, dtype=np.int64)
    pieces = []

    def put(who: np.ndarray, block: np.ndarray) -> None:
        pieces.append((who, count[who].copy(), block))
        count[who] += block.shape[1]

    def walk(pos: int, spos: int, who: np.ndarray) -> tuple[int, int]:
        tag = result_type[pos]
        if tag in SCALARS:
            block = np.zeros((len(who), ATOM_WORDS))
            block[:, 0] = block[:, 2] = values[at[who]]
            block[:, 1], block[:, 5] = GAUSSIAN, 1.0
            at[who] += 1
            end = spos + 1
            if side is not None and side[spos] != "f":
                block = side_values[sat[who][:, None] + np.arange(ATOM_WORDS)]
                sat[who] += ATOM_WORDS
                end = skip(side, spos)
            elif side is not None:
                block[:, 3] = side_values[sat[who]]
                sat[who] += 1
            put(who, _normal_form(block))
            return pos + 1, end
        if tag == "u":
            return pos + 1, spos + 1
        if tag == "P":
            return walk(*walk(pos + 1, spos + 1, who), who)
        if tag == "L":
            lengths = values[at[who]].astype(np.int64)
            at[who] += 1
            if side is not None:
                sat[who] += 1
            put(who, lengths[:, None].astype(np.float64))
            for k in range(int(lengths.max()) if lengths.size else 0):
                walk(pos + 1, spos + 1, who[lengths > k])
            return skip(result_type, pos + 1), skip(side, spos + 1) if side is not None else spos + 1
        raise ValueError(f"bad result type descriptor {result_type!r}")

    walk(0, 0, np.arange(n))
    out_offsets = np.concatenate([[0], np.cumsum(count)]).astype(np.int64)
    atoms = np.empty(int(out_offsets[-1]))
    for who, start, block in pieces:
        atoms[(out_offsets[who] + start)[:, None] + np.arange(block.shape[1])] = block
    return atoms, out_offsets


def _normal_form(block: np.ndarray) -> np.ndarray:
    """Atoms as sirenrt_filter_posterior gives them: a Gaussian of variance 0 is a point, of
    variance NaN (a trajectory's element that is not Gaussian) known by its mean alone."""
    degenerate = (block[:, 1] == GAUSSIAN) & ~(block[:, 3] > 0)
    if degenerate.any():
        block = block.copy()
        mean_only = degenerate & np.isnan(block[:, 3])
        block[degenerate, 1] = np.where(mean_only[degenerate], ATOM_MEAN, ATOM_POINT)
        block[degenerate, 2:6] = 0.0
        block[degenerate, 6] = block[degenerate, 0]
    return block


def summarize(result_type: str, atoms: np.ndarray, offsets: np.ndarray, weights: np.ndarray,
              levels: Sequence[float] = DEFAULT_QUANTILES, chain: bool = False) -> Any:
    """The result's shape with a ``Summary`` for every float or bool, ``None`` for unit, from
    every particle's atoms (``atoms[offsets[i]:offsets[i+1]]``) and normalised weights. With
    ``chain``, the "particles" are an MH chain's states in their order, and the Monte Carlo
    error comes from their autocorrelation."""
    at = offsets[:-1].astype(np.int64).copy()
    who = np.flatnonzero(weights > 0)
    value, _ = _walk(result_type, 0, atoms, at, who, weights, tuple(levels), chain)
    return value


def _walk(desc: str, pos: int, atoms: np.ndarray, at: np.ndarray, who: np.ndarray, w: np.ndarray,
          levels: tuple, chain: bool) -> tuple[Any, int]:
    tag = desc[pos]
    if tag in SCALARS:
        block = atoms[at[who][:, None] + np.arange(ATOM_WORDS)]
        at[who] += ATOM_WORDS
        return mixture_summary(block, w[who], levels, chain), pos + 1
    if tag == "u":
        return None, pos + 1
    if tag == "P":
        first, pos = _walk(desc, pos + 1, atoms, at, who, w, levels, chain)
        second, pos = _walk(desc, pos, atoms, at, who, w, levels, chain)
        return (first, second), pos
    if tag == "L":
        lengths = atoms[at[who]].astype(np.int64)
        at[who] += 1
        items, end = [], skip(desc, pos + 1)
        for k in range(int(lengths.max()) if lengths.size else 0):
            item, _ = _walk(desc, pos + 1, atoms, at, who[lengths > k], w, levels, chain)
            items.append(item)
        return items, end
    raise ValueError(f"bad result type descriptor {desc!r}")


def _scipy_dist(kind: int, p: np.ndarray):
    """Family ``kind`` (sirenc.distributions) with Siren's parameters p[:, 0..2], as scipy.stats."""
    from scipy import stats

    name = FAMILIES[kind].name
    a, b, c = p[:, 0], p[:, 1], p[:, 2]
    with np.errstate(divide="ignore", invalid="ignore"):
        if name == "gaussian":
            return stats.norm(a, np.sqrt(b))
        if name == "beta":
            return stats.beta(a, b)
        if name == "bernoulli":
            return stats.bernoulli(a)
        if name == "binomial":
            return stats.binom(a, b)
        if name == "beta_binomial":
            return stats.betabinom(a, b, c)
        if name == "negative_binomial":
            return stats.nbinom(a, b)      # failures before the n-th success: mean n(1 - p) / p
        if name == "exponential":
            return stats.expon(scale=1.0 / a)
        if name == "gamma":
            return stats.gamma(a, scale=1.0 / b)
        if name == "poisson":
            return stats.poisson(a)
        if name == "uniform_int":
            return stats.randint(a, b + 1)
        if name == "student_t":
            return stats.t(c, a, np.sqrt(b))
    raise ValueError(f"no closed-form posterior atom for family {name}")


class _Component:
    """The distinct symbolic atoms of one family: scale * X + shift, X ~ family(params)."""

    def __init__(self, kind: int, params: np.ndarray, scale: np.ndarray, shift: np.ndarray, w: np.ndarray):
        self.dist = _scipy_dist(kind, params)
        self.discrete = FAMILIES[kind].discrete
        self.scale, self.shift, self.w = scale, shift, w

    def variance(self) -> np.ndarray:
        return self.scale ** 2 * self.dist.var()

    def cdf(self, x: float) -> float:
        """sum_k w_k P(scale_k X_k + shift_k <= x)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            t = (x - self.shift) / self.scale
        up = self.dist.cdf(t)
        # scale < 0: P(X >= t); a discrete X's P(X >= t) is sf(ceil(t) - 1).
        down = self.dist.sf(np.ceil(t) - 1) if self.discrete else self.dist.sf(t)
        return float(np.dot(self.w, np.where(self.scale > 0, up, down)))

    def quantiles(self, q: float) -> np.ndarray:
        """Each atom's own q-quantile (for scale < 0 the reflection of its (1 - q)-quantile)."""
        return np.where(self.scale > 0, self.scale * self.dist.ppf(q) + self.shift,
                        self.scale * self.dist.ppf(1.0 - q) + self.shift)


def mixture_summary(block: np.ndarray, w: np.ndarray, levels: Sequence[float], chain: bool = False) -> Summary:
    """The summary of one number from the particles' atoms (rows of ``block``) and weights
    (``chain``: an MH chain's states, in order)."""
    keep = w > 0
    block, w = block[keep], w[keep]
    if block.shape[0] == 0:
        return Summary(float("nan"), float("nan"), {q: float("nan") for q in levels}, 0)
    w = w / w.sum()
    means, kinds = block[:, 0], block[:, 1].astype(np.int64)
    symbolic = (kinds >= 0) & (block[:, 5] != 0.0)
    components = _components(block[symbolic], w[symbolic])
    with np.errstate(invalid="ignore", over="ignore"):
        # Offsets from one particle's mean, as the estimator does: a value every particle agrees
        # on comes out exact (mean 2.0, variance 0.0), and less is lost to cancellation.
        base = means[0]
        mean = float(base + np.dot(w, means - base)) if np.isfinite(base) else float(np.dot(w, means))
        between = float(np.dot(w, (means - mean) ** 2)) if np.isfinite(mean) else float("nan")
        within = sum(float(np.dot(c.w, c.variance())) for c in components)
        variance = between + within
        mcse, ess = (_chain_error(means, between) if chain else
                     _population_error(means, w, mean, between, exact=bool(np.all(symbolic))))
    points = ~symbolic
    quantiles = {q: _quantile(q, means[points], w[points], components) for q in levels}
    return Summary(mean, max(variance, 0.0) if variance == variance else variance, quantiles, int(block.shape[0]),
                   spread_exact=not bool(np.any(kinds == ATOM_MEAN)), mcse=mcse, ess=ess)


def _population_error(means: np.ndarray, w: np.ndarray, mean: float, between: float,
                      exact: bool) -> tuple[float, float]:
    """The importance-sampling standard error of the weighted mean of ``means``, and its ESS.
    Where the means all agree, particles that each hold an exact distribution (``exact``) have
    the answer without Monte Carlo error; points that agree may as well all descend from one
    ancestor (a trajectory's early elements after many resamplings), so their ESS is unknown."""
    if not np.isfinite(mean):
        return float("nan"), float("nan")
    square = float(np.dot(w * w, (means - mean) ** 2))
    if square == 0.0:
        return 0.0, float("inf") if exact else float("nan")
    return float(np.sqrt(square)), between / square


def _chain_error(draws: np.ndarray, variance: float) -> tuple[float, float]:
    """The standard error of a chain's mean of ``draws`` from their autocorrelation, and its ESS."""
    from sirenc.chain_stats import effective_size

    if not np.all(np.isfinite(draws)):
        return float("nan"), float("nan")
    ess = effective_size(draws)
    return float(np.sqrt(variance / ess)) if ess > 0 else float("nan"), ess


def _components(block: np.ndarray, w: np.ndarray) -> list[_Component]:
    """The symbolic atoms grouped by family, equal atoms merged (all particles may share one)."""
    out = []
    for kind in np.unique(block[:, 1].astype(np.int64)):
        rows = block[block[:, 1] == kind][:, 2:]
        unique, inverse = np.unique(rows, axis=0, return_inverse=True)
        merged = np.bincount(inverse.ravel(), weights=w[block[:, 1] == kind], minlength=len(unique))
        out.append(_Component(int(kind), unique[:, :3], unique[:, 3], unique[:, 4], merged))
    return out


def _quantile(q: float, points: np.ndarray, pw: np.ndarray, components: list[_Component]) -> float:
    order = np.argsort(points, kind="stable")
    points, cum = points[order], np.cumsum(pw[order])
    if not components:
        cum[-1] = 1.0  # rounding must not leave the top level unreached
        return float(points[min(np.searchsorted(cum, q, side="left"), points.size - 1)])

    def mixture(x: float) -> float:
        at = np.searchsorted(points, x, side="right")
        return (float(cum[at - 1]) if at else 0.0) + sum(c.cdf(x) for c in components)

    ends = np.concatenate([points, *(c.quantiles(q) for c in components)])
    lo, hi = float(np.min(ends)), float(np.max(ends))
    if q <= 0.0:
        return lo
    if q >= 1.0 or not np.isfinite(lo) or not np.isfinite(hi):
        return hi if q >= 1.0 else float("nan")
    target = q * (1.0 - 1e-12)   # the weights' rounding must not leave q unreached
    if mixture(hi) < target:
        return hi
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if mixture(mid) >= target:
            hi = mid
        else:
            lo = mid
    return _snap(hi, points, components, target, mixture)


def _snap(x: float, points: np.ndarray, components: list[_Component], target: float, mixture) -> float:
    """The bisection stops just above a jump of the distribution function: the atom there."""
    tol = 1e-9 * max(1.0, abs(x))
    candidates = list(points[np.abs(points - x) <= tol])
    for c in components:
        if c.discrete:
            with np.errstate(divide="ignore", invalid="ignore"):
                k = np.round((x - c.shift) / c.scale)
            lattice = c.scale * k + c.shift
            candidates += list(lattice[np.abs(lattice - x) <= tol])
    for v in sorted(candidates):
        if mixture(v) >= target:
            return float(v)
    return x


def leaves(summary: Any, path: str = "result", leaf: type = Summary) -> list[tuple[str, Any]]:
    """The summaries in a summarised result (or the ``leaf`` objects in a result-shaped value),
    each with its path (``result.0``, ``result.1[3]``), in the order of the flattened estimate."""
    if isinstance(summary, leaf):
        return [(path, summary)]
    if isinstance(summary, tuple):
        return leaves(summary[0], f"{path}.0", leaf) + leaves(summary[1], f"{path}.1", leaf)
    if isinstance(summary, list):
        return [one for k, item in enumerate(summary) for one in leaves(item, f"{path}[{k}]", leaf)]
    return []   # unit


def leaf_names(summary: Any, result_type: str, names: Sequence[str]) -> list[str]:
    """The random variable each of ``leaves(summary)`` is ("" for none), from a model's
    ``info["result_names"]`` (one per scalar tag of ``result_type``; sirenc/frontend/result_names.py)."""
    at = dict(zip((i for i, tag in enumerate(result_type) if tag in SCALARS), names))
    out: list[str] = []

    def walk(pos: int, value: Any) -> int:
        tag = result_type[pos]
        if tag in SCALARS:
            out.append(at.get(pos, ""))
            return pos + 1
        if tag == "P":
            return walk(walk(pos + 1, value[0]), value[1])
        if tag == "L":
            for item in value:
                walk(pos + 1, item)
            return skip(result_type, pos)
        return pos + 1

    if names:
        walk(0, summary)
    return out or [""] * len(leaves(summary))


def by_variable(summary: Any, result_type: str, names: Sequence[str]) -> dict[str, Any]:
    """The summaries of the result's numbers that are random variables of the program, by name:
    a ``Summary``, or the list of them where the variable is a list's elements (a trajectory)."""
    out: dict[str, Any] = {}
    for (path, s), name in zip(leaves(summary), leaf_names(summary, result_type, names)):
        if not name:
            continue
        if "[" in path:
            items = out.setdefault(name, [])
            if isinstance(items, list):
                items.append(s)
        else:
            out.setdefault(name, s)
    return out


def table(summary: Any, limit: int = 20, names: Sequence[str] = ()) -> list[str]:
    """A readable table of the leaves: path, the random variable it is (``names``, as
    ``leaf_names`` gives them, where any), mean, sd, the quantiles, mcse and ess; at most ``limit`` rows."""
    rows = leaves(summary)
    if not rows:
        return ["(nothing to summarise: the result holds no number)"]
    levels = list(rows[0][1].quantiles)
    named = any(names)
    head = ["", *(["variable"] if named else []), "mean", "sd", *(f"q{100 * q:g}" for q in levels), "mcse", "ess"]
    body = [[path + ("" if s.spread_exact else " *"), *([name] if named else []), f"{s.mean:.6g}", f"{s.sd:.6g}",
             *(f"{s.quantiles[q]:.6g}" for q in levels), f"{s.mcse:.2g}", f"{s.ess:.4g}"]
            for (path, s), name in zip(rows[:limit], names if named else [""] * len(rows))]
    widths = [max(len(r[i]) for r in [head, *body]) for i in range(len(head))]
    left = 2 if named else 1     # the path and the variable are text
    lines = ["  ".join(c.ljust(w) if i < left else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip()
             for r in [head, *body]]
    if len(rows) > limit:
        lines.append(f"... {len(rows) - limit} more (all of them with --json)")
    if not all(s.spread_exact for _, s in rows):
        lines.append("* symbolic in some particle and known there by its mean alone: sd and quantiles "
                     "leave out that particle's own spread")
    return lines


def jsonable(summary: Any) -> Any:
    """The summarised result for JSON: each Summary as a dict, lists and pairs as lists."""
    if isinstance(summary, Summary):
        return {"mean": summary.mean, "variance": summary.variance,
                "quantiles": {f"{q:g}": v for q, v in summary.quantiles.items()}, "particles": summary.particles,
                "spread_exact": summary.spread_exact, "mcse": finite_or_none(summary.mcse),
                "ess": finite_or_none(summary.ess)}
    if isinstance(summary, (tuple, list)):
        return [jsonable(s) for s in summary]
    return None


def finite_or_none(x: float) -> float | None:
    """JSON has no infinity or NaN: an ess without Monte Carlo error (every particle exact), or one
    the population cannot tell (every particle one point), is null."""
    return x if np.isfinite(x) else None
