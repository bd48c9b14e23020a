"""Pilot runs: a plan's model run with independent seeds, each run's wall time and estimate
(the program's result, flattened to numbers) recorded; a plan's runs at one particle count
make a group."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from sirenc.diagnostics import SirenUsageError


@dataclass(frozen=True)
class Group:
    """``runs`` runs at ``particles``: ``estimates`` (runs x numbers) and ``seconds`` (runs)."""

    particles: int
    estimates: np.ndarray
    seconds: np.ndarray

    @property
    def runs(self) -> int:
        return len(self.seconds)


class Overtime(Exception):
    """A run was stopped: at the deadline (``budget``) or past its own time limit; ``seconds``
    is how long it had taken."""

    def __init__(self, seconds: float, budget: bool):
        super().__init__(seconds, budget)     # both, so that it pickles (from a Dask worker)
        self.seconds = seconds
        self.budget = budget


def run_seed(seed: int, candidate: int, particles: int, run: int) -> int:
    """The seed of one run: a function of the user's seed and of what the run is, never of when
    tune ran it, so one seed gives the same estimates however the halving went."""
    words = np.random.SeedSequence([seed, candidate, particles, run]).generate_state(2, np.uint32)
    return int(words[0]) << 32 | int(words[1])


def run_once(model: Any, particles: int, seed: int, rows: Any = None, memory_limit: Any = None,
             deadline: float | None = None, limit: float | None = None) -> tuple[list[float], float]:
    """One run: its estimate, flattened, and its wall time (making the filter, running it,
    reading the estimate). A run still going at ``deadline`` (a ``time.perf_counter()`` value),
    or after ``limit`` seconds, is stopped (``Overtime``): the runtime reports at each
    resampling step, where the hook can stop it; a program that never resamples stops only
    when it ends."""
    start = time.perf_counter()

    def overtime() -> Overtime | None:
        now = time.perf_counter()
        if deadline is not None and now > deadline:
            return Overtime(now - start, budget=True)
        if limit is not None and now - start > limit:
            return Overtime(now - start, budget=False)
        return None

    def guard(_progress) -> None:
        stop = overtime()
        if stop is not None:
            raise stop

    f = model.filter(particles=particles, seed=seed, memory_limit=memory_limit)
    try:
        f.run(rows, progress=guard, progress_interval=0.02)
        estimate = flatten(f.estimate())
    finally:
        f.close()
    stop = overtime()
    if stop is not None:
        raise stop
    return estimate, time.perf_counter() - start


def flatten(value: Any) -> list[float]:
    """The numbers of an estimate (``Filter.estimate()``'s shape) in order, as the C ABI
    flattens them, without the lengths of lists; a bool's is the probability of true."""
    out: list[float] = []
    pending = [value]
    while pending:
        v = pending.pop()
        if v is None:
            continue
        if isinstance(v, (tuple, list)):
            pending.extend(reversed(v))
        elif isinstance(v, np.ndarray):
            out.extend(float(x) for x in v.ravel())
        else:
            out.append(float(v))
    return out


def parts(value: Any) -> np.ndarray:
    """The part of the result each number of ``flatten(value)`` belongs to: the elements of a
    tuple result (``Filter.estimate()`` gives a tuple as right-nested pairs, unrolled here), or
    the whole result as one part. tune's error must be reached by every part."""
    return np.concatenate([np.full(len(flatten(v)), i, dtype=np.intp) for i, v in enumerate(_items(value))])


def part_count(value: Any) -> int:
    """How many parts the result has, those without numbers too."""
    return len(_items(value))


def _items(value: Any) -> list:
    items = []
    while isinstance(value, tuple) and value:
        items.extend(value[:-1])
        value = value[-1]
    items.append(value)
    return items


def result_layout(model: Any, rows: Any = None, memory_limit: Any = None) -> tuple[np.ndarray, int]:
    """``parts`` and ``part_count`` of the model's result, from a run with one particle."""
    f = model.filter(particles=1, seed=0, memory_limit=memory_limit)
    try:
        f.run(rows)
        estimate = f.estimate()
        return parts(estimate), part_count(estimate)
    finally:
        f.close()


def ragged(one: int, other: int) -> SirenUsageError:
    return SirenUsageError(f"tune compares the numbers of the program's result between runs, and "
                           f"this result has {min(one, other)} numbers in one run and {max(one, other)} in another "
                           "(a list whose length is random); return numbers of a fixed count")
