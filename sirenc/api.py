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
import functools
import hashlib
import os
import re
import shutil
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

from sirenc.descriptors import SCALARS, skip
from sirenc.diagnostics import SirenDataError, SirenRuntimeError, SirenUsageError
from sirenc.driver import DEFAULT_METHOD
from sirenc.model_info import ModelInfo
from sirenc.runtime.abi import abi_version, max_particles

BACKENDS = ("native", "jax")
RESAMPLERS = {"systematic": 0, "multinomial": 1, "stratified": 2, "residual": 3}
_SIZE = re.compile(r"\s*(\d+(?:\.\d*)?)\s*([kmgt]?)(?:i?b)?\s*", re.IGNORECASE)
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
# The runtime's messages about its arguments (not about the model or the machine) start so.
# How the runtime's message of a bad argument to a filter's creation starts (a model.so names its own
# entry: export.c), which the caller reports as a usage error, without the prefix.
_ARGUMENT_ERRORS = ("sirenrt_filter_new: ", "sirenc_new: ", "sirenc_new_mh: ")


def _argument_error(message: str) -> str | None:
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


# The runtime's messages of a data file (runtime_c/src/data.c, rt_budget_data_message).
_DATA_ERROR = re.compile(r"cannot read data file '|\bnote: data file read here$|\bdata file '[^\n]*' needs at least",
                         re.MULTILINE)


def runtime_error(message: str) -> CompiledModelError:
    """The error of a failed call into the runtime, by what its message is about."""
    return (CompiledDataError if _DATA_ERROR.search(message) else CompiledModelError)(message)


# ----------------------------------------------------------------- entry points

def compile(source: str | os.PathLike, method: str = DEFAULT_METHOD, check: bool = True,
            output: str | os.PathLike | None = None, analysis_budget: int | None = None,
            tier: int = 2, backend: str = "native", float32: bool = False) -> "Model":
    """Compile a Siren program (a path or the program text).

    Without ``output`` the model is JIT-compiled into this process; with
    ``output="model.so"`` a self-contained shared object is written there
    (it needs a C compiler, ``cc``) and loaded.  ``analysis_budget`` is the
    work the plan analysis may do before it gives up (``--analysis-budget``).
    ``tier=1`` keeps a symbolic method on the general symbolic runtime even where the
    compiler could resolve the symbolic state into numbers (tier 2, the default;
    ``model.info["tier"]`` says which one a model runs).

    ``backend="jax"`` gives a ``sirenc.backend.jax_model.JaxModel`` instead: the same program
    vectorised over particles by JAX (a GPU when JAX has one), with the same ``filter``
    interface; ``float32=True`` computes in single precision there.
    """
    from sirenc.driver import model_info, open_source, run_until

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
    if tier not in (1, 2):
        raise SirenUsageError(f"tier must be 1 or 2, not {tier!r}")
    if backend not in BACKENDS:
        raise SirenUsageError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    if backend == "jax":
        if output is not None:
            raise SirenUsageError("the JAX back end writes no model.so: leave out output")
        from sirenc.driver import jax_model
        return jax_model(source, method, check, analysis_budget=analysis_budget, tier=tier, float32=bool(float32))
    if float32:
        raise SirenUsageError("float32 is an option of the JAX back end (backend='jax')")
    c = open_source(source, method, check=check, analysis_budget=analysis_budget, snapshots=False, tier=tier)
    program = (c.text, c.path if c.path.startswith("<") else os.path.abspath(c.path), method, check,
               c.max_rvs, analysis_budget, tier)
    module = run_until(c, "llvm-dialect")
    model = from_llvm_dialect(module, model_info(c, module), output=output)
    if model.path is None:   # a pickle carries the program it was compiled from, not its path
        model._origin = (_recompile, program)
    return model


