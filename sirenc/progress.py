"""Progress of a long run: what the runtime reports, and the bar ``sirenc run`` draws from it.

    f.run(progress=True)                   # a bar on standard error
    f.run(progress=lambda p: print(p.steps, p.total, p.rate, p.eta))

The runtime calls its hook when the particles reach a resampling barrier (before it resamples),
at most every ``interval`` seconds (``sirenrt_filter_set_progress`` in sirenrt.h), and once more
when the run is done; a run without a hook pays one pointer test per barrier. A step is one resampling barrier; the steps to expect
are the rows of the program's data (one ``resample()`` per row is the usual shape), unknown when
the program reads no data or takes more steps than it has rows.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from dataclasses import dataclass
from typing import Callable, TextIO

DEFAULT_INTERVAL = 0.1       # seconds between reports: a bar redraws ten times a second
DEFAULT_DELAY = 0.5          # the bar appears only for runs longer than this (SIRENC_PROGRESS_DELAY)


@dataclass(frozen=True)
class Progress:
    """One report of a running filter."""

    steps: int                  # resampling steps reached in this run
    total: int | None           # steps to expect (rows of the data); None when unknown
    particles: int
    elapsed: float              # seconds since the run began
    done: bool                  # the run has finished (the last report)
    ess: float = float("nan")   # effective sample size of the weights the step is about to resample
    log_evidence: float = float("nan")   # so far

    @property
    def rate(self) -> float:
        """Steps per second so far."""
        return self.steps / self.elapsed if self.elapsed > 0 else 0.0

    @property
    def eta(self) -> float | None:
        """Seconds still to go at the rate so far; None when the total is unknown."""
        if self.done:
            return 0.0
        if self.total is None or self.rate <= 0:
            return None
        return max(self.total - self.steps, 0) / self.rate


def _clock(seconds: float) -> str:
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60:02d}:{rest % 60:02d}"


def describe(p: Progress, width: int = 80, label: str = "sirenc") -> str:
    """The bar's text for ``p``, at most ``width`` characters::

        sirenc [=========>          ] 45/100 steps  1000 particles  2300 steps/s  ETA 00:02
    """
    facts = f"{p.particles} particles  {p.rate:,.0f} steps/s"
    if p.total is None:
        return f"{label} {p.steps} steps  {facts}"[:width]
    eta = p.eta
    tail = f" {p.steps}/{p.total} steps  {facts}" + ("" if eta is None else f"  ETA {_clock(eta)}")
    room = width - len(label) - len(tail) - 3
    if room < 10:
        return f"{label}{tail}"[:width]
    filled = min(room, room * p.steps // max(p.total, 1))
    bar = "=" * filled + (">" if filled < room else "") + " " * (room - filled - 1)
    return f"{label} [{bar[:room]}]{tail}"


class ProgressBar:
    """Draws reports on a terminal stream, one line redrawn in place, erased when the run ends.
    Nothing is drawn before ``delay`` seconds, so a short run leaves no trace."""

    def __init__(self, stream: TextIO | None = None, delay: float | None = None, label: str = "sirenc"):
        self.stream = stream if stream is not None else sys.stderr
        if delay is None:
            delay = float(os.environ.get("SIRENC_PROGRESS_DELAY", DEFAULT_DELAY))
        self.delay = delay
        self.label = label
        self.drawn = False

    def __call__(self, p: Progress) -> None:
        if p.done:
            self.close()
            return
        if p.elapsed < self.delay:
            return
        width = max(shutil.get_terminal_size((80, 24)).columns - 1, 20)
        self.drawn = True     # first: a Ctrl-C in the middle of the write still gets it erased
        self.stream.write("\r" + describe(p, width, self.label) + "\x1b[K")
        self.stream.flush()

    def close(self) -> None:
        if self.drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self.drawn = False


class Reporter:
    """Turns the runtime's reports (steps, rows, particles) into ``Progress`` for ``callback``,
    and keeps the first exception the callback raises (the runtime is told to stop; the host
    re-raises it once the runtime has returned)."""

    def __init__(self, callback: Callable[[Progress], object]):
        self.callback = callback
        self.start = time.perf_counter()
        self.error: BaseException | None = None

    def report(self, steps: int, rows: int, particles: int, done: bool, ess: float = float("nan"),
               log_evidence: float = float("nan")) -> int:
        total = rows if rows > 0 and steps <= rows else None
        try:
            self.callback(Progress(steps, total, particles, time.perf_counter() - self.start, done,
                                   ess, log_evidence))
        except BaseException as e:  # noqa: BLE001 - re-raised by Filter.run on the caller's side
            self.error = e
            return 1
        return 0

    def reraise(self) -> None:
        """Raise the callback's own exception, if it is what stopped the run. It is dropped from
        the reporter first: its traceback holds the caller's frame, and a reference cycle through a
        Filter could be collected at interpreter exit after the JIT code the filter's destructor
        reads."""
        if self.error is None:
            return
        error, self.error = self.error, None
        try:
            raise error from None
        finally:
            del error

    def close(self) -> None:
        close = getattr(self.callback, "close", None)
        if close is not None:
            close()


def reporter_for(progress: object) -> Reporter | None:
    """``Filter.run``'s ``progress`` argument: None/False (no reports), True (a ``ProgressBar`` on
    standard error) or a callable taking a ``Progress``."""
    from sirenc.diagnostics import SirenUsageError

    if progress is None or progress is False:
        return None
    if progress is True:
        return Reporter(ProgressBar())
    if callable(progress):
        return Reporter(progress)
    raise SirenUsageError(f"progress must be True, False, None or a callable taking a Progress, "
                          f"not {progress!r}")
