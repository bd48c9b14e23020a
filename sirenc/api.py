"""The Python API: compile a Siren program, run particle filters on it.

Example::

    import numpy as np, sirenc
    model = sirenc.compile("kalman.si", method="pf")      # JIT; output="k.so" builds a model.so
    f = model.filter(particles=1000, seed=0)
    f.run(np.loadtxt("data.csv", delimiter=",", skiprows=1, ndmin=2))
    print(f.estimate(), f.log_evidence)
    for row in sensor:                                     # or stream, one row at a time
        f.step(row); print(f.estimate())

A model is either JIT-compiled into this process (the runtime comes from the
shared ``libsirenrt.so``) or a ``model.so`` built by ``cc -shared`` and loaded
with ``dlopen`` (its runtime is linked in statically). Both speak the C ABI of
``runtime_c/include/sirenrt.h`` through one cffi FFI in ABI mode. Every
failure of the runtime becomes a ``SirenRuntimeError`` carrying the runtime's
rendered message; nothing here can crash the interpreter on bad input.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

from sirenc.diagnostics import SirenRuntimeError, SirenUsageError
from sirenc.model_info import ModelInfo
from sirenc.runtime.abi import abi_version

RESAMPLERS = {"systematic": 0, "multinomial": 1, "stratified": 2, "residual": 3}
_SIZE = re.compile(r"\s*(\d+(?:\.\d*)?)\s*([kmgt]?)(?:i?b)?\s*", re.IGNORECASE)
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
# The runtime's messages about its arguments (not about the model or the machine) start so.
_ARGUMENT_ERROR = "sirenrt_filter_new: "


def memory_size(value: int | str | None) -> int:
    """A memory limit in bytes: an integer, or a string such as ``"512M"`` or ``"4.5G"`` (K, M, G and
    T are powers of 1024; ``KiB``, ``MB`` and the like are read the same).  None is the runtime's
    default, half the machine's memory, and becomes 0."""
    if value is None:
        return 0
    size = None
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        size = int(value)
    elif isinstance(value, str) and (m := _SIZE.fullmatch(value)):
        size = int(float(m.group(1)) * _UNITS[m.group(2).lower()])
    if size is None or not 1 <= size < 2**63:
        raise SirenUsageError(
            f"memory_limit must be a number of bytes in [1, 2**63), such as 4G or 512M, not {value!r}")
    return size


class CompiledModelError(SirenRuntimeError):
    """A run-time error reported by compiled code; the runtime already rendered
    it (``file:line:col: error: ...`` with the source line and a caret)."""

    def render(self) -> str:
        text = self.message
        return text if text.startswith("error:") or ": error: " in text.split("\n", 1)[0] \
            else f"error: {text}"


# ----------------------------------------------------------------- entry points

def compile(source: str | os.PathLike, method: str = "pf", check: bool = True,
            output: str | os.PathLike | None = None, analysis_budget: int | None = None) -> "Model":
    """Compile a Siren program (a path or the program text).

    Without ``output`` the model is JIT-compiled into this process; with
    ``output="model.so"`` a self-contained shared object is written there
    (it needs a C compiler, ``cc``) and loaded.  ``analysis_budget`` is the
    work the plan analysis may do before it gives up (``--analysis-budget``).
    """
    from sirenc.driver import compile_to_llvm_dialect

    if isinstance(source, bytes) or not isinstance(source, (str, os.PathLike)) \
            or isinstance(os.fspath(source), bytes):
        raise SirenUsageError(
            f"compile() takes the program text or a path (str or os.PathLike), not {type(source).__name__}"
            + ("; decode bytes first, e.g. source.decode('utf-8')" if isinstance(source, bytes) else ""))
    if not isinstance(method, str):
        raise SirenUsageError(f"method must be a string such as 'pf', not {method!r}")
    if output is not None:
        from sirenc.backend.link import check_output
        check_output(output)      # a directory, a device or a link is refused before compiling
    module, info = compile_to_llvm_dialect(source, method, check, analysis_budget=analysis_budget)
    return from_llvm_dialect(module, info, output=output)


def from_llvm_dialect(module: Any, info: ModelInfo,
                      output: str | os.PathLike | None = None) -> "Model":
    """The backend half of ``compile``: an ``llvm``-dialect module and its ``ModelInfo``."""
    if output is None:
        from sirenc.backend.llvm import jit_compile
        return Model._from_jit(jit_compile(module, info))
    from sirenc.backend.link import link_shared
    from sirenc.backend.llvm import object_bytes
    return load(link_shared(object_bytes(module, info), output=output))


