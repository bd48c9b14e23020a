"""A particle program as pure JAX functions of the population: init, step, finish.

The `smc` program of a streamed model has one top-level ``scf.while`` whose condition waits for
the next row (``smc.next_row``): the main fold over the data. It splits the program in three:

- ``init(key)``: everything before the fold, up to the state that enters it;
- ``step(carry, row)``: one iteration, given the row (what ``lax.scan`` runs over the data, and
  what ``Filter.step`` runs once per row);
- ``finish(carry)``: the fold's exit (the stream has ended) and everything after it, up to
  ``smc.finish``: the particles' results.

A *carry* is ``{"args": the fold's iteration values, "frame": the frame slots, "pop": the
population's arrays, "arenas": the cells of its lists}``. Its shapes must not change from one
step to the next, so ``template`` fixes them: a value any step makes per-particle is
per-particle from the start, and a list becomes an arena list (jax_cells) whose arena has the
blocks of all the steps to come. A program without a stream runs whole in ``init``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from xdsl.dialects import scf

from sirenc.backend import jax_values as V
from sirenc.backend.jax_cells import Cells, empty_arena, key_of, resized_arena
from sirenc.backend.jax_population import CAPACITY, Population
from sirenc.backend.jax_trace import Evaluator, Sites, drive, element_dtypes, refuse
from sirenc.ir import smc


class Program:
    def __init__(self, module, fdtype=jnp.float64):
        self.particle = next(op for op in module.walk() if isinstance(op, smc.ParticleOp))
        self.ops = list(self.particle.body.block.ops)
        self.fdtype = fdtype
        self.sites = Sites()
        self.loop_at = None
        self._scan()

    def _scan(self) -> None:
        """Find the stream loop; refuse what the evaluator could only refuse later, while running."""
        for k, op in enumerate(self.ops):
            if isinstance(op, scf.WhileOp) and any(isinstance(o, smc.NextRowOp) for o in op.before_region.block.ops):
                self.loop_at = k
                break
        for op in self.particle.walk():
            if isinstance(op, smc.NextRowOp) and (self.loop_at is None or op.parent_op() is not self.loop):
                raise refuse(op, "a data stream read other than by the program's main fold")
            if isinstance(op, smc.ReadFileOp):
                raise refuse(op, "File.read used other than as the stream of the program's main fold")
            if op.name.startswith("smc.sym") or isinstance(op, smc.AssumeOp):
                raise refuse(op, "symbolic values that the compiler could not resolve into numbers (tier 1)")
            for r in op.results:
                if isinstance(r.type, smc.ListHandleType) and not isinstance(op, smc.NextRowOp):
                    element_dtypes(r.type, self.fdtype, op)

    @property
    def loop(self):
        return self.ops[self.loop_at] if self.loop_at is not None else None

    @property
    def streamed(self) -> bool:
        return self.loop_at is not None

    # -- the three functions ------------------------------------------------------------------

    def population(self, config, state=None, frame=None) -> Population:
        pop = Population(config.n, self.fdtype, config.resampler, config.threshold, self.sites)
        if state is not None:
            pop.load(state)
        if frame is not None:
            pop.frame = dict(frame)
        return pop

    def init(self, config, key):
        pop = self.population(config)
        pop.key = key
        ev = Evaluator(pop, self.sites)
        env: dict = {}
        ops = self.ops[:self.loop_at] if self.streamed else self.ops
        values = drive(ev.ops(ops, env), pop)
        if not self.streamed:
            return self._results(config, values), pop.state(), _history(pop)
        args = [ev.value(env, a) for a in self.loop.arguments]
        return {"args": args, "frame": pop.frame, "pop": pop.state()}, _history(pop)

    def step(self, config, carry, row, row_len):
        pop = self.population(config, carry["pop"], carry["frame"])
        pop.cells = Cells(carry.get("arenas", {}), config.n)
        ev = Evaluator(pop, self.sites)
        loop = self.loop
        ev.rows = (np.bool_(True), V.JList((row,), row_len, 0))
        values = drive(ev.region(loop.before_region, {}, carry["args"]), pop)
        ev.rows = None
        if not (V.is_static(values[0]) and values[0]):
            raise refuse(loop, "a fold over the data that may stop before the data ends")
        args = drive(ev.region(loop.after_region, {}, values[1:]), pop)
        pop.fail(self.sites.of(loop), CAPACITY, pop.cells.full)
        self.allocated = pop.cells.allocated   # read by template(): the blocks one step allocates
        out = {"args": args, "frame": {k: pop.frame[k] for k in carry["frame"]}, "pop": pop.state()}
        if "arenas" in carry:
            out["arenas"] = pop.cells.arenas
        return out, _history(pop)

    def finish(self, config, carry):
        cells = Cells(carry.get("arenas", {}), config.n)
        carry = jax.tree_util.tree_map(lambda v: cells.to_jlist(v) if isinstance(v, V.AList) else v,
                                       {k: carry[k] for k in ("args", "frame", "pop")},
                                       is_leaf=lambda x: isinstance(x, V.AList | V.JList))
        pop = self.population(config, carry["pop"], carry["frame"])
        ev = Evaluator(pop, self.sites)
        loop = self.loop
        ev.rows = (np.bool_(False), V.JList((jnp.zeros((0,), self.fdtype),), 0, 0))
        values = drive(ev.region(loop.before_region, {}, carry["args"]), pop)
        ev.rows = None
        if not (V.is_static(values[0]) and not values[0]):
            raise refuse(loop, "a fold over the data that goes on after the data ends")
        env = dict(zip(loop.results, values[1:]))
        results = drive(ev.ops(self.ops[self.loop_at + 1:], env), pop)
        return self._results(config, results), pop.state(), _history(pop)

    def _results(self, config, values):
        return [V.per_particle(v, config.n) for v in values]

    # -- fixed shapes across steps --------------------------------------------------------------

    def template(self, config, carry, steps: int, row_width):
        """The carry's shapes for `steps` steps (see the module's docstring). A value may become
        per-particle only in a later step (it depends on one that became so in this one): the
        template grows until a step leaves it as it is. Lists become arena lists, and each arena
        gets the blocks of the lists converted now and of `steps` steps' allocations."""
        width = row_width if isinstance(row_width, int) else 1
        row = jax.ShapeDtypeStruct((width,), self.fdtype)
        length = row_width if isinstance(row_width, int) else jnp.int32(1)

        def after(c):
            return jax.eval_shape(lambda c, r: self.step(config, c, r, length)[0], c, row)
        template = _join({k: carry[k] for k in ("args", "frame", "pop")}, after(carry), steps, config.n)
        arenas = {k: int(a.top) for k, a in carry.get("arenas", {}).items()}
        for lst in _lists(carry):
            if isinstance(lst, V.JList):
                key = key_of(c.dtype for c in lst.cols)
                arenas[key] = arenas.get(key, 0) + lst.cap
        template["arenas"] = {k: b + 1 for k, b in arenas.items()}
        for _ in range(8):
            conformed = jax.eval_shape(lambda c, t=template: self.conform(config, c, t), carry)
            self.allocated = {}
            stepped = after(conformed)
            per_step = dict(self.allocated)
            jax.eval_shape(lambda c, t=template, k=per_step: self.conform(config, c, t, count=k), stepped)
            blocks = {k: arenas.get(k, 0) + per_step.get(k, 0) * steps + 1 for k in {*arenas, *per_step}}
            values = {k: template[k] for k in ("args", "frame", "pop")}
            wider = _widen(values, {k: stepped[k] for k in values})
            if wider is values and blocks == template["arenas"]:
                return template
            template = dict(wider, arenas=blocks)
        return template

    def conform(self, config, carry, template, count: dict | None = None):
        """`carry` in `template`'s shapes: its lists as arena lists in arenas of the template's
        sizes. ``count``: add the blocks this allocates (converting column lists) to it."""
        n = config.n
        arenas = carry.get("arenas", {})
        cells = Cells({k: resized_arena(arenas[k], b, n) if k in arenas else empty_arena(k, b, n)
                       for k, b in template["arenas"].items()}, n)

        def one(v, t):
            if isinstance(t, ArenaShape):
                lst = cells.from_jlist(v) if isinstance(v, V.JList) else v
                return V.AList(jnp.broadcast_to(lst.ptr, (n,)).astype(jnp.int32),
                               jnp.broadcast_to(lst.length, (n,)).astype(jnp.int32), lst.key)
            return _conform(v, t, n)
        out = jax.tree_util.tree_map(one, {k: carry[k] for k in ("args", "frame", "pop")},
                                     {k: template[k] for k in ("args", "frame", "pop")},
                                     is_leaf=lambda x: isinstance(x, V.JList | V.AList))
        if count is not None:
            for k, b in cells.allocated.items():
                count[k] = count.get(k, 0) + b
        out["arenas"] = cells.arenas
        return _constrain(out, config)


