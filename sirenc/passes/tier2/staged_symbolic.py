"""The symbolic engine of the runtime (ARCHITECTURE.md §6.3, 10-14) run at compile time on structure alone.

`specialize-conjugacy` runs a program's symbolic operations here instead of in the runtime. The
structure of every expression and random variable (which variables, families, parents) is known
while compiling; only numbers are not. A number is a `float` when the compiler knows it, else
the `SSAValue` (an `f64` of the `siren` program being built) that will hold it: arithmetic on
numbers emits `siren` arithmetic (`Emitter`), so each conjugate update becomes straight-line code.

What the engine cannot decide from structure alone (a symbolic comparison, a coefficient known
only at run time), raises `NotSpecialisable` with the reason: the program then stays on the
general runtime (tier 1), which handles everything. The rules below mirror the runtime's
(`runtime_c/src/engine/expr.c`, `conjugacy.c`, `hoist.c`, `ds.c`) one for one, formulas in the same
order, so that the numbers agree with tier 1 to rounding.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from xdsl.dialects.builtin import f64
from xdsl.ir import Attribute, Block, Operation, SSAValue

from sirenc.ir import siren

Num = float | SSAValue


class IdMemo:
    """A map keyed by object identity that keeps its keys alive. A bare `id()` is an address, which
    a freed object's successor may reuse; the staging here frees nodes while it walks (eval
    replaces parameters in place), so a memo of bare ids could answer for an object it never saw,
    and the tier a program gets would depend on the memory layout."""

    __slots__ = ("_d",)

    def __init__(self, items=()):
        self._d: dict[int, tuple[object, object]] = {}
        for k, v in items:
            self[k] = v

    def get(self, key, default=None):
        got = self._d.get(id(key))
        return default if got is None else got[1]

    def __contains__(self, key) -> bool:
        return id(key) in self._d

    def __getitem__(self, key):
        return self._d[id(key)][1]

    def __setitem__(self, key, value) -> None:
        self._d[id(key)] = (key, value)

    def __len__(self) -> int:
        return len(self._d)


class NotSpecialisable(Exception):
    """The program cannot run on tier 2; `reason` says why, `op` is where (or None)."""

    def __init__(self, reason: str, op: Operation | None = None):
        super().__init__(reason)
        self.reason = reason
        self.op = op


class Fork(Exception):
    """The rest of a loop body depends on `cond`, a number known only at run time, through the
    structure of its symbolic values (an if between symbolic values of different variables):
    `specialize_conjugacy` runs the body again once with `cond` true and once false."""

    def __init__(self, cond: SSAValue):
        super().__init__("fork")
        self.cond = cond


def truth_of(v: SSAValue) -> SSAValue:
    """The value whose truth `v`'s is, through bool-float conversions (which keep truth)."""
    while isinstance(v.owner, siren.BoolToFloatOp | siren.FloatToBoolOp):
        v = v.owner.operand
    return v


# -- numbers: folded when known, emitted when not -------------------------------------------------


