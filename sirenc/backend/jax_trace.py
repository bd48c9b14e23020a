"""The JAX back end's evaluator: one particle's `smc` program, traced for all particles at once.

Each SSA value of the `smc` level becomes a value of ``jax_values`` (static while tracing, or an
array over particles). Arithmetic maps to ``jax.numpy``; a draw is one batched draw from the
population's key; an ``scf.if`` on a per-particle condition runs both branches with their
side effects masked and selects the results; an ``scf.while`` whose condition is known while
tracing unrolls, any other becomes a ``lax.while_loop`` that runs until every particle is done.

Regions are evaluated by generators that yield at each ``smc.resample``: whoever drives them
(``drive``, or an ``scf.if`` running its two branches in step) performs the population's
barrier there, so every particle must reach the same sequence of barriers. A program where
particles could reach different ones, or that needs a shape known only at run time, is
refused with a ``JaxBackendError`` that names the construct.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from xdsl.dialects import arith, math, scf
from xdsl.dialects.builtin import FloatAttr, IntegerType
from xdsl.ir import Operation, Region, SSAValue

from sirenc.backend import jax_families as F
from sirenc.backend import jax_values as V
from sirenc.backend.jax_population import CAPACITY, EMPTY_HEAD, EMPTY_TAIL, Population
from sirenc.diagnostics import SirenError
from sirenc.ir import smc
from sirenc.ir.locations import span_of

UNROLL_LIMIT = 256    # iterations of a loop with a condition known while tracing


class JaxBackendError(SirenError):
    """A program the JAX back end cannot run (the native back end can)."""


def refuse(op: Operation, what: str) -> JaxBackendError:
    return JaxBackendError(f"the JAX back end cannot run this program: {what}; "
                           "use the native back end (--backend native)", span_of(op))


class Sites:
    """Source locations of the ops that can fail at run time, numbered once per model."""

    def __init__(self):
        self.ops: list[Operation] = []
        self._index: dict[int, int] = {}

    def of(self, op: Operation) -> int:
        key = id(op)
        if key not in self._index:
            self._index[key] = len(self.ops)
            self.ops.append(op)
        return self._index[key]


def _nan(a):
    return np.isnan(a) if V.is_static(a) else jnp.isnan(a)


def _ordered(a, b):
    return ~_nan(a) & ~_nan(b)


# arith.cmpf's predicates by number: o* are false where an operand is NaN, u* true
_FCMP = {
    0: lambda a, b: _nan(a) & ~_nan(a),
    1: lambda a, b: a == b,
    2: lambda a, b: a > b,
    3: lambda a, b: a >= b,
    4: lambda a, b: a < b,
    5: lambda a, b: a <= b,
    6: lambda a, b: (a != b) & _ordered(a, b),
    7: _ordered,
    8: lambda a, b: (a == b) | ~_ordered(a, b),
    9: lambda a, b: ~(a <= b),
    10: lambda a, b: ~(a < b),
    11: lambda a, b: ~(a >= b),
    12: lambda a, b: ~(a > b),
    13: lambda a, b: ~(a == b),
    14: lambda a, b: ~_ordered(a, b),
    15: lambda a, b: _nan(a) | ~_nan(a),
}
_ICMP = {0: lambda a, b: a == b, 1: lambda a, b: a != b, 2: lambda a, b: a < b, 3: lambda a, b: a <= b,
         4: lambda a, b: a > b, 5: lambda a, b: a >= b, 6: lambda a, b: a < b, 7: lambda a, b: a <= b,
         8: lambda a, b: a > b, 9: lambda a, b: a >= b}


_BINARY = {
    arith.AddfOp: lambda a, b: a + b, arith.SubfOp: lambda a, b: a - b,
    arith.MulfOp: lambda a, b: a * b, arith.DivfOp: lambda a, b: a / b,
    arith.AddiOp: lambda a, b: a + b, arith.AndIOp: lambda a, b: a & b,
    arith.OrIOp: lambda a, b: a | b, arith.XOrIOp: lambda a, b: a ^ b,
}


def _static_bool(v):
    return bool(v) if V.is_static(v) else v


def drive(gen, pop: Population):
    """Run a region's generator to its end, performing each barrier it reaches; its values."""
    while True:
        try:
            site = next(gen)
        except StopIteration as stop:
            return stop.value
        pop.barrier(site)


def no_barrier(gen, op: Operation):
    """Run a generator that must not reach a barrier (a loop body run by lax.while_loop)."""
    try:
        next(gen)
    except StopIteration as stop:
        return stop.value
    raise refuse(op, "resample() inside a loop whose length is known only when it runs")


