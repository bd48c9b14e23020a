"""SSI, DS and BP's operations (ARCHITECTURE.md §10.3) on compile-time structure, for `specialize-conjugacy`.

The same algorithm as the runtime's `rv.c`, `hoist.c` and `ds.c`, with the same conjugate pairs
(`staged_conjugacy`), over the expressions of `staged_symbolic`: a variable is made a root by swapping it with its parents
(SSI and BP hoist, DS grafts), observed by emitting a concrete `siren.observe` of its root
distribution, and drawn by emitting a concrete `siren.assume ... sample`. Where the runtime
samples a variable on its own because of the structure (a parent with no rule for its child,
DS's prune, a second parent under DS or BP), this engine emits the same draw at the same point,
so a specialised program keeps symbolic what tier 1 keeps symbolic, and draws what tier 1 draws,
in the same order: the two agree in distribution and, where nothing is drawn, in every number.
"""

from __future__ import annotations

from xdsl.dialects.builtin import i1
from xdsl.ir import SSAValue

from sirenc.ir import siren
from sirenc.methods import Method
from sirenc.passes.tier2 import staged_conjugacy
from sirenc.passes.tier2.staged_symbolic import RV, Builder, Emitter, Expr, IdMemo, K, NotSpecialisable, Num, R, \
    is_static, name_of, occurs, rvs_of

# Families whose root distribution tier 2 scores, draws and averages (parameters as numbers).
SUPPORTED = ("gaussian", "beta", "bernoulli", "binomial", "beta_binomial", "negative_binomial",
             "gamma", "poisson", "uniform_int", "student_t")