@dataclass
class Emitter:
    """Appends `siren` ops computing numbers to `block`, located at `location`.

    Paths (`loops.Loops._explore`): while a loop body runs once per value of the run-time
    conditions its structure depends on, `script` holds the body's straight line as segments
    (block, ops already emitted there), one per decided condition, and `decided` each condition's
    value and the segment it ends. A run replays the ops of every segment but the last (the same
    Python runs on the same values, so it builds the same ops: each is checked and the one built
    before is used), switches to the next segment at a decided condition's first use, and emits
    fresh ops in the last."""

    block: Block | None = None
    location: Attribute | None = None
    script: list[tuple[Block, list[Operation]]] | None = None
    decided: dict[SSAValue, tuple[bool, int]] = field(default_factory=dict)
    segment: int = 0
    position: int = 0

    def add(self, op: Operation) -> Operation:
        if self.script is not None and self.block is self.script[self.segment][0]:
            recorded = self.script[self.segment][1]
            if self.position < len(recorded):
                old = recorded[self.position]
                self.position += 1
                if type(old) is not type(op) or list(old.operands) != list(op.operands) or \
                        old.attributes != op.attributes or old.properties != op.properties:
                    raise NotSpecialisable("internal: a loop body built different code on a second run")
                op.erase(safe_erase=False)
                return old
            if self.segment != len(self.script) - 1:
                raise NotSpecialisable("internal: a loop body's run left a path early")
        if self.location is not None:
            op.location = self.location
        assert self.block is not None
        self.block.add_op(op)
        return op

    def is_decided(self, cond: SSAValue) -> bool:
        return truth_of(cond) in self.decided

    def decide(self, cond: SSAValue, reason: str) -> bool:
        """The truth of `cond`, a run-time number or bool, on the path being run: a decided one's
        (at its first use, the straight line continues in its segment); an undecided one forks the
        path where that is possible (the straight line of a loop body), else `reason` is raised."""
        root = truth_of(cond)
        got = self.decided.get(root)
        if got is not None:
            value, ends = got
            if self.script is not None and ends == self.segment and self.block is self.script[ends][0]:
                if self.position != len(self.script[ends][1]):
                    raise NotSpecialisable("internal: a loop body decided a condition at another point")
                self.segment, self.position = ends + 1, 0
                self.block = self.script[ends + 1][0]
            return value
        if self.can_fork():
            raise Fork(root)
        raise NotSpecialisable(reason)

    def can_fork(self) -> bool:
        """Whether ops go to the end of a loop body's straight line, where a path may fork."""
        return self.script is not None and self.segment == len(self.script) - 1 and self.block is self.script[-1][0]

    def result(self, op: Operation) -> SSAValue:
        return self.add(op).results[0]

    def const(self, x: float) -> SSAValue:
        return self.add(siren.ConstOp(float(x))).result

    def num(self, x: Num) -> SSAValue:
        return self.const(x) if isinstance(x, float) else x

    def arith(self, cls, a: Num, b: Num) -> Num:
        if isinstance(a, float) and isinstance(b, float):
            return _FOLD[cls](a, b)
        return self.add(cls(self.num(a), self.num(b))).result

    def compare(self, cls, a: Num, b: Num) -> Num:
        """1.0 or 0.0: a < b (LtOp) or a == b (EqOp)."""
        if isinstance(a, float) and isinstance(b, float):
            return float(a < b if cls is siren.LtOp else a == b)
        flag = self.add(cls(self.num(a), self.num(b))).result
        return self.add(siren.BoolToFloatOp(flag)).result

    def select(self, cond: Num, t: Num, f: Num) -> Num:
        """`t` where `cond` is true (not 0), else `f`: a pure `siren.if`."""
        if isinstance(cond, float):
            return t if (cond != 0.0 or math.isnan(cond)) else f
        c = self.add(siren.FloatToBoolOp(cond)).result
        then_block, else_block = Block(), Block()
        for block, value in ((then_block, t), (else_block, f)):
            saved, self.block = self.block, block
            self.add(siren.YieldOp(self.num(value)))
            self.block = saved
        return self.add(siren.IfOp(c, f64, then_block, else_block)).result


def _div(a: float, b: float) -> float:
    if b == 0.0:   # IEEE, as the runtime computes it
        return math.nan if a == 0.0 or math.isnan(a) else math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b


_FOLD = {siren.AddOp: lambda a, b: a + b, siren.SubOp: lambda a, b: a - b,
         siren.MulOp: lambda a, b: a * b, siren.DivOp: _div}


# -- expressions (ARCHITECTURE.md §6.2) and their smart constructors (6.3) -------------------------------------


class Expr:
    __slots__ = ()


class K(Expr):
    """A constant: a known float or a number computed at run time."""

    __slots__ = ("v",)

    def __init__(self, v: Num):
        self.v = v

    @property
    def static(self) -> bool:
        return isinstance(self.v, float)


class R(Expr):
    __slots__ = ("rv",)

    def __init__(self, rv: RV):
        self.rv = rv


class Node(Expr):
    """kind: "add", "mul", "div", "lt", "eq" or "ite" (args: cond, then, else)."""

    __slots__ = ("kind", "args")

    def __init__(self, kind: str, *args: Expr):
        self.kind = kind
        self.args = args


def is_static(e: Expr, value: float) -> bool:
    return isinstance(e, K) and e.static and e.v == value


def rvs_of(e: Expr) -> list[RV]:
    """The random variables `e` mentions, left to right, with repeats (each shared node once)."""
    out: list[RV] = []
    seen: set[int] = set()
    stack = [e]
    while stack:
        x = stack.pop()
        if id(x) in seen:
            continue
        seen.add(id(x))
        if isinstance(x, R):
            out.append(x.rv)
        elif isinstance(x, Node):
            stack.extend(reversed(x.args))
    return out


def occurs(e: Expr, rv: RV) -> bool:
    return any(r is rv for r in rvs_of(e))


@dataclass
class RV:
    """A random variable: its distribution (family, parameter expressions) while symbolic, its
    value once realized. `ds_*`: delayed sampling's node state (ARCHITECTURE.md §13.1), structure only."""

    family: str
    params: list[Expr]
    var: str = ""
    ann: str | None = None
    value: Num | None = None          # realized: the point mass
    sampled: bool = False
    ds_state: str = "M"               # "I"nitialized, "M"arginalized, "R"ealized
    serial: int = -1                  # creation order (Engine.new_rv); -1: a loop's copy
    ds_parent: RV | None = None
    children: list[RV] = field(default_factory=list)

    @property
    def realized(self) -> bool:
        return self.value is not None