# dlopen caches by path (P13): a file rewritten in place must not come back as
# the old code, so a path whose contents changed is loaded from a private copy
# (a unique name in the cache folder, removed from disk as soon as it is open).
# realpath -> the library loaded from it most recently. A library replaced by a
# newer one is closed once no Model or Filter of it is left.
class _Library:
    def __init__(self, digest: str, lib: Any, ffi: Any):
        self.digest = digest
        self.lib = lib
        self._ffi = ffi           # held: dlclose may run late in interpreter shutdown
        self.users = 0            # Models alive (a Filter keeps its Model alive)
        self.stale = False        # replaced by a newer version of the same path

    def acquire(self) -> None:
        self.users += 1

    def release(self) -> None:
        self.users -= 1
        if self.users == 0 and self.stale:
            self._close()

    def retire(self) -> None:
        self.stale = True
        if self.users == 0:
            self._close()

    def _close(self) -> None:
        lib, self.lib = self.lib, None
        if lib is not None:
            self._ffi.dlclose(lib)


_loaded: dict[str, _Library] = {}


def load(path: str | os.PathLike) -> "Model":
    """Load a ``model.so`` built by ``sirenc -o`` or ``compile(..., output=...)``."""
    from sirenc.runtime.ffi import ffi

    if isinstance(path, bytes) or not isinstance(path, (str, os.PathLike)):
        raise SirenUsageError(f"load() takes a path (str or os.PathLike), not {type(path).__name__}")
    real = os.path.realpath(path)
    try:
        digest = hashlib.sha1(Path(real).read_bytes()).hexdigest()
    except OSError as e:
        raise SirenUsageError(f"cannot read model {os.fspath(path)}: {e.strerror}") from None
    known = _loaded.get(real)
    if known is None or known.digest != digest or known.lib is None:
        target, copy = real, None
        try:
            if known is not None:
                from sirenc.backend.link import cache_dir
                folder = cache_dir()
                try:
                    folder.mkdir(parents=True, exist_ok=True)
                    fd, copy = tempfile.mkstemp(prefix=f"load_{digest[:16]}_", suffix=".so", dir=folder)
                    os.close(fd)
                    shutil.copyfile(real, copy)
                except OSError as e:
                    raise SirenUsageError(f"cannot copy {os.fspath(path)} into the cache folder "
                                          f"{folder} to load it: {e.strerror}") from None
                target = copy
            lib = ffi.dlopen(target)
            lib.sirenc_info  # noqa: B018 -- resolve now: is this a compiled model?
        except (OSError, AttributeError) as e:
            raise SirenUsageError(f"{os.fspath(path)} is not a loadable sirenc model: {e}") from None
        finally:
            if copy is not None:
                with contextlib.suppress(OSError):
                    os.unlink(copy)   # open now: the mapping outlives the name
        if known is not None:
            known.retire()
        known = _loaded[real] = _Library(digest, lib, ffi)
    return Model._from_library(known, Path(real))


# ----------------------------------------------------------------------- model

@dataclass(frozen=True)
class _Entry:
    """The C entry points a filter needs: a model.so's sirenc_*, or the shared runtime's sirenrt_filter_*."""

    new: Callable[[int, int, Any], Any]
    free: Callable[[Any], None]
    run: Callable[..., int]
    step: Callable[..., int]
    estimate: Callable[..., int]
    log_evidence: Callable[[Any], float]
    ess: Callable[[Any], float]
    error: Callable[[Any], Any]          # error(NULL) = the thread's last error


class _CodePin:
    """Keeps a model's machine code loaded while the model or any filter of it lives.

    Freeing a filter reads its model's descriptor, so the JIT engine must
    outlive every filter. Holding the engine from a module-level set (rather
    than only from the objects that use it) keeps it out of any garbage cycle:
    the cycle collector finalises cycle members in no particular order, and
    could otherwise dispose of the engine before a filter's destructor runs.
    """

    _pinned: set["_CodePin"] = set()

    def __init__(self, keepalive: Any, on_free: Callable[[], None] | None = None):
        self.keepalive = keepalive
        self.on_free = on_free      # called once nothing uses the code any more
        self.count = 0
        self.acquire()              # the model's own reference

    def acquire(self) -> None:
        self.count += 1
        _CodePin._pinned.add(self)

    def release(self) -> None:
        self.count -= 1
        if self.count == 0:
            _CodePin._pinned.discard(self)
            on_free, self.on_free = self.on_free, None
            self.keepalive = None
            if on_free is not None:
                on_free()           # a JIT model's close, a library's release: frees the code


