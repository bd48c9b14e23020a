"""Reading CSV data files from Python with the runtime's own reader.

``File.read`` and ``sirenc run --data`` read files through one reader, the C runtime's
(``sirenrt_read_csv``; its grammar is in ``runtime_c/include/sirenrt.h`` and in
docs/language.md's ``File.read`` section): UTF-8, a byte order mark skipped, lines ending in
``\\n``, ``\\r\\n`` or ``\\r``, the header line skipped, fields as C's ``strtod`` reads ASCII
decimals and inf/nan, trailing blank lines ignored, rows of any length. A malformed file is a
``SirenDataError`` whose message names the file, line and column.

    rows = read_rows("walk.csv")     # a list of float64 arrays, one per row (lengths may differ)
    table = read_csv("walk.csv")     # n_rows x n_cols float64, for Filter.run; rows must agree
"""

from __future__ import annotations

import os
import stat

import numpy as np

from sirenc.diagnostics import SirenDataError, SirenUsageError


class DataFileError(SirenDataError):
    """A malformed data file; the runtime rendered the message (``path:line:col: error: ...``)."""

    def render(self) -> str:
        return self.message if ": error: " in self.message.split("\n", 1)[0] else f"error: {self.message}"


def check_readable(path: str | os.PathLike) -> str:
    """``path`` as a string, or a ``SirenUsageError`` if it is not a readable regular file."""
    name = os.fspath(path)
    if isinstance(name, bytes):
        name = os.fsdecode(name)
    if not name:
        raise SirenUsageError("cannot read a data file: the file name is empty")
    if "\0" in name:    # C would read the file named by the part before it
        raise SirenUsageError(f"cannot read data file {name!r}: a file name has no NUL character")
    try:
        # Without blocking: opening a FIFO that no one writes to would wait for ever.
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as e:
        raise SirenUsageError(f"cannot read data file '{name}': {e.strerror}") from None
    try:
        mode = os.fstat(fd).st_mode
    finally:
        os.close(fd)
    if stat.S_ISDIR(mode):
        raise SirenUsageError(f"cannot read data file '{name}': it is a directory")
    if not stat.S_ISREG(mode):
        raise SirenUsageError(f"cannot read data file '{name}': it is not a regular file "
                              "(a pipe, a device or a socket)")
    return name


def read_rows(path: str | os.PathLike) -> list[np.ndarray]:
    """The data rows of a CSV file (the header skipped), each a float64 array."""
    from sirenc.runtime.ffi import ffi, runtime_lib

    name = check_readable(path)
    rt = runtime_lib()
    vals = ffi.new("double **")
    starts = ffi.new("int64_t **")
    n_rows = ffi.new("int64_t *")
    error = ffi.new("char **")
    if rt.sirenrt_read_csv(os.fsencode(name), vals, starts, n_rows, error) != 0:
        text = ffi.string(error[0]).decode("utf-8", "replace") if error[0] != ffi.NULL else \
            f"cannot read data file '{name}'"
        rt.sirenrt_free(error[0])
        raise DataFileError(text)
    try:
        n = int(n_rows[0])
        bounds = np.frombuffer(ffi.buffer(starts[0], (n + 1) * 8), dtype=np.int64).copy()
        total = int(bounds[-1])
        flat = np.frombuffer(ffi.buffer(vals[0], total * 8), dtype=np.float64).copy() if total \
            else np.empty(0, dtype=np.float64)
    finally:
        rt.sirenrt_free(vals[0])
        rt.sirenrt_free(starts[0])
    return [flat[bounds[r]:bounds[r + 1]] for r in range(n)]


def read_csv(path: str | os.PathLike) -> np.ndarray:
    """The data rows as one ``n_rows x n_cols`` float64 array (``Filter.run``'s argument).

    Rows of different lengths are valid data (``File.read`` and ``sirenc run --data`` take
    them) but no array: that is a ``SirenDataError`` naming the first row that differs."""
    rows = read_rows(path)
    width = len(rows[0]) if rows else 0
    for r, row in enumerate(rows):
        if len(row) != width:
            raise SirenDataError(
                f"{os.fspath(path)}: data row {r + 1} has {len(row)} fields and row 1 has {width}; "
                "rows of different lengths make no n_rows x n_cols array (File.read and "
                "'sirenc run --data' accept them)")
    return np.array(rows, dtype=np.float64).reshape(len(rows), width)


def short_row_note(paths: list[str]) -> str | None:
    """A note for a run that took the head or tail of an empty list: the first data file whose
    rows have different lengths, and its first row shorter than the longest (a CSV with a missing
    column fails that way inside the program, far from the file). None when no file is ragged."""
    for path in paths:
        try:
            rows = read_rows(path)
        except (SirenDataError, SirenUsageError):
            continue
        width = max((len(row) for row in rows), default=0)
        short = next((r for r, row in enumerate(rows) if len(row) < width), None)
        if short is not None:
            return (f"note: in the data file {path}, data row {short + 1} (line {short + 2}) has "
                    f"{len(rows[short])} field(s) where other rows have {width}; a row with too few "
                    "columns reaches List.hd or List.tl as an empty list")
    return None
