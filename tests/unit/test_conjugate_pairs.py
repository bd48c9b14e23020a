"""sirenc/conjugate_pairs.py is the one table of conjugate pairs: its formulas are the exact posteriors
and marginals (checked here against closed forms computed independently, with numbers), and every
consumer serves exactly the pairs the table gives it: the runtime's generated rules, tier 2's
staging and the plan analysis."""

from __future__ import annotations

import math
import random
import re
from pathlib import Path

import pytest

from sirenc import conjugate_pairs as P
from sirenc.passes.plan_analysis import conjugacy as analysis
from sirenc.runtime.conjugacy_source import SOURCE_PATH, source_text

ROOT = Path(__file__).resolve().parents[2]
PAIR = {p.name: p for p in P.PAIRS}


class Numbers:
    """The formulas' algebra over functions of the parent's value (for `subst`), evaluated at the end."""

    @staticmethod
    def const(v):
        return lambda env: v

    add = staticmethod(lambda a, b: lambda env: a(env) + b(env))
    sub = staticmethod(lambda a, b: lambda env: a(env) - b(env))
    mul = staticmethod(lambda a, b: lambda env: a(env) * b(env))
    div = staticmethod(lambda a, b: lambda env: a(env) / b(env))
    ite = staticmethod(lambda c, t, f: lambda env: t(env) if c(env) else f(env))

    @staticmethod
    def subst(e, var, truth):
        return lambda env: e({**env, var: float(truth)})


def run(formula, **operands):
    fns = {k: (v if callable(v) else Numbers.const(v)) for k, v in operands.items()}
    update = formula(Numbers, P.Operands(fns))

    def value(dist):
        family, params = dist
        return family, tuple(p({}) for p in params)

    return value(update.marginal), value(update.posterior), {k: value(d) for k, d in update.side.items()}


def close(a, b, rel=1e-12):
    return all(math.isclose(x, y, rel_tol=rel, abs_tol=1e-300) for x, y in zip(a, b, strict=True))


def test_the_committed_rules_are_what_the_table_generates():
    assert (ROOT / SOURCE_PATH).read_text() == source_text(), (
        f"regenerate it: python -m sirenc.runtime.conjugacy_source > {SOURCE_PATH}")


def test_each_consumer_serves_the_pairs_the_table_gives_it():
    generated = set(re.findall(r"\}, /\* ([a-z-]+) \*/", source_text()))
    assert generated == {p.name for p in P.PAIRS if "runtime" not in p.absent}
    assert {r.name for r in analysis.RULES} == {p.name for p in P.PAIRS if "analysis" not in p.absent}
    for pair in P.PAIRS:
        for method in pair.methods:
            for consumer in P.CONSUMERS:
                served = pair in P.pairs_for(consumer, pair.parent_family, pair.child_family, method)
                assert served == (consumer not in pair.absent)
        # A consumer that leaves a pair out says why.
        assert set(pair.absent) <= set(P.CONSUMERS) and all(len(why) > 20 for why in pair.absent.values())


def test_belief_propagation_keeps_the_gaussian_pair_alone():
    assert [p.name for p in P.PAIRS if "bp" in p.methods] == ["gaussian-gaussian"]


@pytest.mark.parametrize("seed", range(20))
def test_the_gaussian_posterior_is_bayes_rule(seed):
    r = random.Random(seed)
    mu0, v0, a, b, v, x = r.gauss(0, 3), r.uniform(0.1, 5), r.uniform(-3, 3), r.gauss(0, 2), r.uniform(0.1, 5), r.gauss(0, 4)
    prec = 1 / v0 + a * a / v
    exact_post = ((mu0 / v0 + a * (x - b) / v) / prec, 1 / prec)
    exact_marg = (a * mu0 + b, a * a * v0 + v)
    pair = PAIR["gaussian-gaussian"]
    for form in (pair.update, pair.staged):
        (fm, marg), (fp, post), side = run(form, mu0=mu0, v0=v0, a=a, b=b, v=v, x=x)
        assert (fm, fp, side) == ("gaussian", "gaussian", {})
        assert close(marg, exact_marg) and close(post, exact_post, rel=1e-9)


