"""The abstract symbolic state shared by the three abstract algorithms (ARCHITECTURE.md §17.2-17.4).

A state maps abstract handles ``rvN`` to entries (distribution, the set of
program names bound to the handle, annotation, algorithm fields), holds the
variable context (here: the live SSA values of the program) and the inferred
plan of the path it describes.  ``AbsState`` implements what SSI, DS and BP
have in common: simplification relative to the state (``eval``), value
forcing, expectations, the plan, and the reachability clean-up of the loop
fixpoint; unification, joins and widening come from ``join.JoinMixin``.  Subclasses (``ssi.py``,
``ds.py``, ``bp.py``) implement ``assume``, ``observe``, ``value_impl``,
``marginalize`` and their node bookkeeping.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from sirenc.passes.plan_analysis import domain as D
from sirenc.passes.plan_analysis.base import (  # noqa: F401 - re-exported
    DYNAMIC, MAX_SIZE, SAMPLE, SYMBOLIC, Cause, Entry, GiveUp, InternalInconsistency, Shared, Violation,
    join_enc,
)
from sirenc.passes.plan_analysis.domain import (
    RV, TOP, TOPD, UNK, UNKC, Const, Delta, Distr, Expr, TopD, TopE, UnkD, UnkE,
)
from sirenc.passes.plan_analysis.join import JoinMixin


UNKNOWN_NODE = ("U",)  # DS and BP's abstract node state "Unknown" (ARCHITECTURE.md §17.6)
# The smart constructors of ARCHITECTURE.md §6.3, by node type.
_SMART = {D.Add: D.add, D.Mul: D.mul, D.Div: D.div, D.Eq: D.eq, D.Lt: D.lt}


class AbsState(JoinMixin):
    method = "?"

    def __init__(self, shared: Shared):
        self.shared = shared
        self.entries: dict[RV, Entry] = {}
        self.env: dict[Any, Expr] = {}
        self.counter = 0
        self.plan: dict[str, str] = {}

    # ---- copying and comparing ------------------------------------------------

    def copy(self) -> AbsState:
        new = object.__new__(type(self))
        new.shared = self.shared
        new.entries = {rv: e.copy() for rv, e in self.entries.items()}
        new.env = dict(self.env)
        new.counter = self.counter
        new.plan = dict(self.plan)
        return new

    def same_entries(self, other: AbsState) -> bool:
        if self.entries.keys() != other.entries.keys():
            return False
        return all(e.same(other.entries[rv]) for rv, e in self.entries.items())

    # ---- entries -------------------------------------------------------------

    def new_var(self, min_counter: int | None = None) -> RV:
        if min_counter is not None:
            self.counter = max(self.counter, min_counter)
        self.counter += 1
        return RV(f"rv{self.counter}")

    def entry(self, rv: RV) -> Entry:
        try:
            return self.entries[rv]
        except KeyError:
            raise InternalInconsistency(f"{rv} not in state") from None

    def distr(self, rv: RV) -> Distr:
        return self.entry(rv).distr

    def pv(self, rv: RV) -> frozenset:
        return self.entry(rv).pv

    def annotation(self, rv: RV) -> str | None:
        return self.entry(rv).annotation

    def node(self, rv: RV):
        return self.entry(rv).node

    def set_distr(self, rv: RV, d: Distr) -> None:
        e = self.entry(rv)
        e.distr = d
        if type(d) is Delta and d.sampled and e.annotation == SYMBOLIC:
            raise Violation("sampled", e.pv, replace(self.shared.cause))

    def set_node(self, rv: RV, node) -> None:
        self.entry(rv).node = node

    def make_unknown(self, rv: RV, parents1, parents2, other: AbsState) -> None:
        """A node whose two joined sides disagree (DS and BP): it becomes the
        unknown node with distribution TopD, and the parents on each side dynamic."""
        for p in parents1:
            if p in self.entries:
                self.set_dynamic(p)
        for p in parents2:
            if p in other.entries:
                other.set_dynamic(p)
        self.set_distr(rv, TOPD)
        self.set_node(rv, UNKNOWN_NODE)

    def add_entry(self, rv: RV, distr: Distr, name: str | None, annotation: str | None, node=None) -> None:
        if len(self.entries) >= MAX_SIZE:
            raise GiveUp(f"more than {MAX_SIZE} random variables", too_large=True)
        self.shared.tick()
        self.entries[rv] = Entry(TOPD, frozenset([name]) if name else frozenset(), annotation, node, [])
        self.set_distr(rv, distr)

    def is_delta(self, rv: RV) -> bool:
        return type(self.distr(rv)) is Delta

    def parents(self, rv: RV) -> tuple[RV, ...]:
        return self.distr(rv).rvs()

    # ---- plan ------------------------------------------------------------------

    def plan_assume(self, name: str) -> None:
        # A later instance of a name never hides that an earlier one was sampled.
        self.plan.setdefault(name, SYMBOLIC)

    def plan_set(self, name: str, enc: str) -> None:
        if self.plan.get(name) != DYNAMIC:
            self.plan[name] = enc

    def join_plan(self, other: AbsState) -> None:
        for name, enc in other.plan.items():
            mine = self.plan.get(name)
            self.plan[name] = enc if mine is None else join_enc(mine, enc)

    # ---- simplification (ARCHITECTURE.md §6.3, 17.2) --------------------------------------

    def eval(self, e: Expr) -> Expr:
        return self._eval(e, {}, set())

    def _eval(self, e: Expr, memo: dict, seen: set) -> Expr:
        t = type(e)
        if t is Const or t is TopE:
            return e
        hit = memo.get(e)
        if hit is not None:
            return hit
        self.shared.tick()
        if t is RV:
            d = self.distr(e)
            if type(d) is Delta:
                out = self._eval(d.v, memo, seen)
            else:
                if e not in seen:
                    seen.add(e)
                    self.entry(e).distr = self._eval_distr(d, memo, seen)
                out = e
        elif t is UnkE:
            parents = [p for p in e.parents if not self.is_delta(p)]
            out = UnkE(parents) if parents else UNKC
        elif t is D.Lst:
            out = e.rebuild(tuple(self._eval(k, memo, seen) for k in e.args))
        elif t is D.Pair or t is D.DistV:
            out = e.rebuild(tuple(self._eval(k, memo, seen) for k in e.args))
        else:
            args = [self._eval(k, memo, seen) for k in e.args]
            if t in _SMART:
                out = _SMART[t](*args)
            elif t is D.Ite:
                out = self.ite(*args)
            else:  # pragma: no cover - every node type is handled above
                raise AssertionError(t)
        memo[e] = out
        return out

    def eval_distr(self, d: Distr) -> Distr:
        return self._eval_distr(d, {}, set())

    def _eval_distr(self, d: Distr, memo: dict, seen: set) -> Distr:
        t = type(d)
        if t is TopD:
            return d
        if t is UnkD:
            parents = [p for p in d.parents if not self.is_delta(p)]
            return UnkD(parents)
        return d.with_params(tuple(self._eval(p, memo, seen) for p in d.params()))

    def is_const(self, e: Expr) -> bool:
        """No unsampled random variable in ``e`` (point masses count as constants)."""
        if e._top:
            return False
        for rv in e.rvs():
            d = self.distr(rv)
            if type(d) is not Delta or not self.is_const(d.v):
                return False
        if type(e) is UnkE:
            return not e.parents
        return True

    def ite(self, c: Expr, t: Expr, f: Expr) -> Expr:
        """Abstract ``ite`` (ARCHITECTURE.md §17.3): known condition, symbolic, or a join."""
        if type(c) is Const and c.v is not UNK:
            return t if c.v else f
        if not self.is_const(c):
            return D.Ite(c, t, f)
        return self.narrow_join_expr(t, f, self.copy())

    # ---- value forcing and expectations ----------------------------------------

    def value_expr(self, e: Expr) -> Expr:
        """Force ``e`` to a constant, sampling what it mentions (ARCHITECTURE.md §6.4)."""
        return self._value_expr(e, {})

    def _value_expr(self, e: Expr, memo: dict) -> Expr:
        t = type(e)
        if t is Const:
            return e
        hit = memo.get(id(e))
        if hit is not None:
            return hit
        if t is RV:
            out = self.value(e)
        elif t is UnkE or t is TopE:
            # An unknown expression over ``parents``: forcing it may sample them.
            for p in getattr(e, "parents", ()):
                if p in self.entries and not self.is_delta(p):
                    self.value(p)
            out = UNKC
        elif t is D.Ite:
            c = self._value_expr(e.args[0], memo)
            if c.v is UNK:
                # Unknown condition: either branch may be forced (the original
                # crashed here, ARCHITECTURE.md §21 item 30).
                self._value_expr(e.args[1], memo)
                self._value_expr(e.args[2], memo)
                out = UNKC
            else:
                out = self._value_expr(e.args[1] if c.v else e.args[2], memo)
        else:
            vals = [self._value_expr(k, memo) for k in e.args]
            if t in _SMART:
                out = _SMART[t](*vals)
            else:
                out = UNKC  # lists, pairs, distributions: every element has been forced
        memo[id(e)] = out
        return out

    def value(self, rv: RV) -> Expr:
        for name in self.pv(rv):
            self.plan_set(name, SAMPLE)
        return self.value_impl(rv)

    def value_because(self, rv: RV, detail: str) -> Expr:
        """``value(rv)``, remembering why for a diagnostic."""
        cause = self.shared.cause
        saved = cause.detail
        cause.detail = cause.detail or detail
        try:
            return self.value(rv)
        finally:
            cause.detail = saved

    def mean(self, e: Expr) -> None:
        """Simulate the expectation of ``e`` (ARCHITECTURE.md §10.4, 17.8)."""
        self._mean(e, set())

    def _mean(self, e: Expr, seen: set) -> None:
        e = self.eval(e)
        if id(e) in seen:
            return
        seen.add(id(e))
        t = type(e)
        if t is Const or t is TopE:
            return
        if t is RV:
            self.marginalize(e)
        elif t is UnkE:
            for p in e.parents:
                if p in self.entries:
                    self.marginalize(p)
        else:
            for k in e.children():
                self._mean(k, seen)

    # ---- dynamic ----------------------------------------------------------------

    def mark_dynamic(self, rv: RV) -> None:
        """The base of ``set_dynamic``: reject a symbolic annotation, else mark the names."""
        e = self.entry(rv)
        if e.annotation == SYMBOLIC:
            raise Violation("dynamic", e.pv, replace(self.shared.cause))
        for name in e.pv:
            self.plan[name] = DYNAMIC

    def set_dynamic(self, rv: RV) -> None:
        self.mark_dynamic(rv)

    # ---- reachability (ARCHITECTURE.md §17.5 step 3) ----------------------------------------

    def clean(self, roots: Iterable[Expr]) -> None:
        """Drop variables unreachable from ``roots`` and the context."""
        used: set[RV] = set()
        for e in list(roots) + list(self.env.values()):
            used.update(e.rvs())
        frontier = set(used)
        while frontier:
            new = self.referenced(frontier) - used
            used |= new
            frontier = new
        for rv in [rv for rv in self.entries if rv not in used]:
            del self.entries[rv]

    # ---- the algorithm interface --------------------------------------------------

    def assume(self, name: str | None, annotation: str | None, d: Distr) -> RV:
        raise NotImplementedError

    def observe(self, rv: RV, value: Expr) -> None:
        raise NotImplementedError

    def value_impl(self, rv: RV) -> Expr:
        raise NotImplementedError

    def marginalize(self, rv: RV) -> None:
        raise NotImplementedError


def transitive_depends(state: AbsState, e: Expr | Distr, target: RV) -> bool:
    """Does ``e`` depend on ``target``, directly or through distributions?"""
    if D.depends_on(e, target):
        return True
    todo = list(e.rvs())
    seen: set[RV] = set()
    while todo:
        rv = todo.pop()
        if rv in seen or rv not in state.entries:
            continue
        seen.add(rv)
        d = state.distr(rv)
        if type(d) is TopD:
            return True
        if D.depends_on(d, target):
            return True
        todo.extend(d.rvs())
    return False


__all__ = [
    "AbsState", "Cause", "Entry", "GiveUp", "InternalInconsistency", "Shared", "Violation",
    "SYMBOLIC", "SAMPLE", "DYNAMIC", "UNK", "UNKC", "TOP", "TOPD",
]
