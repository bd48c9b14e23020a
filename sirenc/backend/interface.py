"""What a compiled model and its filters offer on either back end: the native one (``sirenc.api.Model``,
``sirenc.native_filter.Filter``) and the JAX one (``sirenc.backend.jax_model.JaxModel``, ``JaxFilter``).

Code that runs a filter and reads its answers holds to what is stated here and runs on both. The
answers of the two back ends agree in distribution, not number for number: their random streams
differ. Each back end has more than this: the native filter's threads, memory limit, MH handler,
``history_dropped`` and exports; the JAX filter's devices and single precision.

Both classes are abstract base classes rather than protocols: a back end declares the contract by
deriving from them, and a method it lacks stops its filters from being made at all.
"""

from __future__ import annotations

import functools
import os
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, Self

import numpy as np

from sirenc.diagnostics import SirenUsageError

IN_USE = ("this filter is in use by another thread; a filter serves one thread at a time "
          "(give each thread its own filter, or wait for the other thread's call to return)")


def exclusive(method: Callable) -> Callable:
    """``method`` of a filter, refused while another thread is inside one: cffi releases the GIL
    during a C call, so two threads could otherwise be inside the runtime on one population (and
    crash it). Refusing, not waiting: a filter shared between threads is a mistake to report. The
    lock (the filter's ``_lock``) is reentrant, as methods call one another (``summary`` reads the
    particles)."""
    @functools.wraps(method)
    def guarded(self, *args, **kwargs):
        lock = self._lock
        if not lock.acquire(False):
            raise SirenUsageError(IN_USE)
        try:
            return method(self, *args, **kwargs)
        finally:
            lock.release()
    return guarded


class Model(ABC):
    """A compiled program. ``info`` describes it: at least ``name``, ``method``, ``plan``,
    ``result_type`` (the type descriptor of the result, ``sirenc.descriptors``), ``result_names``,
    ``files`` (the data files it reads), ``streamable`` and ``tier``."""

    info: dict[str, Any]

    @abstractmethod
    def filter(self, particles: int | None = None, seed: int = 0, resampler: str = "systematic",
               ess_threshold: float = 0.0, **options: Any) -> Filter:
        """A new population of ``particles`` particles (default 1000), drawing from ``seed``. At a
        ``resample()`` it resamples by ``resampler`` (one of ``sirenc.arguments.RESAMPLERS``):
        always under ``ess_threshold=0``, else only while the effective sample size is below
        ``ess_threshold`` times the number of particles. ``options`` are a back end's own: the JAX
        model refuses the native one's (threads, memory_limit, the MH handler) with a
        ``SirenUsageError``; the native model has no parameter for ``devices`` (a ``TypeError``)."""