class Model:
    """A compiled model. Create filters with ``filter()``; see ``info``."""

    def __init__(self, descriptor: Any, entry: _Entry, keepalive: Any, path: Path | None,
                 on_free: Callable[[], None] | None = None):
        self._entry = entry
        self._pin = _CodePin(keepalive, on_free)   # JIT model or loaded library: owns the code
        self.path = path                  # the model.so, or None for a JIT model
        self.info = _describe(descriptor)
        if self.info["abi_version"] != abi_version():
            raise SirenUsageError(
                f"model ABI version {self.info['abi_version']} does not match this "
                f"sirenc (ABI version {abi_version()}); recompile the model"
            )

    @classmethod
    def _from_jit(cls, jit: Any) -> "Model":
        from sirenc.runtime.ffi import ffi, runtime_lib

        rt = runtime_lib()
        descriptor = ffi.cast("const sirenrt_model *", jit.model_address)
        entry = _Entry(
            new=lambda n, seed, opts: rt.sirenrt_filter_new(descriptor, n, seed, opts),
            free=rt.sirenrt_filter_free, run=rt.sirenrt_filter_run,
            step=rt.sirenrt_filter_step, estimate=rt.sirenrt_filter_estimate,
            log_evidence=rt.sirenrt_filter_log_evidence, ess=rt.sirenrt_filter_ess,
            error=lambda f: rt.sirenrt_last_error() if f == ffi.NULL else rt.sirenrt_filter_error(f),
        )
        return cls(descriptor, entry, jit, None, on_free=jit.close)

    @classmethod
    def _from_library(cls, library: _Library, path: Path) -> "Model":
        lib = library.lib
        entry = _Entry(
            new=lib.sirenc_new, free=lib.sirenc_free, run=lib.sirenc_run, step=lib.sirenc_step,
            estimate=lib.sirenc_estimate, log_evidence=lib.sirenc_log_evidence,
            ess=lib.sirenc_ess, error=lib.sirenc_error,
        )
        library.acquire()   # released by the model's pin (also if __init__ refuses the model)
        return cls(lib.sirenc_info(), entry, library, path, on_free=library.release)

    def filter(self, particles: int = 1000, seed: int = 0, resampler: str = "systematic",
               ess_threshold: float = 0.0, threads: int = 1,
               memory_limit: int | str | None = None) -> "Filter":
        """A new particle population of ``particles`` particles, resumed by
        ``threads`` threads (the answers do not depend on how many).  The particles'
        state and lists may take ``memory_limit`` bytes (``memory_size``; None: half the
        machine's memory); more particles than fit is a ``SirenUsageError``."""
        from sirenc.runtime.ffi import ffi

        if isinstance(particles, bool) or not isinstance(particles, (int, np.integer)) \
                or not 1 <= particles < 2**63:
            raise SirenUsageError(f"particles must be an integer in [1, 2**63), not {particles!r}")
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed < 2**64:
            raise SirenUsageError(f"seed must be an integer in [0, 2**64), not {seed!r}")
        if not isinstance(resampler, str) or resampler not in RESAMPLERS:
            raise SirenUsageError(
                f"unknown resampler {resampler!r}; choose one of {', '.join(RESAMPLERS)}")
        if isinstance(ess_threshold, bool) or not isinstance(ess_threshold, (int, float, np.integer, np.floating)):
            raise SirenUsageError(f"ess_threshold must be a number in [0, 1], not {ess_threshold!r}")
        threshold = float(ess_threshold)
        if not 0.0 <= threshold <= 1.0:
            raise SirenUsageError(f"ess_threshold must lie in [0, 1], not {ess_threshold!r}")
        if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or not 1 <= threads <= 256:
            raise SirenUsageError(f"threads must be an integer in [1, 256], not {threads!r}")
        opts = ffi.new("sirenrt_options *", {"resampler": RESAMPLERS[resampler],
                                             "ess_threshold": threshold, "threads": int(threads),
                                             "memory_limit": memory_size(memory_limit)})
        raw = self._entry.new(int(particles), int(seed), opts)
        if raw == ffi.NULL:
            message = _text(self._entry.error(ffi.NULL))
            if message.startswith(_ARGUMENT_ERROR):   # e.g. too many particles for the memory limit
                raise SirenUsageError(message.removeprefix(_ARGUMENT_ERROR))
            raise CompiledModelError(message or "cannot create the filter")
        self._pin.acquire()
        handle = ffi.gc(raw, lambda p, free=self._entry.free, pin=self._pin: (free(p), pin.release()))
        return Filter(self, handle)

    def __del__(self) -> None:
        pin = getattr(self, "_pin", None)
        if pin is not None:
            pin.release()

    def __repr__(self) -> str:
        where = self.path or "JIT"
        return f"<sirenc.Model {self.info['name']!r} method={self.info['method']} ({where})>"


