"""Abstract SMC with belief propagation (ARCHITECTURE.md §14 on abstract values, 17.6).

Nodes are ``("R",)``, ``("M",)``, ``("I", parent)`` and the abstract
``("U",)``.  Only Gaussian chains stay symbolic: any other parent is sampled
when its child is created.  Unlike the original analysis, conditioning a node
on a realised parent substitutes the parent's value into the child (ARCHITECTURE.md §21
item 27: the original swapped the two).
"""

from __future__ import annotations

from sirenc.passes.plan_analysis import conjugacy as C
from sirenc.passes.plan_analysis.domain import RV, TOPD, UNKC, Delta, Dist, Expr, TopD, UnkD
from sirenc.passes.plan_analysis.state import UNKNOWN_NODE, AbsState, Entry

R, M = ("R",), ("M",)
U = UNKNOWN_NODE


def I(parent: RV):  # noqa: N802, E743
    return ("I", parent)


class BPState(AbsState):
    method = "bp"

    def entry_rename(self, e: Entry, old: RV, new: RV) -> None:
        super().entry_rename(e, old, new)
        if e.node[0] == "I" and e.node[1] == old:
            e.node = I(new)

    def referenced(self, rvs) -> set[RV]:
        out = super().referenced(rvs)
        for rv in rvs:
            if rv in self.entries and self.node(rv)[0] == "I":
                out.add(self.node(rv)[1])
        return out

    # ---- interface ---------------------------------------------------------------

    def assume(self, name, annotation, d) -> RV:
        rv = self.new_var()
        d = self.eval_distr(d)
        self.add_entry(rv, d, name, annotation, M)
        if not d.rvs():
            return rv
        parents = list(dict.fromkeys(d.rvs()))
        if self._any_unknown(parents):
            return self._unknown_assume(rv, parents)
        canonical = None
        for p in parents:
            if p not in d.rvs():
                continue
            if canonical is None:
                kind = self.node(p)[0]
                if kind == "R":
                    d = self.eval_distr(d)
                    continue
                if self._gaussian(self.distr(p), d, p, rv):
                    canonical = p
                    continue
            if canonical is not None:
                why = "belief propagation keeps at most one symbolic parent per random variable"
            else:
                why = "belief propagation keeps only affine Gaussian parents symbolic"
            self.value_because(p, why)
            d = self.eval_distr(d)
            if self._any_unknown(parents):
                return self._unknown_assume(rv, parents)
        self.set_distr(rv, d)
        self.set_node(rv, I(canonical) if d.rvs() and canonical is not None else M)
        return rv

    def _gaussian(self, prior, lik, p: RV, c: RV) -> bool:
        rule = C.applicable(self, prior, lik, p, c, "bp")
        return rule is not None

    def _any_unknown(self, parents) -> bool:
        return any(p in self.entries and self.node(p) == U for p in parents)

    def _unknown_assume(self, rv: RV, parents) -> RV:
        self.set_distr(rv, UnkD(parents))
        self.set_node(rv, U)
        for p in parents:
            if p in self.entries and self.node(p) != R:
                self.set_dynamic(p)
        return rv

    def observe(self, rv: RV, value: Expr) -> None:
        while True:
            node = self.node(rv)
            if node[0] != "I":
                self._intervene(rv, Delta(value, sampled=False))
                return
            par = node[1]
            self.marginalize(par)
            if self.condition_cd(par, rv):
                self._intervene(rv, Delta(value, sampled=False))
                if not self.is_delta(par):
                    self.set_distr(par, self.eval_distr(self.distr(par)))
                    self.set_node(par, M)
                return
            self.value_because(par, "belief propagation keeps only affine Gaussian parents symbolic")

    def value_impl(self, rv: RV) -> Expr:
        self.marginalize(rv)
        self._intervene(rv, Delta(UNKC, sampled=True))
        return UNKC

    def marginalize(self, rv: RV) -> None:
        while True:
            node = self.node(rv)
            if node[0] != "I":
                return
            par = node[1]
            if par not in self.entries:
                self.set_node(rv, M)
                return
            self.marginalize(par)
            if self.condition_cd(par, rv):
                return
            self.value_because(par, "belief propagation keeps only affine Gaussian parents symbolic")

    # ---- procedures -----------------------------------------------------------------

    def _intervene(self, rv: RV, d: Delta) -> None:
        self.set_node(rv, R)
        self.set_distr(rv, d)

    def condition_cd(self, par: RV, child: RV) -> bool:
        prior, lik = self.distr(par), self.distr(child)
        if type(prior) is Delta:
            self.set_distr(child, self.eval_distr(lik))
            self.set_node(child, M)
            return True
        if type(prior) in (UnkD, TopD):
            self.set_dynamic(par)
            return False
        if type(prior) is Dist and type(lik) is Dist:
            rule = C.applicable(self, prior, lik, par, child, "bp")
            if rule is not None:
                swap = rule.swap(self, prior, lik, par, child)
                self.set_distr(par, swap.posterior)
                self.set_distr(child, swap.marginal)
                self.set_node(child, M)
                if self.node(par) not in (R, U):
                    self.set_node(par, I(child))
                return True
        return False

    # ---- dynamic and joins -------------------------------------------------------------

    def set_dynamic(self, rv: RV) -> None:
        """``rv`` and its ancestors become unknown and dynamic."""
        done: set[RV] = set()

        def visit(v: RV) -> None:
            if v in done or v not in self.entries:
                return
            done.add(v)
            node = self.node(v)
            if node[0] == "I":
                visit(node[1])
            self.mark_dynamic(v)
            if node == R:
                return
            self.set_node(v, U)
            for p in self.distr(v).rvs():
                visit(p)
            self.set_distr(v, TOPD)

        visit(rv)

    def entry_join(self, rv: RV, other: AbsState) -> None:
        n1, n2 = self.node(rv), other.node(rv)
        if n1 == n2 and n1[0] in ("R", "M"):
            super().entry_join(rv, other)
            return
        if n1[0] == "I" and n2[0] == "I":
            mine, theirs = self.entry(rv), other.entry(rv)
            anns = (mine.annotation, theirs.annotation)
            mine.annotation = "symbolic" if "symbolic" in anns else "sample" if "sample" in anns else None
            mine.pv = mine.pv | theirs.pv
            cd = self.join_distr(mine.distr, theirs.distr, other)
            if type(cd) is TopD:
                self.make_unknown(rv, [], [], other)
                return
            parents = list(dict.fromkeys(cd.rvs()))
            if len(parents) > 1:
                self.make_unknown(rv, parents, [], other)
                return
            self.set_distr(rv, cd)
            self.set_node(rv, I(parents[0]) if parents else n1)
            return
        super().entry_join(rv, other)
        p1 = [n1[1]] if n1[0] == "I" else []
        p2 = [n2[1]] if n2[0] == "I" else []
        self.make_unknown(rv, p1, p2, other)