class Engine:
    def __init__(self, method: Method, emit: Emitter):
        self.method = method
        self.emit = emit
        self.b = Builder(emit, on_rewrite=lambda rv: self.touch(rv))
        self.sampled_vars: set[str] = set()
        self.symbolic_vars: set[str] = set()
        # Counts changes to variables that already existed (swaps, evaluations, draws, DS edges):
        # a branch that made none can run as a plain `if` (symbolic_ops.py).
        self.touched = 0
        self.born = 0     # variables created so far
        self.retired = IdMemo()          # variables a trajectory keeps as records (trajectories.py)
        self.finished = False            # a trajectory's means are taken: nothing may change after
        self.epoch = 0    # variables created before this are "existing" for `touched`

    def touch(self, *rvs: RV) -> None:
        if any(rv.serial < self.epoch for rv in rvs):
            self.touched += 1

    # -- conjugacy (ARCHITECTURE.md §11): a swap of parent q with child c ------------------------------------

    def affine(self, e: Expr, r: RV) -> tuple[Expr, Expr] | None:
        """e = a*r + b with other variables as constants (11.1), or None."""
        b = self.b
        memo = IdMemo()

        def go(x: Expr):
            if isinstance(x, K):
                return K(0.0), x
            if isinstance(x, R):
                return (K(1.0), K(0.0)) if x.rv is r else (K(0.0), x)
            if x in memo:
                return memo[x]
            res = None
            if x.kind in ("add", "mul", "div"):
                left, right = go(x.args[0]), go(x.args[1])
                if left is not None and right is not None:
                    (a1, b1), (a2, b2) = left, right
                    z1, z2 = is_static(a1, 0.0), is_static(a2, 0.0)
                    if x.kind == "add":
                        res = b.add(a1, a2), b.add(b1, b2)
                    elif x.kind == "mul":
                        ra = K(0.0) if z1 and z2 else b.mul(a1, b2) if z2 else b.mul(b1, a2) if z1 else None
                        res = None if ra is None else (ra, b.mul(b1, b2))
                    elif z2:
                        res = b.div(a1, b2), b.div(b1, b2)
            memo[x] = res
            return res

        return go(e)

    def swap(self, q: RV, c: RV, apply: bool = True) -> bool:
        return staged_conjugacy.swap(self, q, c, apply)

    # -- hoisting (ARCHITECTURE.md §12.2-12.3) ---------------------------------------------------------------

    @staticmethod
    def parents(rv: RV) -> list[RV]:
        return [r for p in rv.params for r in rvs_of(p) if not r.realized]

    def const_params(self, rv: RV) -> bool:
        return all(isinstance(p, K) for p in rv.params)

    def eval_params(self, rv: RV) -> None:
        memo = IdMemo([(rv, R(rv))])   # a cycle back to rv stops there, as in the runtime
        params = [self.b.eval(p, memo) for p in rv.params]
        if any(a is not b for a, b in zip(params, rv.params)):
            self.touch(rv)
        rv.params = params

    def topo_parents(self, cur: RV) -> list[RV]:
        ps = self.parents(cur)
        if not ps or all(p is ps[0] for p in ps):
            return ps[:1]
        out: list[RV] = []
        seen: set[int] = set()

        def visit(v: RV) -> None:
            if id(v) in seen:
                return
            seen.add(id(v))
            for k in self.parents(v):
                visit(k)
            if any(v is p for p in ps) and not any(v is o for o in out):
                out.append(v)

        for p in ps:
            visit(p)
        return out

    def would_cycle(self, q: RV, c: RV) -> bool:
        seen: set[int] = set()
        stack = [p for p in self.parents(c) if p is not q]
        while stack:
            v = stack.pop()
            if id(v) in seen:
                continue
            seen.add(id(v))
            for p in self.parents(v):
                if p is q:
                    return True
                stack.append(p)
        return False

    def hoist(self, cur: RV, ghosts: list[RV]) -> None:
        order = self.topo_parents(cur)
        g1 = list(ghosts)
        for q in order:
            if not any(q is g for g in g1) and not self.const_params(q):
                self.hoist(q, g1)
            g1.append(q)
        for q in reversed(order):
            if any(q is g for g in ghosts) or not any(occurs(p, q) for p in cur.params):
                continue
            if (len(order) > 1 and self.would_cycle(q, cur)) or not self.swap(q, cur):
                raise _NonConjugate(q, cur)

    def make_root(self, rv: RV) -> None:
        """hoist_and_eval (12.2) or DS's graft: afterwards rv's parameters are numbers. As the
        runtime's loop does (hoist.c, rt_hoist_root), a parent that cannot be swapped is drawn
        (the drawing is decided by structure, so it is compiled as a draw) and the hoist restarts."""
        if self.method.grafts:
            self.ds_graft(rv)
        while True:
            try:
                self._hoist_and_eval(rv)
                return
            except _NonConjugate as e:
                if self.method.grafts:
                    self.ds_unmarginalize(e.c, e.q)
                self.value(e.q)

    def _hoist_and_eval(self, rv: RV) -> None:
        if self.const_params(rv):
            return
        self.eval_params(rv)
        if not self.const_params(rv):
            self.hoist(rv, [])
            self.eval_params(rv)
        if not self.const_params(rv):
            raise _NonConjugate(self.parents(rv)[0], rv)

    # -- delayed sampling's node states (ARCHITECTURE.md §13), structure only ----------------------------------

    def ds_place(self, rv: RV) -> None:
        """DS and BP's assume (13.2, 14.1): the first parent the rule accepts is kept, the others
        drawn, in the order the runtime draws them (ds.c, rt_ds_place)."""
        self.eval_params(rv)
        seen: list[RV] = []
        canonical = None
        for q in self.parents(rv):
            if any(q is o for o in seen) or q is canonical or q.realized:
                continue
            seen.append(q)
            if not any(occurs(p, q) for p in rv.params):
                continue
            if canonical is None and self.swap(q, rv, apply=False):
                canonical = q
                continue
            self.value(q)
            self.eval_params(rv)
        if canonical is not None and self.method.grafts:
            self.touch(canonical)
            rv.ds_state, rv.ds_parent = "I", canonical
            if not any(c is rv for c in canonical.children):
                canonical.children.append(rv)

    @staticmethod
    def marginal_child(v: RV) -> RV | None:
        return next((c for c in v.children if c.ds_state == "M"), None)

    def ds_graft(self, v: RV) -> None:
        if v.ds_state == "M":
            self.ds_prune(v)
        elif v.ds_state == "I":
            assert v.ds_parent is not None
            self.ds_graft(v.ds_parent)
            self.ds_marginalize(v)

    def ds_prune(self, v: RV) -> None:
        """prune (13.3): v's marginal child, and that child's own, drawn deepest first (ds.c's
        prune_child); each draw gives its parent the posterior given the value."""
        chain = []
        c = self.marginal_child(v)
        while c is not None:
            chain.append(c)
            c = self.marginal_child(c)
        for c in reversed(chain):
            self.value(c)

    @staticmethod
    def ds_marginalize(v: RV) -> None:
        q = v.ds_parent
        v.ds_state = "M"
        if q is None or q.ds_state == "R":
            v.ds_parent = None

    @staticmethod
    def ds_unmarginalize(c: RV, q: RV) -> None:
        """do_marginalize's case without a rule (ds.c): c does not become q's marginal child, q is
        drawn instead, and c names no parent once it is. Here graft marked c first (the swap comes
        later, in the hoist), so the mark is taken back before q is drawn: a draw of q would
        otherwise prune c."""
        if c.ds_parent is q:
            q.children = [k for k in q.children if k is not c]
            c.ds_parent = None

    def ds_realize(self, v: RV) -> None:
        q = v.ds_parent
        if q is not None:
            q.children = [c for c in q.children if c is not v]
        v.ds_state, v.ds_parent = "R", None
        for c in v.children:
            if c.ds_state == "I":
                self.ds_marginalize(c)
        v.children = []

    # -- the operations (ARCHITECTURE.md §10.3) ---------------------------------------------------------------

    def _not_finished(self) -> None:
        if self.finished:
            raise NotSpecialisable("a symbolic operation after the means of a list of symbolic values are "
                                   "taken (tier 1 would take them at the end)")

    def assume(self, family: str, params: list[Expr], var: str, ann: str | None) -> Expr:
        self._not_finished()
        if family not in SUPPORTED and family != "exponential":
            raise NotSpecialisable(f"tier 2 keeps no symbolic {family} variable")
        if family == "exponential":   # ARCHITECTURE.md §9: exponential(r) is Gamma(1, r)
            family, params = "gamma", [K(1.0), params[0]]
        rv = self.new_rv(family, list(params), var, ann)
        if var:
            self.symbolic_vars.add(var)
        if self.method.one_parent:
            self.ds_place(rv)
        if ann == "sample":
            return K(self.value(rv))
        return R(rv)

    def new_rv(self, family: str, params: list[Expr], var: str = "", ann: str | None = None) -> RV:
        rv = RV(family, params, var, ann, serial=self.born)
        self.born += 1
        return rv

    def root_dist(self, rv: RV) -> SSAValue:
        """rv made a root, and its distribution as a concrete `siren.dist` of its numbers."""
        self.make_root(rv)
        return self.emit.result(siren.DistOp(rv.family, [self.emit.num(p.v) for p in rv.params]))

    def observe(self, family: str, params: list[Expr], value) -> None:
        self._not_finished()
        rv = self.new_rv(family, list(params))
        if family not in SUPPORTED:
            raise NotSpecialisable(f"tier 2 cannot observe a {family} with symbolic parameters")
        if self.method.one_parent:
            self.ds_place(rv)
        self.emit.add(siren.ObserveOp(self.root_dist(rv), value))
        if value.type == i1:
            value = self.emit.add(siren.BoolToFloatOp(value)).result
        self.realize(rv, value)

    def realize(self, rv: RV, value: Num) -> None:
        rv.value, rv.params = value, []
        if self.method.grafts:
            self.ds_realize(rv)

    def value(self, rv: RV) -> Num:
        """Draw rv from its marginal (value, 10.3): a concrete `siren.assume ... sample`."""
        if rv.realized:
            return rv.value
        self._not_finished()
        if rv.ann == "symbolic":
            raise NotSpecialisable(f"{name_of(rv)} is annotated as symbolic but would be sampled")
        self.touch(rv)
        dist = self.root_dist(rv)
        value_type = siren.draw_type(dist.type, [a.type for a in dist.owner.params])
        draw = self.emit.add(siren.AssumeOp(dist, rv.var, "sample", value_type)).result
        if draw.type == i1:
            draw = self.emit.add(siren.BoolToFloatOp(draw)).result
        if rv.var:
            self.sampled_vars.add(rv.var)
        self.realize(rv, draw)
        rv.sampled = True
        return draw

    def force(self, e: Expr) -> Num:
        """value_expr (6.4): the number e stands for, drawing the variables it mentions left to
        right; an ite forces its condition, then the branch it picks."""
        memo = IdMemo()
        emit = self.emit

        def go(x: Expr) -> Num:
            if isinstance(x, K):
                return x.v
            if isinstance(x, R):
                return self.value(x.rv)
            if x in memo:
                return memo[x]
            if x.kind == "ite":
                c = go(x.args[0])
                if not isinstance(c, float):
                    t, f = self.b.eval(x.args[1]), self.b.eval(x.args[2])
                    if isinstance(t, K) and isinstance(f, K):
                        v = emit.select(c, t.v, f.v)
                    else:
                        v = go(x.args[1] if emit.decide(c, "forcing an if on a symbolic condition draws "
                                                        "different variables depending on a run-time value")
                               else x.args[2])
                else:
                    v = go(x.args[1] if (c != 0.0 or c != c) else x.args[2])
            else:
                a = go(x.args[0])
                v = _combine(emit, x.kind, a, go(x.args[1]))
            memo[x] = v
            return v

        return go(e)

    def mean(self, e: Expr) -> Num:
        """The per-particle expectation of 10.4."""
        e = self.b.eval(e)
        emit = self.emit
        if isinstance(e, K):
            return e.v
        if isinstance(e, R):
            rv = e.rv
            self.marginalize(rv)
            if rv.realized:
                return rv.value
            return _MEANS[rv.family](emit, *[p.v for p in rv.params])
        if e.kind == "ite":
            c, t, f = (self.mean(a) for a in e.args)
            return emit.arith(siren.AddOp, emit.arith(siren.MulOp, c, t),
                              emit.arith(siren.MulOp, emit.arith(siren.SubOp, 1.0, c), f))
        left = self.mean(e.args[0])
        return _combine(emit, e.kind, left, self.mean(e.args[1]))

    def marginalize(self, rv: RV) -> None:
        if rv.realized:
            return
        if self.method.grafts:
            if rv.ds_state == "I":
                assert rv.ds_parent is not None
                self.marginalize(rv.ds_parent)
                self.ds_marginalize(rv)
            if rv.children:
                self.ds_graft(rv)
        self.make_root(rv)


