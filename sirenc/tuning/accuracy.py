"""A plan's error against particles and its time against particles, from its pilot runs; from
them the particles it needs to reach a target error and what that costs.

Every quantity carries a leading axis of R resamplings of the runs (R = 1: the runs as they
were), so the bootstrap of the choice (``choice.py``) computes exactly what the point estimate
does.

The error of one run is the largest, over the parts of the result (the elements of a tuple,
pilots.parts), of the mean over the part's numbers of the squared difference between its
estimate and the exact posterior mean: a target is one every part must reach, so that a plan
cannot meet it on a long trajectory while it misses it on a parameter beside it (where the user
gives a target per part, each part's error is measured in units of its own target, and the
target is 1). The exact answer is known when some plan gives it (every run of that plan,
whatever its seed, gives the same estimate); otherwise the reference is the pooled mean of the
most accurate groups of runs of the other plans, and its own variance is taken out of the error.
For a group of K runs with mean m, sample variance s2 and a reference r of variance v, per
number:

    error = s2 + max(0, (m - r)**2 - s2 / K - v)

the variance of one run plus its squared bias, the noise of m and r taken out of the bias.
A plan's error is modelled as c / N (a particle filter's Monte Carlo error), c from its runs at
the largest particle count tried, so it needs N* = c / target particles; where a count tried
reached the target, the measured errors decide (``particles_needed``), so N* is then a count at
which the pilots met the target. Its time at N is read off the measured medians (linearly
between them; beyond the largest, along the slope of the last two). An error in that is
optimistic rather than not: a plan that looks too cheap is run again at a larger count, which
corrects it, while one that looks too dear is dropped.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sirenc.tuning.pilots import Group

SAME = 1e-9          # relative: runs of one plan within this of each other give the same answer
POOL = 4.0           # the reference pools the groups whose mean is at most this much noisier than the best's
FLOOR = 1e-200       # a variance of exactly 0 (a number every run agrees on) still weighs finitely


@dataclass(frozen=True)
class Summary:
    """One group's runs, in R resamplings: each number's mean and sample variance (R x numbers)
    and the median run time (R)."""

    particles: int
    runs: int
    mean: np.ndarray
    var: np.ndarray
    seconds: np.ndarray


def summarize(group: Group, picks: np.ndarray | None = None) -> Summary:
    """``picks`` (R x runs) are the indices of the runs of each resampling; None: the runs."""
    if picks is None:
        picks = np.arange(group.runs)[None, :]
    est = group.estimates[picks]                               # R x runs x numbers
    var = est.var(axis=1, ddof=1) if group.runs > 1 else np.zeros_like(est[:, 0])
    return Summary(group.particles, group.runs, est.mean(axis=1), var, np.median(group.seconds[picks], axis=1))


def same_answer(group: Group) -> bool:
    """Whether every run gave the same estimate: the plan is exact (its runs differ in their
    seeds, and nothing it returns depends on a draw)."""
    e = group.estimates
    return group.runs > 1 and bool(np.all(np.abs(e - e[0]) <= SAME * (1 + np.abs(e[0]))))


@dataclass(frozen=True)
class Reference:
    value: np.ndarray        # R x numbers
    variance: np.ndarray     # R x numbers; 0 for the exact answer


def exact_reference(summary: Summary) -> Reference:
    return Reference(summary.mean, np.zeros_like(summary.mean))


def pooled_reference(summaries: list[Summary]) -> Reference:
    """The inverse-variance weighted mean of the most accurate groups: those of two runs or
    more whose mean's variance (averaged over the numbers) is within ``POOL`` of the smallest."""
    usable = [s for s in summaries if s.runs > 1] or summaries
    mean = np.stack([s.mean for s in usable])                              # G x R x numbers
    noise = np.stack([s.var / s.runs for s in usable])
    score = noise.mean(axis=2)                                             # G x R
    pool = score <= POOL * score.min(axis=0)
    weight = np.where(pool[:, :, None], 1 / np.maximum(noise, FLOOR), 0.0)
    total = weight.sum(axis=0)
    return Reference((weight * mean).sum(axis=0) / total, 1 / total)


def error(summary: Summary, ref: Reference, parts: np.ndarray | None = None,
          weights: np.ndarray | None = None) -> np.ndarray:
    """The error of one run of the group (R), as the module docstring says; ``parts``: each
    number's part (None: one part); ``weights``: each number's scale (one over its part's own
    target, where each part has one), or None."""
    bias2 = (summary.mean - ref.value) ** 2 - summary.var / summary.runs - ref.variance
    squared = summary.var + np.maximum(bias2, 0.0)
    return worst_part(squared if weights is None else squared * weights, parts)