def element_dtypes(typ, fdtype, op: Operation) -> list:
    scalars = smc.scalars_of(typ.element.data)
    out = []
    for t in scalars:
        if isinstance(t, smc.ListHandleType):
            raise refuse(op, "a list of lists")
        out.append(jnp.bool_ if t == IntegerType(1) else fdtype)
    return out


class Evaluator:
    def __init__(self, pop: Population, sites: Sites):
        self.pop = pop
        self.sites = sites
        self.rows = None   # the stream loop's (more, row) while its before-region runs
        self.loops = 0     # lax.while_loops being traced: no arena allocation inside one

    # -- values ---------------------------------------------------------------------------------

    def value(self, env: dict, v: SSAValue):
        try:
            return env[v]
        except KeyError:
            if isinstance(v.owner, arith.ConstantOp):   # constants are rematerialised anywhere
                return self.constant(v.owner)
            raise

    @staticmethod
    def constant(op: arith.ConstantOp):
        attr = op.value
        if isinstance(attr, FloatAttr):
            return np.float64(attr.value.data)
        if attr.type == IntegerType(1):
            return np.bool_(attr.value.data != 0)
        return np.int64(attr.value.data)

    # -- regions ----------------------------------------------------------------------------------

    def region(self, region: Region, env: dict, args: list):
        """Generator: runs the region's single block with `args`; returns its terminator's values."""
        block = region.block
        env = dict(env)
        for a, v in zip(block.args, args):
            env[a] = v
        return self.ops(block.ops, env)

    def ops(self, ops, env: dict):
        for op in ops:
            if isinstance(op, scf.YieldOp | scf.ConditionOp | smc.FinishOp):
                return [self.value(env, v) for v in op.operands]
            if isinstance(op, scf.IfOp):
                results = yield from self.if_(op, env)
            elif isinstance(op, scf.WhileOp):
                results = yield from self.while_(op, env)
            elif isinstance(op, smc.ResampleOp):
                yield self.sites.of(op)
                results = []
            else:
                results = self.simple(op, env)
            for r, v in zip(op.results, results):
                env[r] = v
        return []

    # -- plain ops ----------------------------------------------------------------------------

    def simple(self, op: Operation, env: dict) -> list:
        val = lambda v: self.value(env, v)
        pop = self.pop
        if isinstance(op, arith.ConstantOp):
            return [self.constant(op)]
        fn = _BINARY.get(type(op))
        if fn is not None:
            return [V.lift(fn, fn, val(op.lhs), val(op.rhs))]
        if isinstance(op, arith.CmpfOp):
            return [V.lift(_FCMP[op.predicate.value.data], _FCMP[op.predicate.value.data], val(op.lhs), val(op.rhs))]
        if isinstance(op, arith.CmpiOp):
            return [V.lift(_ICMP[op.predicate.value.data], _ICMP[op.predicate.value.data], val(op.lhs), val(op.rhs))]
        if isinstance(op, arith.SelectOp):
            return [self.select(_static_bool(val(op.cond)), val(op.lhs), val(op.rhs))]
        if isinstance(op, arith.NegfOp):
            return [V.lift(lambda a: -a, lambda a: -a, val(op.operand))]
        if isinstance(op, math.SqrtOp):
            return [V.lift(np.sqrt, jnp.sqrt, val(op.operand))]
        if isinstance(op, math.LogOp):
            return [V.lift(np.log, jnp.log, val(op.operand))]
        if isinstance(op, arith.ExtUIOp):
            return [V.lift(lambda a: np.int64(a), lambda a: jnp.asarray(a).astype(jnp.int64), val(op.input))]
        if isinstance(op, arith.TruncIOp):
            return [V.lift(lambda a: np.bool_(a & 1), lambda a: (jnp.asarray(a) & 1).astype(jnp.bool_), val(op.input))]
        if isinstance(op, smc.SampleOp):
            name, params = op.family.data, self.params(op, [val(p) for p in op.params])
            self.check(op, name, params)
            return [F.sample(name, pop.draw_key(), params, (pop.n,), pop.fdtype)]
        if isinstance(op, smc.ObserveOp):
            name, params = op.family.data, self.params(op, [val(p) for p in op.params])
            self.check(op, name, params)
            pop.weigh(F.logpdf(name, params, V.weak(val(op.value))), self.sites.of(op))
            return []
        if isinstance(op, smc.FrameStoreOp):
            self.store((op.slot.value.data, str(op.value.type)), val(op.value))
            return []
        if isinstance(op, smc.FrameLoadOp):
            return [pop.frame[(op.slot.value.data, str(op.result.type))]]
        if isinstance(op, smc.NextRowOp):
            if self.rows is None:
                raise refuse(op, "a data stream read other than by the program's main fold")
            return list(self.rows)
        return self.list_op(op, val)

    def list_op(self, op: Operation, val) -> list:
        pop = self.pop
        if isinstance(op, smc.NilOp):
            return [V.JList(tuple(jnp.zeros((0,), d) for d in element_dtypes(op.result.type, pop.fdtype, op)), 0)]
        if isinstance(op, smc.ConstListOp):
            return [self.const_list(op)]
        if isinstance(op, smc.IsNilOp):
            return [V.lift(lambda n: n == 0, lambda n: n == 0, val(op.list).length)]
        if isinstance(op, smc.ConsOp):
            head, lst = [val(h) for h in op.head], val(op.tail)
            if isinstance(lst, V.AList) and not self.loops:
                return [pop.cells.cons(head, lst)]
            return [V.cons(head, self.columns(lst))]
        if isinstance(op, smc.HeadOp):
            lst = val(op.list)
            pop.fail(self.sites.of(op), EMPTY_HEAD, V.lift(lambda n: n == 0, lambda n: n == 0, lst.length))
            return pop.cells.head(lst) if isinstance(lst, V.AList) else V.head(lst)
        if isinstance(op, smc.TailOp):
            lst = val(op.list)
            pop.fail(self.sites.of(op), EMPTY_TAIL, V.lift(lambda n: n == 0, lambda n: n == 0, lst.length))
            return [pop.cells.tail(lst) if isinstance(lst, V.AList) else V.tail(lst)]
        if isinstance(op, smc.LengthOp):
            length = val(op.list).length
            return [np.float64(length) if V.is_static(length) else jnp.asarray(length).astype(pop.fdtype)]
        if isinstance(op, smc.ReverseOp):
            return [V.reverse(self.columns(val(op.list)))]
        if isinstance(op, smc.RangeOp):
            lo, hi = val(op.lo), val(op.hi)
            if not (V.is_static(lo) and V.is_static(hi)) or not (np.isfinite(lo) and np.isfinite(hi)) \
                    or int(hi) < int(lo) or int(hi) - int(lo) > 1 << 20:
                raise refuse(op, "List.range with bounds known only when the program runs")
            return [V.from_elements([[float(x)] for x in range(int(lo), int(hi))], [pop.fdtype])]
        raise refuse(op, f"the operation {op.name}")   # File.read and symbolic ops: refused by jax_program

    def const_list(self, op: smc.ConstListOp) -> V.JList:
        scalars = smc.scalars_of(op.result.type.element.data)
        dtypes = element_dtypes(op.result.type, self.pop.fdtype, op)
        words = np.asarray(op.words.get_values(), dtype=np.int64)
        width = len(scalars)
        elements = []
        for at in range(0, len(words), width):
            elements.append([bool(words[at + k]) if d is jnp.bool_ else float(words[at + k:at + k + 1].view(np.float64)[0])
                             for k, d in enumerate(dtypes)])
        return V.from_elements(elements, dtypes)

    def params(self, op, params: list) -> list:
        if op.family.data == "categorical":
            probs = params[2]
            if len(probs.cols) != 1:
                raise refuse(op, "categorical probabilities that are not a list of floats")
            probs = self.columns(probs)
            params = [params[0], params[1], F.categorical_probs(probs.cols[0], probs.length, probs.cap)]
        return [V.weak(p) if V.is_static(p) else p for p in params]

    def check(self, op, name: str, params: list) -> None:
        site = self.sites.of(op)
        readable = F.check_params(name, [np.float64(p) if isinstance(p, float | int) else p for p in params])
        for kind, (bad, _message, shown) in enumerate(F.CHECKS[name]):
            self.pop.fail(site, kind, bad(readable), readable[shown])

    def store(self, key, v) -> None:
        frame, mask = self.pop.frame, self.pop.mask
        if mask is not None and key in frame:
            v = self.select(mask, v, frame[key])
        frame[key] = v

    def columns(self, v):
        """A list as columns (an arena list's cells gathered): what operations other than
        cons, head and tail take."""
        return self.pop.cells.to_jlist(v) if isinstance(v, V.AList) else v

    def select(self, cond, a, b):
        """V.select, with a column list and an arena list made one kind first."""
        if isinstance(a, V.AList) != isinstance(b, V.AList) and isinstance(a, V.JList | V.AList):
            if self.loops:
                a, b = self.columns(a), self.columns(b)
            else:
                a, b = (self.pop.cells.from_jlist(x) if isinstance(x, V.JList) else x for x in (a, b))
        return V.select(cond, a, b)

    # -- scf.if -------------------------------------------------------------------------------------

    def if_(self, op: scf.IfOp, env: dict):
        cond = _static_bool(self.value(env, op.cond))
        if V.is_static(cond):
            return (yield from self.region(op.true_region if cond else op.false_region, env, []))
        pop = self.pop
        outer = pop.mask
        then_mask = cond if outer is None else outer & cond
        else_mask = ~cond if outer is None else outer & ~cond
        keys = [pop.hold(cond), pop.hold(then_mask), pop.hold(else_mask)]
        branches = [self.region(op.true_region, env, []), self.region(op.false_region, env, [])]
        done: list = [None, None]
        while True:
            stopped = []
            for k, gen in enumerate(branches):
                if done[k] is not None:
                    stopped.append(None)
                    continue
                pop.masks.append(pop.held[keys[1 + k]])
                try:
                    stopped.append(next(gen))
                except StopIteration as stop:
                    done[k] = stop.value
                    stopped.append(None)
                pop.masks.pop()
            if all(s is None for s in stopped):
                break
            if any(s is None for s in stopped):
                raise refuse(op, "a resample() in one branch of a condition that differs between particles, "
                                 "and not in the other")
            yield stopped[0]
        cond = pop.held[keys[0]]
        for k in keys:
            del pop.held[k]
        return [self.select(cond, a, b) for a, b in zip(done[0], done[1])]

    # -- scf.while ------------------------------------------------------------------------------

    def while_(self, op: scf.WhileOp, env: dict):
        args = [self.value(env, a) for a in op.arguments]
        for _ in range(UNROLL_LIMIT):
            cond, cargs = self.before(op, env, args)
            if not V.is_static(cond):
                break
            if not cond:
                return cargs
            args = yield from self.region(op.after_region, env, cargs)
        return self.dynamic_while(op, env, args)

    def before(self, op: scf.WhileOp, env: dict, args: list):
        values = no_barrier(self.region(op.before_region, env, args), op)
        return _static_bool(values[0]), values[1:]

    def dynamic_while(self, op: scf.WhileOp, env: dict, args: list):
        """The loop as a lax.while_loop that runs until no particle goes on. A list that grows in
        it gets room for as many steps as the longest list that does not grow has cells (a loop
        over a list that builds another, as List.map does); more is a run-time error here."""
        pop = self.pop
        for inner in op.walk():
            if isinstance(inner, smc.FrameStoreOp | smc.FrameLoadOp | smc.ResampleOp | smc.NextRowOp):
                raise refuse(inner, "a suspension inside a loop whose length is known only when it runs")
        n = pop.n
        args = [self.columns(a) for a in args]
        carry0 = [_list_like(a.dynamic(), a, n) if isinstance(a, V.JList) else V.per_particle(a, n) for a in args]
        active0 = jnp.ones((n,), jnp.bool_) if pop.mask is None else jnp.broadcast_to(pop.mask, (n,))

        def iterate(args, active, pstate):
            self.loops += 1
            try:
                return step(args, active, pstate)
            finally:
                self.loops -= 1

        def step(args, active, pstate):
            pop.load(pstate)
            cond, cargs = self.before(op, env, args)
            act = active & cond
            pop.masks.append(act)
            new = no_barrier(self.region(op.after_region, env, cargs), op)
            pop.masks.pop()
            return new, act

        saved = pop.state()
        probe = jax.eval_shape(lambda a, s: iterate(a, active0, s)[0], carry0, saved)
        pop.load(saved)
        growth = [max(p.cap - a.cap, 0) if isinstance(a, V.JList) else 0 for p, a in zip(probe, carry0)]
        if any(growth):
            bound = max((a.cap for a, g in zip(carry0, growth) if isinstance(a, V.JList) and not g), default=0)
            if not bound:
                raise refuse(op, "a list that grows in a loop whose length is known only when it runs")
            carry0 = [V.JList(a.padded(a.cap + g * bound).cols, a.length, g) if g else a
                      for a, g in zip(carry0, growth)]
        site = self.sites.of(op)

        def body(state):
            args, active, pstate = state
            new, act = iterate(args, active, pstate)
            out = []
            for a, b in zip(new, args):
                if isinstance(b, V.JList):
                    a = V.per_particle(self.columns(a), n)
                    pop.fail(site, CAPACITY, act & (a.length > b.cap))
                    out.append(_list_like(V.select(act, a.resized(b.cap), b), b, n))
                else:
                    out.append(V.per_particle(V.select(act, a, b), n).astype(b.dtype))
            return out, act, pop.state()

        final_args, _, final_state = jax.lax.while_loop(lambda s: jnp.any(s[1]), body,
                                                        (carry0, active0, pop.state()))
        pop.load(final_state)
        # a list's room was promised for the steps it took, not past the last one
        final_args = [V.JList(a.cols, a.length, 0) if isinstance(a, V.JList) else a for a in final_args]
        _, cargs = self.before(op, env, final_args)
        return cargs


def _list_like(v: V.JList, like: V.JList, n: int) -> V.JList:
    v = V.per_particle(v, n)
    return V.JList(tuple(c.astype(d.dtype) for c, d in zip(v.cols, like.cols)), v.length.astype(jnp.int32), like.room)
