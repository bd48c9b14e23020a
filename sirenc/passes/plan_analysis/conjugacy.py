"""Conjugate pairs (ARCHITECTURE.md §11) over abstract expressions.

Each rule is a structural *check* on (prior of the parent, likelihood of the
child) plus the *marginal* of the child and the *posterior* of the parent
given the child's value ``x`` (the child's handle itself for edge reversal).
The shapes are those of the runtime's rules (ARCHITECTURE.md §11.1-11.6, and the correct
normal-inverse-gamma update of ARCHITECTURE.md §0.3), so that what the analysis keeps
symbolic is exactly what the runtime can keep symbolic::

    rule = find_rule("gaussian", "gaussian", "ssi")
    if rule.check(state, prior, likelihood, parent, child):
        child_marginal = rule.marginal(state, prior, likelihood, parent, child)

Dependence tests are transitive through the state's distributions (ARCHITECTURE.md §0.3,
item 19), which is at least as strict as the runtime.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

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


# ---- rules ----------------------------------------------------------------------


@dataclass(frozen=True)
class Rule:
    """A conjugate pair: structural check, child marginal, parent posterior.

    Results are bounded in size (``domain.bounded``) so repeated updates over
    symbolic Booleans cannot blow up the analysis.
    """

    name: str
    parent: str
    child: str
    methods: tuple[str, ...]
    check: Callable[..., bool]
    _marginal: Callable[..., Distr]
    _posterior: Callable[..., Distr]
    # Variables other than parent and child the rule rewrites: [(rv, new distribution)].
    _side: Callable[..., list] | None = None

    def marginal(self, state, prior, lik, p, c) -> Distr:
        return D.bounded_distr(self._marginal(state, prior, lik, p, c))

    def posterior(self, state, prior, lik, p, c, x=None) -> Distr:
        return D.bounded_distr(self._posterior(state, prior, lik, p, c, x))

    def side(self, state, prior, lik, p, c, x=None) -> list:
        if self._side is None:
            return []
        return [(rv, D.bounded_distr(d)) for rv, d in self._side(state, prior, lik, p, c, x)]


def _gaussian_check(state, prior, lik, p, c) -> bool:
    mu0, var0 = prior.args
    mu, var = lik.args
    if affine(state, mu, p) is None:
        return False
    return not _dep(state, mu0, c) and not _dep(state, var0, c) and not _dep(state, var, p)


def _gaussian_marginal(state, prior, lik, p, c) -> Distr:
    mu0, var0 = prior.args
    mu, var = lik.args
    a, b = affine(state, mu, p)
    return D.Normal(D.add(D.mul(a, mu0), b), D.add(D.mul(D.mul(a, a), var0), var))


def _gaussian_posterior(state, prior, lik, p, c, x=None) -> Distr:
    mu0, var0 = prior.args
    mu, var = lik.args
    a, b = affine(state, mu, p)
    x = c if x is None else x
    mu01 = D.add(D.mul(a, mu0), b)
    var01 = D.mul(D.mul(a, a), var0)
    var02 = D.div(ONE, D.add(D.div(ONE, var01), D.div(ONE, var)))
    mu02 = D.mul(D.add(D.div(mu01, var01), D.div(x, var)), var02)
    return D.Normal(D.div(D.add(mu02, D.mul(MINUS_ONE, b)), a), D.div(var02, D.mul(a, a)))


def _nig_parts(state, prior, lik, p, c):
    """(lambda handle, alpha, beta, kappa) when the NIG rule applies, else None."""
    mu0, var1 = prior.args
    mu, var2 = lik.args
    if type(var2) is not D.Div or not D._is(var2.args[0], 1) or type(var2.args[1]) is not RV:
        return None
    lam = var2.args[1]
    if lam == p or lam == c or lam not in state.entries:
        return None
    ld = state.distr(lam)
    if type(ld) is not Dist or ld.family != "gamma":
        return None
    if type(mu0) is not Const or mu0.v is UNK or mu != p:
        return None
    k = scaled(var1, var2)
    if k is None:
        return None
    k = state.eval(k)
    if type(k) is not Const or k.v is UNK or D._is(k, 0):
        return None
    if _dep(state, mu0, c) or _dep(state, var1, c):
        return None
    alpha, beta = ld.args
    if _dep(state, alpha, p) or _dep(state, beta, p) or _dep(state, alpha, c) or _dep(state, beta, c):
        return None
    return lam, alpha, beta, D.div(ONE, k)


def _nig_check(state, prior, lik, p, c) -> bool:
    return _nig_parts(state, prior, lik, p, c) is not None


def _nig_marginal(state, prior, lik, p, c) -> Distr:
    lam, alpha, beta, kappa = _nig_parts(state, prior, lik, p, c)
    mu0 = prior.args[0]
    k1 = D.add(kappa, ONE)
    return Dist("student_t", (mu0, D.div(D.mul(beta, k1), D.mul(alpha, kappa)), D.mul(Const(2.0), alpha)))


def _nig_posterior(state, prior, lik, p, c, x=None) -> Distr:
    lam, alpha, beta, kappa = _nig_parts(state, prior, lik, p, c)
    mu0 = prior.args[0]
    x = c if x is None else x
    k1 = D.add(kappa, ONE)
    mean = D.div(D.add(D.mul(kappa, mu0), x), k1)
    return D.Normal(mean, D.div(ONE, D.mul(k1, lam)))


def _nig_side(state, prior, lik, p, c, x=None) -> list:
    lam, alpha, beta, kappa = _nig_parts(state, prior, lik, p, c)
    mu0 = prior.args[0]
    x = c if x is None else x
    d = D.add(x, D.mul(MINUS_ONE, mu0))
    k1 = D.add(kappa, ONE)
    new_beta = D.add(beta, D.div(D.mul(kappa, D.mul(d, d)), D.mul(Const(2.0), k1)))
    return [(lam, D.Gamma(D.add(alpha, Const(0.5)), new_beta))]


def _bb_check(state, prior, lik, p, c) -> bool:
    (p1,), (p2,) = prior.args, lik.args
    return p in p2.rvset() and not _dep(state, p1, c)


def _bb_marginal_p(state, prior, lik, p, c) -> Expr:
    (p1,), (p2,) = prior.args, lik.args
    on_true, on_false = D.subst(p2, p, Const(True)), D.subst(p2, p, Const(False))
    return D.add(D.mul(p1, on_true), D.mul(D.add(ONE, D.mul(MINUS_ONE, p1)), on_false))


def _bb_marginal(state, prior, lik, p, c) -> Distr:
    return Dist("bernoulli", (_bb_marginal_p(state, prior, lik, p, c),))


def _bb_posterior(state, prior, lik, p, c, x=None) -> Distr:
    (p1,), (p2,) = prior.args, lik.args
    x = c if x is None else x
    m = _bb_marginal_p(state, prior, lik, p, c)
    num_sub = state.ite(x, p2, D.add(ONE, D.mul(MINUS_ONE, p2)))
    num = D.mul(p1, D.subst(num_sub, p, Const(True)))
    den = state.ite(x, m, D.add(ONE, D.mul(MINUS_ONE, m)))
    return Dist("bernoulli", (D.div(num, den),))


def _beta_bern_check(state, prior, lik, p, c) -> bool:
    a, b = prior.args
    return lik.args[0] == p and not _dep(state, a, c) and not _dep(state, b, c)


def _beta_bern_marginal(state, prior, lik, p, c) -> Distr:
    a, b = prior.args
    return Dist("bernoulli", (D.div(a, D.add(a, b)),))


def _beta_bern_posterior(state, prior, lik, p, c, x=None) -> Distr:
    a, b = prior.args
    x = c if x is None else x
    return Dist("beta", (D.add(a, state.ite(x, ONE, ZERO)), D.add(b, state.ite(x, ZERO, ONE))))


def _beta_binom_check(state, prior, lik, p, c) -> bool:
    a, b = prior.args
    n, q = lik.args
    return (
        type(n) is Const and type(a) is Const and q == p
        and not _dep(state, a, c) and not _dep(state, b, c)
    )


def _beta_binom_marginal(state, prior, lik, p, c) -> Distr:
    a, b = prior.args
    return Dist("beta_binomial", (lik.args[0], a, b))


def _beta_binom_posterior(state, prior, lik, p, c, x=None) -> Distr:
    a, b = prior.args
    n = lik.args[0]
    x = c if x is None else x
    return Dist("beta", (D.add(a, x), D.add(b, D.add(n, D.mul(MINUS_ONE, x)))))


def _near_int(v) -> bool:
    if v is UNK:
        return True
    try:
        return math.isclose(round(v), v, rel_tol=1e-5, abs_tol=1e-8)
    except (TypeError, ValueError, OverflowError):
        return False


def _gamma_poisson_check(state, prior, lik, p, c) -> bool:
    a, b = prior.args
    return type(a) is Const and _near_int(a.v) and lik.args[0] == p and not _dep(state, b, c)


def _gamma_poisson_marginal(state, prior, lik, p, c) -> Distr:
    a, b = prior.args
    n = Const(UNK) if a.v is UNK else Const(float(round(a.v)))
    return Dist("negative_binomial", (n, D.div(b, D.add(ONE, b))))


def _gamma_poisson_posterior(state, prior, lik, p, c, x=None) -> Distr:
    a, b = prior.args
    x = c if x is None else x
    return D.Gamma(D.add(a, x), D.add(b, ONE))


def _gamma_normal_check(state, prior, lik, p, c) -> bool:
    a, b = prior.args
    mu, var = lik.args
    return (
        type(mu) is Const and var == D.Div(ONE, p)
        and not _dep(state, a, c) and not _dep(state, b, c)
    )


def _gamma_normal_marginal(state, prior, lik, p, c) -> Distr:
    a, b = prior.args
    return Dist("student_t", (lik.args[0], D.div(b, a), D.mul(Const(2.0), a)))


def _gamma_normal_posterior(state, prior, lik, p, c, x=None) -> Distr:
    a, b = prior.args
    mu = lik.args[0]
    x = c if x is None else x
    neg_mu = Const(UNK) if mu.v is UNK else D.mul(MINUS_ONE, mu)
    d = D.add(x, neg_mu)
    return D.Gamma(D.add(a, Const(0.5)), D.add(b, D.mul(Const(0.5), D.mul(d, d))))


_ALL = ("ssi", "ds", "bp")
RULES: tuple[Rule, ...] = (
    Rule("gaussian", "gaussian", "gaussian", _ALL,
         _gaussian_check, _gaussian_marginal, _gaussian_posterior),
    Rule("normal-inverse-gamma", "gaussian", "gaussian", ("ssi", "ds"),
         _nig_check, _nig_marginal, _nig_posterior, _nig_side),
    Rule("bernoulli", "bernoulli", "bernoulli", ("ssi", "ds"),
         _bb_check, _bb_marginal, _bb_posterior),
    Rule("beta-bernoulli", "beta", "bernoulli", ("ssi", "ds"),
         _beta_bern_check, _beta_bern_marginal, _beta_bern_posterior),
    Rule("beta-binomial", "beta", "binomial", ("ssi", "ds"),
         _beta_binom_check, _beta_binom_marginal, _beta_binom_posterior),
    Rule("gamma-poisson", "gamma", "poisson", ("ssi", "ds"),
         _gamma_poisson_check, _gamma_poisson_marginal, _gamma_poisson_posterior),
    Rule("gamma-normal", "gamma", "gaussian", ("ssi", "ds"),
         _gamma_normal_check, _gamma_normal_marginal, _gamma_normal_posterior),
)


def rules_for(prior: Distr, likelihood: Distr, method: str) -> list[Rule]:
    if type(prior) is not Dist or type(likelihood) is not Dist:
        return []
    return [
        r for r in RULES
        if r.parent == prior.family and r.child == likelihood.family and method in r.methods
    ]


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
