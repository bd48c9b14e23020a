"""The native back end's particle filter: one population in the C runtime, through the C ABI of
``runtime_c/include/sirenrt.h`` (a ``Model`` of ``sirenc.api`` makes it). Every failure of the
runtime becomes a ``SirenRuntimeError`` carrying the runtime's rendered message."""

from __future__ import annotations

import contextlib
import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

from sirenc.arguments import as_float64, check_table, check_threads, no_rows
from sirenc.backend import interface
from sirenc.backend.interface import IN_USE, exclusive
from sirenc.descriptors import unflatten
from sirenc.diagnostics import SirenDataError, SirenRuntimeError, SirenUsageError


class CompiledModelError(SirenRuntimeError):
    """A run-time error reported by compiled code; the runtime already rendered
    it (``file:line:col: error: ...`` with the source line and a caret)."""

    def render(self) -> str:
        text = self.message
        return text if text.startswith("error:") or ": error: " in text.split("\n", 1)[0] \
            else f"error: {text}"


class CompiledDataError(CompiledModelError, SirenDataError):
    """A data file the running filter could not read (missing, not a regular file, malformed, too
    big for the memory limit): a ``SirenDataError``, and still a ``SirenRuntimeError`` as it was."""


# The runtime's messages of a data file (runtime_c/src/population/data.c, and base/budget.c's rt_budget_data_message).
_DATA_ERROR = re.compile(r"cannot read data file '|\bnote: data file read here$|\bdata file '[^\n]*' needs at least",
                         re.MULTILINE)


def runtime_error(message: str) -> CompiledModelError:
    """The error of a failed call into the runtime, by what its message is about."""
    return (CompiledDataError if _DATA_ERROR.search(message) else CompiledModelError)(message)


@dataclass(frozen=True)
class Entry:
    """The C entry points a filter needs: a model.so's sirenc_*, or the shared runtime's sirenrt_filter_*."""

    new: Callable[[int, int, Any], Any]
    free: Callable[[Any], None]
    run: Callable[..., int]
    step: Callable[..., int]
    estimate: Callable[..., int]
    log_evidence: Callable[[Any], float]
    ess: Callable[[Any], float]
    error: Callable[[Any], Any]          # error(NULL) = the thread's last error
    particles: Callable[..., int]
    posterior: Callable[..., int]        # as particles, each leaf its posterior atom (sirenc/summary.py)
    size: Callable[[Any], int]
    set_file: Callable[[Any, int, Any], int]
    history: Callable[..., int]
    history_dropped: Callable[..., int]  # the barriers the history's ring no longer holds
    save: Callable[..., int]
    load: Callable[[Any, int, int], Any]
    set_progress: Callable[..., None]
    runtime_plan: Callable[[Any], Any]
    new_mh: Callable[[int, Any, Any], Any]   # an MH chain (sirenc/mh.py): seed, chain options, filter options
    mh_runtime_plan: Callable[[Any], Any]
    mh_stats: Callable[..., int]


def c_text(cstr: Any) -> str:
    """A C string of the runtime or a model as text (NULL as ""), a byte that is not UTF-8 replaced."""
    from sirenc.runtime.ffi import ffi

    return "" if cstr == ffi.NULL else ffi.string(cstr).decode("utf-8", "replace")