def _history(pop: Population):
    if not pop.history:
        z = jnp.zeros((0,), pop.fdtype)
        return z, jnp.zeros((0,), jnp.bool_), z
    ess, resampled, logz = zip(*pop.history)
    return jnp.stack(ess), jnp.stack([jnp.asarray(r) for r in resampled]), jnp.stack(logz)


class Shape:
    """A template leaf: the dtype and whether it is per particle (an array, or a list's length)."""

    def __init__(self, dtype, per_particle: bool):
        self.dtype, self.per_particle = dtype, per_particle


def _shape_of(v):
    if V.is_static(v):
        return np.asarray(v).dtype, False
    return v.dtype, len(v.shape) == 1


def _join(before, after, steps: int, n: int):
    """The template of a carry entering a step as `before` and leaving as `after`."""
    if isinstance(before, dict):
        return {k: _join(before[k], after[k], steps, n) for k in before}
    if isinstance(before, list | tuple):
        return [_join(a, b, steps, n) for a, b in zip(before, after)]
    if isinstance(before, V.JList | V.AList):
        return ArenaShape()
    d0, p0 = _shape_of(before)
    d1, p1 = _shape_of(after)
    return Shape(d0 if not V.is_static(before) else d1, p0 or p1)


def _widen(template, after):
    """`template`, with what `after` (a step's result) has per particle and `template` has not;
    the same object when nothing changes."""
    if isinstance(template, dict):
        out = {k: _widen(template[k], after[k]) for k in template}
        return template if all(out[k] is template[k] for k in template) else out
    if isinstance(template, list):
        out = [_widen(t, a) for t, a in zip(template, after)]
        return template if all(o is t for o, t in zip(out, template)) else out
    if isinstance(template, ArenaShape):
        return template
    per = not V.is_static(after) and len(after.shape) >= 1
    return Shape(template.dtype, True) if per and not template.per_particle else template


class ArenaShape:
    """A template leaf: a list carried as an arena list (per particle, always)."""


def _lists(tree) -> list:
    return [x for x in jax.tree_util.tree_leaves(tree, is_leaf=lambda x: isinstance(x, V.JList | V.AList))
            if isinstance(x, V.JList | V.AList)]


def _conform(v, t, n: int):
    a = jnp.asarray(V.weak(v)) if V.is_static(v) else v
    if jax.dtypes.issubdtype(a.dtype, jax.dtypes.prng_key):
        return a
    a = a.astype(t.dtype)
    return jnp.broadcast_to(a, (n,)) if t.per_particle else a


def _constrain(carry, config):
    if config.sharding is None:
        return carry

    def one(x):
        if hasattr(x, "shape") and len(x.shape) >= 1 and x.shape[0] == config.n:
            return jax.lax.with_sharding_constraint(x, config.sharding(len(x.shape)))
        return x
    return jax.tree_util.tree_map(one, carry)


__all__ = ["Program"]
