"""Abstract semi-symbolic inference (ARCHITECTURE.md §12 on abstract values, 17.6).

SSI keeps a DAG of symbolic distributions and marginalises lazily by
*hoisting*: swapping a variable with its parents through conjugacy rules.  A
failed swap samples the offending parent and retries.  The abstract version
adds: a parent graph with a cycle (joins can create one) makes the node
dynamic; a swap that ``can_swap`` forbids makes the child dynamic; a parent
of unknown family is made dynamic (and then sampled).
"""

from __future__ import annotations

from sirenc.passes.plan_analysis import conjugacy as C
from sirenc.passes.plan_analysis import domain as D
from sirenc.passes.plan_analysis.domain import RV, TOPD, UNKC, Delta, Expr, TopD, TopE, UnkD, UnkE
from sirenc.passes.plan_analysis.state import AbsState, InternalInconsistency


class NonConjugate(Exception):
    def __init__(self, parent: RV, child: RV, detail: str):
        super().__init__(detail)
        self.parent = parent
        self.child = child
        self.detail = detail


class SSIState(AbsState):
    method = "ssi"

    # ---- interface ---------------------------------------------------------------

    def assume(self, name, annotation, d) -> RV:
        rv = self.new_var()
        self.add_entry(rv, d, name, annotation)
        return rv

    def observe(self, rv: RV, value: Expr) -> None:
        self._hoist_until_conjugate(rv)
        self.set_distr(rv, Delta(value, sampled=False))

    def value_impl(self, rv: RV) -> Expr:
        self._hoist_until_conjugate(rv)
        self.set_distr(rv, Delta(UNKC, sampled=True))
        return UNKC

    def marginalize(self, rv: RV) -> None:
        self._hoist_until_conjugate(rv)

    # ---- hoisting ------------------------------------------------------------------

    def _hoist_until_conjugate(self, rv: RV) -> None:
        while True:
            try:
                self.set_distr(rv, self.eval_distr(self.distr(rv)))
                self._hoist(rv, frozenset())
                self.set_distr(rv, self.eval_distr(self.distr(rv)))
                return
            except NonConjugate as e:
                if self.is_delta(e.parent):  # no progress possible: a bug, not a verdict
                    raise InternalInconsistency(f"{e.parent} is sampled but still a parent") from None
                self.value_because(e.parent, e.detail)

    def _topo(self, rvs: tuple[RV, ...]) -> list[RV]:
        """``rvs`` ordered ancestors first (depth-first post-order over parents)."""
        order: list[RV] = []
        placed: set[RV] = set()
        active: set[RV] = set()

        def visit(rv: RV) -> None:
            if rv in placed or rv in active:
                return
            active.add(rv)
            for p in dict.fromkeys(self.parents(rv)):
                visit(p)
            active.discard(rv)
            placed.add(rv)
            order.append(rv)

        for rv in rvs:
            visit(rv)
        wanted = set(rvs)
        return [rv for rv in order if rv in wanted]

    def _has_cycle(self, start: RV) -> bool:
        state: dict[RV, int] = {}  # 1 = on the stack, 2 = done
        stack = [(start, iter(dict.fromkeys(self.parents(start))))]
        state[start] = 1
        while stack:
            rv, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                state[rv] = 2
                stack.pop()
                continue
            mark = state.get(nxt)
            if mark == 1:
                return True
            if mark is None:
                state[nxt] = 1
                stack.append((nxt, iter(dict.fromkeys(self.parents(nxt)))))
        return False

    def _hoist(self, cur: RV, ghosts: frozenset) -> None:
        self.shared.tick()
        d = self.distr(cur)
        if type(d) is not Delta:
            # Parents sampled since ``cur`` was last simplified are constants now.
            self.set_distr(cur, self.eval_distr(d))
        if self._has_cycle(cur):
            self.set_dynamic(cur)
            self.set_distr(cur, TOPD)
            return
        parents = self._topo(self.parents(cur))
        ghosts1 = set(ghosts)
        for q in parents:
            if q not in ghosts1:
                self._hoist(q, frozenset(ghosts1))
            ghosts1.add(q)
        for q in reversed(parents):
            if q in ghosts:
                continue
            if not self._can_swap(q, cur):
                self.set_dynamic(cur)
                self.set_distr(cur, TOPD)
                self.set_distr(q, TOPD)
                continue
            if not self._swap(q, cur):
                detail = "no conjugacy rule applies to its " + C.describe_pair(self.distr(q), self.distr(cur))
                raise NonConjugate(q, cur, detail)

    def _depends_transitive(self, rv: RV, target: RV, seen: set | None = None) -> bool:
        """Does the distribution of ``rv`` depend on ``target``, through other variables?"""
        seen = set() if seen is None else seen
        if rv in seen or rv not in self.entries:
            return False
        seen.add(rv)
        d = self.distr(rv)
        if type(d) is TopD or any(D.contains_top(p) for p in d.params()):
            return True
        for w in d.rvs():
            if w == target or self._depends_transitive(w, target, seen):
                return True
        return False

    def _other_deps(self, e: Expr, parent: RV) -> bool:
        """Does ``e`` mention a variable other than ``parent`` that depends on it?"""
        t = type(e)
        if t is TopE:
            return True
        if t is UnkE:
            return any(self._depends_transitive(p, parent) for p in e.parents)
        return any(w != parent and self._depends_transitive(w, parent) for w in e.rvset())

    def _can_swap(self, parent: RV, child: RV) -> bool:
        d = self.distr(child)
        if type(d) is TopD:
            return False
        if type(d) is UnkD:
            return parent not in d.parents
        params = d.params()
        direct = any(parent in p.rvset() for p in params)
        return direct and not any(self._other_deps(p, parent) for p in params)

    def _swap(self, parent: RV, child: RV) -> bool:
        prior, lik = self.distr(parent), self.distr(child)
        if type(prior) in (UnkD, TopD):
            self.set_dynamic(parent)
            return False
        rule = C.applicable(self, prior, lik, parent, child, "ssi")
        if rule is None:
            return False
        swap = rule.swap(self, prior, lik, parent, child)
        for rv, d in swap.side:
            self.set_distr(rv, d)
        self.set_distr(parent, swap.posterior)
        self.set_distr(child, swap.marginal)
        return True

    # ---- dynamic and reachability ---------------------------------------------------

    def set_dynamic(self, rv: RV) -> None:
        todo, seen = [rv], set()
        while todo:
            cur = todo.pop()
            if cur in seen or cur not in self.entries:
                continue
            seen.add(cur)
            self.mark_dynamic(cur)
            todo.extend(reversed(self.parents(cur)))

    def clean(self, roots) -> None:
        """Reachability that also substitutes point masses away (ARCHITECTURE.md §17.5 step 3)."""
        used: set[RV] = set()
        for e in list(roots) + list(self.env.values()):
            used.update(e.rvs())
        frontier = [rv for rv in used if rv in self.entries]
        done: set[RV] = set()
        while frontier:
            rv = frontier.pop()
            if rv in done or rv not in self.entries:
                continue
            done.add(rv)
            for p in dict.fromkeys(self.parents(rv)):
                if p not in self.entries:
                    continue
                d = self.distr(p)
                if type(d) is Delta:
                    self._substitute(p, d.v)
                elif p not in used:
                    used.add(p)
                    frontier.append(p)
        for rv in [rv for rv in self.entries if rv not in used]:
            del self.entries[rv]

    def _substitute(self, rv: RV, value: Expr) -> None:
        for e in self.entries.values():
            if rv in e.distr.rvs():
                e.distr = D.subst_distr(e.distr, rv, value)
        for k, v in self.env.items():
            if rv in v.rvset():
                self.env[k] = D.subst(v, rv, value)

