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
rendered message; nothing here can crash the interpreter on bad input. The filter
is ``sirenc.native_filter``'s, the MH chain ``sirenc.mh``'s.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Callable

from sirenc import methods
from sirenc.arguments import (
    RESAMPLERS, argument_error, check_particles, check_resampling, check_seed, check_threads, memory_size,
)
from sirenc.backend import interface
from sirenc.diagnostics import SirenUsageError
from sirenc.model_info import ModelInfo
from sirenc.native_filter import CompiledModelError, Entry, Filter, c_text
from sirenc.runtime.abi import abi_version

BACKENDS = ("native", "jax")


# ----------------------------------------------------------------- entry points

def compile(source: str | os.PathLike, method: str = methods.DEFAULT, check: bool = True,
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
    if output is None:
        return from_compilation(c)
    module = run_until(c, "llvm-dialect")
    return from_llvm_dialect(module, model_info(c, module), output=output)


def from_compilation(c: Any) -> "Model":
    """The JIT model of the driver's ``Compilation`` ``c``. It pickles as the program it was compiled
    from (the text, the path it was compiled as, the options), not as a path: a pickle carries it
    to another process or machine (sirenc/distributed.py), which compiles it for its own CPU."""
    from sirenc.driver import model_info, run_until

    program = (c.text, c.path if c.path.startswith("<") else os.path.abspath(c.path), c.method, c.check,
               c.max_rvs, c.analysis_budget, c.tier)
    module = run_until(c, "llvm-dialect")
    model = from_llvm_dialect(module, model_info(c, module))
    model._origin = (_recompile, program)
    return model


def _recompile(text: str, path: str, method: str, check: bool, max_rvs: int, budget: int | None,
               tier: int) -> "Model":
    """A JIT model from its pickle: the program text, compiled as the file ``path`` (its name in
    messages, the folder its data files are read from), whatever that file holds now."""
    from sirenc.driver import Compilation

    return from_compilation(Compilation(text, path, method, check=check, max_rvs=max_rvs, analysis_budget=budget,
                                        snapshots=False, tier=tier))


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


class Model(interface.Model):
    """A compiled model. Create filters with ``filter()``; see ``info``."""

    _origin: tuple | None = None   # (function, arguments) that make a JIT model again, for pickles

    def __init__(self, descriptor: Any, entry: Entry, keepalive: Any, path: Path | None,
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
        entry = Entry(
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
        entry = Entry(
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
            from sirenc.mh import Chain, chain_options
            if particles is not None or resampler != "systematic" or ess_threshold != 0.0 or threads != 1:
                raise SirenUsageError("particles, resampler, ess_threshold and threads are options of the SMC "
                                      "handler; an MH chain (handler='mh') takes samples, warmup and thinning")
            check_seed(seed)
            options = chain_options(samples, warmup, thinning)
            mh = ffi.new("sirenrt_mh_options *", options)
            opts = ffi.new("sirenrt_options *", {"resampler": 0, "ess_threshold": 0.0, "threads": 1,
                                                 "memory_limit": memory_size(memory_limit)})
            chain = self._adopt(self._made(self._entry.new_mh(int(seed), mh, opts), "the MH chain"), 0, Chain)
            chain.options = options
            return chain
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
        return self._adopt(self._made(self._entry.new(int(particles), int(seed), opts), "the filter"), int(particles))

    def _made(self, raw: Any, what: str) -> Any:
        """``raw``, the population the runtime made, or the error of why it made none: a bad argument
        (too many particles for the memory limit, a limit too small for one run of a chain) is the
        caller's, a usage error."""
        from sirenc.runtime.ffi import ffi

        if raw != ffi.NULL:
            return raw
        message = c_text(self._entry.error(ffi.NULL))
        if argument_error(message) is not None:
            raise SirenUsageError(argument_error(message))
        raise CompiledModelError(message or f"cannot create {what}")

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


def _describe(m: Any) -> dict:
    return {
        "abi_version": int(m.abi_version),
        "name": c_text(m.name),
        "method": c_text(m.method),
        "plan": c_text(m.plan),
        "result_type": c_text(m.result_type),
        "frame_size": int(m.frame_size),
        "streamable": bool(m.streamable),
        "not_streamable_reason": c_text(m.not_streamable_reason),
        "files": [c_text(m.files[i]) for i in range(m.n_files)],
        "vars": [c_text(m.vars[i]) for i in range(m.n_vars)],
        "tier": int(m.tier),
        "result_names": c_text(m.result_names).split("\n")[:-1],
    }
