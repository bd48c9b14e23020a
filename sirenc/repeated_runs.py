"""Independent runs of one model (``sirenc.runs``, ``sirenc run --runs K``): the Monte Carlo
error of an estimate measured across runs, not estimated from one population.

    >>> import sirenc
    >>> model = sirenc.compile("examples/walk.si", method="pf")        # doctest: +SKIP
    >>> r = sirenc.runs(model, 8, particles=1000, seed=0)               # doctest: +SKIP
    >>> r.spread().sd, r.log_evidence_var                             # doctest: +SKIP

A population's own error estimate (``Summary.mcse``) cannot see that resampled particles descend
from few ancestors, so it is optimistic; K runs with independent random streams show the error
directly. Run k uses seed ``seed + k``: the runtime's generator is keyed by the seed (a block
cipher), so neighbouring seeds give independent streams, and any one run is repeated by
``--seed seed+k`` alone. The spread of the K estimates is the error of one run's estimate, the
spread of their log evidences that of log Z (Var log Z well above 1 says that more particles are
needed for the evidence to be usable); for MH chains, the split R-hat across them
(``sirenc.mh.rhat``)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from sirenc import methods
from sirenc.diagnostics import SirenUsageError
from sirenc.summary import DEFAULT_QUANTILES, Summary, finite_or_none, leaves


@dataclass(frozen=True)
class Spread:
    """One number of the result across runs: ``mean`` of the runs' estimates, ``sd`` their
    standard deviation (the error of one run's estimate), ``se`` = sd / sqrt(runs) (the error of
    ``mean``), ``mcse`` the average of the runs' own standard errors (``Summary.mcse``: compare it
    with ``sd`` to see how far one population's estimate of its error can be trusted), ``runs``
    the number of runs that have this number (a list may be shorter in some)."""

    mean: float
    sd: float
    se: float
    mcse: float
    runs: int


@dataclass(frozen=True)
class Runs:
    """K independent runs of one model: each run's seed, estimate, posterior summary, log
    evidence (NaN for MH chains) and time in seconds; the runtime plan joined over the runs
    (a variable some run sampled and another kept symbolic is ``dynamic``; empty under pf)."""

    seeds: tuple[int, ...]
    estimates: tuple[Any, ...]
    summaries: tuple[Any, ...]
    log_evidence: np.ndarray
    seconds: np.ndarray
    runtime_plan: dict[str, str]
    rhat: float | None = None      # MH chains: the split R-hat across them

    def spread(self) -> Any:
        """The result's shape with a ``Spread`` for every float or bool (``None`` for unit)."""
        return _spread(list(self.summaries))

    def estimate(self) -> Any:
        """The pooled estimate: the result's shape with each number the mean of the runs'."""
        return _means(self.spread())

    @property
    def pooled_log_evidence(self) -> float:
        """The log of the mean of the runs' evidence estimates, each of them unbiased for Z."""
        z = self.log_evidence
        if np.all(np.isnan(z)):
            return float("nan")
        top = float(np.max(z))
        if not np.isfinite(top):
            return top
        return top + float(np.log(np.mean(np.exp(z - top))))

    @property
    def log_evidence_mean(self) -> float:
        return float(np.mean(self.log_evidence))

    @property
    def log_evidence_sd(self) -> float:
        return float(np.std(self.log_evidence, ddof=1)) if len(self.log_evidence) > 1 else float("nan")

    @property
    def log_evidence_var(self) -> float:
        return self.log_evidence_sd ** 2


def runs(model: Any, k: int, particles: int | None = None, seed: int = 0, rows: Any = None,
         quantiles: Any = DEFAULT_QUANTILES, progress: Any = None, **options: Any) -> Runs:
    """``k`` runs of ``model.filter(particles, seed + i, **options).run(rows)``, i = 0..k-1 (a
    native ``Model`` or the JAX back end's; ``handler="mh"`` runs k chains). ``progress`` is
    given to each run's ``Filter.run``."""
    from sirenc.arguments import check_seed

    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise SirenUsageError(f"runs must be a positive integer, not {k!r}")
    check_seed(seed)
    check_seed(seed + int(k) - 1)
    chain = options.get("handler") == "mh"
    seeds = tuple(int(seed) + i for i in range(int(k)))
    estimates, summaries, evidence, seconds, chains, plan = [], [], [], [], [], {}
    for s in seeds:
        f = model.filter(particles=particles, seed=s, **options)
        start = time.perf_counter()
        f.run(rows, progress=None if chain else progress)
        estimates.append(f.estimate())
        seconds.append(time.perf_counter() - start)
        summaries.append(f.summary(quantiles))
        evidence.append(float("nan") if chain else f.log_evidence)
        if methods.keeps_symbolic_state(model.info["method"]):
            for name, how in f.runtime_plan().items():
                plan[name] = how if plan.get(name, how) == how else "dynamic"
        if chain:
            chains.append(f)       # R-hat reads their draws
        else:
            f.close()
    rhat = None
    if chain:
        from sirenc.mh import rhat as split_rhat
        rhat = split_rhat(chains)
        for c in chains:
            c.close()
    return Runs(seeds, tuple(estimates), tuple(summaries), np.asarray(evidence), np.asarray(seconds), plan, rhat)


