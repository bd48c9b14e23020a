"""``sirenc.FilterBank``: one particle filter per named stream, kept on a Dask cluster and fed rows
in batches (``pip install 'sirenc[distributed]'``; sirenc/distributed.py runs whole streams).

    bank = sirenc.FilterBank(model, ["north", "south"], particles=1000, seed=0)
    bank.step({"north": [0.3], "south": [1.2]})      # the next row of each of these streams
    bank.step({"north": [[0.5], [0.9]]})             # several rows of one stream, in order
    print(bank.estimate()["north"].estimate)
    bank.close()

A stream's filter lives on the workers as a Dask future of its state: the filter's checkpoint and
its answers after its latest row. A batch is one task per stream named in it, which loads the
checkpoint, steps the rows and saves the filter again; it depends on the stream's previous state,
so one stream's batches apply in order, and Dask runs it where that state already is.

Futures of checkpoints, not Dask actors holding live filters: an actor dies with its worker and
takes its stream with it, while a future Dask computes again, from the state before it, on
another worker, and a restored checkpoint goes on bit for bit as the saved filter would have
(``Filter.load``). So a worker lost in the middle of a stream loses no stream and changes no
answer. The price is a load and a save of the checkpoint per batch: give long streams several
rows a batch. So that what Dask keeps to compute a state again stays short, every ``REBASE``
batches each stream's state comes back to this process and starts the next chain of tasks.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from sirenc.arguments import check_particles
from sirenc.diagnostics import SirenError, SirenUsageError
from sirenc.distributed import (
    RETRIES, ShippedModel, StreamResult, close_client, collect, open_client, stream_seed,
)

REBASE = 32


@dataclass(frozen=True)
class StreamState:
    """A stream's filter between batches: its checkpoint (None once it failed: a failed filter
    cannot be saved, and takes no more rows) and its answers after its latest row."""

    checkpoint: bytes | None
    result: StreamResult


class FilterBank:
    """A filter of ``model`` (a native model, streamable) for each of ``names``, each of
    ``particles`` particles and seed ``stream_seed(seed, name)``, on ``client`` (a
    ``distributed.Client`` or a scheduler's address; None: a local cluster of one process per
    core, at most one per stream, closed by ``close``). ``filter_options`` are
    ``Model.filter``'s (resampler, ess_threshold, threads)."""

    def __init__(self, model: Any, names: Iterable[str], particles: int = 1000, seed: int = 0,
                 client: Any = None, **filter_options: Any):
        from sirenc.api import Model

        if not isinstance(model, Model):
            raise SirenUsageError(f"a FilterBank keeps native filters: give it a model of sirenc.compile or "
                                  f"sirenc.load, not {type(model).__name__}")
        if not model.info["streamable"]:
            why = model.info.get("not_streamable_reason")
            raise SirenUsageError("a FilterBank feeds its filters row by row, and this program does not stream"
                                  + (f": {why}" if why else ""))
        if "memory_limit" in filter_options:
            raise SirenUsageError("a FilterBank restores its filters from checkpoints, which take the default "
                                  "memory limit; leave out memory_limit")
        if isinstance(names, str) or not isinstance(names, Iterable):
            raise SirenUsageError(f"names is a list of stream names, not {type(names).__name__}")
        names = list(names)
        self._seeds = {name: stream_seed(seed, name) for name in names}
        if len(self._seeds) != len(names):
            raise SirenUsageError("a FilterBank's stream names must differ from one another")
        check_particles(particles)
        model.filter(particles=1, seed=0, **filter_options).close()   # bad options fail here, once
        self._particles, self._options = particles, filter_options
        self._shipped = ShippedModel.of(model)
        self._states: dict[str, Any] = dict.fromkeys(names)   # None, a StreamState, or a future of one
        self._batches = 0
        self._opened = open_client(client, len(names))

    @property
    def names(self) -> list[str]:
        return list(self._states)

    def step(self, batch: Mapping[str, Any]) -> FilterBank:
        """Gives each stream named in ``batch`` its rows: one row (numbers), or several (a 2-D array, a
        list of rows), in order. It returns at once; ``estimate`` waits for the work. A row a
        stream's filter refuses fails that stream alone: ``estimate`` reports its error."""
        client = self._client
        if not isinstance(batch, Mapping):
            raise SirenUsageError(f"step takes a mapping of stream names to rows, not {type(batch).__name__}")
        self._check_names(batch)
        for name, rows in batch.items():
            self._states[name] = client.submit(
                _advance, self._shipped, self._states[name], name, self._seeds[name], self._particles,
                self._options, _rows(rows), retries=RETRIES, pure=False)
        self._batches += 1
        if self._batches % REBASE == 0:
            self._rebase()
        return self

    def estimate(self, names: Iterable[str] | None = None) -> dict[str, StreamResult]:
        """Each stream's answers after the rows given so far (of ``names``, by default all):
        ``estimate``, ``log_evidence`` and ``ess`` of a ``StreamResult``, or its ``error``."""
        names = self.names if names is None else list(names)
        self._check_names(names)
        pending = {name: self._client.submit(_result, self._states[name], pure=False)
                   for name in names if _pending(self._states[name])}
        finished = self._client.gather(pending, errors="skip")     # in one exchange
        out = {}
        for name in names:
            state = self._states[name]
            if name in pending:
                out.update(finished[name] if name in finished else collect(pending[name], {name: self._seeds[name]}))
            elif state is None:
                out[name] = StreamResult(name, self._seeds[name], error=SirenUsageError(
                    f"the stream {name!r} has had no row yet: give it rows with step()"))
            else:
                out[name] = state.result
        return out

    def close(self) -> None:
        """Drops the filters, and closes the local cluster this bank started. Closing twice is no error."""
        opened, self._opened = self._opened, None
        if opened is None:
            return
        futures = [s for s in self._states.values() if _pending(s)]
        opened[0].cancel(futures)
        close_client(opened)

    def __enter__(self) -> FilterBank:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @property
    def _client(self) -> Any:
        if self._opened is None:
            raise SirenUsageError("this FilterBank is closed")
        return self._opened[0]

    def _check_names(self, names: Iterable[str]) -> None:
        unknown = [name for name in names if name not in self._states]
        if unknown:
            raise SirenUsageError(f"this FilterBank has no stream {unknown[0]!r}")

    def _rebase(self) -> None:
        """Brings each stream's state here, to be the start of its next chain of tasks (one Dask
        could not compute stays a future: ``estimate`` reports its error)."""
        pending = {name: state for name, state in self._states.items() if _pending(state)}
        self._states.update(self._client.gather(pending, errors="skip"))


