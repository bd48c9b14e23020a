"""Abstract delayed sampling (ARCHITECTURE.md §13 on abstract values, 17.6).

Nodes are ``("R",)`` realised, ``("M", edge)`` marginalised, ``("I", edge)``
initialised and the abstract ``("U",)`` unknown (distribution ``TopD``); an
edge is ``(parent, conditional distribution)`` or ``None``.  Every variable
keeps at most one symbolic parent; other parents are sampled at ``assume``.
After joins a node may have several marginal children: grafting or pruning
it then makes those children dynamic instead of guessing.
"""

from __future__ import annotations

from sirenc.passes.plan_analysis import conjugacy as C
from sirenc.passes.plan_analysis import domain as D
from sirenc.passes.plan_analysis.domain import RV, TOPD, UNKC, Delta, Distr, Expr, TopD, UnkD
from sirenc.passes.plan_analysis.state import UNKNOWN_NODE, AbsState, Entry

R = ("R",)
U = UNKNOWN_NODE


def M(edge=None):  # noqa: N802 - node constructors read like the paper
    return ("M", edge)


def I(edge):  # noqa: N802, E743
    return ("I", edge)


def _edge(node) -> tuple | None:
    return node[1] if node[0] in ("M", "I") else None


class DSState(AbsState):
    method = "ds"

    # ---- bookkeeping -------------------------------------------------------------

    def children(self, rv: RV) -> list[RV]:
        return self.entry(rv).children

    def add_child(self, parent: RV, child: RV) -> None:
        kids = self.children(parent)
        if child not in kids:
            kids.append(child)

    def marginal_children(self, rv: RV) -> list[RV]:
        out = []
        for c in dict.fromkeys(self.children(rv)):
            if c in self.entries and self.node(c)[0] == "M":
                out.append(c)
        return out

    def entry_rename(self, e: Entry, old: RV, new: RV) -> None:
        super().entry_rename(e, old, new)
        if old in e.children:
            e.children = list(dict.fromkeys(new if c == old else c for c in e.children))
        edge = _edge(e.node)
        if edge is not None:
            par, cd = edge
            e.node = (e.node[0], (new if par == old else par, D.rename_distr(cd, old, new)))

    def referenced(self, rvs) -> set[RV]:
        out = super().referenced(rvs)
        for rv in rvs:
            if rv not in self.entries:
                continue
            out.update(self.children(rv))
            edge = _edge(self.node(rv))
            if edge is not None:
                out.add(edge[0])
                out.update(edge[1].rvs())
        return out

    # ---- conjugacy ------------------------------------------------------------------

    def _rule(self, prior: Distr, lik: Distr, parent: RV, child: RV):
        if type(prior) in (UnkD, TopD):
            self.set_dynamic(parent)
            return None
        return C.applicable(self, prior, lik, parent, child, "ds")

    # ---- interface ----------------------------------------------------------------------

    def assume(self, name, annotation, d) -> RV:
        rv = self.new_var()
        d = self.eval_distr(d)
        self.add_entry(rv, d, name, annotation, M(None))
        if not d.rvs():
            return rv
        parents = list(dict.fromkeys(d.rvs()))
        if self._any_unknown(parents):
            return self._unknown_assume(rv, parents)
        canonical = None
        for p in parents:
            if canonical is None:
                node = self.node(p)
                if node[0] == "R":
                    d = self.eval_distr(d)
                    continue
                prior = self.distr(p) if node[0] == "M" else node[1][1] if node[0] == "I" else None
                if prior is not None and self._rule(prior, d, p, rv) is not None:
                    self.add_child(p, rv)
                    canonical = p
                    continue
            if canonical is not None:
                why = "delayed sampling keeps at most one symbolic parent per random variable"
            else:
                prior = self.distr(p)
                why = "no conjugacy rule applies to its " + C.describe_pair(prior, d)
            self.value_because(p, why)
            d = self.eval_distr(d)
            if self._any_unknown(parents):
                return self._unknown_assume(rv, parents)
        e = self.entry(rv)
        if e.node == U:  # made unknown meanwhile (through a parent's children)
            return rv
        self.set_distr(rv, d)
        if d.rvs() and canonical is not None:
            e.node = I((canonical, d))
        else:
            e.node = M(None)
        return rv

    def _any_unknown(self, parents) -> bool:
        return any(p in self.entries and self.node(p) == U for p in parents)

    def _unknown_assume(self, rv: RV, parents) -> RV:
        self.set_distr(rv, TOPD)
        self.set_node(rv, U)
        for p in parents:
            if p in self.entries and self.node(p) != R:
                self.set_dynamic(p)
        return rv

    def observe(self, rv: RV, value: Expr) -> None:
        self.graft(rv)
        self.realize(rv, Delta(value, sampled=False))

    def value_impl(self, rv: RV) -> Expr:
        if self.node(rv) == R:
            # ARCHITECTURE.md §0.3: the value of a realised variable is its value.
            d = self.distr(rv)
            self.set_distr(rv, Delta(d.v if type(d) is Delta else UNKC, sampled=True))
            return UNKC
        self.graft(rv)
        self.realize(rv, Delta(UNKC, sampled=True))
        return UNKC

    def marginalize(self, rv: RV) -> None:
        node = self.node(rv)
        kind = node[0]
        if kind == "R":
            return
        if kind == "I":
            par = node[1][0]
            if par in self.entries and self.node(par)[0] in ("I", "U"):
                self.marginalize(par)
            self.do_marginalize(rv)
        elif kind == "U":
            self.do_marginalize(rv)
        if self.children(rv):
            self.graft(rv)

    # ---- delayed-sampling procedures ---------------------------------------------------

    def do_marginalize(self, rv: RV) -> None:
        node = self.node(rv)
        if node[0] != "I":
            return
        par, cd = node[1]
        pkind = self.node(par)[0] if par in self.entries else "R"
        if pkind == "R":
            self.set_distr(rv, self.eval_distr(self.distr(rv)))
            self.set_node(rv, M(None))
        elif pkind == "M":
            if self.make_marginal(par, rv):
                self.set_node(rv, M((par, cd)))
            else:
                self.value_because(par, "no conjugacy rule applies to its " + C.describe_pair(self.distr(par), cd))
                self.set_distr(rv, self.eval_distr(self.distr(rv)))
                self.set_node(rv, M(None))
        elif pkind == "U":
            self.set_dynamic(par)
        else:  # an initialised parent: the abstract state lost track of the order
            self.set_dynamic(rv)

    def make_marginal(self, par: RV, child: RV) -> bool:
        node = self.node(child)
        if node[0] != "I":
            return False
        lik = node[1][1]
        prior = self.distr(par)
        rule = self._rule(prior, lik, par, child)
        if rule is None:
            return False
        self.set_distr(child, self.eval_distr(rule.swap(self, prior, lik, par, child).marginal))
        return True

    def make_conditional(self, par: RV, child: RV, x: Expr) -> bool:
        node = self.node(child)
        edge = _edge(node)
        if edge is None:
            return False
        lik = edge[1]
        prior = self.distr(par)
        rule = self._rule(prior, lik, par, child)
        if rule is None:
            return False
        swap = rule.swap(self, prior, lik, par, child, x)
        for v, d in swap.side:
            self.set_distr(v, self.eval_distr(d))
        self.set_distr(par, self.eval_distr(swap.posterior))
        return True

    def realize(self, rv: RV, x: Delta) -> None:
        node = self.node(rv)
        edge = _edge(node)
        if node[0] == "M" and edge is not None:
            par = edge[0]
            if par in self.entries:
                pnode = self.node(par)
                if pnode[0] == "M":
                    if self.make_conditional(par, rv, x.v):
                        self._remove_child(par, rv)
                    else:
                        # The conditional could not be updated: the parent's
                        # encoding is no longer known.
                        self._remove_child(par, rv)
                        self.set_dynamic(par)
                elif pnode[0] == "U":
                    self._remove_child(par, rv)
        self.set_distr(rv, x)
        self.set_node(rv, R)
        for child in list(dict.fromkeys(self.children(rv))):
            if child in self.entries:
                self.do_marginalize(child)
        self.entry(rv).children = []

    def _remove_child(self, par: RV, child: RV) -> None:
        kids = self.children(par)
        if child in kids:
            kids.remove(child)

    def graft(self, rv: RV) -> None:
        node = self.node(rv)
        kind = node[0]
        if kind == "M":
            kids = self.marginal_children(rv)
            if len(kids) > 1:
                for c in kids:
                    self.set_dynamic(c)
            else:
                for c in kids:
                    self.prune(c)
        elif kind == "I":
            par = node[1][0]
            if par in self.entries:
                self.graft(par)
            self.do_marginalize(rv)
        elif kind == "U":
            self.set_dynamic(rv)

    def prune(self, rv: RV) -> None:
        if self.node(rv)[0] != "M":
            self.set_dynamic(rv)
            return
        kids = self.marginal_children(rv)
        if len(kids) > 1:
            for c in kids:
                self.set_dynamic(c)
        else:
            for c in kids:
                self.prune(c)
        self.value_because(rv, "delayed sampling realises a marginalised parent before its child is grafted")

    # ---- dynamic ---------------------------------------------------------------------------

    def set_dynamic(self, rv: RV) -> None:
        """``rv``, its ancestors and descendants become unknown and dynamic."""
        done: set[RV] = set()

        def unknown_children(v: RV) -> None:
            for c in self.marginal_children(v):
                visit(c)
            for c in list(dict.fromkeys(self.children(v))):
                if c not in self.entries:
                    continue
                self.mark_dynamic(c)
                cnode = self.node(c)
                if cnode[0] == "I":
                    visit(cnode[1][0])
                    self.set_node(c, U)
                elif cnode != R:
                    self.set_node(c, U)

        def visit(v: RV) -> None:
            if v in done or v not in self.entries:
                return
            done.add(v)
            node = self.node(v)
            kind, edge = node[0], _edge(node)
            if kind == "M":
                if edge is not None:
                    par = edge[0]
                    if par in self.entries:
                        self.mark_dynamic(par)
                        pnode = self.node(par)
                        pedge = _edge(pnode)
                        if pnode[0] == "M" and pedge is not None:
                            visit(pedge[0])
                        elif pnode == U:
                            self.set_node(par, U)
                unknown_children(v)
            elif kind == "I":
                visit(edge[0])
            elif kind == "U":
                unknown_children(v)
            self.mark_dynamic(v)
            if kind == "R":
                return
            if edge is not None:
                visit(edge[0])
            self.set_node(v, U)
            for p in self.distr(v).rvs():
                visit(p)
            self.set_distr(v, TOPD)

        visit(rv)

    # ---- joins -----------------------------------------------------------------------------

    def entry_join(self, rv: RV, other: AbsState) -> None:
        n1, n2 = self.node(rv), other.node(rv)
        super().entry_join(rv, other)
        mine = self.entry(rv)
        mine.children = list(dict.fromkeys(mine.children + list(other.children(rv))))
        k1, k2 = n1[0], n2[0]
        if k1 == "R" and k2 == "R":
            mine.node = R
            return
        if k1 == k2 and k1 in ("M", "I"):
            e1, e2 = n1[1], n2[1]
            if k1 == "M" and (e1 is None or e2 is None):
                mine.node = M(e1 if e2 is None else e2)
                return
            cd = self.join_distr(e1[1], e2[1], other)
            if k1 == "I":
                self.set_distr(rv, cd)
            if type(cd) is TopD:
                self.make_unknown(rv, [], [], other)
                return
            parents = list(dict.fromkeys(cd.rvs()))
            if not parents:
                mine.node = M(None)
            elif len(parents) == 1:
                mine.node = (k1, (parents[0], cd))
            else:
                self.make_unknown(rv, parents, [], other)
            return
        p1 = [n1[1][0]] if _edge(n1) is not None else []
        p2 = [n2[1][0]] if _edge(n2) is not None else []
        self.make_unknown(rv, p1, p2, other)
