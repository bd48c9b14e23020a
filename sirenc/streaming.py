"""Feeding a filter its data rows one at a time, from Python: ``sirenc run --save`` does, to keep
the stream in a checkpoint, and ``sirenc.plot.record``, to take the posterior after each row.

Rows fed one by one (``Filter.step``) give the answers of one ``Filter.run`` over them.
"""

from __future__ import annotations

import time
from typing import Any, Callable

import numpy as np

from sirenc.progress import DEFAULT_INTERVAL, Progress


def rows_to_feed(model, rows: Any = None) -> list[np.ndarray]:
    """``rows`` (n_rows x n_cols) one by one, or without them the rows of the model's data file 0,
    the one its stream reads (none when it reads no file)."""
    if rows is not None:
        from sirenc.arguments import as_float64
        return list(as_float64(rows, 2, "rows"))
    files = model.info["files"]
    if not files:
        return []
    from sirenc.data import read_rows
    return read_rows(files[0])


def feed(f, rows: list, progress: Callable[[Progress], object] | None = None,
         after_row: Callable[[], object] | None = None, interval: float = DEFAULT_INTERVAL) -> None:
    """Feed ``rows`` to filter ``f`` one by one, calling ``after_row()`` after each. ``progress``
    is told a ``Progress`` whose steps are the rows fed, at most every ``interval`` seconds and
    once at the end."""
    start = last = time.perf_counter()
    for i, row in enumerate(rows, 1):
        f.step(row)
        if after_row is not None:
            after_row()
        if progress is not None:
            now = time.perf_counter()
            if now - last >= interval:
                progress(Progress(i, len(rows), f.n_particles, now - start, False, f.ess, f.log_evidence))
                last = now
    if progress is not None:
        progress(Progress(len(rows), len(rows), f.n_particles, time.perf_counter() - start, True, f.ess,
                          f.log_evidence))