def worst_part(squared: np.ndarray, parts: np.ndarray | None) -> np.ndarray:
    """The largest over the parts of the mean of ``squared`` (... x numbers) over each part's
    numbers; a part without numbers has none to miss."""
    if parts is None or squared.shape[-1] == 0:
        return np.mean(squared, axis=-1)
    starts = np.flatnonzero(np.r_[True, parts[1:] != parts[:-1]])
    counts = np.diff(np.r_[starts, len(parts)])
    return np.max(np.add.reduceat(squared, starts, axis=-1) / counts, axis=-1)


def time_at(summaries: list[Summary], particles: np.ndarray) -> np.ndarray:
    """The run time (R) at ``particles`` (R), from the groups' median times."""
    ns = np.array([s.particles for s in summaries], dtype=float)
    order = np.argsort(ns)
    ns = ns[order]
    ts = np.stack([summaries[i].seconds for i in order])                  # P x R
    if len(ns) == 1:
        return ts[0] * np.maximum(particles, ns[0]) / ns[0]
    # Beyond the largest count, along the slope of the last two (the count before is 1 at
    # first, whose time is a run's fixed cost), or in proportion to it where noise left no slope.
    slope = (ts[-1] - ts[-2]) / (ns[-1] - ns[-2])
    slope = np.where(slope > 0, slope, ts[-1] / ns[-1])
    beyond = ts[-1] + slope * (particles - ns[-1])
    k = np.clip(np.searchsorted(ns, particles) - 1, 0, len(ns) - 2)
    cols = np.arange(ts.shape[1])
    lo, hi = ts[k, cols], ts[k + 1, cols]
    within = lo + (hi - lo) * (np.clip(particles, ns[0], ns[-1]) - ns[k]) / (ns[k + 1] - ns[k])
    return np.where(particles > ns[-1], beyond, within)


@dataclass(frozen=True)
class Prediction:
    """A plan's errors at the particle counts it was run with (``counts``; ``errors``: counts x
    R), the particles it needs for the target (R; inf when it cannot reach it) and the time of
    a run with them (R). ``error`` is the error at the largest count."""

    counts: np.ndarray
    errors: np.ndarray
    particles: np.ndarray
    seconds: np.ndarray

    @property
    def error(self) -> np.ndarray:
        return self.errors[-1]

    @property
    def error_particles(self) -> int:
        return int(self.counts[-1])


def predict(summaries: list[Summary], ref: Reference, target: float, exact: bool,
            parts: np.ndarray | None = None, cap: float = math.inf,
            weights: np.ndarray | None = None) -> Prediction:
    """The prediction from a plan's groups; a plan that needs more than ``cap`` particles (the
    most a run may use) does not reach the target."""
    measured = sorted((s for s in summaries if s.runs > 1), key=lambda s: s.particles) or summaries[-1:]
    counts = np.array([float(s.particles) for s in measured])
    if exact:
        errors = np.zeros((len(measured), *measured[-1].seconds.shape))
        needed = np.ones(errors.shape[1:])
    else:
        errors = np.stack([error(s, ref, parts, weights) for s in measured])  # P x R
        needed = particles_needed(counts, errors, target)
        needed = np.where(needed > cap, math.inf, needed)
    finite = np.where(np.isfinite(needed), needed, 1.0)
    seconds = np.where(np.isfinite(needed), time_at(summaries, finite), math.inf)
    return Prediction(counts, errors, needed, seconds)


def particles_needed(counts: np.ndarray, errors: np.ndarray, target: float) -> np.ndarray:
    """The particles (R) that reach ``target``, from the errors (counts x R): the smallest count
    tried from which on every count tried reached it; where the largest did not, c / N from
    that one. (A filter's error falls faster than 1 / N before it settles to it, so c / N from a
    large count promises too few particles at a smaller one: below the largest count, only what
    was measured counts.)"""
    if target <= 0:
        return np.where(errors[-1] > 0, math.inf, 1.0)
    reached = np.flip(np.logical_and.accumulate(np.flip(errors <= target, 0), 0), 0)     # from count i on
    first = np.argmax(reached, axis=0)
    return np.where(reached[-1], counts[first], np.ceil(counts[-1] * errors[-1] / target))


def refinement(counts: np.ndarray, errors: np.ndarray, target: float, needed: float) -> float | None:
    """Where the target lies between two counts tried, the last above it and ``needed``: the
    count log-log interpolation between them says reaches it; None when there is no such pair."""
    k = int(np.searchsorted(counts, needed))
    if k == 0 or target <= 0:
        return None
    lo, hi = counts[k - 1], counts[k]
    e_lo, e_hi = math.log(max(errors[k - 1], FLOOR)), math.log(max(errors[k], FLOOR))
    if e_lo <= e_hi:
        return None
    return math.exp(math.log(lo) + (math.log(target) - e_lo) * (math.log(hi) - math.log(lo)) / (e_hi - e_lo))