class Filter(ABC):
    """One particle population of a ``Model`` (``model.filter(...)``): ``model`` is that model,
    ``n_particles`` the population's size.

    A filter serves one thread at a time: a call while another thread is inside one of its
    methods raises ``SirenUsageError`` (``exclusive``). Its answers are of the rows given so far:
    of the whole data set after ``run``, of the rows streamed so far (as if the program ended
    after the latest) while streaming. Misuse (a bad argument, a closed filter) raises
    ``SirenUsageError``; a failure of the program, ``SirenRuntimeError`` located in its source.
    An answer asked for before any row says to call ``run()`` or ``step()`` first: the native
    runtime's ``SirenRuntimeError``, the JAX filter's ``SirenUsageError``."""

    model: Model
    n_particles: int
    # An MH chain's "particles" are its recorded states in order (sirenc.mh.Chain): equally
    # weighted draws already (sirenc.export), whose Monte Carlo error is autocorrelated (summaries).
    states_in_order = False

    # -- lifetime

    @property
    @abstractmethod
    def closed(self) -> bool:
        """Whether ``close()`` has run."""

    @abstractmethod
    def close(self) -> None:
        """Frees the particles now (their memory can be large); any later use of the filter is an
        error. Closing twice is no error."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- running

    @abstractmethod
    def run(self, rows: Any = None, progress: Any = None, progress_interval: float = 0.1) -> Self:
        """Runs the whole program over ``rows`` (n_rows x n_cols, float64; an empty list is no
        rows), or without them over the program's data file. ``progress`` as
        ``sirenc.progress.reporter_for`` takes it: True draws a bar, a callable is told a
        ``Progress`` at most every ``progress_interval`` seconds and at the end."""

    @abstractmethod
    def step(self, row: Any) -> Self:
        """Feeds one row of the observation stream and advances every particle: rows given one at
        a time answer as a ``run`` over the same rows does. A program that folds over no data
        stream refuses."""

    @abstractmethod
    def use_file(self, file: int | str | os.PathLike, path: str | os.PathLike) -> Self:
        """Reads the program's data file ``file`` (its index in ``model.info["files"]``, or its
        name) from ``path`` instead, from the next time the filter reads it."""

    # -- answers

    @abstractmethod
    def estimate(self) -> Any:
        """The posterior mean of the program's result, shaped like the result type: a float for a
        float or bool, None for unit, a tuple for a pair, a float64 array for a list of scalars,
        a list for a list of structured values."""

    @abstractmethod
    def particles(self, flat: bool = False) -> tuple[Any, np.ndarray]:
        """``(values, weights)``: every particle's own result (shaped as ``estimate()``'s answer)
        and its normalised weight. With ``flat=True``, ``values`` is ``(flat, offsets)``: particle
        i's numbers, flattened in preorder, are ``flat[offsets[i]:offsets[i+1]]``."""

    @abstractmethod
    def summary(self, quantiles: Any = (0.05, 0.5, 0.95)) -> Any:
        """The posterior of the result, shaped like ``estimate()``'s answer, with a
        ``sirenc.summary.Summary`` (mean, variance, sd, the ``quantiles``, ...) for every float or bool."""

    def variables(self, quantiles: Any = (0.05, 0.5, 0.95)) -> dict[str, Any]:
        """The summaries of the random variables the program returns as they are, by name: a
        ``Summary``, or a list of them for a list of one variable's values (a trajectory). A
        number computed from variables is in ``summary()`` only."""
        from sirenc.summary import by_variable

        info = self.model.info
        return by_variable(self.summary(quantiles), info["result_type"], info.get("result_names", []))

    @property
    @abstractmethod
    def log_evidence(self) -> float:
        """The estimate of the log marginal likelihood of the data given so far."""

    @property
    @abstractmethod
    def ess(self) -> float:
        """The effective sample size of the particles' weights."""

    @abstractmethod
    def history(self, frame: bool = False) -> Any:
        """One entry per ``resample()`` since the last ``run`` or fresh stream: NumPy arrays
        ``ess`` (of the weights before resampling), ``resampled`` (False where the ESS threshold
        kept the population) and ``log_evidence`` (after it), at least. ``frame=True`` gives a
        pandas DataFrame."""

    @abstractmethod
    def runtime_plan(self) -> dict[str, str]:
        """Each program variable's runtime inference plan (ARCHITECTURE.md §16.4): ``"symbolic"``,
        ``"sample"`` or ``"dynamic"``, by name. Empty under ``pf``."""

    # -- checkpoints

    @abstractmethod
    def to_bytes(self) -> bytes:
        """The whole filter as bytes for ``load``: its options, the rows read so far and every
        particle's state."""

    def save(self, path: str | os.PathLike) -> None:
        """Writes ``to_bytes()`` to ``path`` atomically: a reader never sees half a checkpoint."""
        from sirenc.backend.link import write_atomically

        write_atomically(path, self.to_bytes())

    @classmethod
    @abstractmethod
    def load(cls, model: Model, checkpoint: bytes | str | os.PathLike) -> Filter:
        """The filter saved in ``checkpoint`` (bytes, or a file ``save`` wrote) for ``model``, the
        model it was saved from: it goes on exactly as the saved filter would have. A back end
        takes where to run it as keywords of its own (``threads``, ``devices``)."""