def _spread(summaries: list) -> Any:
    """Walks the runs' summaries side by side; a list's element j over the runs whose list has it."""
    first = summaries[0]
    if isinstance(first, Summary):
        means = np.array([s.mean for s in summaries])
        sd = float(np.std(means, ddof=1)) if len(means) > 1 else float("nan")
        return Spread(float(np.mean(means)), sd, sd / np.sqrt(len(means)),
                      float(np.mean([s.mcse for s in summaries])), len(means))
    if isinstance(first, tuple):
        return _spread([s[0] for s in summaries]), _spread([s[1] for s in summaries])
    if isinstance(first, list):
        longest = max(len(s) for s in summaries)
        return [_spread([s[j] for s in summaries if len(s) > j]) for j in range(longest)]
    return None


def _means(spread: Any) -> Any:
    if isinstance(spread, Spread):
        return spread.mean
    if isinstance(spread, tuple):
        return tuple(_means(s) for s in spread)
    if isinstance(spread, list):
        items = [_means(s) for s in spread]
        return np.asarray(items) if all(isinstance(i, float) for i in items) else items
    return None


def table(r: Runs, limit: int = 20) -> list[str]:
    """The readable table of ``sirenc run --runs K``: each number's mean over the runs, their sd,
    the se of the mean, the runs' own mcse; then log Z's."""
    rows = leaves(r.spread(), leaf=Spread)
    head = ["", "mean", "sd", "se", "mcse"]
    body = [[path, f"{s.mean:.6g}", f"{s.sd:.3g}", f"{s.se:.3g}", f"{s.mcse:.3g}"] for path, s in rows[:limit]]
    if not np.all(np.isnan(r.log_evidence)):
        sd = r.log_evidence_sd
        body.append(["log Z", f"{r.log_evidence_mean:.6g}", f"{sd:.3g}", f"{sd / np.sqrt(len(r.seeds)):.3g}", ""])
    widths = [max(len(row[i]) for row in [head, *body]) for i in range(len(head))]
    lines = [f"{len(r.seeds)} runs, seeds {r.seeds[0]}..{r.seeds[-1]}, {float(np.sum(r.seconds)):.3g} s"]
    lines += ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))).rstrip()
              for row in [head, *body]]
    if len(rows) > limit:
        lines.append(f"... {len(rows) - limit} more (all of them with --json)")
    if r.rhat is not None:
        lines.append(f"split R-hat across the chains: {r.rhat:.4g}")
    return lines


def jsonable(r: Runs) -> dict:
    """``--json``'s ``runs``: every run's seed and log evidence, and each number's spread (the
    command adds the runs' estimates, shaped as its ``result``)."""
    number = finite_or_none

    def walk(spread: Any) -> Any:
        if isinstance(spread, Spread):
            return {"mean": number(spread.mean), "sd": number(spread.sd), "se": number(spread.se),
                    "mcse": number(spread.mcse), "runs": spread.runs}
        if isinstance(spread, (tuple, list)):
            return [walk(s) for s in spread]
        return None

    return {"seeds": list(r.seeds), "log_evidence": [number(z) for z in r.log_evidence], "seconds": r.seconds.tolist(),
            "log_evidence_mean": number(r.log_evidence_mean), "log_evidence_sd": number(r.log_evidence_sd),
            "pooled_log_evidence": number(r.pooled_log_evidence), "runtime_plan": r.runtime_plan,
            "rhat": None if r.rhat is None else number(r.rhat), "spread": walk(r.spread())}
