"""A particle program as pure JAX functions of the population: init, step, finish.

The `smc` program of a streamed model has one top-level ``scf.while`` whose condition waits for
the next row (``smc.next_row``): the main fold over the data. It splits the program in three:

- ``init(key)``: everything before the fold, up to the state that enters it;
- ``step(carry, row)``: one iteration, given the row (what ``lax.scan`` runs over the data, and
  what ``Filter.step`` runs once per row);
- ``finish(carry)``: the fold's exit (the stream has ended) and everything after it, up to
  ``smc.finish``: the particles' results.

A *carry* is ``{"args": the fold's iteration values, "frame": the frame slots, "pop": the
population's arrays}``. Its shapes must not change from one step to the next, so ``template``
fixes them: a value any step makes per-particle is per-particle from the start, and a list
that grows by g cells per step gets the capacity of all the steps to come, with ``room`` g so
that a step's conses write in place. A program without a stream runs whole in ``init``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from xdsl.dialects import scf

from sirenc.backend import jax_values as V
from sirenc.backend.jax_population import Population
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
        ev = Evaluator(pop, self.sites)
        loop = self.loop
        ev.rows = (np.bool_(True), V.JList((row,), row_len, 0))
        values = drive(ev.region(loop.before_region, {}, carry["args"]), pop)
        ev.rows = None
        if not (V.is_static(values[0]) and values[0]):
            raise refuse(loop, "a fold over the data that may stop before the data ends")
        args = drive(ev.region(loop.after_region, {}, values[1:]), pop)
        return {"args": args, "frame": {k: pop.frame[k] for k in carry["frame"]}, "pop": pop.state()}, _history(pop)

    def finish(self, config, carry):
        carry = without_room(carry)   # the carry's lists had room for the steps to come; none come now
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
        template grows until a step leaves it as it is."""
        width = row_width if isinstance(row_width, int) else 1
        row = jax.ShapeDtypeStruct((width,), self.fdtype)
        length = row_width if isinstance(row_width, int) else jnp.int32(1)

        def after(c):
            return jax.eval_shape(lambda c, r: self.step(config, c, r, length)[0], c, row)
        carry = without_room(carry)   # a step's conses then show as growth
        template = _join(carry, after(carry), steps, config.n)
        for _ in range(8):
            wider = _widen(template, after(self.conform(config, carry, template)))
            if wider is template:
                return template
            template = wider
        return template

    def conform(self, config, carry, template, pop_fail=True):
        """`carry` in `template`'s shapes."""
        out = jax.tree_util.tree_map(lambda v, t: _conform(v, t, config.n), carry, template,
                                     is_leaf=lambda x: isinstance(x, V.JList))
        return _constrain(out, config)


def without_room(tree):
    """`tree` with every list's room taken away."""
    return jax.tree_util.tree_map(lambda v: V.JList(v.cols, v.length, 0) if isinstance(v, V.JList) else v,
                                  tree, is_leaf=lambda x: isinstance(x, V.JList))


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
    if isinstance(before, V.JList):
        grow = max(after.cap - before.cap, 0)
        per = any(len(c.shape) == 2 for c in (*before.cols, *after.cols))
        cols = tuple(Shape(c.dtype, per) for c in before.cols)
        length = before.length if V.is_static(before.length) and V.is_static(after.length) \
            and before.length == after.length else Shape(jnp.int32, any(
                not V.is_static(x) and len(x.shape) == 1 for x in (before.length, after.length)))
        return ListShape(cols, length, before.cap + grow * steps, grow)
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
    if isinstance(template, ListShape):
        cols = tuple(_widen(t, a) for t, a in zip(template.cols, after.cols))
        length = template.length
        if not isinstance(length, Shape) and not (V.is_static(after.length) and after.length == length):
            length = Shape(jnp.int32, not V.is_static(after.length) and len(after.length.shape) == 1)
        elif isinstance(length, Shape):
            length = _widen(length, after.length)
        if all(c is t for c, t in zip(cols, template.cols)) and length is template.length:
            return template
        return ListShape(cols, length, template.cap, template.room)
    per = not V.is_static(after) and len(after.shape) >= 1
    return Shape(template.dtype, True) if per and not template.per_particle else template


class ListShape:
    def __init__(self, cols, length, cap: int, room: int):
        self.cols, self.length, self.cap, self.room = cols, length, cap, room


def _conform(v, t, n: int):
    if isinstance(t, ListShape):
        v = v.resized(t.cap)
        cols = tuple(jnp.broadcast_to(c, (n, t.cap)).astype(s.dtype) if s.per_particle else c.astype(s.dtype)
                     for c, s in zip(v.cols, t.cols))
        if isinstance(t.length, Shape):
            length = jnp.asarray(V.weak(v.length) if V.is_static(v.length) else v.length).astype(jnp.int32)
            length = jnp.broadcast_to(length, (n,)) if t.length.per_particle else length
        else:
            length = t.length
        return V.JList(cols, length, t.room)
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
