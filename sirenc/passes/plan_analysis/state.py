"""The abstract symbolic state shared by the three abstract algorithms (SPEC 17.2-17.4).

A state maps abstract handles ``rvN`` to entries (distribution, the set of
program names bound to the handle, annotation, algorithm fields), holds the
variable context (here: the live SSA values of the program) and the inferred
plan of the path it describes.  ``AbsState`` implements what SSI, DS and BP
have in common: simplification relative to the state (``eval``), value
forcing, expectations, unification and joins of states, widening, and the
reachability clean-up of the loop fixpoint.  Subclasses (``ssi.py``,
``ds.py``, ``bp.py``) implement ``assume``, ``observe``, ``value_impl``,
``marginalize`` and their node bookkeeping.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from sirenc.passes.plan_analysis import domain as D
from sirenc.passes.plan_analysis.domain import (
    RV, TOP, TOPD, UNK, UNKC, Const, Delta, Dist, Distr, Expr, TopD, TopE, UnkD, UnkE,
)

SYMBOLIC, SAMPLE, DYNAMIC = "symbolic", "sample", "dynamic"
MAX_DEPTH = 5      # joins deeper than this summarise to UnkE (SPEC 17.2)
MAX_SIZE = 200     # more abstract variables than this: give up (SPEC 17.2)


class Violation(Exception):
    """A ``symbolic`` annotation may be violated (SPEC 17.7 (a) and (b))."""

    def __init__(self, kind: str, names: Iterable[str], cause: Any = None):
        super().__init__(kind)
        self.kind = kind                 # "sampled" or "dynamic"
        self.names = sorted(names)
        self.cause = cause


class GiveUp(Exception):
    """The abstract state or the work grew too large (SPEC 17.2 ``max_size``)."""


class InternalInconsistency(Exception):
    """The abstract state lost track of a variable (a join renamed it away)."""


@dataclass
class Cause:
    """What the interpreter was doing when something was sampled or lost."""

    op: Any = None                 # the IR operation being evaluated
    what: str = ""                 # e.g. "observation", "join of the branches"
    detail: str | None = None      # e.g. a non-conjugate pair


@dataclass
class Shared:
    """Per-analysis data shared by every copy of the state."""

    max_rvs: int = 4
    cause: Cause = field(default_factory=Cause)
    work: int = 0
    work_limit: int = 3_000_000
    order: dict[str, None] = field(default_factory=dict)   # names by first assume

    def note_name(self, name: str) -> None:
        self.order.setdefault(name, None)

    def tick(self, amount: int = 1) -> None:
        self.work += amount
        if self.work > self.work_limit:
            raise GiveUp("the analysis took too many steps")


@dataclass
class Entry:
    distr: Distr
    pv: frozenset
    annotation: str | None
    node: Any = None
    children: list = field(default_factory=list)

    def copy(self) -> Entry:
        return Entry(self.distr, self.pv, self.annotation, self.node, list(self.children))

    def same(self, other: Entry) -> bool:
        return (
            self.distr == other.distr and self.pv == other.pv
            and self.annotation == other.annotation and self.node == other.node
            and self.children == other.children
        )


def join_enc(a: str, b: str) -> str:
    if DYNAMIC in (a, b):
        return DYNAMIC
    return SAMPLE if SAMPLE in (a, b) else SYMBOLIC


class AbsState:
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

    def add_entry(self, rv: RV, distr: Distr, name: str | None, annotation: str | None, node=None) -> None:
        if len(self.entries) >= MAX_SIZE:
            raise GiveUp("state too large")
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

    # ---- simplification (SPEC 6.3, 17.2) --------------------------------------

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
            if t is D.Add:
                out = D.add(*args)
            elif t is D.Mul:
                out = D.mul(*args)
            elif t is D.Div:
                out = D.div(*args)
            elif t is D.Eq:
                out = D.eq(*args)
            elif t is D.Lt:
                out = D.lt(*args)
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
        """Abstract ``ite`` (SPEC 17.3): known condition, symbolic, or a join."""
        if type(c) is Const and c.v is not UNK:
            return t if c.v else f
        if not self.is_const(c):
            return D.Ite(c, t, f)
        return self.narrow_join_expr(t, f, self.copy())

    # ---- value forcing and expectations ----------------------------------------

    def value_expr(self, e: Expr) -> Expr:
        """Force ``e`` to a constant, sampling what it mentions (SPEC 6.4)."""
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
                # crashed here, SPEC 21 item 30).
                self._value_expr(e.args[1], memo)
                self._value_expr(e.args[2], memo)
                out = UNKC
            else:
                out = self._value_expr(e.args[1] if c.v else e.args[2], memo)
        else:
            vals = [self._value_expr(k, memo) for k in e.args]
            if t is D.Add:
                out = D.add(*vals)
            elif t is D.Mul:
                out = D.mul(*vals)
            elif t is D.Div:
                out = D.div(*vals)
            elif t is D.Eq:
                out = D.eq(*vals)
            elif t is D.Lt:
                out = D.lt(*vals)
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
        """Simulate the expectation of ``e`` (SPEC 10.4, 17.8)."""
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

    # ---- renaming, unification and joins (SPEC 17.4) ---------------------------

    def entry_rename(self, e: Entry, old: RV, new: RV) -> None:
        e.distr = D.rename_distr(e.distr, old, new)

    def rename(self, old: RV, new: RV) -> None:
        """Rename ``old`` to ``new`` in every entry and in the context."""
        if old == new:
            return
        self.shared.tick(len(self.entries))
        moved = None
        for rv, e in list(self.entries.items()):
            self.entry_rename(e, old, new)
            if rv == old:
                moved = e
        if moved is not None:
            del self.entries[old]
            self.entries[new] = moved
        for k, v in self.env.items():
            if old in v.rvset():
                self.env[k] = D.rename(v, old, new)

    def referenced(self, rvs: Iterable[RV]) -> set[RV]:
        """Variables the entries of ``rvs`` refer to (algorithms add their links)."""
        out: set[RV] = set()
        for rv in rvs:
            if rv in self.entries:
                out.update(self.distr(rv).rvs())
        return out

    def unify(self, e1: Expr, e2: Expr, other: AbsState) -> tuple[Expr, Expr]:
        """Rename ``other``'s handles in ``e2`` to the matching handles of ``e1``."""
        mapping: dict[RV, set[RV]] = {}
        _match_rvs(mapping, e1, e2)
        if not mapping:
            return e1, e2
        vars2 = e2.rvset()
        capture: dict[RV, RV] = {}
        to_temp: dict[RV, RV] = {}
        to_canon: dict[RV, RV] = {}
        for v2, v1s in mapping.items():
            canon = min(v1s, key=lambda v: v.name)
            if (canon in other.entries and canon not in vars2) or canon in other.referenced([v2]):
                capture[canon] = self.new_var(other.counter)
            temp = self.new_var(other.counter)
            to_temp[v2] = temp
            to_canon[temp] = canon
        for old, new in capture.items():
            other.rename(old, new)
            e2 = D.rename(e2, old, new)
        for v2, v1s in mapping.items():
            temp = to_temp[v2]
            for v1 in sorted(v1s, key=lambda v: v.name):
                self.rename(v1, temp)
                e1 = D.rename(e1, v1, temp)
        for v2, temp in to_temp.items():
            other.rename(v2, temp)
            e2 = D.rename(e2, v2, temp)
        for temp, canon in to_canon.items():
            other.rename(temp, canon)
            e2 = D.rename(e2, temp, canon)
            self.rename(temp, canon)
            e1 = D.rename(e1, temp, canon)
        return e1, e2

    def narrow_join_expr(self, e1: Expr, e2: Expr, other: AbsState) -> Expr:
        """Unify ``other`` into ``self``, join the two values, join the states."""
        e1, e2 = self.unify(e1, e2, other)
        e = self.join_expr(e1, e2, other)
        self.join(other)
        return e

    def join(self, other: AbsState) -> None:
        for rv in list(self.entries) + [rv for rv in other.entries if rv not in self.entries]:
            if rv in self.entries and rv in other.entries:
                self.entry_join(rv, other)
            elif rv in other.entries:
                if len(self.entries) >= MAX_SIZE:
                    raise GiveUp("state too large")
                src = other.entries[rv]
                self.entries[rv] = Entry(TOPD, src.pv, src.annotation, src.node, list(src.children))
                self.set_distr(rv, src.distr)
        self.counter = max(self.counter, other.counter)
        self.join_plan(other)

    def entry_join(self, rv: RV, other: AbsState) -> None:
        mine, theirs = self.entry(rv), other.entry(rv)
        anns = (mine.annotation, theirs.annotation)
        mine.annotation = SYMBOLIC if SYMBOLIC in anns else SAMPLE if SAMPLE in anns else None
        mine.pv = mine.pv | theirs.pv
        self.set_distr(rv, self.join_distr(mine.distr, theirs.distr, other))

    def _widen(self, parents: list[RV], other: AbsState | None, mine: bool = True, force: bool = False) -> bool:
        """Too many parents (or ``force``): make them dynamic and report that ``TopE`` is due.

        Whatever disappears into ``TopE``/``TopD`` can no longer be tracked, so
        it must not be annotated ``symbolic``.
        """
        if len(parents) <= self.shared.max_rvs and not force:
            return False
        for p in parents:
            if mine and p in self.entries:
                self.set_dynamic(p)
            if other is not None and p in other.entries:
                other.set_dynamic(p)
        return True

    def join_expr(self, e1: Expr, e2: Expr, other: AbsState, depth: int = 0) -> Expr:
        self.shared.tick()
        t1, t2 = type(e1), type(e2)
        if depth > MAX_DEPTH:
            return self._unknown(list(e1.rvs()) + list(e2.rvs()), other)
        if t1 is Const and t2 is Const:
            if e1.v is UNK or e2.v is UNK:
                return UNKC
            return e1 if e1 == e2 and type(e1.v) is type(e2.v) else UNKC
        if t1 is Const and t2 is RV:
            return e2
        if t1 is RV and t2 is Const:
            return e1
        if t1 is RV and t2 is RV:
            return e1 if e1 == e2 else self._unknown([e1, e2], other)
        if t1 is t2 and t1 in (D.Add, D.Mul, D.Div, D.Ite, D.Eq, D.Lt, D.Pair):
            return t1(*(self.join_expr(a, b, other, depth + 1) for a, b in zip(e1.args, e2.args)))
        if t1 is t2 is D.DistV and e1.family == e2.family:
            return D.DistV(e1.family, *(
                self.join_expr(a, b, other, depth + 1) for a, b in zip(e1.args, e2.args)))
        if t1 is Const and t2 is D.Lst and (e1.v is UNK):
            return self.join_expr(D.Lst(), e2, other, depth)
        if t1 is D.Lst and t2 is Const and (e2.v is UNK):
            return self.join_expr(e1, D.Lst(), other, depth)
        if t1 is D.Lst and t2 is D.Lst:
            return self._join_lists(e1.args, e2.args, other, depth)
        if t1 is Const and t2 is D.Pair and e1.v is UNK:
            return self.join_expr(D.Pair(UNKC, UNKC), e2, other, depth)
        if t1 is D.Pair and t2 is Const and e2.v is UNK:
            return self.join_expr(e1, D.Pair(UNKC, UNKC), other, depth)
        if t1 is TopE:
            self._widen(list(D._dedup(e2.rvs())), other, mine=False, force=True)
            return TOP
        if t2 is TopE:
            self._widen(list(D._dedup(e1.rvs())), None, force=True)
            return TOP
        return self._unknown(list(e1.rvs()) + list(e2.rvs()), other)

    def _unknown(self, parents: list[RV], other: AbsState | None) -> Expr:
        parents = list(D._dedup(parents))
        if self._widen(parents, other):
            return TOP
        return UnkE(parents)

    def _join_lists(self, es1: tuple, es2: tuple, other: AbsState, depth: int) -> Expr:
        if not es1:
            return D.Lst(*es2)
        if not es2:
            return D.Lst(*es1)
        out: list[Expr] = []
        n = min(len(es1), len(es2))
        for a, b in zip(es1[:n], es2[:n]):
            out.append(self.join_expr(a, b, other, depth + 1))
        rest = es1[n:] or es2[n:]
        if rest:
            rest_parents = list(D._dedup(r for e in rest for r in e.rvs()))
            last = out[-1]
            if type(last) is UnkE:
                out[-1] = UnkE(list(last.parents) + rest_parents)
            elif type(last) is TopE:
                for p in rest_parents:
                    if p in self.entries:
                        self.set_dynamic(p)
                    if p in other.entries:
                        other.set_dynamic(p)
            else:
                out.append(UnkE(rest_parents))
        return D.Lst(*out)

    def join_distr(self, d1: Distr, d2: Distr, other: AbsState) -> Distr:
        t1, t2 = type(d1), type(d2)
        if t1 is Dist and t2 is Dist and d1.family == d2.family:
            return Dist(d1.family, tuple(
                self.join_expr(a, b, other) for a, b in zip(d1.args, d2.args)))
        if t1 is Delta and t2 is Delta:
            return Delta(self.join_expr(d1.v, d2.v, other), d1.sampled or d2.sampled)
        if t1 is TopD:
            self._widen(list(D._dedup(d2.rvs())), other, mine=False, force=True)
            return TOPD
        if t2 is TopD:
            self._widen(list(D._dedup(d1.rvs())), None, force=True)
            return TOPD
        parents = list(D._dedup(list(d1.rvs()) + list(d2.rvs())))
        if self._widen(parents, other):
            return TOPD
        return UnkD(parents)

    # ---- reachability (SPEC 17.5 step 3) ----------------------------------------

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


def _match_rvs(mapping: dict[RV, set[RV]], e1: Expr, e2: Expr, seen: set | None = None) -> None:
    """Pair up handles at the same positions of ``e1`` and ``e2`` (SPEC 17.4 step 1)."""
    t1, t2 = type(e1), type(e2)
    if t1 is RV and t2 is RV:
        mapping.setdefault(e2, set()).add(e1)
        return
    if t1 is t2 and t1 in (D.Add, D.Mul, D.Div, D.Ite, D.Eq, D.Lt, D.Pair, D.Lst, D.DistV):
        seen = set() if seen is None else seen
        key = (id(e1), id(e2))
        if key in seen:
            return
        seen.add(key)
        for a, b in zip(e1.args, e2.args):
            _match_rvs(mapping, a, b, seen)


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