def name_of(rv: RV) -> str:
    """A variable as a message names it."""
    return f"'{rv.var}'" if rv.var else "an observed value"


class Builder:
    """The smart constructors, emitting the arithmetic of constant operands."""

    def __init__(self, emit: Emitter, on_rewrite=None):
        self.emit = emit
        self.on_rewrite = on_rewrite   # called with a variable whose parameters eval rewrote

    @staticmethod
    def _const_child(e: Expr, kind: str) -> tuple[K, Expr] | None:
        """(k, x) when e is a `kind` node with a constant child k (the left one first) and x the other."""
        if isinstance(e, Node) and e.kind == kind:
            for i in (0, 1):
                if isinstance(e.args[i], K):
                    return e.args[i], e.args[1 - i]
        return None

    def add(self, a: Expr, b: Expr) -> Expr:
        ca = isinstance(a, K)
        if ca and isinstance(b, K):
            return K(self.emit.arith(siren.AddOp, a.v, b.v))
        kx = self._const_child(b, "add") if ca else None
        if kx is not None:
            return self.add(K(self.emit.arith(siren.AddOp, a.v, kx[0].v)), kx[1])
        if isinstance(a, Node) and a.kind == "add" and isinstance(a.args[0], K):
            return self.add(a.args[0], self.add(a.args[1], b))
        if is_static(a, 0.0):
            return b
        if is_static(b, 0.0):
            return a
        return Node("add", a, b)

    def mul(self, a: Expr, b: Expr) -> Expr:
        ca = isinstance(a, K)
        if ca and isinstance(b, K):
            return K(self.emit.arith(siren.MulOp, a.v, b.v))
        kx = self._const_child(b, "mul") if ca else None
        if kx is not None:
            return self.mul(K(self.emit.arith(siren.MulOp, a.v, kx[0].v)), kx[1])
        if ca and isinstance(b, Node) and b.kind == "add" and isinstance(b.args[0], K):
            return self.add(K(self.emit.arith(siren.MulOp, a.v, b.args[0].v)), self.mul(a, b.args[1]))
        if is_static(a, 0.0):
            return a
        if is_static(b, 0.0):
            return b
        return Node("mul", a, b)

    def div(self, a: Expr, b: Expr) -> Expr:
        if isinstance(a, K) and isinstance(b, K):
            return K(self.emit.arith(siren.DivOp, a.v, b.v))
        if is_static(b, 1.0):
            return a
        return Node("div", a, b)

    def sub(self, a: Expr, b: Expr) -> Expr:
        return self.add(a, self.mul(K(-1.0), b))

    def lt(self, a: Expr, b: Expr) -> Expr:
        if isinstance(a, K) and isinstance(b, K):
            return K(self.emit.compare(siren.LtOp, a.v, b.v))
        return Node("lt", a, b)

    def eq(self, a: Expr, b: Expr) -> Expr:
        if isinstance(a, K) and isinstance(b, K):
            return K(self.emit.compare(siren.EqOp, a.v, b.v))
        return Node("eq", a, b)

    def ite(self, c: Expr, t: Expr, f: Expr) -> Expr:
        if isinstance(c, K):
            if c.static:
                return t if (c.v != 0.0 or math.isnan(c.v)) else f
            if isinstance(t, K) and isinstance(f, K):
                return K(self.emit.select(c.v, t.v, f.v))
            return t if self.emit.decide(c.v, "an if on a number known only at run time selects between "
                                         "symbolic values of different structure") else f
        return Node("ite", c, t, f)

    def eval(self, e: Expr, memo: IdMemo | None = None) -> Expr:
        """ARCHITECTURE.md §6.3's eval: realized variables replaced by their values, constants folded; and, as
        its side effect, the parameters of every symbolic variable it reaches evaluated in place
        (as the runtime's eval does: a later rule check sees them simplified). Walks that share
        `memo` evaluate each node and variable once."""
        memo = IdMemo() if memo is None else memo

        def go(x: Expr) -> Expr:
            got = memo.get(x)
            if got is not None:
                return got
            if isinstance(x, R):
                rv = x.rv
                y = K(rv.value) if rv.realized else x
                memo[x] = y
                if not rv.realized and rv not in memo:
                    memo[rv] = x
                    params = [go(p) for p in rv.params]
                    if any(a is not b for a, b in zip(params, rv.params)):
                        rv.params = params
                        if self.on_rewrite is not None:
                            self.on_rewrite(rv)
                return y
            if isinstance(x, Node):
                args = [go(a) for a in x.args]
                if all(a is b for a, b in zip(args, x.args)):
                    y = x
                elif x.kind == "ite":
                    y = self.ite(*args)
                else:
                    y = getattr(self, x.kind)(*args)
            else:
                y = x
            memo[x] = y
            return y

        return go(e)
