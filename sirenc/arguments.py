"""The checks of what a caller gives a filter, as both back ends (and the command lines) take it:
population sizes, seeds, resampling options, threads, memory limits, data rows; and the runtime's
message of a bad argument to a filter's creation.  Each raises a ``SirenUsageError`` that names
the argument, before any of it reaches the runtime or JAX."""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from sirenc.diagnostics import SirenUsageError
from sirenc.runtime.abi import max_particles

RESAMPLERS = {"systematic": 0, "multinomial": 1, "stratified": 2, "residual": 3}
_SIZE = re.compile(r"\s*(\d+(?:\.\d*)?)\s*([kmgt]?)(?:i?b)?\s*", re.IGNORECASE)
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
# How the runtime's message of a bad argument to a filter's creation starts (a model.so names its own
# entry: export.c), which the caller reports as a usage error, without the prefix.
_ARGUMENT_ERRORS = ("sirenrt_filter_new: ", "sirenc_new: ", "sirenc_new_mh: ")


def argument_error(message: str) -> str | None:
    """The message of a bad argument to the filter's creation, without its prefix; None for another."""
    return next((message.removeprefix(p) for p in _ARGUMENT_ERRORS if message.startswith(p)), None)


def memory_size(value: int | str | None) -> int:
    """A memory limit in bytes: an integer, or a string such as ``"512M"`` or ``"4.5G"`` (K, M, G and
    T are powers of 1024; ``KiB``, ``MB`` and the like are read the same).  A number with a unit is
    rounded down to whole bytes (``"1.5K"`` is 1536); one without must be whole (``"1.5"`` is an
    error, not 1 byte).  None is the runtime's default, half the machine's memory, and becomes 0."""
    from fractions import Fraction

    if value is None:
        return 0
    size = None
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        size = int(value)
    elif isinstance(value, str) and (m := _SIZE.fullmatch(value)):
        # Exact arithmetic: a float rounds "9223372036854775807" up to 2**63.
        number, unit = Fraction(m.group(1)), _UNITS[m.group(2).lower()]
        if unit == 1 and number.denominator != 1:
            raise SirenUsageError(f"memory_limit must be a whole number of bytes, not {value!r} "
                                  "(a fraction needs a unit, as in 1.5K)")
        size = int(number * unit)
    if size is None or not 1 <= size < 2**63:
        raise SirenUsageError(
            f"memory_limit must be a number of bytes in [1, 2**63), such as 4G or 512M, not {value!r}")
    return size


def check_resampling(resampler: Any, ess_threshold: Any, name: str = "ess_threshold") -> float:
    """A filter's resampling options, as both back ends take them; the threshold as a float.
    `name` is what the messages call the threshold (``--ess-threshold`` on the command line)."""
    if not isinstance(resampler, str) or resampler not in RESAMPLERS:
        raise SirenUsageError(f"unknown resampler {resampler!r}; choose one of {', '.join(RESAMPLERS)}")
    if isinstance(ess_threshold, bool) or not isinstance(ess_threshold, (int, float, np.integer, np.floating)):
        raise SirenUsageError(f"{name} must be a number in [0, 1], not {ess_threshold!r}")
    threshold = float(ess_threshold)
    if not 0.0 <= threshold <= 1.0:
        raise SirenUsageError(f"{name} must lie in [0, 1], not {ess_threshold!r}")
    return threshold


def check_particles(particles: Any, name: str = "particles") -> None:
    """A native population's size: 1 to SIRENRT_MAX_PARTICLES (the runtime's offspring counts are
    32 bits); `name` is what the message calls it (``--particles`` on the command lines)."""
    bound = max_particles() + 1  # 2**31
    if isinstance(particles, bool) or not isinstance(particles, (int, np.integer)) or not 1 <= particles < bound:
        raise SirenUsageError(f"{name} must be an integer in [1, 2**{bound.bit_length() - 1}), not {particles!r}")


def check_seed(seed: Any, name: str = "seed") -> None:
    """A filter's seed: a 64-bit unsigned integer, as the runtime and JAX's keys take it."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed < 2**64:
        raise SirenUsageError(f"{name} must be an integer in [0, 2**64), not {seed!r}")


def check_threads(threads: Any, name: str = "threads") -> None:
    """The threads that advance a native population (the runtime's pool has at most 256)."""
    if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or not 1 <= threads <= 256:
        raise SirenUsageError(f"{name} must be an integer in [1, 256], not {threads!r}")


def no_rows(rows: Any) -> bool:
    """An empty list given as ``rows``: no rows, as a data file with only its header line."""
    return isinstance(rows, (list, tuple)) and len(rows) == 0


def check_table(rows: Any) -> None:
    """Rows of different lengths are valid data in a file (the CSV grammar allows them), but
    ``run`` takes a table: say so, naming the first row that differs, as ``sirenc.data.read_csv``
    does, instead of NumPy's message about an inhomogeneous shape."""
    if isinstance(rows, np.ndarray) or not isinstance(rows, (list, tuple)):
        return
    lengths = [len(r) if isinstance(r, (list, tuple, np.ndarray)) and np.ndim(r) == 1 else None for r in rows]
    if not lengths or None in lengths:
        return
    values = lambda n: f"{n} value" + ("" if n == 1 else "s")   # noqa: E731
    for r, n in enumerate(lengths):
        if n != lengths[0]:
            raise SirenUsageError(
                f"rows must be a table (n_rows x n_cols), but row {r + 1} has {values(n)} and row 1 has "
                f"{values(lengths[0])}; rows of different lengths are read from a data file (File.read, or "
                "'sirenc run --data'), not given to run()")


def as_float64(data: Any, ndim: int, what: str) -> np.ndarray:
    """``data`` (``what`` in the messages) as the C-contiguous float64 array of ``ndim`` dimensions
    that a filter reads: a list is converted, an array must be one already."""
    shape = "n_rows x n_cols" if ndim == 2 else "n_cols"
    if not isinstance(data, np.ndarray):
        try:
            data = np.asarray(data, dtype=np.float64)
        except (TypeError, ValueError) as e:
            raise SirenUsageError(f"{what} must be numbers ({shape}): {e}") from None
    if data.dtype != np.float64:
        raise SirenUsageError(
            f"{what} must have dtype float64, not {data.dtype}; "
            f"use np.ascontiguousarray({what}, dtype=np.float64)")
    if data.ndim != ndim:
        raise SirenUsageError(f"{what} must be a {ndim}-D array ({shape}), not {data.ndim}-D")
    if not data.flags.c_contiguous:
        raise SirenUsageError(
            f"{what} must be C-contiguous; use np.ascontiguousarray({what})")
    return data