def _pending(state: Any) -> bool:
    """Whether a stream's state is a future (not None, before its first row, nor a StreamState here)."""
    return not (state is None or isinstance(state, StreamState))


def _rows(rows: Any) -> list:
    """A batch's rows for one stream: one row (numbers), or several (a 2-D array, a list of rows)."""
    if isinstance(rows, np.ndarray):
        return [rows] if rows.ndim <= 1 else list(rows)
    if isinstance(rows, (list, tuple)) and rows and all(isinstance(r, (list, tuple, np.ndarray)) for r in rows):
        return list(rows)
    return [rows]


def _advance(shipped: ShippedModel, state: StreamState | None, name: str, seed: int, particles: int,
             options: dict, rows: list) -> StreamState:
    """On a worker: the stream's filter after ``rows`` more."""
    from sirenc.native_filter import Filter

    if state is not None and state.checkpoint is None:
        return state
    start = time.perf_counter()
    try:
        model = shipped.model()
        f = model.filter(particles=particles, seed=seed, **options) if state is None else \
            Filter.load(model, state.checkpoint, threads=options.get("threads", 1))
        with f:
            for row in rows:
                f.step(row)
            result = StreamResult(name, seed, f.estimate(), f.log_evidence, f.ess,
                                  seconds=time.perf_counter() - start)
            return StreamState(f.to_bytes(), result)
    except SirenError as e:
        return StreamState(None, StreamResult(name, seed, seconds=time.perf_counter() - start, error=e))


def _result(state: StreamState) -> dict[str, StreamResult]:
    return {state.result.name: state.result}