def _recompile(text: str, path: str, method: str, check: bool, max_rvs: int, budget: int | None,
               tier: int) -> "Model":
    """A JIT model from its pickle: the program text, compiled as the file ``path`` (its name in
    messages, the folder its data files are read from), whatever that file holds now."""
    from sirenc.driver import Compilation, model_info, run_until

    c = Compilation(text, path, method, check=check, max_rvs=max_rvs, analysis_budget=budget,
                    snapshots=False, tier=tier)
    module = run_until(c, "llvm-dialect")
    model = from_llvm_dialect(module, model_info(c, module))
    model._origin = (_recompile, (text, path, method, check, max_rvs, budget, tier))
    return model


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
# (a unique name in a private folder, removed from disk as soon as it is open).
# realpath -> the library loaded from it most recently. A library replaced by a
# newer one is closed once no Model or Filter of it is left. A library keeps its
# bytes: a Model pickles as them (the file may have changed or gone since).
class _Library:
    def __init__(self, digest: str, lib: Any, ffi: Any, data: bytes):
        self.digest = digest      # SHA-256 of data
        self.lib = lib
        self.data = data
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
    if isinstance(path, bytes) or not isinstance(path, (str, os.PathLike)):
        raise SirenUsageError(f"load() takes a path (str or os.PathLike), not {type(path).__name__}")
    real = os.path.realpath(path)
    try:
        data = Path(real).read_bytes()
    except OSError as e:
        raise SirenUsageError(f"cannot read model {os.fspath(path)}: {e.strerror}") from None
    digest = hashlib.sha256(data).hexdigest()
    known = _loaded.get(real)
    if known is None or known.digest != digest or known.lib is None:
        # The bytes just hashed, not the file again, are what a private copy loads.
        lib = _dlopen(os.fspath(path), real if known is None else None, data, digest)
        if known is not None:
            known.retire()
        known = _loaded[real] = _Library(digest, lib, _ffi(), data)
    return Model._from_library(known, Path(real))


def _ffi() -> Any:
    from sirenc.runtime.ffi import ffi
    return ffi


def _dlopen(name: str, path: str | None, data: bytes, digest: str) -> Any:
    """dlopen ``path``, or (None) a private copy of ``data``: a file of mode 0600 in a folder of
    mode 0700 made for it, removed once it is open (the mapping outlives the name)."""
    from sirenc.backend.link import cache_dir

    ffi, folder = _ffi(), None
    try:
        if path is None:
            parent = cache_dir()
            try:
                parent.mkdir(mode=0o700, parents=True, exist_ok=True)
                folder = tempfile.mkdtemp(prefix=f"load_{digest[:16]}_", dir=parent)
                path = os.path.join(folder, "model.so")
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                with os.fdopen(fd, "wb") as f:
                    f.write(data)
            except OSError as e:
                raise SirenUsageError(f"cannot copy {name} into the cache folder {parent} to load it: "
                                      f"{e.strerror}") from None
        lib = ffi.dlopen(path)
        lib.sirenc_info  # noqa: B018 -- resolve now: is this a compiled model?
        return lib
    except (OSError, AttributeError) as e:
        raise SirenUsageError(f"{name} is not a loadable sirenc model: {e}") from None
    finally:
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)


def _load_pickled(data: bytes, digest: str, name: str) -> "Model":
    """A model.so's Model from its pickle: the library's bytes, checked against their SHA-256 and
    loaded from a private copy (or the library already loaded with those bytes)."""
    if not isinstance(data, bytes) or not isinstance(digest, str) or hashlib.sha256(data).hexdigest() != digest:
        raise SirenUsageError(f"the pickled model {name} is damaged: its library does not match its SHA-256")
    key = f"<pickled {digest}>"
    known = next((lib for lib in _loaded.values() if lib.digest == digest and lib.lib is not None), None)
    if known is None:
        lib = _dlopen(f"the pickled model {name}", None, data, digest)
        known = _loaded[key] = _Library(digest, lib, _ffi(), data)
    return Model._from_library(known, Path(name))


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


def _newer_entry(lib: Any, name: str) -> Callable[..., Any]:
    """Entry point ``name`` of a model.so, looked up when first called: a model.so built by an older
    sirenc lacks it, which is an error only for the caller that needs it."""
    def call(*args: Any) -> Any:
        try:
            entry = getattr(lib, name)
        except AttributeError:
            raise SirenUsageError(f"this model.so was built by an older sirenc without {name}; "
                                  "recompile it") from None
        return entry(*args)
    return call


