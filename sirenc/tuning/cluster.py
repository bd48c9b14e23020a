"""Pilot runs on a Dask cluster (``sirenc.tune(..., client=)``, ``sirenc tune --scheduler``).

A lap's work, each plan's ``runs`` runs at one particle count, becomes one task per plan; the
plan travels as what makes it (``ShippedModel.made_by``: the annotated program, the candidate
and the analysis options; the worker compiles it once and keeps it), and each run keeps the
seed ``run_seed`` gives it here, so a cluster's runs give the same estimates as this process's.
A run's time is measured on the worker, and a worker's first run of a plan is preceded by one
untimed run, as rung 1 does here. The time budget's deadline travels as a wall-clock time (the
workers' clocks are taken to agree, as they do on one machine or under NTP).
"""

from __future__ import annotations

import time
from typing import Any

from sirenc.distributed import RETRIES, ShippedModel, close_client, open_client
from sirenc.diagnostics import SirenError, SirenRuntimeError
from sirenc.tuning.pilots import Overtime, run_once
from sirenc.tuning.screening import compile_model

# What one (plan, particles) task gives back: its finished runs (estimate, seconds), in the
# order of their seeds, and what stopped the others (an Overtime or a SirenError), or None.
Outcome = tuple[list[tuple[list[float], float]], BaseException | None]


class Cluster:
    """The client the search's laps run on, for the duration of a ``with``."""

    def __init__(self, client: Any):
        self.client = client
        self.shipped: dict[int, ShippedModel] = {}

    def __enter__(self) -> Cluster:
        self.opened = open_client(self.client, workers=1)
        self.c = self.opened[0]
        return self

    def __exit__(self, *exc) -> None:
        close_client(self.opened)

    @property
    def width(self) -> int:
        """The runs that go at once: the cluster's worker threads."""
        return max(1, sum(self.c.nthreads().values()))

    def ship(self, index: int, program: Any, candidate: Any, options: Any, data: str | None) -> None:
        self.shipped[index] = ShippedModel.made_by(compile_model, program, candidate, options, data)

    def runs(self, work: list[tuple[int, int, list[int], float | None]], rows: Any, memory_limit: Any,
             deadline: float | None) -> dict[int, Outcome]:
        """Each ``(plan index, particles, seeds, time limit of a run)`` of ``work`` as a task; the
        outcome per plan index. ``deadline`` is a ``time.perf_counter()`` value of this process."""
        wall = None if deadline is None else time.time() + (deadline - time.perf_counter())
        futures = {index: self.c.submit(pilot_task, self.shipped[index], n, seeds, rows, memory_limit, wall, limit,
                                        retries=RETRIES, pure=False)
                   for index, n, seeds, limit in work}
        try:
            out = {}
            for index, future in futures.items():
                try:
                    out[index] = future.result()
                except Exception as e:  # noqa: BLE001 -- whatever stopped the task stops the plan's runs
                    out[index] = ([], SirenRuntimeError(f"a pilot run did not finish on the Dask cluster: "
                                                        f"{type(e).__name__}: {e}"))
            return out
        finally:
            self.c.cancel(list(futures.values()))


def pilot_task(shipped: ShippedModel, particles: int, seeds: list[int], rows: Any, memory_limit: Any,
               wall_deadline: float | None, limit: float | None) -> Outcome:
    """On a worker: the runs of one plan at ``particles``, one per seed, until one is stopped."""
    fresh = not shipped.loaded()
    done: list[tuple[list[float], float]] = []
    try:
        model = shipped.model()
        if fresh:
            run_once(model, 1, seeds[0], rows, memory_limit)
        deadline = None if wall_deadline is None else time.perf_counter() + (wall_deadline - time.time())
        for seed in seeds:
            done.append(run_once(model, particles, seed, rows, memory_limit, deadline, limit))
    except (Overtime, SirenError) as e:
        return done, e
    return done, None