class _NonConjugate(Exception):
    """A swap of parent q with child c has no rule (or would make a cycle): the runtime draws q."""

    def __init__(self, q: RV, c: RV):
        super().__init__()
        self.q, self.c = q, c


def _combine(emit: Emitter, kind: str, a: Num, b: Num) -> Num:
    if kind in ("lt", "eq"):
        return emit.compare(siren.LtOp if kind == "lt" else siren.EqOp, a, b)
    return emit.arith({"add": siren.AddOp, "mul": siren.MulOp, "div": siren.DivOp}[kind], a, b)


_MEANS = {
    "gaussian": lambda e, mu, v: mu,
    "beta": lambda e, a, b: e.arith(siren.DivOp, a, e.arith(siren.AddOp, a, b)),
    "bernoulli": lambda e, p: p,
    "binomial": lambda e, n, p: e.arith(siren.MulOp, n, p),
    "beta_binomial": lambda e, n, a, b: e.arith(siren.DivOp, e.arith(siren.MulOp, n, a), e.arith(siren.AddOp, a, b)),
    "negative_binomial": lambda e, n, p: e.arith(siren.DivOp, e.arith(siren.MulOp, n, e.arith(siren.SubOp, 1.0, p)), p),
    "gamma": lambda e, a, b: e.arith(siren.DivOp, a, b),
    "poisson": lambda e, lam: lam,
    "uniform_int": lambda e, a, b: e.arith(siren.MulOp, 0.5, e.arith(siren.AddOp, a, b)),
    "student_t": lambda e, mu, t, nu: mu,
}
