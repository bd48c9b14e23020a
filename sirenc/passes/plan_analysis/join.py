"""Unification, joins and widening of abstract states (ARCHITECTURE.md §17.4).

Two executions that started from one state (the branches of an unknown
``if``, two iterations of a loop) are merged by first *unifying* them --
renaming the second side's handles to the matching handles of the first side
in the two values -- then joining the values and the states entry by entry.
Results that would depend on more than ``max_rvs`` variables are widened to
``TopE``/``TopD`` and those variables become dynamic; everything that
disappears into ``TopE``/``TopD`` must not be annotated ``symbolic``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Self

from sirenc.passes.plan_analysis import domain as D
from sirenc.passes.plan_analysis.base import MAX_SIZE, SAMPLE, SYMBOLIC, Entry, GiveUp
from sirenc.passes.plan_analysis.domain import RV, TOP, TOPD, UNK, UNKC, Const, Delta, Dist, Distr, Expr, TopD, TopE, UnkD, UnkE

MAX_DEPTH = 5      # joins deeper than this summarise to UnkE (ARCHITECTURE.md §17.2)


class JoinMixin:
    """The join half of ``AbsState`` (see ``state.py``): the other side of a join is a state of
    the same algorithm (``Self``)."""


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

    def unify(self, e1: Expr, e2: Expr, other: Self) -> tuple[Expr, Expr]:
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

    def narrow_join_expr(self, e1: Expr, e2: Expr, other: Self) -> Expr:
        """Unify ``other`` into ``self``, join the two values, join the states."""
        e1, e2 = self.unify(e1, e2, other)
        e = self.join_expr(e1, e2, other)
        self.join(other)
        return e

    def join(self, other: Self) -> None:
        for rv in list(self.entries) + [rv for rv in other.entries if rv not in self.entries]:
            if rv in self.entries and rv in other.entries:
                self.entry_join(rv, other)
            elif rv in other.entries:
                if len(self.entries) >= MAX_SIZE:
                    raise GiveUp(f"more than {MAX_SIZE} random variables", too_large=True)
                src = other.entries[rv]
                self.entries[rv] = Entry(TOPD, src.pv, src.annotation, src.node, list(src.children))
                self.set_distr(rv, src.distr)
        self.counter = max(self.counter, other.counter)
        self.join_plan(other)

    def entry_join(self, rv: RV, other: Self) -> None:
        mine, theirs = self.entry(rv), other.entry(rv)
        anns = (mine.annotation, theirs.annotation)
        mine.annotation = SYMBOLIC if SYMBOLIC in anns else SAMPLE if SAMPLE in anns else None
        mine.pv = mine.pv | theirs.pv
        self.set_distr(rv, self.join_distr(mine.distr, theirs.distr, other))

    def _widen(self, parents: list[RV], other: Self | None, mine: bool = True, force: bool = False) -> bool:
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

    def join_expr(self, e1: Expr, e2: Expr, other: Self, depth: int = 0) -> Expr:
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

    def _unknown(self, parents: list[RV], other: Self | None) -> Expr:
        parents = list(D._dedup(parents))
        if self._widen(parents, other):
            return TOP
        return UnkE(parents)

    def _join_lists(self, es1: tuple, es2: tuple, other: Self, depth: int) -> Expr:
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

    def join_distr(self, d1: Distr, d2: Distr, other: Self) -> Distr:
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


def _match_rvs(mapping: dict[RV, set[RV]], e1: Expr, e2: Expr, seen: set | None = None) -> None:
    """Pair up handles at the same positions of ``e1`` and ``e2`` (ARCHITECTURE.md §17.4 step 1)."""
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

