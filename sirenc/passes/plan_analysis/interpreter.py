"""Abstract evaluation of the inlined ``siren`` IR (ARCHITECTURE.md §17.3-17.5, 17.8).

After ``inline-functions`` the program is one ``func.func @main`` whose ops
are in evaluation order, with ``siren.if``/``siren.fold``/``siren.map``
regions.  The interpreter walks them once, keeping an abstract value per live
SSA value (the variable context), and hands every random-variable operation
to the abstract algorithm::

    result, state = Interpreter(SSIState(Shared())).run(main_func)

Differences from the concrete evaluator are those of ARCHITECTURE.md §17.3: ``resample``
is a no-op, files are lists of unknown length, an unknown ``if`` condition
evaluates both branches and joins them, and a ``fold`` over an unknown list
is a fixpoint (17.5).  ``List.map`` over an unknown list analyses the mapped
body with the same fixpoint (ARCHITECTURE.md §21 item 28).
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import func
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, StringAttr, UnitAttr
from xdsl.ir import Block, Operation, SSAValue

from sirenc.ir import siren
from sirenc.ir.locations import span_of
from sirenc.passes.plan_analysis import domain as D
from sirenc.passes.plan_analysis.base import UnknownOperation
from sirenc.passes.plan_analysis.domain import (
    TOP, TOPD, UNK, UNKC, UNIT, Const, Delta, Dist, Distr, Expr, Lst, TopE, UnkD, UnkE,
)
from sirenc.passes.plan_analysis.state import AbsState, Cause, GiveUp

MAX_ITERATIONS = 64        # fixpoint iterations before giving up
MAX_UNROLL = 10_000        # longest List.range the analysis unrolls


def _const_value(attr):
    if isinstance(attr, FloatAttr):
        return float(attr.value.data)
    if isinstance(attr, IntegerAttr):
        return bool(attr.value.data)
    if isinstance(attr, UnitAttr):
        return None
    if isinstance(attr, StringAttr):
        return attr.data
    return UNK


def project(e: Expr, index: int) -> Expr:
    """Component ``index`` of a pair value (also through a symbolic ``ite``)."""
    t = type(e)
    if t is D.Pair:
        return e.args[index]
    if t is D.Ite:
        c, a, b = e.args
        return D.Ite(c, project(a, index), project(b, index))
    if t is UnkE:
        return e
    if t is Const:
        return UNKC
    return TOP


class _Consing:
    """A known list a run of ``siren.cons`` ops is still building (a list literal
    ``[e1, ..., en]`` is n of them in a row, each the only user of the one before):
    its items in reverse, so that each cons appends one in O(1).  Only the next cons
    sees it; the last one makes the ``Lst`` node.  Building a node per cons copied
    and hashed the whole list each time: quadratic, and the analysis gave up on
    literals of a few thousand elements within its budget (issue 11)."""

    __slots__ = ("reversed_items",)

    def __init__(self, reversed_items: list[Expr]):
        self.reversed_items = reversed_items


def _feeds_next_cons(op: Operation) -> bool:
    """Whether ``op``'s result is used once, as the tail of the cons right after it."""
    result = op.results[0]
    nxt = op.next_op
    return (type(nxt) is siren.ConsOp and result.has_one_use() and nxt.tail is result
            and nxt.head is not result)


def to_distr(v: Expr) -> Distr:
    """The distribution an ``assume``/``observe`` receives."""
    t = type(v)
    if t is D.DistV:
        if v.family == "delta":
            return Delta(v.args[0], sampled=False)
        return Dist(v.family, v.args)
    if t is TopE:
        return TOPD
    return UnkD(v.rvs())


