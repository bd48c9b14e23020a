"""Many independent streams, one particle filter each, on a Dask cluster (``pip install
'sirenc[distributed]'``): ``run_many`` runs whole streams, ``sirenc.FilterBank``
(sirenc/filter_bank.py) keeps filters fed row by row.

    >>> import sirenc
    >>> from sirenc.distributed import run_many
    >>> model = sirenc.compile("examples/walk.si")                       # doctest: +SKIP
    >>> results = run_many(model, ["a.csv", "b.csv"], particles=1000)     # doctest: +SKIP
    >>> results["a.csv"].estimate, results["b.csv"].error                 # doctest: +SKIP

Dask is the engine; this module only says what travels. A model travels as its program
(``ShippedModel``: its pickle, which is the program text and options of a JIT model or the bytes
of a model.so, with their SHA-256), and each worker process compiles or loads it once and keeps
it. A stream's answers travel back as a ``StreamResult`` (and, on request, the filter's
checkpoint). Each stream draws from its own seed, derived from the run's seed and the stream's
name (``stream_seed``), so that an answer depends on neither the number of workers, nor the
order of the streams, nor which worker ran it or how often: a task lost with its worker is run
again elsewhere, with the same answer. Dask is imported on first use: ``import sirenc`` does not
need it.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import pickle
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sirenc.arguments import check_particles, check_seed
from sirenc.diagnostics import SirenError, SirenRuntimeError, SirenUsageError

# A task that raised something other than a SirenError (the worker's machine ran out of memory or
# disk, say) is run this many times more. A task whose worker died is rescheduled by Dask itself,
# up to its distributed.scheduler.allowed-failures (3 by default), whatever this is.
RETRIES = 2
# The tasks of a run_many per worker thread: several, so that streams of unequal lengths, and the
# share of a worker that is lost, spread over the others; not one per stream, as each task costs
# Dask a few milliseconds, more than a short stream takes (docs/distributed.md).
TASKS_PER_THREAD = 4


@dataclass
class StreamResult:
    """One stream's answers: its ``seed``, the finished filter's ``estimate``, ``log_evidence``,
    ``ess`` and ``summary`` (``Filter.summary()``; a FilterBank's answers have none), and the
    ``seconds`` its run took (a FilterBank's: its latest batch); or its ``error``, a
    ``SirenError`` located as the filter reported it (a bad cell of its data file, a row the
    program cannot read), the other fields then None. ``checkpoint`` is the filter's
    ``to_bytes()`` where it was asked for, ``filter`` the filter itself where it ran in this
    process."""

    name: str
    seed: int
    estimate: Any = None
    log_evidence: float | None = None
    ess: float | None = None
    summary: Any = None
    seconds: float = 0.0
    error: SirenError | None = None
    checkpoint: bytes | None = None
    filter: Any = None

    @property
    def ok(self) -> bool:
        return self.error is None


def stream_seed(seed: int, name: str) -> int:
    """The seed of stream ``name`` in a run of seed ``seed``: the first 8 bytes of the SHA-256 of
    ``f"{seed}:{name}"``, a 64-bit integer (the runtime's generator is keyed by it, so different
    names give independent streams). It is the same on every machine and in every Python."""
    check_seed(seed)
    if not isinstance(name, str):
        raise SirenUsageError(f"a stream's name is a string, not {type(name).__name__} {name!r}")
    return int.from_bytes(hashlib.sha256(f"{int(seed)}:{name}".encode()).digest()[:8], "little")


def run_many(model: Any, streams: Mapping[str, Any] | list | tuple, particles: int | None = 1000, seed: int = 0,
             client: Any = None, checkpoints: bool = False, **filter_options: Any) -> dict[str, StreamResult]:
    """One filter per stream, ``model.filter(particles, stream_seed(seed, name), **filter_options)``,
    run over the stream: ``streams`` maps names to rows (a 2-D array-like, as ``Filter.run`` takes
    them) or to data file paths, or is a list of data file paths, each a stream named by its path.
    A stream's data file replaces the program's first (as ``sirenc run --data``), and is read
    where the filter runs.

    ``client`` is a ``distributed.Client`` or a scheduler's address (``"tcp://host:8786"``); without
    one a ``distributed.LocalCluster`` of one process per core (at most one per stream) is
    started for the call, and a single stream runs in this process. Returns name ->
    ``StreamResult`` in the order of ``streams``; a stream that fails has its error there, and
    the others their answers. ``checkpoints=True`` also brings back each filter's checkpoint
    (``Filter.load(model, result.checkpoint)``)."""
    data = _streams(model, streams)
    if particles is not None:
        check_particles(particles)
    seeds = {name: stream_seed(seed, name) for name in data}
    # The options are checked once, here, rather than failing every stream alike on the workers.
    model.filter(particles=None if particles is None else 1, seed=0, **filter_options).close()
    if not data:
        return {}
    if client is None and len(data) == 1:
        (name, rows), = data.items()
        return {name: run_stream(model, name, rows, seeds[name], particles, filter_options, checkpoints,
                                 keep_filter=True)}
    shipped = ShippedModel.of(model)
    with connected(client, workers=len(data)) as c:
        groups = task_groups(list(data), TASKS_PER_THREAD * (sum(c.nthreads().values()) or len(data)))
        futures = {i: c.submit(_run_on_worker, shipped, [(name, data[name], seeds[name]) for name in group],
                               particles, filter_options, checkpoints, retries=RETRIES, pure=False)
                   for i, group in enumerate(groups)}
        try:
            finished = c.gather(futures, errors="skip")      # in one exchange, not a task at a time
            results: dict[str, StreamResult] = {}
            for i, group in enumerate(groups):
                results.update(finished[i] if i in finished else collect(futures[i], {n: seeds[n] for n in group}))
            return {name: results[name] for name in data}
        finally:
            c.cancel(list(futures.values()))


def task_groups(names: list[str], tasks: int) -> list[list[str]]:
    """``names`` dealt into ``tasks`` groups (at most one a name), one Dask task each."""
    count = max(1, min(len(names), tasks))
    return [names[i::count] for i in range(count)]


def run_stream(model: Any, name: str, data: Any, seed: int, particles: int | None, options: dict,
               checkpoint: bool = False, keep_filter: bool = False) -> StreamResult:
    """Stream ``name`` run in this process: ``data`` is its rows, or the path of its data file."""
    start = time.perf_counter()
    f = None
    try:
        f = model.filter(particles=particles, seed=seed, **options)
        if isinstance(data, str):
            f.use_file(0, data).run()
        else:
            f.run(data)
        return StreamResult(name, seed, f.estimate(), f.log_evidence, f.ess, f.summary(),
                            time.perf_counter() - start, checkpoint=f.to_bytes() if checkpoint else None,
                            filter=f if keep_filter else None)
    except SirenError as e:
        return StreamResult(name, seed, seconds=time.perf_counter() - start, error=e)
    finally:
        if f is not None and not keep_filter:
            f.close()


def _run_on_worker(shipped: ShippedModel, streams: list[tuple[str, Any, int]], particles: int | None,
                   options: dict, checkpoint: bool) -> dict[str, StreamResult]:
    """A task: the streams ``(name, rows or path, seed)``, one after another on this worker."""
    try:
        model = shipped.model()
    except SirenError as e:
        return {name: StreamResult(name, seed, error=e) for name, _, seed in streams}
    return {name: run_stream(model, name, data, seed, particles, options, checkpoint) for name, data, seed in streams}


def collect(future: Any, seeds: dict[str, int]) -> dict[str, StreamResult]:
    """What the task of ``future`` computed, name -> StreamResult, for the streams ``seeds`` (name ->
    seed); where Dask could not finish it (its worker died more often than the scheduler allows,
    the cluster went away), an error for each of them."""
    try:
        return future.result()
    except Exception as e:  # noqa: BLE001 -- whatever stopped the task, the streams' answer is its error
        return {name: StreamResult(name, seed, error=SirenRuntimeError(
            f"the stream {name!r} did not finish on the Dask cluster: {type(e).__name__}: {e}"))
            for name, seed in seeds.items()}


def _streams(model: Any, streams: Any) -> dict[str, Any]:
    """``streams`` as name -> rows or absolute data file path (a worker's working folder is not
    this process's)."""
    if isinstance(streams, Mapping):
        named = dict(streams)
    elif isinstance(streams, (list, tuple)):
        named = {}
        for path in streams:
            if not isinstance(path, (str, os.PathLike)):
                raise SirenUsageError(f"a stream's data file is a path (str or os.PathLike), not {type(path).__name__}")
            if os.fspath(path) in named:
                raise SirenUsageError(f"the data file {os.fspath(path)!r} is given twice; each file is one stream")
            named[os.fspath(path)] = path
    else:
        raise SirenUsageError("streams is a mapping of names to rows or data file paths, or a list of data file "
                              f"paths, not {type(streams).__name__}")
    files = {name: os.path.abspath(os.fsdecode(data)) for name, data in named.items()
             if isinstance(data, (str, os.PathLike))}
    if files and not model.info["files"]:
        raise SirenUsageError("a stream's data file replaces the file the program reads with File.read, "
                              "and this program reads no file")
    return {**named, **files}


# ------------------------------------------------------------------ the cluster

def dask_distributed() -> Any:
    """The ``distributed`` package, or a usage error that says how to install it."""
    try:
        import distributed
    except ImportError:
        raise SirenUsageError("running filters on Dask needs dask.distributed: "
                              "pip install 'sirenc[distributed]'") from None
    return distributed


def local_workers(streams: int) -> int:
    """A local cluster's processes: one per core this process may run on, at most one per stream."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(streams, cores))


@contextlib.contextmanager
def connected(client: Any, workers: int):
    """``client``, a Client of the scheduler at the address ``client``, or (None) a Client of a local
    cluster of ``local_workers(workers)`` processes, for the block; what the block opened it
    closes."""
    opened = open_client(client, workers)
    try:
        yield opened[0]
    finally:
        close_client(opened)


def open_client(client: Any, workers: int) -> tuple[Any, Any, bool]:
    """``(client, local cluster or None, whether the client is this module's to close)``."""
    distributed = dask_distributed()
    if isinstance(client, distributed.Client):
        return client, None, False
    if isinstance(client, str):
        try:
            return distributed.Client(client, timeout="10s"), None, True
        except (OSError, TimeoutError, ValueError) as e:
            raise SirenUsageError(f"cannot reach the Dask scheduler at {client}: {e}") from None
    if client is not None:
        raise SirenUsageError(f"client is a distributed.Client or a scheduler's address, not {type(client).__name__}")
    # One thread a worker: a filter keeps its core busy, and its own threads= option may use more.
    # Quiet: a stream's failure comes back as its error, and what Dask logs (such as a worker's
    # heartbeat that meets the scheduler closing) is not the user's to read. No dashboard, and the
    # scheduler's HTTP server on a free port: two runs at once must not warn about port 8787.
    cluster = distributed.LocalCluster(n_workers=local_workers(workers), threads_per_worker=1, processes=True,
                                       dashboard_address=None, scheduler_kwargs={"dashboard_address": ":0"},
                                       silence_logs=logging.CRITICAL)
    try:
        return distributed.Client(cluster), cluster, True
    except BaseException:
        cluster.close()
        raise


def close_client(opened: tuple[Any, Any, bool]) -> None:
    client, cluster, owned = opened
    if owned:
        client.close()
    if cluster is not None:
        cluster.close()


# ------------------------------------------------------------ models on workers

# This worker process's models, by the SHA-256 of their pickles: a model is compiled (or its
# model.so loaded) once per process, not once per stream. The latest few are kept.
_MODELS: OrderedDict[str, Any] = OrderedDict()
_MODELS_LOCK = threading.Lock()
_MODELS_KEPT = 32      # tune races up to a few dozen plans on each worker


@dataclass(frozen=True)
class ShippedModel:
    """A model as it travels to workers: its pickle (``Model.__reduce__``: a JIT model's program
    text and options, compiled again for the worker's CPU; a model.so's bytes, checked against
    their SHA-256 and loaded from a private copy) and the pickle's SHA-256, the key of the
    worker's cache. Unpickling runs what the pickle says (docs/api.md, trust model): a cluster
    is for workers and clients that trust each other, as Dask itself requires."""

    digest: str
    payload: bytes

    @classmethod
    def of(cls, model: Any) -> ShippedModel:
        return cls.pickled(model)

    @classmethod
    def made_by(cls, function: Any, *args: Any) -> ShippedModel:
        """A model that a worker makes by calling ``function(*args)`` (a module-level function,
        pickled by name): for models that do not pickle themselves, such as tune's plans, which
        are compiled from an annotated program and the options of the plan analysis."""
        return cls.pickled(_Call(function, args))

    @classmethod
    def pickled(cls, thing: Any) -> ShippedModel:
        payload = pickle.dumps(thing)
        return cls(hashlib.sha256(payload).hexdigest(), payload)

    def loaded(self) -> bool:
        """Whether this worker process has the model already (its first run is then not the
        model's first in this process)."""
        with _MODELS_LOCK:
            return self.digest in _MODELS

    def model(self) -> Any:
        with _MODELS_LOCK:
            model = _MODELS.get(self.digest)
            if model is not None:
                _MODELS.move_to_end(self.digest)
                return model
            if hashlib.sha256(self.payload).hexdigest() != self.digest:
                raise SirenUsageError("the model sent to this worker is damaged: it does not match its SHA-256")
            model = _MODELS[self.digest] = pickle.loads(self.payload)
            if len(_MODELS) > _MODELS_KEPT:
                _MODELS.popitem(last=False)
            return model


class _Call:
    """Unpickles as ``function(*args)``: what ``ShippedModel.made_by`` ships."""

    def __init__(self, function: Any, args: tuple):
        self.function, self.args = function, args

    def __reduce__(self):
        return self.function, self.args
