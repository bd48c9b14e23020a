"""The MH handler from Python: a single-site Metropolis-Hastings chain (ARCHITECTURE.md §15.2).

    >>> import sirenc
    >>> model = sirenc.compile("examples/coin.si", method="pf")          # doctest: +SKIP
    >>> chain = model.filter(handler="mh", samples=2000, warmup=200, seed=1)   # doctest: +SKIP
    >>> chain.run().estimate(), chain.acceptance_rate                   # doctest: +SKIP

A ``Chain`` is a ``Filter``: ``estimate()``, ``particles()`` and ``summary()`` answer from the
chain's recorded states exactly as a particle filter's answer from its particles, each state with
weight 1/samples.  The chain runs in the C runtime (runtime_c/src/population/mh.c, where the acceptance
ratio is derived): each iteration re-runs the whole program over all the data, so a chain cannot
be streamed (``step``), it estimates no log evidence, has no resampling history, and is not saved
or pickled; those raise ``SirenUsageError``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sirenc.backend.interface import exclusive
from sirenc.diagnostics import SirenUsageError
from sirenc.native_filter import Filter, c_text

DEFAULTS = {"samples": 100, "warmup": 0, "thinning": 1}   # ARCHITECTURE.md §18's defaults
# Bounds the runtime checks too (sirenrt_filter_new_mh).
LIMITS = {"samples": (1, 2**40), "warmup": (0, 2**60), "thinning": (1, 2**20)}


def chain_options(samples: Any = None, warmup: Any = None, thinning: Any = None) -> dict[str, int]:
    """The chain's options with their defaults, each checked: a ``SirenUsageError`` names a bad one."""
    given = {"samples": samples, "warmup": warmup, "thinning": thinning}
    out = {}
    for name, value in given.items():
        value = DEFAULTS[name] if value is None else value
        lo, hi = LIMITS[name]
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not lo <= value <= hi:
            raise SirenUsageError(f"{name} must be an integer in [{lo}, {hi}], not {value!r}")
        out[name] = int(value)
    return out


class Chain(Filter):
    """An MH chain over a ``Model`` (``Model.filter(handler="mh", ...)``); freed when garbage collected."""

    options: dict[str, int]
    states_in_order = True

    @exclusive
    def run(self, rows: Any = None, progress: Any = None, progress_interval: float = 0.1) -> "Chain":
        """Run the chain on the whole data set (``rows`` as for ``Filter.run``): one run of the
        program from the prior, then ``warmup + samples * thinning`` iterations, recording the
        state after iterations warmup, warmup + thinning, ... A program with no sampled random
        variable has one state, recorded once.  Progress reports are not given for chains."""
        if progress not in (None, False):
            raise SirenUsageError("progress reports are for the SMC handler; an MH chain runs without them")
        super().run(rows)
        self.n_particles = int(self.model._entry.size(self._f))
        return self

    def step(self, row: Any) -> "Chain":
        raise SirenUsageError("an MH chain cannot be streamed: every iteration re-runs the program over all "
                              "the data, so give run() the whole data set")

    @property
    def log_evidence(self) -> float:
        raise SirenUsageError("an MH chain does not estimate the log evidence; use the SMC handler for it")

    @property
    def ess(self) -> float:
        """The effective sample size of the recorded states: the smallest, over the numbers of the
        result, of the autocorrelation estimate (``sirenc.chain_stats.effective_size``); at most
        about ``samples``, far fewer for a chain that mixes slowly."""
        from sirenc.chain_stats import effective_size

        draws = self.draws()
        return min((effective_size(column) for column in draws.T), default=float(self.samples))

    def draws(self) -> np.ndarray:
        """The recorded states as a (samples, numbers) array: row i is state i's result flattened as
        ``particles(flat=True)`` flattens it, cut to the numbers every state has (a list result
        may be longer in some states)."""
        (flat, offsets), _ = self.particles(flat=True)
        width = int(np.min(np.diff(offsets))) if len(offsets) > 1 else 0
        return flat[offsets[:-1, None] + np.arange(width)] if width else np.empty((len(offsets) - 1, 0))

    @property
    def samples(self) -> int:
        """The number of states recorded by the last run (the ``particles()``)."""
        return self.n_particles

    @property
    @exclusive
    def acceptance_rate(self) -> float:
        """The fraction of the last run's proposals that were accepted (NaN before a run)."""
        from sirenc.runtime.ffi import ffi

        made, accepted = ffi.new("int64_t *"), ffi.new("int64_t *")
        self._check(self.model._entry.mh_stats(self._f, made, accepted))
        return accepted[0] / made[0] if made[0] else float("nan")

    @exclusive
    def runtime_plan(self) -> dict[str, str]:
        """The runtime inference plan (ARCHITECTURE.md §16.4) joined over the recorded states."""
        text = c_text(self.model._entry.mh_runtime_plan(self._f))
        return dict(line.split(": ", 1) for line in text.splitlines() if line)

    def history(self, frame: bool = False) -> Any:
        raise SirenUsageError("an MH chain has no resampling history")

    def to_bytes(self) -> bytes:
        raise SirenUsageError("an MH chain cannot be saved: checkpoints are for the SMC handler")

    def __reduce__(self):
        raise SirenUsageError("an MH chain cannot be pickled: checkpoints are for the SMC handler")

    def __repr__(self) -> str:
        o = getattr(self, "options", DEFAULTS)
        return (f"<sirenc.mh.Chain of {self.model.info['name']!r}: samples={o['samples']} warmup={o['warmup']} "
                f"thinning={o['thinning']}>")


def rhat(chains: list["Chain"]) -> float:
    """The split R-hat of several chains of one model (``sirenc.chain_stats.split_rhat``): the
    largest over the numbers of the result. Near 1 when the chains agree; above 1.01, run them
    longer. Chains started from different seeds are the usual check."""
    from sirenc.chain_stats import split_rhat

    if len(chains) < 1:
        raise SirenUsageError("rhat needs at least one chain")
    draws = [c.draws() for c in chains]
    width = min(d.shape[1] for d in draws)
    return max((split_rhat([d[:, k] for d in draws]) for k in range(width)), default=float("nan"))