class Model:
    """A compiled model. Create filters with ``filter()``; see ``info``."""

    _origin: tuple | None = None   # (function, arguments) that make a JIT model again, for pickles

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
            particles=rt.sirenrt_filter_particles, posterior=rt.sirenrt_filter_posterior,
            size=rt.sirenrt_filter_size,
            set_file=rt.sirenrt_filter_set_file,
            history=rt.sirenrt_filter_history, history_dropped=rt.sirenrt_filter_history_dropped,
            save=rt.sirenrt_filter_save,
            load=lambda buf, n, threads: rt.sirenrt_filter_load(descriptor, buf, n, threads),
            set_progress=rt.sirenrt_filter_set_progress,
            runtime_plan=rt.sirenrt_filter_runtime_plan,
            new_mh=lambda seed, mh, opts: rt.sirenrt_filter_new_mh(descriptor, seed, mh, opts),
            mh_runtime_plan=rt.sirenrt_mh_runtime_plan, mh_stats=rt.sirenrt_mh_stats,
        )
        return cls(descriptor, entry, jit, None, on_free=jit.close)

    @classmethod
    def _from_library(cls, library: _Library, path: Path) -> "Model":
        lib = library.lib
        entry = _Entry(
            new=lib.sirenc_new, free=lib.sirenc_free, run=lib.sirenc_run, step=lib.sirenc_step,
            estimate=lib.sirenc_estimate, log_evidence=lib.sirenc_log_evidence,
            ess=lib.sirenc_ess, error=lib.sirenc_error,
            particles=_newer_entry(lib, "sirenc_particles"),
            posterior=_newer_entry(lib, "sirenc_posterior"),
            size=_newer_entry(lib, "sirenc_size"),
            set_file=_newer_entry(lib, "sirenc_set_file"),
            history=_newer_entry(lib, "sirenc_history"),
            history_dropped=_newer_entry(lib, "sirenc_history_dropped"),
            save=_newer_entry(lib, "sirenc_save"),
            load=_newer_entry(lib, "sirenc_load"),
            set_progress=_newer_entry(lib, "sirenc_set_progress"),
            runtime_plan=_newer_entry(lib, "sirenc_runtime_plan"),
            new_mh=_newer_entry(lib, "sirenc_new_mh"),
            mh_runtime_plan=_newer_entry(lib, "sirenc_mh_runtime_plan"),
            mh_stats=_newer_entry(lib, "sirenc_mh_stats"),
        )
        library.acquire()   # released by the model's pin (also if __init__ refuses the model)
        return cls(lib.sirenc_info(), entry, library, path, on_free=library.release)

    def filter(self, particles: int | None = None, seed: int = 0, resampler: str = "systematic",
               ess_threshold: float = 0.0, threads: int = 1,
               memory_limit: int | str | None = None, handler: str = "smc",
               samples: int | None = None, warmup: int | None = None,
               thinning: int | None = None) -> "Filter":
        """A new particle population of ``particles`` particles (default 1000), resumed by
        ``threads`` threads (the answers do not depend on how many).  The particles'
        state and lists may take ``memory_limit`` bytes (``memory_size``; None: half the
        machine's memory); more particles than fit is a ``SirenUsageError``.

        ``handler="mh"`` makes a Metropolis-Hastings chain instead (``sirenc.mh.Chain``, a
        ``Filter`` whose ``run`` runs the chain and whose particles are its ``samples``
        recorded states, equally weighted; default 100, after ``warmup`` iterations
        (default 0), one every ``thinning`` iterations (default 1)); ``particles``,
        ``resampler``, ``ess_threshold`` and ``threads`` are SMC's options and refused there."""
        from sirenc.runtime.ffi import ffi

        if handler == "mh":
            from sirenc.mh import new_chain
            if particles is not None or resampler != "systematic" or ess_threshold != 0.0 or threads != 1:
                raise SirenUsageError("particles, resampler, ess_threshold and threads are options of the SMC "
                                      "handler; an MH chain (handler='mh') takes samples, warmup and thinning")
            return new_chain(self, seed, memory_limit, samples, warmup, thinning)
        if handler != "smc":
            raise SirenUsageError(f"unknown handler {handler!r}; choose smc or mh")
        if (samples, warmup, thinning) != (None, None, None):
            raise SirenUsageError("samples, warmup and thinning are options of the MH handler (handler='mh')")
        particles = 1000 if particles is None else particles
        check_particles(particles)
        check_seed(seed)
        threshold = check_resampling(resampler, ess_threshold)
        check_threads(threads)
        opts = ffi.new("sirenrt_options *", {"resampler": RESAMPLERS[resampler],
                                             "ess_threshold": threshold, "threads": int(threads),
                                             "memory_limit": memory_size(memory_limit)})
        raw = self._entry.new(int(particles), int(seed), opts)
        if raw == ffi.NULL:
            message = _text(self._entry.error(ffi.NULL))
            if _argument_error(message) is not None:   # e.g. too many particles for the memory limit
                raise SirenUsageError(_argument_error(message))
            raise CompiledModelError(message or "cannot create the filter")
        return self._adopt(raw, int(particles))

    def _adopt(self, raw: Any, particles: int, kind: type | None = None) -> "Filter":
        """A Filter (or ``kind``, a subclass) owning the runtime filter ``raw`` of ``particles``
        particles (which keeps the model's code loaded)."""
        from sirenc.runtime.ffi import ffi

        self._pin.acquire()
        handle = ffi.gc(raw, lambda p, free=self._entry.free, pin=self._pin: (free(p), pin.release()))
        return (kind or Filter)(self, handle, particles)

    def __reduce__(self):
        # A model pickles as the program that makes it again: a model.so's bytes (with their
        # SHA-256), or a JIT model's source text and options. Never a path to load.
        library = self._pin.keepalive
        if isinstance(library, _Library):
            return (_load_pickled, (library.data, library.digest, str(self.path)))
        if self._origin is None:
            raise SirenUsageError("this model cannot be pickled: it was not made by sirenc.compile or sirenc.load")
        return self._origin

    def __del__(self) -> None:
        pin = getattr(self, "_pin", None)
        if pin is not None:
            pin.release()

    def __repr__(self) -> str:
        where = self.path or "JIT"
        return f"<sirenc.Model {self.info['name']!r} method={self.info['method']} ({where})>"


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
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed < 2**64:
        raise SirenUsageError(f"{name} must be an integer in [0, 2**64), not {seed!r}")


