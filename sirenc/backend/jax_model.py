"""Models and filters of the JAX back end, with the native back end's Python interface.

    model = sirenc.compile("walk.si", backend="jax")        # float32=True for single precision
    f = model.filter(particles=10**6, seed=0)                # devices=jax.devices() shards the particles
    f.run()                                                  # the whole data set: one lax.scan
    print(f.estimate(), f.log_evidence, f.ess)
    g = model.filter(particles=1000)
    for row in sensor: g.step(row); print(g.estimate())      # streaming: one jitted step per row

The population is a set of arrays over particles; the steps of the stream run under
``lax.scan`` (``run``) or as one jitted step each (``step``). Random numbers come from JAX's
counter-based keys (threefry): one key per population, split at every draw, each draw one
number per particle. So the answers differ from the native filter's (another generator),
agree with them in distribution, and do not depend on how the particles are split across
devices. Run-time errors (invalid distribution parameters, the head of an empty list, all
particles with zero weight) are recorded where they happen and raised, with their source
location, when the call returns.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from sirenc.arguments import RESAMPLERS, as_float64, check_resampling, check_seed, check_table, no_rows
from sirenc.backend import interface
from sirenc.backend import jax_results as R
from sirenc.backend.interface import exclusive
from sirenc.descriptors import unflatten
from sirenc.diagnostics import SirenRuntimeError, SirenUsageError


def _jax():
    import jax
    return jax


def _x64():
    """The scope in which our functions are traced and run: 64-bit types enabled, for this
    thread only (the host program's JAX settings stay as they are)."""
    jax = _jax()
    if hasattr(jax, "enable_x64"):
        return jax.enable_x64(True)
    from jax.experimental import enable_x64
    return enable_x64()


@dataclass(frozen=True)
class Config:
    n: int
    resampler: str
    threshold: float
    sharding: Callable[[int], Any] | None = None


class JaxModel(interface.Model):
    """A compiled program for the JAX back end (``sirenc.compile(..., backend="jax")``)."""

    def __init__(self, module: Any, info: dict, float32: bool = False):
        from sirenc.backend.jax_program import Program

        jax = _jax()
        with _x64():
            self.program = Program(module, jax.numpy.float32 if float32 else jax.numpy.float64)
        self.info = dict(info, backend="jax", dtype="float32" if float32 else "float64",
                         streamable=self.program.streamed)
        # what a checkpoint names to be restored only into the model it came from
        self.fingerprint = hashlib.sha1(f"{module}{self.info['dtype']}".encode()).hexdigest()
        self._compiled: dict = {}

    def filter(self, particles: int | None = None, seed: int = 0, resampler: str = "systematic",
               ess_threshold: float = 0.0, devices: Any = None, threads: int = 1, memory_limit: Any = None,
               handler: str = "smc", **mh: Any) -> JaxFilter:
        """A population of ``particles`` particles (default 1000). ``devices``: a list of JAX
        devices to shard the particles over (their number must divide ``particles``); default
        the first device. ``threads``, ``memory_limit`` and ``handler="mh"`` are the native back
        end's options: refused here with a message (not a TypeError)."""
        unknown = sorted(set(mh) - {"samples", "warmup", "thinning"})
        if unknown:
            raise SirenUsageError(f"unknown filter option {unknown[0]!r}")
        if threads != 1 or memory_limit is not None or handler != "smc" or any(v is not None for v in mh.values()):
            raise SirenUsageError("threads, memory_limit and the MH handler are options of the native back end; "
                                  "the JAX back end takes particles, seed, resampler, ess_threshold and devices")

        particles = 1000 if particles is None else particles
        if isinstance(particles, bool) or not isinstance(particles, (int, np.integer)) or not 1 <= particles < 2**31:
            raise SirenUsageError(f"particles must be an integer in [1, 2**31) on the JAX back end, not {particles!r}")
        check_seed(seed)
        threshold = check_resampling(resampler, ess_threshold)
        config = Config(int(particles), resampler, threshold, _sharding(devices, int(particles)))
        return JaxFilter(self, config, int(seed))

    def text(self) -> str:
        """``--emit=jax``: the jaxpr of one step of the stream (of the whole program when it
        reads none), traced for 4 particles."""
        jax = _jax()
        program = self.program
        config = Config(4, "systematic", 0.0)
        with _x64():
            key = jax.random.key(0)
            if not program.streamed:
                return "// the whole program, 4 particles\n" + str(jax.make_jaxpr(lambda k: program.init(config, k))(key))
            carry, _ = jax.eval_shape(lambda k: program.init(config, k), key)
            row = jax.ShapeDtypeStruct((1,), program.fdtype)
            jaxpr = jax.make_jaxpr(lambda c, r: program.step(config, c, r, 1))(carry, row)
            return "// one step of the stream (a row of 1 value), 4 particles\n" + str(jaxpr)

    def jitted(self, name: str, config: Config, fn: Callable, static: tuple = ()) -> Callable:
        """One jitted function per (name, population configuration, static shapes)."""
        key = (name, config, static)
        if key not in self._compiled:
            self._compiled[key] = _jax().jit(fn)
        return self._compiled[key]

    def __repr__(self) -> str:
        return f"<sirenc.JaxModel {self.info['name']!r} method={self.info['method']} {self.info['dtype']}>"


def _relative_weights(logw: np.ndarray) -> np.ndarray | None:
    """exp(logw - max): the weights relative to the largest; None when every weight is zero."""
    mx = np.max(logw)
    return None if mx == -np.inf else np.exp(logw - mx)


def _sharding(devices: Any, n: int):
    if devices is None:
        return None
    devices = list(devices)
    if not devices:
        raise SirenUsageError("devices must name at least one JAX device")
    if n % len(devices):
        raise SirenUsageError(f"{n} particles cannot be split evenly over {len(devices)} devices")
    from jax.sharding import Mesh, NamedSharding, PartitionSpec
    mesh = Mesh(np.array(devices), ("particles",))

    def sharding(ndim: int):
        return NamedSharding(mesh, PartitionSpec("particles", *([None] * (ndim - 1))))
    return sharding


class JaxFilter(interface.Filter):
    """One particle population of a ``JaxModel``."""

    def __init__(self, model: JaxModel, config: Config, seed: int):
        self.model, self.config, self.seed = model, config, seed
        self.n_particles = config.n
        self._carry = None       # the state entering the next step (streamed programs)
        self._steps = 0          # rows given to step() so far
        self._capacity = 0       # steps the carry's lists have room for
        self._template = None
        self._final = None       # (results, population state) once the program has finished
        self._history: list = []
        self._closed = False
        self._lock = threading.RLock()   # one thread at a time (interface.exclusive)

    @exclusive
    def close(self) -> None:
        """Drops the particles (their device memory); any later use of the filter is an error."""
        self._carry = self._final = self._template = None
        self._history = []
        self._closed = True

    @property
    def closed(self) -> bool:
        return self._closed

    def _open(self) -> None:
        if self.closed:
            raise SirenUsageError("this filter is closed")

    # -- running --------------------------------------------------------------------------------

    @exclusive
    def run(self, rows: Any = None, progress: Any = None, progress_interval: float = 0.1) -> JaxFilter:
        """Run the whole program over ``rows`` (n_rows x n_cols), or the program's data file.
        The run is one call into JAX: ``progress`` (as ``Filter.run``'s) is told once, at its end."""
        from sirenc.progress import reporter_for

        reporter = reporter_for(progress)
        self._run(rows)
        if reporter is not None:
            reporter.report(self._rows, self._rows, self.n_particles, True, self.ess, self.log_evidence)
            reporter.close()
            reporter.reraise()
        return self

    def _run(self, rows: Any) -> JaxFilter:
        self._open()
        program = self.model.program
        self._rows = 0
        with _x64():
            self._history = []
            if not program.streamed:
                self._final, hist = self._call_whole()
                self._history.append(hist)
                return self._checked(self._final[1])
            table, lengths = self._table(rows)
            self._steps, self._rows = 0, len(table)
            results, state, hists = self._scan(table, lengths)
            self._final = (results, state)
            self._carry = None
            self._history.extend(hists)
            return self._checked(state)

    @exclusive
    def step(self, row: Any) -> JaxFilter:
        """Feed one row of the observation stream and advance every particle."""
        self._open()
        program = self.model.program
        if not program.streamed:
            raise SirenUsageError("this program does not fold over a data stream: use run()")
        arr = as_float64(row, 1, "row")
        with _x64():
            if self._carry is None:   # a fresh stream (after run() too, which leaves no carry)
                self._start()
            if self._steps >= self._capacity:
                self._grow(max(64, 2 * self._capacity), len(arr))
            jax = _jax()
            config, template = self.config, self._template
            width = len(arr)

            def one(carry, r):
                new, hist = program.step(config, carry, r, width)
                return program.conform(config, new, template), hist
            fn = self.model.jitted("step", config, one, (self._capacity, width))
            self._carry, hist = fn(self._carry, jax.numpy.asarray(arr[::-1].copy()))
            self._steps += 1
            self._final = None
            self._history.append(hist)
            return self._checked(self._carry["pop"])

    def _start(self) -> None:
        program, config = self.model.program, self.config
        jax = _jax()
        init = self.model.jitted("init", config, lambda key: program.init(config, key))
        self._carry, hist = init(jax.random.key(self.seed))
        self._history = [hist]
        self._steps, self._capacity, self._template = 0, 0, None
        self._checked(self._carry["pop"])

    def _grow(self, capacity: int, width: int) -> None:
        program, config = self.model.program, self.config
        self._template = program.template(config, self._carry_in_steps(), capacity - self._steps, width)
        self._carry = program.conform(config, self._carry, self._template)
        self._capacity = capacity

    def _carry_in_steps(self):
        return self._carry

    def _call_whole(self):
        program, config = self.model.program, self.config
        jax = _jax()
        fn = self.model.jitted("whole", config, lambda key: program.init(config, key))
        results, state, hist = fn(jax.random.key(self.seed))
        return (results, state), hist

    def _scan(self, table: np.ndarray, lengths: np.ndarray | None):
        program, config = self.model.program, self.config
        jax = _jax()
        jnp = jax.numpy
        steps, width = table.shape
        row_len = width if lengths is None else None
        init = self.model.jitted("init", config, lambda key: program.init(config, key))
        key = jax.random.key(self.seed)
        carry0, hist0 = init(key)
        self._checked(carry0["pop"])
        template = program.template(config, carry0, steps, row_len if row_len is not None else jnp.int32(0))

        def whole(carry, rows, lens):
            carry = program.conform(config, carry, template)

            def body(c, x):
                r, n = x
                new, hist = program.step(config, c, r, row_len if row_len is not None else n)
                return program.conform(config, new, template), hist
            carry, hists = jax.lax.scan(body, carry, (rows, lens))
            results, state, hist_end = program.finish(config, carry)
            return results, state, hists, hist_end
        fn = self.model.jitted("scan", config, whole, (steps, width, lengths is None))
        lens = jnp.asarray(lengths if lengths is not None else np.zeros(steps, np.int32), jnp.int32)
        results, state, hists, hist_end = fn(carry0, jnp.asarray(table), lens)
        return results, state, [hist0, R.step_history(hists), hist_end]

    def _table(self, rows: Any):
        """The data as rows reversed (a list's head is its last column) and padded, and the row
        lengths (None when every row has the same length)."""
        from sirenc.data import read_rows

        if rows is None:
            path = getattr(self, "_data_file", None) or self.model.info.get("data_file") or ""
            if not path:
                raise SirenUsageError("this program reads no data file: give run() its rows")
            ragged = read_rows(path)
        else:
            check_table(rows)
            arr = as_float64(rows, 2, "rows") if not no_rows(rows) else np.empty((0, 0))
            ragged = list(arr)
        width = max((len(r) for r in ragged), default=0)
        table = np.zeros((len(ragged), width), dtype=np.float64)
        lengths = np.array([len(r) for r in ragged], dtype=np.int32)
        for i, r in enumerate(ragged):
            table[i, :len(r)] = r[::-1]
        same = len(set(lengths.tolist())) <= 1
        return table, None if same else lengths

    @exclusive
    def use_file(self, file: int | str | os.PathLike, path: str | os.PathLike) -> JaxFilter:
        """Read the program's data from ``path`` instead (``Filter.use_file``; the JAX back end
        reads one file, the stream of the main fold: file 0)."""
        files = self.model.info["files"]
        if not files:
            raise SirenUsageError("the program reads no data file")
        if not (file == 0 or (isinstance(file, (str, os.PathLike)) and
                              os.path.basename(os.fspath(file)) == os.path.basename(files[0]))):
            raise SirenUsageError(f"the program reads one data file, {files[0]!r} (file 0); there is no file {file!r}")
        if not isinstance(path, (str, os.PathLike)) or isinstance(os.fspath(path), bytes):
            raise SirenUsageError(f"use_file needs a path (str or os.PathLike), not {type(path).__name__}")
        self._data_file = os.path.abspath(path)
        return self

    # -- checkpoints -----------------------------------------------------------------------------

    @exclusive
    def to_bytes(self) -> bytes:
        """The filter as bytes for ``JaxFilter.load``: options, every particle's state and the
        population's key, so that the loaded filter goes on as this one would, bit for bit
        (the format: sirenc/backend/jax_checkpoint.py)."""
        from sirenc.backend.jax_checkpoint import encode

        self._open()
        fields = {"fingerprint": self.model.fingerprint, "seed": self.seed, "n": self.config.n,
                  "resampler": self.config.resampler, "threshold": self.config.threshold,
                  "steps": self._steps, "rows": getattr(self, "_rows", 0)}
        with _x64():
            return encode(fields, {"carry": self._carry, "final": self._final, "history": self._history})

    @classmethod
    def load(cls, model: JaxModel, checkpoint: bytes | str | os.PathLike, devices: Any = None) -> JaxFilter:
        """The filter saved in ``checkpoint`` (bytes, or a file written by ``save``) for ``model``.
        Nothing in it is executed: a checkpoint that is damaged, crafted or of another model is
        refused with a SirenUsageError saying why, before any of it is used."""
        from sirenc.backend.jax_checkpoint import Damaged, KeyData, decode

        if not isinstance(model, JaxModel):
            raise SirenUsageError(f"JaxFilter.load needs the JaxModel the filter was saved from, not "
                                  f"{type(model).__name__}")
        if isinstance(checkpoint, (str, os.PathLike)):
            try:
                with open(checkpoint, "rb") as fh:
                    checkpoint = fh.read()
            except OSError as e:
                raise SirenUsageError(f"cannot read checkpoint {os.fspath(checkpoint)}: {e.strerror}") from None
        elif not isinstance(checkpoint, (bytes, bytearray, memoryview)):
            raise SirenUsageError(f"JaxFilter.load takes bytes or a path, not {type(checkpoint).__name__}")
        try:
            header, trees = decode(bytes(checkpoint))
            if header.get("fingerprint") != model.fingerprint:
                raise SirenUsageError("this checkpoint was not saved from a filter of this model (JAX back end)")
            fields = _checked_fields(header)
            carry, final, history = _checked_trees(model, fields["n"], trees)
        except Damaged as e:
            raise SirenUsageError(f"cannot load the JAX checkpoint: {e}") from None
        jax = _jax()

        def device(tree):
            return jax.tree_util.tree_map(
                lambda x: jax.random.wrap_key_data(x.data) if isinstance(x, KeyData)
                else (jax.numpy.asarray(x) if isinstance(x, np.ndarray) else x),
                tree, is_leaf=lambda x: isinstance(x, KeyData))
        f = model.filter(particles=fields["n"], seed=fields["seed"], resampler=fields["resampler"],
                         ess_threshold=fields["threshold"], devices=devices)
        with _x64():
            f._carry, f._final, f._history = device(carry), device(final), device(history)
            if f._carry is not None:
                _fits(model, f.config, f._carry)
        f._steps, f._rows = fields["steps"], fields["rows"]
        return f

    # -- errors ----------------------------------------------------------------------------------

    def _checked(self, state) -> JaxFilter:
        site = int(state["err_site"])
        if site:
            raise self._error(site - 1, int(state["err_kind"]), float(state["err_value"]))
        return self

    def _error(self, site: int, kind: int, value: float) -> SirenRuntimeError:
        from sirenc.backend.jax_families import CHECKS
        from sirenc.backend.jax_population import (
            CAPACITY,
            EMPTY_HEAD,
            EMPTY_TAIL,
            ZERO_WEIGHT,
        )
        from sirenc.ir.locations import span_of

        op = self.model.program.sites.ops[site]
        if kind == EMPTY_HEAD:
            message = "List.hd of an empty list"
        elif kind == EMPTY_TAIL:
            message = "List.tl of an empty list"
        elif kind == ZERO_WEIGHT:
            message = "all particles have zero weight"
        elif kind == CAPACITY:
            message = ("this loop builds a list longer than the JAX back end provided room for (the longest "
                       "list the loop does not build); use the native back end (--backend native)")
        else:
            message = CHECKS[op.family.data][kind][1].format(f"{value:g}")
        self._final = None
        return SirenRuntimeError(message, span_of(op))

    # -- answers ---------------------------------------------------------------------------------

    def _finished(self):
        """(results, population state): after run(), or the program finished from the current step."""
        self._open()
        if self._final is not None:
            return self._final
        if self._carry is None:
            raise SirenUsageError("the filter has not run: call run() or step() first")
        program, config = self.model.program, self.config
        with _x64():
            fn = self.model.jitted("finish", config, lambda c: program.finish(config, c)[:2],
                                   (self._capacity,))
            results, state = fn(self._carry)
        self._checked(state)
        return results, state

    def _weights(self, logw: np.ndarray) -> np.ndarray:
        w = _relative_weights(logw)
        return np.full(len(logw), 1.0 / len(logw)) if w is None else w / w.sum()

    @exclusive
    def particles(self, flat: bool = False):
        """Every particle's result and its normalised weight, as ``Filter.particles``."""
        (values, offsets), _, weights = self._flat_results()
        if flat:
            return (values, offsets), weights
        desc = self.model.info["result_type"]
        return [unflatten(desc, values[offsets[i]:offsets[i + 1]]) for i in range(self.n_particles)], weights

    def _flat_results(self):
        """((values, offsets), (atoms, offsets), weights): the results flattened as the C ABI's
        sirenrt_filter_particles and sirenrt_filter_posterior flatten them."""
        from sirenc.summary import expand_atoms

        results, state = self._finished()
        results = [R.host(r) for r in results]
        desc, frame = self.model.info["result_type"], self.model.info.get("frame_result_type")
        weights = self._weights(np.asarray(R.fetched(state["logw"]), dtype=np.float64))
        user = R.leaf_count(desc)
        values = R.flatten(desc, results[:user], self.n_particles)
        if frame:   # a tier-2 program returns (result, its posterior atoms)
            side = frame[1 + len(desc):]
            return values, expand_atoms(desc, *values, side, *R.flatten(side, results[user:], self.n_particles)), weights
        return values, expand_atoms(desc, *values), weights

    @exclusive
    def estimate(self) -> Any:
        """Posterior mean of the program's result, shaped like the result type."""
        (flat, offsets), weights = self.particles(flat=True)
        desc = self.model.info["result_type"]
        if not desc.strip("PfbS"):   # scalars only: one weighted mean per column
            width = offsets[1] - offsets[0] if self.n_particles else 0
            return unflatten(desc, R.weighted_means(flat.reshape(self.n_particles, width), weights))
        from sirenc.summary import expand_atoms, summarize

        return R.means(summarize(desc, *expand_atoms(desc, flat, offsets), weights, ()))

    @exclusive
    def summary(self, quantiles: Any = (0.05, 0.5, 0.95)) -> Any:
        from sirenc.summary import quantile_levels, summarize

        levels = quantile_levels(quantiles)
        _, (atoms, offsets), weights = self._flat_results()
        return summarize(self.model.info["result_type"], atoms, offsets, weights, levels)

    def _state(self):
        self._open()
        if self._final is not None:
            return self._final[1]
        if self._carry is not None:
            return self._carry["pop"]
        raise SirenUsageError("the filter has not run: call run() or step() first")

    @property
    @exclusive
    def log_evidence(self) -> float:
        state = self._state()
        logw = np.asarray(R.fetched(state["logw"]), dtype=np.float64)
        mx = np.max(logw)
        if not np.isfinite(mx):
            return float(state["logz"]) + float(mx)
        return float(state["logz"]) + float(mx + np.log(np.mean(np.exp(logw - mx))))

    @property
    @exclusive
    def ess(self) -> float:
        w = _relative_weights(np.asarray(R.fetched(self._state()["logw"]), dtype=np.float64))
        return 0.0 if w is None else float(w.sum() ** 2 / (w * w).sum())

    @exclusive
    def history(self, frame: bool = False) -> Any:
        """One entry per resample(): ``ess``, ``resampled`` and ``log_evidence``, as ``Filter.history``."""
        parts = [tuple(R.fetched(x) for x in h) for h in self._history]
        ess = np.concatenate([p[0] for p in parts]) if parts else np.empty(0)
        out = {"ess": ess.astype(np.float64),
               "resampled": np.concatenate([p[1] for p in parts]).astype(bool) if parts else np.empty(0, bool),
               "log_evidence": np.concatenate([p[2] for p in parts]).astype(np.float64) if parts else np.empty(0)}
        if frame:
            import pandas as pd
            return pd.DataFrame(out)
        return out

    @exclusive
    def runtime_plan(self) -> dict[str, str]:
        text = self.model.info.get("static_runtime_plan", "")
        return dict(line.split(": ", 1) for line in text.splitlines() if line)


def _checked_fields(header: dict) -> dict:
    """A checkpoint's options and counters, each of its type and range (else ``Damaged``)."""
    from sirenc.backend.jax_checkpoint import Damaged

    def integer(name: str, low: int, high: int) -> int:
        v = header.get(name)
        if isinstance(v, bool) or not isinstance(v, int) or not low <= v < high:
            raise Damaged(f"its {name} is {v!r}, not an integer in [{low}, {high})")
        return v
    fields = {"n": integer("n", 1, 2**31), "seed": integer("seed", 0, 2**64),
              "steps": integer("steps", 0, 2**63), "rows": integer("rows", 0, 2**63),
              "resampler": header.get("resampler"), "threshold": header.get("threshold")}
    if fields["resampler"] not in RESAMPLERS:
        raise Damaged(f"its resampler is {fields['resampler']!r}")
    t = fields["threshold"]
    if isinstance(t, bool) or not isinstance(t, (int, float)) or not 0.0 <= t <= 1.0:
        raise Damaged(f"its ESS threshold is {t!r}, not a number in [0, 1]")
    return fields


def _checked_trees(model: JaxModel, n: int, trees: dict) -> tuple:
    """A checkpoint's carry, final answers and history, as the model makes them for ``n``
    particles: the population's arrays one per particle, no failure recorded (a failed filter
    goes on no further), the history a list of 1-D (ess, resampled, log evidence) records."""
    from sirenc.backend.jax_checkpoint import Damaged

    if set(trees) != {"carry", "final", "history"}:
        raise Damaged("its trees are not those of a filter")
    carry, final, history = trees["carry"], trees["final"], trees["history"]

    def population(state: Any, what: str) -> None:
        if not (isinstance(state, dict) and {"logw", "err_site", "key"} <= state.keys()):
            raise Damaged(f"its {what} holds no population")
        logw, err = state["logw"], state["err_site"]
        if not (isinstance(logw, np.ndarray) and logw.shape == (n,) and logw.dtype.kind == "f"):
            raise Damaged(f"its {what} does not weigh {n} particles")
        if not (isinstance(err, np.ndarray) and err.shape == () and err.dtype.kind == "i"):
            raise Damaged(f"its {what} has no failure site")
        if int(err) != 0:
            raise Damaged("it is of a filter that failed")
    if carry is not None:
        if not model.program.streamed:
            raise Damaged("it carries a stream, and this program reads none")
        if not (isinstance(carry, dict) and {"args", "frame", "pop"} <= carry.keys()):
            raise Damaged("its stream state is malformed")
        population(carry["pop"], "stream state")
    if final is not None:
        if not (isinstance(final, tuple) and len(final) == 2):
            raise Damaged("its answers are malformed")
        population(final[1], "answers")
        _same_shape(model, n, final)
    if not isinstance(history, list) or not all(
            isinstance(h, tuple) and len(h) == 3 and all(isinstance(a, np.ndarray) and a.ndim == 1 for a in h)
            and h[0].dtype.kind == "f" and h[1].dtype == np.bool_ and h[2].dtype.kind == "f"
            and len(h[0]) == len(h[1]) == len(h[2]) for h in history):
        raise Damaged("its resampling history is malformed")
    return carry, final, history


def _same_shape(model: JaxModel, n: int, final: tuple) -> None:
    """``final`` has the structure and types of the model's own answers (a list's room aside)."""
    from sirenc.backend.jax_checkpoint import Damaged, KeyData

    jax = _jax()
    program, config = model.program, Config(n, "systematic", 0.0)
    with _x64():
        if program.streamed:
            expected = jax.eval_shape(lambda k: program.finish(config, program.init(config, k)[0])[:2],
                                      jax.random.key(0))
        else:
            expected = jax.eval_shape(lambda k: program.init(config, k)[:2], jax.random.key(0))
    is_leaf = lambda x: x is None or isinstance(x, KeyData)   # noqa: E731
    mine, shape = jax.tree_util.tree_flatten(final, is_leaf=is_leaf)
    theirs, expected_shape = jax.tree_util.tree_flatten(expected, is_leaf=lambda x: x is None)
    if shape != expected_shape:
        raise Damaged("its answers are not shaped as this model's")
    for got, want in zip(mine, theirs):
        if isinstance(got, KeyData) != jax.dtypes.issubdtype(want.dtype, jax.dtypes.prng_key):
            raise Damaged("its answers are not shaped as this model's")
        if isinstance(got, np.ndarray) and (got.dtype != want.dtype or got.ndim != len(want.shape)
                                            or (want.shape[:1] == (n,) and got.shape[:1] != (n,))):
            raise Damaged("its answers are not of this model's types")


def _fits(model: JaxModel, config: Config, carry: Any) -> None:
    """The model's finishing code traces on ``carry`` into its own answers' structure: a stream
    state that does not fit the program is refused here, not where the next step would fail."""

    jax = _jax()
    program = model.program
    try:
        got = jax.eval_shape(lambda c: program.finish(config, c)[:2], carry)
        want = jax.eval_shape(lambda k: program.finish(config, program.init(config, k)[0])[:2], jax.random.key(0))
    except Exception as e:   # noqa: BLE001 - whatever tracing a malformed state raises means the same
        raise SirenUsageError(f"cannot load the JAX checkpoint: its stream state does not fit this model "
                              f"({type(e).__name__})") from None
    if jax.tree_util.tree_structure(got) != jax.tree_util.tree_structure(want) or any(
            a.dtype != b.dtype for a, b in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want))):
        raise SirenUsageError("cannot load the JAX checkpoint: its stream state does not fit this model")