class Interpreter:
    def __init__(self, state: AbsState):
        self.state = state
        self.shared = state.shared
        self._liveness: dict[int, dict[int, list[SSAValue]]] = {}
        self._pure: dict[int, bool] = {}

    # ---- entry point ----------------------------------------------------------------

    def run(self, main: func.FuncOp) -> tuple[Expr, AbsState]:
        value, state = self.block(main.body.block, self.state, [])
        return value, state

    def final_expectation(self, value: Expr, state: AbsState, op: Operation | None) -> None:
        """Simulate computing the posterior mean of the result (ARCHITECTURE.md §17.8)."""
        self.shared.cause = Cause(op, "result")
        self._mean(value, state)

    def _mean(self, e: Expr, state: AbsState) -> None:
        t = type(e)
        if t is D.DistV or t is TopE:
            return
        if t is UnkE:
            # The elements a summary stands for are averaged too (the original
            # skipped them, which can hide a sampling in the final expectation).
            state.mean(e)
            return
        if t is D.Pair or t is Lst:
            for k in e.args:
                self._mean(k, state)
            return
        state.mean(e)

    # ---- blocks ---------------------------------------------------------------------------

    def block(self, block: Block, state: AbsState, args: list[Expr]) -> tuple[Expr, AbsState]:
        dying = self._dying(block)
        env = state.env
        for arg, value in zip(block.args, args, strict=True):
            env[arg] = value
        for v in dying.get(-1, ()):
            env.pop(v, None)
        result: Expr = UNIT
        for i, op in enumerate(block.ops):
            self.shared.tick()
            if isinstance(op, TERMINATORS):
                operands = op.operands
                result = state.env[operands[0]] if operands else UNIT
                if isinstance(op, func.ReturnOp):
                    where = op.operands[0].owner if op.operands else op
                    self.final_expectation(result, state, where if isinstance(where, Operation) else op)
            else:
                state = self.op(op, state)
            for v in dying.get(i, ()):
                state.env.pop(v, None)
        return result, state

    def _dying(self, block: Block) -> dict[int, list[SSAValue]]:
        """For each op index of ``block``, the values defined in it that die there."""
        cached = self._liveness.get(id(block))
        if cached is not None:
            return cached
        index = {id(op): i for i, op in enumerate(block.ops)}
        defined: list[tuple[SSAValue, int]] = [(a, -1) for a in block.args]
        for i, op in enumerate(block.ops):
            defined.extend((r, i) for r in op.results)
        dying: dict[int, list[SSAValue]] = {}
        for value, at in defined:
            last = at
            for use in value.uses:
                user = use.operation
                while user is not None and id(user) not in index:
                    user = user.parent_op()
                if user is not None:
                    last = max(last, index[id(user)])
            dying.setdefault(last, []).append(value)
        self._liveness[id(block)] = dying
        return dying

    def _is_pure(self, op: Operation) -> bool:
        hit = self._pure.get(id(op))
        if hit is None:
            hit = not any(
                isinstance(inner, (siren.ObserveOp, siren.ResampleOp))
                for region in op.regions for inner in region.walk()
            )
            self._pure[id(op)] = hit
        return hit

    # ---- operations -------------------------------------------------------------------------

    def op(self, op: Operation, state: AbsState) -> AbsState:
        rule = RULES.get(type(op))
        if rule is None:
            # An unknown value would pass over whatever the op does (unsound).
            where = span_of(op)
            raise UnknownOperation(
                f"plan-analysis has no rule for '{op.name}'" + (f" (at {where})" if where else ""))
        return rule(self, op, state)

    def _set(self, state: AbsState, op: Operation, value: Expr) -> AbsState:
        state.env[op.results[0]] = value
        return state

    def _arg(self, state: AbsState, value: SSAValue) -> Expr:
        return state.env[value]

    def _op_const(self, op, state):
        return self._set(state, op, Const(_const_value(op.value)))

    def _binary(self, op, state, build):
        return self._set(state, op, build(self._arg(state, op.lhs), self._arg(state, op.rhs)))

    def _op_add(self, op, state):
        return self._binary(op, state, D.Add)

    def _op_sub(self, op, state):
        return self._binary(op, state, D.sub)

    def _op_mul(self, op, state):
        return self._binary(op, state, D.Mul)

    def _op_div(self, op, state):
        return self._binary(op, state, D.Div)

    def _op_eq(self, op, state):
        return self._binary(op, state, D.Eq)

    def _op_lt(self, op, state):
        return self._binary(op, state, D.Lt)

    def _op_neg(self, op, state):
        return self._set(state, op, D.neg(self._arg(state, op.operand)))

    def _op_bool_to_float(self, op, state):
        # The original computes with the bool itself (Python's True is 1): the value stays.
        v = self._arg(state, op.operand)
        if type(v) is Const and isinstance(v.v, bool):
            v = Const(float(v.v))
        return self._set(state, op, v)

    def _op_float_to_bool(self, op, state):
        # The original tests the number itself (Python's truthiness): the value stays.
        v = self._arg(state, op.operand)
        if type(v) is Const and v.v is not UNK and isinstance(v.v, (int, float)):
            v = Const(bool(v.v))
        return self._set(state, op, v)

    def _op_pair(self, op, state):
        return self._set(state, op, D.Pair(self._arg(state, op.first), self._arg(state, op.second)))

    def _op_fst(self, op, state):
        return self._set(state, op, project(self._arg(state, op.pair), 0))

    def _op_snd(self, op, state):
        return self._set(state, op, project(self._arg(state, op.pair), 1))

    # -- lists (ARCHITECTURE.md §17.3) --

    def _op_nil(self, op, state):
        return self._set(state, op, Lst())

    def _op_cons(self, op, state):
        head, tail = self._arg(state, op.head), self._arg(state, op.tail)
        if type(tail) is _Consing:   # the run of conses goes on: this op owns the items now
            reversed_items = tail.reversed_items
            reversed_items.append(head)
            if _feeds_next_cons(op):
                return self._set(state, op, _Consing(reversed_items))
            return self._set(state, op, Lst(*reversed(reversed_items)))
        items = D.as_list(tail)
        if isinstance(items, tuple):
            if _feeds_next_cons(op):
                return self._set(state, op, _Consing([*reversed(items), head]))
            return self._set(state, op, Lst(head, *items))
        if type(items) is TopE:
            return self._set(state, op, TOP)
        return self._set(state, op, UnkE(list(head.rvs()) + list(items.rvs())))

    def _op_hd(self, op, state):
        items = D.as_list(self._arg(state, op.operand))
        if isinstance(items, tuple):
            return self._set(state, op, items[0] if items else UnkE())
        return self._set(state, op, items)

    def _op_tl(self, op, state):
        lst = self._arg(state, op.operand)
        items = D.as_list(lst)
        if isinstance(items, tuple):
            if not items:
                return self._set(state, op, UnkE())
            if type(items[0]) is UnkE:
                return self._set(state, op, lst)
            return self._set(state, op, Lst(*items[1:]))
        return self._set(state, op, items)

    def _op_len(self, op, state):
        items = D.as_list(self._arg(state, op.operand))
        if isinstance(items, tuple):
            return self._set(state, op, Const(float(len(items))))
        return self._set(state, op, UNKC)

    def _op_rev(self, op, state):
        items = D.as_list(self._arg(state, op.operand))
        if isinstance(items, tuple):
            return self._set(state, op, Lst(*reversed(items)))
        return self._set(state, op, items)

    def _op_range(self, op, state):
        lo = state.eval(self._arg(state, op.lo))
        hi = state.eval(self._arg(state, op.hi))
        if type(lo) is Const and type(hi) is Const and _number(lo.v) and _number(hi.v):
            try:
                a, b = int(lo.v), int(hi.v)
            except (OverflowError, ValueError):
                return self._set(state, op, UnkE())
            if b - a <= MAX_UNROLL:
                return self._set(state, op, Lst(*(Const(float(i)) for i in range(a, b))))
        return self._set(state, op, UnkE())

    def _op_file_read(self, op, state):
        return self._set(state, op, UnkE())

    # -- distributions and random variables --

    def _op_dist(self, op, state):
        family = op.family.data
        params = [self._arg(state, p) for p in op.params]
        if family == "exponential":
            value = D.DistV("gamma", Const(1.0), params[0])
        elif family == "uniform_int":
            a, b = (state.eval(p) for p in params)
            if type(a) is Const and type(b) is Const and _number(a.v) and _number(b.v) and a.v <= b.v:
                n = int(b.v) - int(a.v) + 1
                value = D.DistV("categorical", a, b, Const(tuple([1.0 / n] * n)) if n <= MAX_UNROLL else UNKC)
            else:
                value = D.DistV("categorical", UNKC, UNKC, UNKC)
        else:
            value = D.DistV(family, *params)
        return self._set(state, op, value)

    def _op_assume(self, op, state):
        name = op.var.data
        ann = op.annotation.data if op.annotation is not None else None
        self.shared.cause = Cause(op, "assume")
        d = to_distr(self._arg(state, op.dist))
        rv = state.assume(name, ann, d)
        state.plan_assume(name)
        self.shared.note_name(name)
        value: Expr = rv
        if ann == "sample":
            value = state.value(rv)
        return self._set(state, op, value)

    def _op_observe(self, op, state):
        d = to_distr(self._arg(state, op.dist))
        self.shared.cause = Cause(op, "observe-assume")
        rv = state.assume(None, None, d)
        self.shared.cause = Cause(op, "observe-value")
        v = state.value_expr(self._arg(state, op.value))
        self.shared.cause = Cause(op, "observe")
        state.observe(rv, v)
        return self._set(state, op, UNIT)

    def _op_resample(self, op, state):
        return self._set(state, op, UNIT)

    # The coercions of `symbolic-values` (which runs after the analysis; these rules let a
    # retyped program be analysed again): to_sym changes no value, force is value_expr.
    def _op_to_sym(self, op, state):
        return self._set(state, op, self._arg(state, op.operand))

    def _op_force(self, op, state):
        self.shared.cause = Cause(op, "force")
        return self._set(state, op, state.value_expr(self._arg(state, op.operand)))

    # -- control --

    def _op_if(self, op, state):
        cond = self._arg(state, op.cond)
        then_block, else_block = op.then_region.block, op.else_region.block
        # A distribution is built from concrete parameters of one branch: the
        # condition of an `if` choosing a distribution is forced.
        if cond.rvs() and self._is_pure(op) and not _holds_distribution(op.result.type):
            vt, state = self.block(then_block, state, [])
            vf, state = self.block(else_block, state, [])
            self.shared.cause = Cause(op, "ite")
            return self._set(state, op, state.ite(cond, vt, vf))
        self.shared.cause = Cause(op, "condition")
        c = state.value_expr(cond)
        if c.v is not UNK:
            v, state = self.block(then_block if c.v else else_block, state, [])
            return self._set(state, op, v)
        then_state = state.copy()
        vt, then_state = self.block(then_block, then_state, [])
        state.counter = max(state.counter, then_state.counter)
        else_state = state.copy()
        vf, else_state = self.block(else_block, else_state, [])
        self.shared.cause = Cause(op, "if-join")
        v = then_state.narrow_join_expr(vt, vf, else_state)
        return self._set(then_state, op, v)

    def _op_fold(self, op, state):
        lst = self._arg(state, op.list)
        acc = self._arg(state, op.init)
        body = op.body.block
        self._drop_dead_operands(op, state)
        items = D.as_list(lst)
        if isinstance(items, tuple):
            for item in items:
                acc, state = self.block(body, state, [item, acc])
            return self._set(state, op, acc)

        def step(st: AbsState, acc_in: Expr) -> tuple[Expr, AbsState]:
            return self.block(body, st, [lst, acc_in])

        acc, state = self._fixpoint(op, state, acc, step)
        return self._set(state, op, acc)

    def _op_map(self, op, state):
        lst = self._arg(state, op.list)
        body = op.body.block
        self._drop_dead_operands(op, state)
        items = D.as_list(lst)
        if isinstance(items, tuple):
            out = []
            for item in items:
                y, state = self.block(body, state, [item])
                out.append(y)
            return self._set(state, op, Lst(*out))

        def step(st: AbsState, acc_in: Expr) -> tuple[Expr, AbsState]:
            y, st = self.block(body, st, [lst])
            if type(acc_in) is TopE or y._top:
                return TOP, st
            # The elements only matter through the variables they still depend on.
            return st.eval(UnkE(list(acc_in.rvs()) + list(y.rvs()))), st

        acc, state = self._fixpoint(op, state, UnkE(lst.rvs()), step)
        return self._set(state, op, acc)

    def _drop_dead_operands(self, op: Operation, state: AbsState) -> None:
        """Operands whose last use is ``op`` are not part of the loop's context."""
        block = op.parent_block()
        if block is None:
            return
        i = next(k for k, o in enumerate(block.ops) if o is op)
        for v in self._dying(block).get(i, ()):
            if v in op.operands:
                state.env.pop(v, None)

    def _fixpoint(self, op, state: AbsState, acc: Expr, step) -> tuple[Expr, AbsState]:
        """Iterate one abstract step and join until nothing changes (ARCHITECTURE.md §17.5)."""
        for _ in range(MAX_ITERATIONS):
            old = state.copy()
            body_state = state.copy()
            acc2, body_state = step(body_state, acc)
            self.shared.cause = Cause(op, "loop-join")
            acc_new = state.narrow_join_expr(acc, acc2, body_state)
            state.clean([acc_new])
            if acc_new == acc and state.same_entries(old):
                return acc_new, state
            acc = acc_new
        raise GiveUp("the loop analysis did not converge")


