"""The particle population of the JAX back end while a program is traced: weights, the random
key, the frame, the first run-time error, the log evidence, and the resampling barrier.

A ``Population`` is a Python object holding traced arrays; the evaluator (``jax_trace``) mutates
it as it walks the program, and ``state()``/``from_state`` move it across ``lax.scan`` and
``lax.while_loop`` boundaries. Side effects of code under a per-particle condition are masked
(``mask``): an observation weighs only the particles that take the branch, an error counts only
where it happens.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp

from sirenc.backend import jax_values as V

RESAMPLERS = ("systematic", "multinomial", "stratified", "residual")

# Error kinds besides a family's checks (whose kinds are their positions, from 0).
EMPTY_HEAD, EMPTY_TAIL, ZERO_WEIGHT, CAPACITY = 100, 101, 102, 103


class Population:
    def __init__(self, n: int, fdtype, resampler: str, threshold: float, sites):
        self.n, self.fdtype = n, fdtype
        self.resampler, self.threshold = resampler, threshold
        self.sites = sites                 # jax_trace.Sites: op -> site number (static)
        self.logw = jnp.zeros((n,), fdtype)
        self.key = None
        self.err_site = jnp.int32(0)       # 1 + the site of the first error, 0 while none
        self.err_kind = jnp.int32(0)
        self.err_value = jnp.zeros((), fdtype)
        self.logz = jnp.zeros((), fdtype)  # log evidence of the resamplings so far
        self.zero_site = jnp.int32(-1)     # the last observation that gave some particle zero weight
        self.frame: dict = {}
        self.cells = None                  # jax_cells.Cells: the arenas of the lists a stream loop carries
        self.masks: list = []              # per-particle conditions of the enclosing branches
        self.held: dict[int, object] = {}  # per-particle values kept across a barrier
        self.history: list = []            # (ess, resampled, log evidence) per barrier

    # -- moving across jit/scan/loop boundaries -------------------------------------------------

    STATE = ("logw", "key", "err_site", "err_kind", "err_value", "logz", "zero_site")

    def state(self) -> dict:
        return {k: getattr(self, k) for k in self.STATE}

    def load(self, state: dict) -> Population:
        for k in self.STATE:
            setattr(self, k, state[k])
        return self

    # -- side effects ---------------------------------------------------------------------------

    @property
    def mask(self):
        return self.masks[-1] if self.masks else None

    def draw_key(self):
        self.key, sub = jax.random.split(self.key)
        return sub

    def weigh(self, logp, site: int) -> None:
        logp = jnp.where(jnp.isnan(logp), -jnp.inf, logp)   # as the runtime: a NaN density is zero
        if self.mask is not None:
            logp = jnp.where(self.mask, logp, 0.0)
        # where all weights end up zero, the error names the last observation that zeroed one
        self.zero_site = jnp.where(jnp.any(logp == -jnp.inf), jnp.int32(site), self.zero_site)
        self.logw = self.logw + logp

    def fail(self, site: int, kind: int, bad, value=0.0) -> None:
        """Record an error at `site` where `bad` holds (under the mask), unless one came first."""
        if V.is_static(bad) and not bad:
            return
        bad = jnp.broadcast_to(jnp.asarray(bad), (self.n,))
        if self.mask is not None:
            bad = bad & self.mask
        hit = jnp.any(bad)
        first = (self.err_site == 0) & hit
        value = jnp.broadcast_to(jnp.asarray(V.weak(value), self.fdtype), (self.n,))[jnp.argmax(bad)]
        self.err_site = jnp.where(first, jnp.asarray(site, jnp.int32) + 1, self.err_site)
        self.err_kind = jnp.where(first, jnp.int32(kind), self.err_kind)
        self.err_value = jnp.where(first, value, self.err_value)

    def hold(self, value) -> int:
        key = len(self.held) + 1
        while key in self.held:
            key += 1
        self.held[key] = value
        return key

    # -- the resampling barrier -----------------------------------------------------------------

    def barrier(self, site: int) -> None:
        """Every particle reached a resample(): normalise, record, resample when due."""
        n, logw = self.n, self.logw
        mx = jnp.max(logw)
        self.fail(jnp.where(self.zero_site >= 0, self.zero_site, site), ZERO_WEIGHT, mx == -jnp.inf)
        safe = jnp.where(jnp.isfinite(mx), mx, 0.0)
        w = jnp.exp(logw - safe)
        total = jnp.sum(w)
        ess = total * total / jnp.sum(w * w)
        log_mean = safe + jnp.log(total) - math.log(n)
        due = True if self.threshold <= 0.0 else ess < self.threshold * n
        self.history.append((ess, jnp.asarray(due), self.logz + log_mean))
        self.key, sub = jax.random.split(self.key)
        ancestors = resample_indices(self.resampler, sub, w / total, n)
        if due is not True:
            ancestors = jnp.where(due, ancestors, jnp.arange(n))
        self.logz = self.logz + (log_mean if due is True else jnp.where(due, log_mean, 0.0))
        self.logw = jnp.zeros_like(logw) if due is True else jnp.where(due, 0.0, logw)
        self.frame = {k: V.gather(v, ancestors) for k, v in self.frame.items()}
        self.held = {k: V.gather(v, ancestors) for k, v in self.held.items()}
        self.masks = [V.gather(m, ancestors) for m in self.masks]


def resample_indices(scheme: str, key, w, n: int):
    """The ancestor of each of n offspring, sorted, for normalised weights w."""
    cum = jnp.cumsum(w)
    cum = cum / cum[-1]
    if scheme == "systematic":
        # how many of the points (j + u) / n lie below each cumulative weight, by a scatter and a
        # cumulative sum instead of a search
        u = jax.random.uniform(key, (), w.dtype)
        below = jnp.clip(jnp.ceil(cum * n - u), 0, n).astype(jnp.int32)
        return jnp.minimum(jnp.cumsum(jnp.zeros(n + 1, jnp.int32).at[below].add(1))[:n], n - 1)
    if scheme == "stratified":
        points = (jnp.arange(n, dtype=w.dtype) + jax.random.uniform(key, (n,), w.dtype)) / n
        return jnp.minimum(jnp.searchsorted(cum, points, side="right"), n - 1)
    if scheme == "multinomial":
        return jnp.minimum(jnp.searchsorted(cum, _sorted_uniforms(key, n, w.dtype), side="right"), n - 1)
    if scheme == "residual":
        copies = jnp.floor(n * w)
        rest = (n - jnp.sum(copies)).astype(jnp.int32)
        left = n * w - copies
        left_cum = jnp.cumsum(left)
        # the first `rest` of n independent uniforms: independent draws (the first of n *sorted*
        # ones would be the smallest)
        points = jax.random.uniform(key, (n,), w.dtype) * left_cum[-1]
        picked = jnp.minimum(jnp.searchsorted(left_cum, points, side="right"), n - 1)
        extra = jnp.zeros(n, jnp.int32).at[picked].add((jnp.arange(n) < rest).astype(jnp.int32))
        counts = copies.astype(jnp.int32) + extra
        return jnp.minimum(jnp.searchsorted(jnp.cumsum(counts), jnp.arange(n), side="right"), n - 1)
    raise AssertionError(scheme)


def _sorted_uniforms(key, n: int, dtype):
    """n sorted uniforms in [0, 1), from normalised exponential spacings (no sort)."""
    e = jax.random.exponential(key, (n + 1,), dtype)
    c = jnp.cumsum(e)
    return c[:n] / c[n]
