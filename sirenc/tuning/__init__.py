"""`sirenc.tune`: the fastest inference plan that reaches a target error, found by running it.

    >>> import sirenc
    >>> t = sirenc.tune("examples/walk.si", target_error=1e-3, seed=0)        # doctest: +SKIP
    >>> print(t.table()); open("walk_tuned.si", "w").write(t.source)          # doctest: +SKIP

The search has four steps, a module each:

1. ``plans``: every `symbolic`/`sample` annotation of the program's unannotated random
   variables, under each method asked for (pf has one plan), and the program as written;
2. ``screening``: the plan analysis rejects what a method cannot honour (with its diagnostic),
   tier 2 says what compiles to plain arithmetic, and a cost model orders the rest;
3. ``halving``: successive halving over pilot runs at growing particle counts, each plan's
   error and time against particles estimated by ``accuracy``;
4. ``choice``: the bootstrap of the pilot runs, for how sure the choice is; ``result`` holds
   the table.

The package is named ``tuning`` because ``sirenc.tune`` is the function: a submodule of that
name would take its place as an attribute of ``sirenc``.
"""

from __future__ import annotations

import math
import os
from typing import Any, Callable

from sirenc import methods as method_table
from sirenc.diagnostics import SirenUsageError

METHODS = ("ssi", "ds", "bp", "pf")
SCHEDULE = (100, 1000, 10_000, 100_000)


def schedule_to(max_particles: int) -> tuple[int, ...]:
    """The default schedule's counts below ``max_particles``, then ``max_particles``: the
    pilots' schedule of ``sirenc tune --max-particles``."""
    return tuple(n for n in SCHEDULE if n < max_particles) + (max_particles,)


def tune(program: str | os.PathLike, data: Any = None, methods: str | tuple | list = METHODS,
         target_error: float | None = None, time_budget: float | None = None, seed: int = 0, *,
         particles: tuple[int, ...] = SCHEDULE, runs: int = 8, keep: float = 1 / 3, bootstrap: int = 200,
         memory_limit: Any = None, max_rvs: int = 4, analysis_budget: int | None = None,
         progress: Callable[[str], object] | None = None, client: Any = None):
    """The fastest plan of ``program`` (a path or the program text) to reach ``target_error``,
    the mean squared error of one run's estimate of each part of the result (each element of a
    tuple result; the largest counts) against the exact posterior mean, or a list of errors, one
    for each part; a ``sirenc.tuning.result.Tuning``.

    ``data``: a CSV path that replaces the program's data file (``sirenc run --data``), or rows
    for ``Filter.run``. ``methods``: a method's name or several. ``time_budget``: seconds that
    tune may take in all (analysis, compiling and pilot runs); without ``target_error`` tune
    spends it and targets the smallest error the pilots reach. ``seed`` fixes every pilot run's
    seed and the bootstrap. ``particles``: the pilots' particle counts, rung by rung, the last
    of them the most any run may use (a plan that needs more to reach the target cannot reach
    it; ``schedule_to(n)`` is the default schedule up to n); ``runs``:
    pilot runs per plan and particle count; ``keep``: the fraction of plans each rung keeps;
    ``bootstrap``: resamplings for the uncertainty of the choice. ``memory_limit`` is each pilot
    filter's (``Model.filter``'s); ``max_rvs`` and ``analysis_budget`` the plan analysis'.
    ``progress`` is called with a line of text as the search goes. ``client``, a
    ``distributed.Client`` or a Dask scheduler's address, runs the pilot runs on that cluster's
    workers (``pip install 'sirenc[distributed]'``; docs/distributed.md), with the same seeds and
    so the same estimates as here; without it they run in this process, one at a time.
    """
    from sirenc.arguments import check_seed
    from sirenc.tuning.halving import Search, Settings
    from sirenc.tuning.plans import candidates, read_program
    from sirenc.tuning.screening import Options

    names = _methods(methods)
    target = _target(target_error)
    if time_budget is not None and not _positive(time_budget):
        raise SirenUsageError(f"time_budget must be a positive number, not {time_budget!r}")
    if target_error is None and time_budget is None:
        raise SirenUsageError("tune needs a target error (target_error=, --target-error), a time budget "
                              "(time_budget=, --time-budget) or both")
    check_seed(seed)
    _count("runs", runs, 2)
    _count("bootstrap", bootstrap, 1)
    if not particles or any(isinstance(n, bool) or not isinstance(n, int) or n < 1 for n in particles) \
            or list(particles) != sorted(set(particles)):
        raise SirenUsageError(f"particles must be increasing positive integers, not {particles!r}")
    if isinstance(keep, bool) or not isinstance(keep, (int, float)) or not 0 < keep <= 1:
        raise SirenUsageError(f"keep must be a fraction in (0, 1], not {keep!r}")
    csv, rows = _data(data)
    prog = read_program(program)
    settings = Settings(target=target,
                        budget=None if time_budget is None else float(time_budget), seed=seed,
                        schedule=tuple(particles), runs=runs, keep=float(keep), bootstrap=bootstrap,
                        memory_limit=memory_limit, rows=rows, data=csv,
                        options=Options(max_rvs=max_rvs, analysis_budget=analysis_budget))
    if client is None:
        return Search(prog, candidates(prog, names), settings, progress).run()
    from sirenc.tuning.cluster import Cluster
    with Cluster(client) as cluster:
        return Search(prog, candidates(prog, names), settings, progress, cluster).run()


def _positive(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value) and value > 0


def _target(value: Any) -> float | tuple[float, ...] | None:
    """The target error: None, a positive number, or a sequence of them (one per part of the
    result) as a tuple."""
    if value is None:
        return None
    if _positive(value):
        return float(value)
    if isinstance(value, (tuple, list)) and value and all(_positive(v) for v in value):
        return tuple(float(v) for v in value)
    raise SirenUsageError(f"target_error must be a positive number, or a list of them (one per part of the "
                          f"result), not {value!r}")


def _methods(value: Any) -> list[str]:
    names = [value] if isinstance(value, str) else list(value) if isinstance(value, (tuple, list)) else None
    if not names or not all(isinstance(n, str) for n in names):
        raise SirenUsageError(f"methods must be a method's name or a list of them, not {value!r}")
    for n in names:
        method_table.get(n)
    return list(dict.fromkeys(names))


def _count(name: str, value: Any, least: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise SirenUsageError(f"{name} must be an integer of at least {least}, not {value!r}")


def _data(data: Any) -> tuple[str | None, Any]:
    """(a CSV path, rows): a path replaces the program's data file; anything else is rows."""
    if data is None:
        return None, None
    if isinstance(data, (str, os.PathLike)):
        from sirenc.data import check_readable
        return check_readable(data), None
    return None, data
