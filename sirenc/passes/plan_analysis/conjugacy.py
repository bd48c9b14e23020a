"""Conjugate pairs (ARCHITECTURE.md §11) over abstract expressions.

The pairs are `sirenc.conjugate_pairs`' table, interpreted here: a requirement becomes a test on
abstract expressions, a formula is evaluated with the domain's smart constructors, so the shapes
are those the runtime builds and what the analysis keeps symbolic is what the runtime can keep
symbolic::

    rule = applicable(state, prior, likelihood, parent, child, "ssi")
    if rule is not None:
        child_marginal = rule.swap(state, prior, likelihood, parent, child).marginal

Dependence tests are transitive through the state's distributions (ARCHITECTURE.md §0.3,
item 19), which is at least as strict as the runtime.
"""

from __future__ import annotations

from dataclasses import dataclass

from sirenc import conjugate_pairs as P
from sirenc.passes.plan_analysis import domain as D
from sirenc.passes.plan_analysis.domain import RV, UNK, Const, Dist, Distr, Expr, UnkE
from sirenc.passes.plan_analysis.state import AbsState, transitive_depends

ONE, ZERO, MINUS_ONE = Const(1.0), Const(0.0), Const(-1.0)


def _dep(state: AbsState, e: Expr, rv: RV) -> bool:
    return transitive_depends(state, e, rv)


# ---- affine decomposition (ARCHITECTURE.md §11.1) -------------------------------------------


def affine(state: AbsState, e: Expr, rv: RV) -> tuple[Expr, Expr] | None:
    """``(a, b)`` with ``e = a*rv + b``, other variables treated as constants."""
    t = type(e)
    if t is Const:
        return ZERO, e
    if t is RV:
        return (ONE, ZERO) if e == rv else (ZERO, e)
    if t is D.Add:
        c1, c2 = affine(state, e.args[0], rv), affine(state, e.args[1], rv)
        if c1 is None or c2 is None:
            return None
        return D.add(c1[0], c2[0]), D.add(c1[1], c2[1])
    if t is D.Mul:
        c1, c2 = affine(state, e.args[0], rv), affine(state, e.args[1], rv)
        if c1 is None or c2 is None:
            return None
        (a1, b1), (a2, b2) = c1, c2
        a1e, a2e = state.eval(a1), state.eval(a2)
        z1, z2 = D._is(a1e, 0), D._is(a2e, 0)
        if z1 and z2:
            return ZERO, D.mul(b1, b2)
        if z2:
            return D.mul(a1e, b2), D.mul(b1, b2)
        if z1:
            return D.mul(b1, a2e), D.mul(b1, b2)
        return None
    if t is D.Div:
        c1, c2 = affine(state, e.args[0], rv), affine(state, e.args[1], rv)
        if c1 is None or c2 is None:
            return None
        (a1, b1), (_, b2) = c1, c2
        if D._is(state.eval(c2[0]), 0):
            return D.div(a1, b2), D.div(b1, b2)
        return None
    if t is UnkE and not e.parents:
        return ZERO, e
    return None


def scaled(e: Expr, t: Expr) -> Expr | None:
    """``k`` with ``e = k*t`` structurally (ARCHITECTURE.md §11.7), ``None`` if not found."""
    if e == t:
        return ONE
    ty = type(e)
    if ty is D.Add:
        s1, s2 = scaled(e.args[0], t), scaled(e.args[1], t)
        return None if s1 is None or s2 is None else D.add(s1, s2)
    if ty is D.Mul:
        s1, s2 = scaled(e.args[0], t), scaled(e.args[1], t)
        if s1 is None and s2 is None:
            return None
        if s1 is None:
            return D.mul(s2, e.args[0])
        if s2 is None:
            return D.mul(s1, e.args[1])
        return None  # t*t is not a multiple of t
    if ty is D.Div:
        s1, s2 = scaled(e.args[0], t), scaled(e.args[1], t)
        if s1 is not None and s2 is None:
            return D.div(s1, e.args[1])
        return None
    return None


# ---- the table, interpreted ------------------------------------------------------------------


def _near_int(v) -> bool:
    if v is UNK:
        return True
    try:
        return P.near_int(v)
    except (TypeError, ValueError, OverflowError):
        return False


class _Algebra:
    """The formulas' operations as the domain's smart constructors."""

    def __init__(self, state: AbsState, variables: dict[str, RV]):
        self.state, self.variables = state, variables

    const = staticmethod(Const)
    add = staticmethod(D.add)
    mul = staticmethod(D.mul)
    div = staticmethod(D.div)

    @staticmethod
    def sub(a: Expr, b: Expr) -> Expr:
        return D.add(a, D.mul(MINUS_ONE, b))

    def ite(self, c: Expr, t: Expr, f: Expr) -> Expr:
        return self.state.ite(c, t, f)

    def subst(self, e: Expr, var: str, truth: bool) -> Expr:
        return D.subst(e, self.variables[var], Const(truth))