def _text(cstr: Any) -> str:
    from sirenc.runtime.ffi import ffi
    return "" if cstr == ffi.NULL else ffi.string(cstr).decode("utf-8", "replace")


def _describe(m: Any) -> dict:
    return {
        "abi_version": int(m.abi_version),
        "name": _text(m.name),
        "method": _text(m.method),
        "plan": _text(m.plan),
        "result_type": _text(m.result_type),
        "frame_size": int(m.frame_size),
        "streamable": bool(m.streamable),
        "not_streamable_reason": _text(m.not_streamable_reason),
        "files": [_text(m.files[i]) for i in range(m.n_files)],
    }


# ---------------------------------------------------------------------- filter

class Filter:
    """One particle population of a ``Model``; freed when garbage collected."""

    def __init__(self, model: Model, handle: Any):
        self.model = model
        self._f = handle
        self._estimate_cap = 16

    def _check(self, status: int) -> None:
        if status != 0:
            raise CompiledModelError(_text(self.model._entry.error(self._f))
                                     or f"the runtime failed with status {status}")

    def run(self, rows: Any = None) -> "Filter":
        """Run the whole program. ``rows`` (n_rows x n_cols, float64) replace the
        program's data file; without them the file named in the program is read.
        An empty list is no rows, as a data file with only its header line."""
        from sirenc.runtime.ffi import ffi

        if rows is None:
            self._check(self.model._entry.run(self._f, ffi.NULL, 0, 0))
            return self
        _check_table(rows)
        arr = _as_float64(rows, 2, "rows") if not _no_rows(rows) else np.empty((0, 0))
        buf = ffi.from_buffer("double[]", arr)
        self._check(self.model._entry.run(self._f, buf, arr.shape[0], arr.shape[1]))
        return self

    def step(self, row: Any) -> "Filter":
        """Feed one row of the observation stream and advance every particle."""
        from sirenc.runtime.ffi import ffi

        arr = _as_float64(row, 1, "row")
        self._check(self.model._entry.step(self._f, ffi.from_buffer("double[]", arr), arr.shape[0]))
        return self

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
    def log_evidence(self) -> float:
        return float(self.model._entry.log_evidence(self._f))

    @property
    def ess(self) -> float:
        return float(self.model._entry.ess(self._f))


def _no_rows(rows: Any) -> bool:
    return isinstance(rows, (list, tuple)) and len(rows) == 0


def _check_table(rows: Any) -> None:
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


def _as_float64(data: Any, ndim: int, what: str) -> np.ndarray:
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


# ------------------------------------------------------- result type descriptors

def unflatten(result_type: str, values: np.ndarray) -> Any:
    """Rebuild the estimate's structure from ``result_type`` (``f b u P<a><b> L<a>``)
    and the preorder-flattened values the runtime returns."""
    value, pos, used = _read(result_type, 0, values, 0)
    if pos != len(result_type) or used != len(values):
        raise SirenUsageError(
            f"estimate of {len(values)} values does not match result type {result_type!r}")
    return value


def _skip(desc: str, pos: int) -> int:
    """Index just past the type starting at ``desc[pos]``."""
    tag = desc[pos]
    if tag in "fbu":
        return pos + 1
    if tag == "L":
        return _skip(desc, pos + 1)
    if tag == "P":
        return _skip(desc, _skip(desc, pos + 1))
    raise SirenUsageError(f"bad result type descriptor {desc!r}")


def _read(desc: str, pos: int, values: np.ndarray, at: int) -> tuple[Any, int, int]:
    tag = desc[pos]
    if tag in "fb":
        return float(values[at]), pos + 1, at + 1
    if tag == "u":
        return None, pos + 1, at
    if tag == "P":
        first, pos, at = _read(desc, pos + 1, values, at)
        second, pos, at = _read(desc, pos, values, at)
        return (first, second), pos, at
    if tag == "L":
        n = int(values[at])
        at += 1
        if desc[pos + 1] in "fb":
            return values[at: at + n].copy(), pos + 2, at + n
        end = _skip(desc, pos + 1)
        items = []
        for _ in range(n):
            item, _, at = _read(desc, pos + 1, values, at)
            items.append(item)
        return items, end, at
    raise SirenUsageError(f"bad result type descriptor {desc!r}")