# The rule for every operation an inlined ``@main`` holds, besides the
# terminators that ``block`` reads.  Anything else (``func.call`` before
# inlining, another dialect's op) is an ``UnknownOperation``: a bug in sirenc.
TERMINATORS = (siren.YieldOp, func.ReturnOp)
RULES: dict[type[Operation], Callable[[Interpreter, Operation, AbsState], AbsState]] = {
    siren.ConstOp: Interpreter._op_const,
    siren.AddOp: Interpreter._op_add,
    siren.SubOp: Interpreter._op_sub,
    siren.MulOp: Interpreter._op_mul,
    siren.DivOp: Interpreter._op_div,
    siren.EqOp: Interpreter._op_eq,
    siren.LtOp: Interpreter._op_lt,
    siren.NegOp: Interpreter._op_neg,
    siren.BoolToFloatOp: Interpreter._op_bool_to_float,
    siren.FloatToBoolOp: Interpreter._op_float_to_bool,
    siren.PairOp: Interpreter._op_pair,
    siren.FstOp: Interpreter._op_fst,
    siren.SndOp: Interpreter._op_snd,
    siren.NilOp: Interpreter._op_nil,
    siren.ConsOp: Interpreter._op_cons,
    siren.HdOp: Interpreter._op_hd,
    siren.TlOp: Interpreter._op_tl,
    siren.LenOp: Interpreter._op_len,
    siren.RevOp: Interpreter._op_rev,
    siren.RangeOp: Interpreter._op_range,
    siren.FileReadOp: Interpreter._op_file_read,
    siren.DistOp: Interpreter._op_dist,
    siren.AssumeOp: Interpreter._op_assume,
    siren.ObserveOp: Interpreter._op_observe,
    siren.ResampleOp: Interpreter._op_resample,
    siren.IfOp: Interpreter._op_if,
    siren.FoldOp: Interpreter._op_fold,
    siren.MapOp: Interpreter._op_map,
    siren.ToSymOp: Interpreter._op_to_sym,
    siren.ForceOp: Interpreter._op_force,
}


def _holds_distribution(t) -> bool:
    return siren.holds(t, lambda leaf: isinstance(leaf, siren.DistType))


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) or isinstance(v, bool)


__all__ = ["Interpreter", "RULES", "TERMINATORS", "project", "to_distr", "TOPD"]