def test_the_staged_gaussian_form_stays_finite_where_the_mean_ignores_the_parent():
    (_, marg), (_, post), _ = run(PAIR["gaussian-gaussian"].staged, mu0=1.5, v0=2.0, a=0.0, b=0.25, v=3.0, x=4.0)
    assert marg == (0.25, 3.0) and post == (1.5, 2.0)


@pytest.mark.parametrize("x", [True, False])
def test_the_bernoulli_pairs_are_bayes_rule(x):
    q1, on_true, on_false = 0.3, 0.9, 0.2
    (_, (m,)), (_, (post,)), _ = run(
        PAIR["bernoulli-bernoulli"].update, q1=q1, q2=lambda env: on_true if env["parent"] else on_false,
        x=lambda env: float(x))
    joint_true = q1 * (on_true if x else 1 - on_true)
    joint_false = (1 - q1) * (on_false if x else 1 - on_false)
    assert math.isclose(m, q1 * on_true + (1 - q1) * on_false)
    assert math.isclose(post, joint_true / (joint_true + joint_false))
    (_, (m,)), (family, post), _ = run(PAIR["beta-bernoulli"].update, al=2.5, be=4.0, p=None, x=float(x))
    assert math.isclose(m, 2.5 / 6.5) and family == "beta" and post == (2.5 + x, 4.0 + (not x))


def test_the_count_pairs_add_the_counts():
    marg, post, _ = run(PAIR["beta-binomial"].update, al=2.0, be=3.0, n=10.0, p=None, x=7.0)
    assert marg == ("beta_binomial", (10.0, 2.0, 3.0)) and post == ("beta", (9.0, 6.0))
    marg, post, _ = run(PAIR["gamma-poisson"].update, al=3.0, be=0.5, l=None, x=4.0)
    assert marg == ("negative_binomial", (3.0, 0.5 / 1.5)) and post == ("gamma", (7.0, 1.5))


def test_the_gamma_precision_pair_is_the_known_mean_update():
    # tau ~ Gamma(a, b), y ~ N(mu, 1/tau): tau | y ~ Gamma(a + 1/2, b + (y - mu)^2 / 2), and y's marginal a
    # Student t with 2a degrees of freedom and scale^2 b/a.
    marg, post, _ = run(PAIR["gamma-gaussian"].update, al=3.0, be=2.0, mu=1.0, v=None, x=2.5)
    assert marg == ("student_t", (1.0, 2.0 / 3.0, 6.0))
    assert post[0] == "gamma" and close(post[1], (3.5, 2.0 + 0.5 * 1.5 ** 2))


def test_the_normal_inverse_gamma_pair_updates_the_precision_once():
    # mu ~ N(m0, 1/(kappa lam)), y ~ N(mu, 1/lam), lam ~ Gamma(alpha, beta): the normal-gamma posterior
    # (kappa + 1, (kappa m0 + y)/(kappa + 1), alpha + 1/2, beta + kappa (y - m0)^2 / (2 (kappa + 1))).
    m0, kappa, alpha, beta, y, lam = 0.5, 2.0, 3.0, 1.5, 2.0, 0.7
    marg, post, side = run(PAIR["normal-inverse-gamma"].update, mu0=m0, kappa=kappa, alpha=alpha, beta=beta, lam=lam, x=y)
    assert marg[0] == "student_t" and close(marg[1], (m0, beta * (kappa + 1) / (alpha * kappa), 2 * alpha))
    assert post[0] == "gaussian" and close(post[1], ((kappa * m0 + y) / (kappa + 1), 1 / ((kappa + 1) * lam)))
    assert side == {"lam": ("gamma", (alpha + 0.5, beta + kappa * (y - m0) ** 2 / (2 * (kappa + 1))))}


def test_a_shape_is_an_integer_as_numpy_isclose_says():
    assert P.near_int(3.0) and P.near_int(2.99999999) and P.near_int(1e6 + 5) and not P.near_int(2.9)