def _meets(state: AbsState, req, v: dict, variables: dict[str, RV]) -> bool:
    """Whether `req` holds of the operands `v`; binds what it names into `v`."""
    t = type(req)
    if t is P.Free:
        return not _dep(state, v[req.expr], variables[req.on])
    if t is P.Mentions:
        return variables[req.on] in v[req.expr].rvset()
    if t is P.Is:
        return v[req.expr] == variables[req.var]
    if t is P.Constant:
        e = v[req.expr]
        return type(e) is Const and (not req.integral or _near_int(e.v))
    if t is P.Precision:
        return v[req.expr] == D.Div(ONE, variables[req.var])
    if t is P.Affine:
        ab = affine(state, v[req.expr], variables[req.var])
        if ab is not None:
            v["a"], v["b"] = ab
        return ab is not None
    if t is P.GammaPrecision:
        e = v[req.expr]
        if type(e) is not D.Div or not D._is(e.args[0], 1) or type(e.args[1]) is not RV:
            return False
        lam = e.args[1]
        if lam in variables.values() or lam not in state.entries:
            return False
        ld = state.distr(lam)
        if type(ld) is not Dist or ld.family != "gamma":
            return False
        alpha, beta = ld.args
        if any(_dep(state, x, r) for x in (alpha, beta) for r in variables.values()):
            return False
        v["lam"], v["alpha"], v["beta"] = lam, alpha, beta
        return True
    if t is P.ScaledBy:
        k = scaled(v[req.expr], v[req.by])
        k = None if k is None else state.eval(k)
        if type(k) is not Const or k.v is UNK or D._is(k, 0):
            return False
        v["kappa"] = D.div(ONE, k)
        return True
    raise AssertionError(f"the analysis has no test for {req}")


@dataclass(frozen=True)
class Swap:
    marginal: Distr
    posterior: Distr
    side: list          # [(third variable, its new distribution)]


@dataclass(frozen=True)
class Rule:
    """A pair of the table as the analysis uses it: check, child marginal, parent posterior.

    Results are bounded in size (``domain.bounded``) so repeated updates over
    symbolic Booleans cannot blow up the analysis.
    """

    pair: P.Pair

    @property
    def name(self) -> str:
        return self.pair.name

    @property
    def methods(self) -> tuple[str, ...]:
        return self.pair.methods

    def _operands(self, state, prior, lik, p, c) -> tuple[dict, dict] | None:
        variables = {"parent": p, "child": c}
        v = dict(zip(self.pair.parent[1], prior.args)) | dict(zip(self.pair.child[1], lik.args))
        if all(_meets(state, req, v, variables) for req in self.pair.requires):
            return v, variables
        return None

    def check(self, state, prior, lik, p, c) -> bool:
        return self._operands(state, prior, lik, p, c) is not None

    def swap(self, state, prior, lik, p, c, x=None) -> Swap:
        """The child's marginal, the parent's posterior given `x` (the child's handle by default) and the
        third variables' new distributions, from one evaluation of the requirements."""
        v, variables = self._operands(state, prior, lik, p, c)
        v["x"] = c if x is None else x
        update = self.pair.update(_Algebra(state, variables), P.Operands(v))
        return Swap(D.bounded_distr(Dist(*update.marginal)), D.bounded_distr(Dist(*update.posterior)),
                    [(v[name], D.bounded_distr(Dist(*d))) for name, d in update.side.items()])


RULES: tuple[Rule, ...] = tuple(Rule(pair) for pair in P.PAIRS if "analysis" not in pair.absent)


def rules_for(prior: Distr, likelihood: Distr, method: str) -> list[Rule]:
    if type(prior) is not Dist or type(likelihood) is not Dist:
        return []
    return [r for r in RULES
            if r.pair.parent_family == prior.family and r.pair.child_family == likelihood.family
            and method in r.methods]


def applicable(state: AbsState, prior: Distr, likelihood: Distr, p: RV, c: RV, method: str) -> Rule | None:
    """The first rule whose check passes for this pair, if any."""
    for rule in rules_for(prior, likelihood, method):
        if rule.check(state, prior, likelihood, p, c):
            return rule
    return None


def describe_pair(prior: Distr, likelihood: Distr) -> str:
    def fam(d: Distr) -> str:
        return d.family if type(d) is Dist else "unknown"

    return f"{fam(prior)} prior and {fam(likelihood)} likelihood"