def check_threads(threads: Any, name: str = "threads") -> None:
    """The threads that advance a native population (the runtime's pool has at most 256)."""
    if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or not 1 <= threads <= 256:
        raise SirenUsageError(f"{name} must be an integer in [1, 256], not {threads!r}")


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
        "vars": [_text(m.vars[i]) for i in range(m.n_vars)],
        "tier": int(m.tier),
        "result_names": _text(m.result_names).split("\n")[:-1],
    }


# ---------------------------------------------------------------------- filter

IN_USE = ("this filter is in use by another thread; a filter serves one thread at a time "
          "(give each thread its own filter, or wait for the other thread's call to return)")


def exclusive(method: Callable) -> Callable:
    """``method`` of a filter, refused while another thread is inside one: cffi releases the GIL
    during a C call, so two threads could otherwise be inside the runtime on one population (and
    crash it). Refusing, not waiting: a filter shared between threads is a mistake to report. The
    lock is reentrant, as methods call one another (``summary`` reads the particles)."""
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


class Filter:
    """One particle population of a ``Model``; freed by ``close()``, at the end of a ``with``
    block, or when garbage collected."""

    # An MH chain's "particles" are its states in order: their Monte Carlo error is autocorrelated.
    _states_in_order = False

    def __init__(self, model: Model, handle: Any, particles: int):
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

    def __enter__(self) -> "Filter":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _check(self, status: int) -> None:
        if status != 0:
            raise runtime_error(_text(self.model._entry.error(self._f))
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
            _check_table(rows)
            arr = _as_float64(rows, 2, "rows") if not _no_rows(rows) else np.empty((0, 0))
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
        from sirenc.runtime.ffi import ffi

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
            arr = _as_float64(row, 1, "row")
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
        ``sirenc.Summary`` (``mean``, ``variance``, ``sd``, ``quantiles`` {level: value},
        ``particles``) for every float or bool; a list's element k summarises the particles
        whose list is longer than k. A particle that keeps a value symbolic contributes that
        value's exact distribution, not only its mean: the summary is of the mixture of the
        particles' distributions. While streaming, for the rows given so far."""
        from sirenc.summary import ATOM_WORDS, quantile_levels, summarize

        levels = quantile_levels(quantiles)
        (atoms, offsets), weights = self._read_particles(self.model._entry.posterior, ATOM_WORDS)
        return summarize(self.model.info["result_type"], atoms, offsets, weights, levels, chain=self._states_in_order)

    def variables(self, quantiles: Any = (0.05, 0.5, 0.95)) -> dict[str, Any]:
        """The summaries of the random variables the program returns as they are, by name: a
        ``Summary``, or a list of them for a list of one variable's values (a trajectory). A
        number computed from variables is in ``summary()`` only."""
        from sirenc.summary import by_variable

        info = self.model.info
        return by_variable(self.summary(quantiles), info["result_type"], info.get("result_names", []))

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

        before = ffi.new("double *")
        self.model._entry.history_dropped(self._f, before, ffi.NULL)

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
                 "log_evidence_increment": np.diff(logz, prepend=before[0]), "rows": rows}
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
        from sirenc.runtime.ffi import ffi

        return int(self.model._entry.history_dropped(self._f, ffi.NULL, ffi.NULL))

    @property
    @exclusive
    def history_dropped_resampled(self) -> int:
        """How many of the ``history_dropped`` barriers resampled."""
        from sirenc.runtime.ffi import ffi

        resampled = ffi.new("int64_t *")
        self.model._entry.history_dropped(self._f, ffi.NULL, resampled)
        return int(resampled[0])

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

    def save(self, path: str | os.PathLike) -> None:
        """Write the filter to ``path`` (atomically: a reader never sees half a checkpoint)."""
        from sirenc.backend.link import write_atomically

        write_atomically(path, self.to_bytes())

    @classmethod
    def load(cls, model: Model, checkpoint: bytes | str | os.PathLike, threads: int = 1) -> "Filter":
        """The filter saved in ``checkpoint`` (bytes, or a file written by ``save``) for ``model``,
        which must be the model it was saved from. It goes on exactly as the saved filter would
        have, bit for bit, on any number of ``threads``."""
        from sirenc.runtime.ffi import ffi

        if not isinstance(model, Model):
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
            raise SirenUsageError(_text(model._entry.error(ffi.NULL)) or "cannot load the filter")
        return model._adopt(raw, int(model._entry.size(raw)))

    def __reduce__(self):
        return (_restore_filter, (self.model, self.to_bytes()))


def _restore_filter(model: Model, data: bytes) -> Filter:
    return Filter.load(model, data)


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
    """Rebuild the estimate's structure from ``result_type`` (``f b S u P<a><b> L<a>``)
    and the preorder-flattened values the runtime returns."""
    try:
        value, pos, used = _read(result_type, 0, values, 0)
    except ValueError:
        raise SirenUsageError(f"bad result type descriptor {result_type!r}") from None
    if pos != len(result_type) or used != len(values):
        raise SirenUsageError(
            f"estimate of {len(values)} values does not match result type {result_type!r}")
    return value


def _read(desc: str, pos: int, values: np.ndarray, at: int) -> tuple[Any, int, int]:
    tag = desc[pos]
    if tag in SCALARS:   # S: a symbolic value, estimated by its expected value
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
        if desc[pos + 1] in SCALARS:
            return values[at: at + n].copy(), pos + 2, at + n
        end = skip(desc, pos + 1)
        items = []
        for _ in range(n):
            item, _, at = _read(desc, pos + 1, values, at)
            items.append(item)
        return items, end, at
    raise ValueError(f"bad result type descriptor {desc!r}")