class Filter(interface.Filter):
    """One particle population of a ``Model``; freed by ``close()``, at the end of a ``with``
    block, or when garbage collected."""

    def __init__(self, model: interface.Model, handle: Any, particles: int):
        self.model = model
        self.n_particles = particles
        self._handle = handle
        self._estimate_cap = 16
        self._lock = threading.RLock()

    @property
    def _f(self) -> Any:
        if self._handle is None:
            raise SirenUsageError("this filter is closed")
        return self._handle

    @exclusive
    def close(self) -> None:
        """Frees the particles now (their memory can be large); any later use of the filter is an
        error. Closing twice is no error."""
        from sirenc.runtime.ffi import ffi

        handle, self._handle = self._handle, None
        if handle is not None:
            ffi.release(handle)

    @property
    def closed(self) -> bool:
        return self._handle is None

    def _check(self, status: int) -> None:
        if status != 0:
            raise runtime_error(c_text(self.model._entry.error(self._f))
                                or f"the runtime failed with status {status}")

    @exclusive
    def run(self, rows: Any = None, progress: Any = None,
            progress_interval: float = 0.1) -> "Filter":
        """Run the whole program. ``rows`` (n_rows x n_cols, float64) replace the
        program's data file; without them the file named in the program is read.
        An empty list is no rows, as a data file with only its header line.

        ``progress=True`` draws a progress bar on standard error; a callable is
        called with a ``sirenc.progress.Progress`` (steps reached, steps expected,
        particles, elapsed seconds, rate, ETA, ESS before resampling, log evidence)
        at most every ``progress_interval`` seconds and once at the end. An exception it raises stops the run and
        comes out of ``run``."""
        from sirenc.progress import reporter_for
        from sirenc.runtime.ffi import ffi

        reporter = reporter_for(progress)
        if rows is None:
            buf, shape = ffi.NULL, (0, 0)
        else:
            check_table(rows)
            arr = as_float64(rows, 2, "rows") if not no_rows(rows) else np.empty((0, 0))
            buf, shape = ffi.from_buffer("double[]", arr), arr.shape
        with self._progress(reporter, progress_interval):
            try:
                self._check(self.model._entry.run(self._f, buf, *shape))
            except CompiledModelError as e:
                if reporter is not None:
                    reporter.reraise()
                if rows is None and "of an empty list" in e.message:   # a CSV row with a column missing?
                    from sirenc.data import short_row_note
                    note = short_row_note(self.model.info["files"])
                    if note:
                        raise CompiledModelError(f"{e.message}\n{note}") from None
                raise
        return self

    @exclusive
    def use_file(self, file: int | str | os.PathLike, path: str | os.PathLike) -> "Filter":
        """Read one of the program's data files from ``path`` instead of where it was when the
        model was compiled, from the next time the filter reads it (every ``run`` and fresh
        stream reads its files anew). ``file`` is its index in ``model.info["files"]``, or the
        path the program was compiled with (also just its file name, when that is unambiguous)."""

        files = self.model.info["files"]
        if isinstance(file, (int, np.integer)) and not isinstance(file, bool):
            index = int(file)
        elif isinstance(file, (str, os.PathLike)):
            name = os.fspath(file)
            matches = [i for i, p in enumerate(files) if p == os.path.abspath(name)] or \
                      [i for i, p in enumerate(files) if os.path.basename(p) == name]
            if len(matches) != 1:
                raise SirenUsageError(f"the program reads no data file {name!r}" if not matches else
                                      f"{name!r} names several of the program's data files; give its index")
            index = matches[0]
        else:
            raise SirenUsageError(f"use_file takes a file index or path, not {type(file).__name__}")
        if not isinstance(path, (str, os.PathLike)) or isinstance(os.fspath(path), bytes):
            raise SirenUsageError(f"use_file needs a path (str or os.PathLike), not {type(path).__name__}")
        if not os.fspath(path) or "\0" in os.fspath(path):    # C would read the part before the NUL
            raise SirenUsageError(f"use_file needs a file name, not {os.fspath(path)!r}")
        if not 0 <= index < len(files):
            raise SirenUsageError(f"the program reads {len(files)} data file(s); there is no file {index}")
        self._check(self.model._entry.set_file(self._f, index, os.path.abspath(path).encode()))
        return self
    @contextlib.contextmanager
    def _progress(self, reporter: Any, interval: float):
        """The runtime's progress hook calls ``reporter`` while the block runs."""
        from sirenc.runtime.ffi import ffi

        if reporter is None:
            yield
            return
        if isinstance(interval, bool) or not isinstance(interval, (int, float)) or not interval >= 0:
            raise SirenUsageError(f"progress_interval must be a number of seconds >= 0, not {interval!r}")
        set_progress = self.model._entry.set_progress

        def stop(_type, error, _traceback):
            # An exception outside reporter.report (a Ctrl-C's KeyboardInterrupt lands on whatever
            # Python code runs next): cffi would print and swallow it, and the run go on.
            if reporter.error is None:
                reporter.error = error
            return 1

        def report(_user, p):
            return reporter.report(int(p.steps), int(p.rows), int(p.particles), bool(p.done),
                                   float(p.ess), float(p.log_evidence))

        hook = ffi.callback("sirenrt_progress_fn", report, onerror=stop)

        set_progress(self._f, hook, ffi.NULL, float(interval))
        try:
            yield
        finally:
            set_progress(self._f, ffi.NULL, ffi.NULL, 0.0)
            reporter.close()

    def step(self, row: Any) -> "Filter":
        """Feed one row of the observation stream and advance every particle."""
        from sirenc.runtime.ffi import ffi

        # exclusive's lock, inline: a stream calls this in a tight loop, and the wrapper's call
        # would double the lock's cost.
        lock = self._lock
        if not lock.acquire(False):
            raise SirenUsageError(IN_USE)
        try:
            arr = as_float64(row, 1, "row")
            self._check(self.model._entry.step(self._f, ffi.from_buffer("double[]", arr), arr.shape[0]))
        finally:
            lock.release()
        return self

    @exclusive
    def estimate(self) -> Any:
        """Posterior mean of the program's result, shaped like the result type:
        float for float/bool, None for unit, tuple for a pair, a float64 array
        for a list of scalars, a list for a list of structured values."""
        from sirenc.runtime.ffi import ffi

        n_out = ffi.new("int64_t *")
        while True:
            out = np.empty(self._estimate_cap, dtype=np.float64)
            status = self.model._entry.estimate(
                self._f, ffi.from_buffer("double[]", out, require_writable=True),
                self._estimate_cap, n_out)
            if status == 2 and n_out[0] > self._estimate_cap:
                self._estimate_cap = int(n_out[0])
                continue
            self._check(status)
            return unflatten(self.model.info["result_type"], out[: n_out[0]])

    @property
    @exclusive
    def log_evidence(self) -> float:
        return float(self.model._entry.log_evidence(self._f))

    @property
    @exclusive
    def ess(self) -> float:
        return float(self.model._entry.ess(self._f))

    @exclusive
    def runtime_plan(self) -> dict[str, str]:
        """The runtime inference plan (ARCHITECTURE.md §16.4) of the particles as they stand: each program
        variable some particle created, in declaration order, with ``"symbolic"`` (no particle
        sampled it), ``"sample"`` (every particle did) or ``"dynamic"``. Empty under ``pf``."""
        from sirenc.runtime.ffi import ffi

        text = ffi.string(self.model._entry.runtime_plan(self._f)).decode("utf-8")
        return dict(line.split(": ", 1) for line in text.splitlines() if line)

    # ------------------------------------------------------------ summaries

    def particles(self, flat: bool = False) -> tuple[Any, np.ndarray]:
        """Every particle's own result and its normalised weight: ``(values, weights)``, where
        ``values[i]`` is shaped like ``estimate()``'s answer. With ``flat=True``, ``values`` is
        ``(flat, offsets)``: particle i's values, flattened as the C ABI flattens the estimate,
        are ``flat[offsets[i]:offsets[i+1]]``. While streaming, as for ``estimate()``."""
        (values, offsets), weights = self._read_particles(self.model._entry.particles, 1)
        if flat:
            return (values, offsets), weights
        desc = self.model.info["result_type"]
        return [unflatten(desc, values[offsets[i]: offsets[i + 1]]) for i in range(self.n_particles)], weights

    @exclusive
    def _read_particles(self, entry: Callable[..., int], words: int) -> tuple[tuple[np.ndarray, np.ndarray], np.ndarray]:
        """``entry``'s flattened values (about ``words`` numbers a leaf), offsets and weights."""
        from sirenc.runtime.ffi import ffi

        n = self.n_particles
        offsets, weights = np.empty(n + 1, dtype=np.int64), np.empty(n, dtype=np.float64)
        n_values, cap = ffi.new("int64_t *"), max(self._estimate_cap, 16) * words * n
        while True:
            values = np.empty(cap, dtype=np.float64)
            status = entry(
                self._f, ffi.from_buffer("double[]", values, require_writable=True), cap, n_values,
                ffi.from_buffer("int64_t[]", offsets, require_writable=True),
                ffi.from_buffer("double[]", weights, require_writable=True))
            if status == 2 and n_values[0] > cap:
                cap = int(n_values[0])
                continue
            self._check(status)
            return (values[: n_values[0]], offsets), weights

    def summary(self, quantiles: Any = (0.05, 0.5, 0.95)) -> Any:
        """The posterior of the result: shaped like ``estimate()``'s answer, with a
        ``sirenc.summary.Summary`` (``mean``, ``variance``, ``sd``, ``quantiles`` {level: value},
        ``particles``) for every float or bool; a list's element k summarises the particles
        whose list is longer than k. A particle that keeps a value symbolic contributes that
        value's exact distribution, not only its mean: the summary is of the mixture of the
        particles' distributions. While streaming, for the rows given so far."""
        from sirenc.summary import ATOM_WORDS, quantile_levels, summarize

        levels = quantile_levels(quantiles)
        (atoms, offsets), weights = self._read_particles(self.model._entry.posterior, ATOM_WORDS)
        return summarize(self.model.info["result_type"], atoms, offsets, weights, levels, chain=self.states_in_order)

    def to_csv(self, path: str | os.PathLike) -> None:
        """Writes ``path``: a header line, then one row per particle, its ``weight`` and every
        number of its result (columns named as ``summary`` paths them; an empty cell where a
        particle's list is too short). While streaming, as for ``estimate()``."""
        from sirenc.export import to_csv

        to_csv(self, path)

    def to_inference_data(self, seed: int = 0) -> Any:
        """An ``arviz.InferenceData`` of the posterior (needs ``pip install 'sirenc[arviz]'``):
        the particles resampled by their weights (systematically, with ``seed``) into as many
        equally weighted draws, one ArviZ chain; ``attrs`` hold the log evidence and the ESS.
        ``sirenc.export.to_inference_data([chain, ...])`` puts several MH chains side by side."""
        from sirenc.export import to_inference_data

        return to_inference_data(self, seed)

    @exclusive
    def history(self, frame: bool = False) -> Any:
        """One entry per resample() since the last ``run()`` or fresh stream, the latest 2**20 of
        them (``history_dropped`` counts the earlier ones): a dict of NumPy
        arrays ``ess`` (of the weights before resampling), ``resampled`` (False where an ESS
        threshold kept the population), ``log_evidence`` (after it), ``log_evidence_increment``
        and, while streaming, ``rows`` (the rows given so far; -1 for ``run()``).
        ``frame=True`` gives a pandas DataFrame."""
        from sirenc.runtime.ffi import ffi

        _, before, _ = self._dropped()
        n = ffi.new("int64_t *")
        self._check(self.model._entry.history(self._f, ffi.NULL, ffi.NULL, ffi.NULL, ffi.NULL, 0, n) % 2)
        k = int(n[0])
        ess, logz = np.empty(k), np.empty(k)
        resampled, rows = np.empty(k, dtype=np.int32), np.empty(k, dtype=np.int64)
        self._check(self.model._entry.history(
            self._f, ffi.from_buffer("double[]", ess, require_writable=True),
            ffi.from_buffer("double[]", logz, require_writable=True),
            ffi.from_buffer("int32_t[]", resampled, require_writable=True),
            ffi.from_buffer("int64_t[]", rows, require_writable=True), k, n))
        table = {"ess": ess, "resampled": resampled.astype(bool), "log_evidence": logz,
                 "log_evidence_increment": np.diff(logz, prepend=before), "rows": rows}
        if not frame:
            return table
        try:
            import pandas
        except ImportError:
            raise SirenUsageError("history(frame=True) needs pandas: pip install pandas") from None
        return pandas.DataFrame(table)

    @property
    @exclusive
    def history_dropped(self) -> int:
        """How many resample() barriers of the run ``history()`` no longer holds: it keeps the
        latest 2**20 (32 MiB), so that a long-running stream's memory does not grow without end."""
        return self._dropped()[0]

    @property
    @exclusive
    def history_dropped_resampled(self) -> int:
        """How many of the ``history_dropped`` barriers resampled."""
        return self._dropped()[2]

    def _dropped(self) -> tuple[int, float, int]:
        """(barriers the history no longer holds, the log evidence after the last of them, how many
        of them resampled)."""
        from sirenc.runtime.ffi import ffi

        log_evidence, resampled = ffi.new("double *"), ffi.new("int64_t *")
        dropped = int(self.model._entry.history_dropped(self._f, log_evidence, resampled))
        return dropped, float(log_evidence[0]), int(resampled[0])

    # ------------------------------------------------------------ checkpoints

    @exclusive
    def to_bytes(self) -> bytes:
        """The whole filter as bytes for ``Filter.load``: options, the data rows read so far,
        every particle's weight, random stream and state."""
        from sirenc.runtime.ffi import ffi, runtime_lib

        buf, n = ffi.new("uint8_t **"), ffi.new("int64_t *")
        self._check(self.model._entry.save(self._f, buf, n))
        try:
            return bytes(ffi.buffer(buf[0], n[0]))
        finally:
            runtime_lib().sirenrt_buffer_free(buf[0])

    @classmethod
    def load(cls, model: interface.Model, checkpoint: bytes | str | os.PathLike, threads: int = 1) -> "Filter":
        """The filter saved in ``checkpoint`` (bytes, or a file written by ``save``) for ``model``,
        which must be the model it was saved from. It goes on exactly as the saved filter would
        have, bit for bit, on any number of ``threads``."""
        from sirenc.runtime.ffi import ffi

        # A native model is one with the runtime's entry points (sirenc.api.Model, which imports this module).
        if not isinstance(getattr(model, "_entry", None), Entry):
            raise SirenUsageError(f"Filter.load needs the Model the filter was saved from, not {type(model).__name__}")
        check_threads(threads)
        if isinstance(checkpoint, (bytes, bytearray, memoryview)):
            data = bytes(checkpoint)
        elif isinstance(checkpoint, (str, os.PathLike)):
            try:
                data = Path(checkpoint).read_bytes()
            except OSError as e:
                raise SirenUsageError(f"cannot read checkpoint {os.fspath(checkpoint)}: {e.strerror}") from None
        else:
            raise SirenUsageError(f"Filter.load takes bytes or a path, not {type(checkpoint).__name__}")
        raw = model._entry.load(ffi.from_buffer("uint8_t[]", data), len(data), int(threads))
        if raw == ffi.NULL:
            raise SirenUsageError(c_text(model._entry.error(ffi.NULL)) or "cannot load the filter")
        return model._adopt(raw, int(model._entry.size(raw)))

    def __reduce__(self):
        return (_restore_filter, (self.model, self.to_bytes()))


def _restore_filter(model: interface.Model, data: bytes) -> Filter:
    return Filter.load(model, data)
