"""The symbolic methods are exact where the plan is (ARCHITECTURE.md §11-14): with every variable symbolic, one
particle's answer is the closed-form posterior mean and its log evidence the closed-form marginal
likelihood, whatever the seed, for each conjugate pair the method covers (ARCHITECTURE.md §11.8: SSI and DS all
of them, BP the Gaussian one).  The closed forms are computed here, independently of the runtime's
conjugacy rules."""

from __future__ import annotations

import math

import numpy as np
import pytest

import sirenc
from linear_gaussian import _smooth, kalman
from markers import needs_runtime

pytestmark = needs_runtime

SEEDS = (0, 1, 12345)


def lgamma(x: float) -> float:
    return math.lgamma(x)


def log_beta(a: float, b: float) -> float:
    return lgamma(a) + lgamma(b) - lgamma(a + b)


def normal_logpdf(x: float, m: float, v: float) -> float:
    return -0.5 * math.log(2 * math.pi * v) - (x - m) ** 2 / (2 * v)


def one_particle(program: str, seed: int, method: str):
    f = sirenc.compile(program, method=method).filter(particles=1, seed=seed)
    f.run()
    return f.estimate(), f.log_evidence, f.runtime_plan()


def gaussian_case():
    mu0, v0, a, b, r, ys = 1.0, 4.0, 2.0, 1.0, 0.5, (4.0, 0.5)
    program = f"""
    let x <- gaussian({mu0}, {v0}) in
    let () = observe(gaussian({a} * x + {b}, {r}), {ys[0]}) in
    let () = observe(gaussian(x, 1.), {ys[1]}) in
    x"""
    # Two Gaussian updates of x in turn, each scored by its predictive density.
    m, v, ll = mu0, v0, 0.0
    for (slope, offset, var), y in zip(((a, b, r), (1.0, 0.0, 1.0)), ys):
        ll += normal_logpdf(y, slope * m + offset, slope * slope * v + var)
        prec = 1 / v + slope * slope / var
        m, v = (m / v + slope * (y - offset) / var) / prec, 1 / prec
    return program, m, ll


def beta_bernoulli_case():
    a, b, xs = 2.0, 3.0, (True, False, True, True)
    program = "let p <- beta(2., 3.) in\n" + "".join(
        f"let () = observe(bernoulli(p), {'true' if x else 'false'}) in\n" for x in xs) + "p"
    ll = 0.0
    for x in xs:
        ll += math.log(a / (a + b) if x else b / (a + b))
        a, b = a + x, b + (not x)
    return program, a / (a + b), ll


def beta_binomial_case():
    a, b, n, k = 2.0, 3.0, 10, 7
    program = f"let p <- beta({a}, {b}) in let () = observe(binomial({n}., p), {k}.) in p"
    ll = (lgamma(n + 1) - lgamma(k + 1) - lgamma(n - k + 1)) + log_beta(k + a, n - k + b) - log_beta(a, b)
    return program, (a + k) / (a + b + n), ll


def gamma_poisson_case():
    alpha, beta, xs = 3.0, 2.0, (4, 1)
    program = "let l <- gamma(3., 2.) in\n" + "".join(
        f"let () = observe(poisson(l), {x}.) in\n" for x in xs) + "l"
    ll = 0.0
    for x in xs:  # negative binomial predictive: failures x before the alpha-th success, p = beta/(1+beta)
        p = beta / (1 + beta)
        ll += lgamma(x + alpha) - lgamma(x + 1) - lgamma(alpha) + alpha * math.log(p) + x * math.log(1 - p)
        alpha, beta = alpha + x, beta + 1
    return program, alpha / beta, ll


def gamma_normal_case():
    alpha, beta, mu, xs = 2.0, 3.0, 1.0, (2.5, 0.0, 1.5)
    program = "let tau <- gamma(2., 3.) in\n" + "".join(
        f"let () = observe(gaussian({mu}, 1. / tau), {x}) in\n" for x in xs) + "tau"
    ll = 0.0
    for x in xs:  # Student t predictive with 2 alpha degrees of freedom and squared scale beta / alpha
        nu, s2 = 2 * alpha, beta / alpha
        ll += (lgamma((nu + 1) / 2) - lgamma(nu / 2) - 0.5 * math.log(nu * math.pi * s2)
               - (nu + 1) / 2 * math.log1p((x - mu) ** 2 / (nu * s2)))
        alpha, beta = alpha + 0.5, beta + 0.5 * (x - mu) ** 2
    return program, alpha / beta, ll


def bernoulli_bernoulli_case():
    q, t, f = 0.3, 0.9, 0.2
    program = f"let z <- bernoulli({q}) in let () = observe(bernoulli(if z then {t} else {f}), true) in z"
    evidence = q * t + (1 - q) * f
    return program, q * t / evidence, math.log(evidence)


CASES = {
    "gaussian-gaussian": gaussian_case, "beta-bernoulli": beta_bernoulli_case,
    "beta-binomial": beta_binomial_case, "gamma-poisson": gamma_poisson_case,
    "gamma-normal": gamma_normal_case, "bernoulli-bernoulli": bernoulli_bernoulli_case,
}


# ARCHITECTURE.md §11.8: the pairs each method keeps symbolic.
COVERED = {"ssi": tuple(CASES), "ds": tuple(CASES), "bp": ("gaussian-gaussian",)}


@pytest.mark.parametrize("method, pair", [(m, p) for m, pairs in COVERED.items() for p in pairs])
def test_a_conjugate_pair_is_exact_with_one_particle(method, pair):
    program, mean, log_evidence = CASES[pair]()
    for seed in SEEDS:
        got, ll, plan = one_particle(program, seed, method)
        assert got == pytest.approx(mean, rel=1e-9, abs=1e-12), (pair, seed)
        assert ll == pytest.approx(log_evidence, rel=1e-9, abs=1e-12), (pair, seed)
        assert set(plan.values()) == {"symbolic"}, plan


# Programs with several variables, every one annotated symbolic.  The results are the variables DS
# can marginalise without pruning: the mean of a parent with a marginal child samples the child under
# DS (ARCHITECTURE.md §13.4), which would violate these plans.
EXACT_PROGRAMS = {
    "hierarchy": """
    let symbolic mu <- gaussian(0., 10.) in
    let symbolic x <- gaussian(2. * mu + 1., 1.) in
    let () = observe(gaussian(x, 0.5), 3.) in
    let () = observe(gaussian(x - 1., 0.5), 2.5) in
    x""",
    "two chains": """
    let symbolic a <- gaussian(1., 2.) in
    let symbolic b <- gaussian(a, 1.) in
    let symbolic c <- gaussian(-1., 3.) in
    let () = observe(gaussian(b, 1.), 0.5) in
    let () = observe(gaussian(c, 2.), 4.) in
    (b, c)""",
    "coin and rate": """
    let symbolic p <- beta(1., 1.) in
    let symbolic l <- gamma(2., 1.) in
    let () = observe(bernoulli(p), true) in
    let () = observe(poisson(l), 3.) in
    let () = observe(bernoulli(p), true) in
    (p, l)""",
    "precision": """
    let symbolic tau <- gamma(3., 2.) in
    let () = observe(gaussian(0., 1. / tau), 1.5) in
    let () = observe(gaussian(0., 1. / tau), -0.5) in
    tau""",
}


def flat(value) -> list[float]:
    if isinstance(value, (tuple, list)):
        return [x for v in value for x in flat(v)]
    return [float(value)]


@pytest.mark.parametrize("name", EXACT_PROGRAMS)
def test_the_methods_agree_on_an_all_symbolic_plan_they_accept(name):
    """SSI, DS and BP each give the exact answer of a plan they accept with every variable
    symbolic, so the ones that accept it agree (one particle, to rounding)."""
    answers = {}
    for method in COVERED:
        try:
            model = sirenc.compile(EXACT_PROGRAMS[name], method=method)
        except sirenc.SirenPlanError:
            continue
        f = model.filter(particles=1, seed=3)
        f.run()
        answers[method] = (np.array(flat(f.estimate())), f.log_evidence, f.runtime_plan())
    assert "ssi" in answers and "ds" in answers, sorted(answers)
    ref_estimate, ref_evidence, _ = answers["ssi"]
    for method, (estimate, evidence, plan) in answers.items():
        np.testing.assert_allclose(estimate, ref_estimate, rtol=1e-9, atol=1e-12, err_msg=method)
        assert evidence == pytest.approx(ref_evidence, rel=1e-9), method
        assert set(plan.values()) == {"symbolic"}, (method, plan)


WALK = """
val first = fun row -> List.hd(row) in
val step = fun (y, (x, xs)) ->
  let x1 <- gaussian(x, 1.) in
  let () = observe(gaussian(x1, 0.5), y) in
  let () = resample() in
  (x1, x1 :: xs)
in
let (_, xs) = fold(step, List.map(first, File.read("data.csv")), (0., [])) in
List.rev(xs)
"""


@pytest.mark.parametrize("method", ["bp", "ssi"])
def test_a_symbolic_random_walk_gives_the_smoother_means(method):
    """Edge reversal keeps every step's variable conditioned on the next: the means the estimate
    marginalises at the end are the Kalman smoother's (ARCHITECTURE.md §12.3, 14)."""
    ys = np.random.default_rng(3).normal(np.cumsum(np.random.default_rng(4).normal(size=40)), math.sqrt(0.5))
    _, _, log_evidence, steps = kalman(ys, q=1.0, r=0.5)
    smoothed, _ = _smooth(steps)
    model = sirenc.compile(WALK.replace("let x1 <-", "let symbolic x1 <-"), method=method)
    for seed in SEEDS[:2]:
        f = model.filter(particles=1, seed=seed)
        f.run(ys.reshape(-1, 1))
        np.testing.assert_allclose(f.estimate(), smoothed, rtol=1e-9, atol=1e-9)
        assert f.log_evidence == pytest.approx(log_evidence, rel=1e-9)
        assert f.runtime_plan() == {"x1": "symbolic"}


def test_delayed_sampling_refuses_a_symbolic_trajectory():
    """DS keeps no reversed edges: the analysis cannot keep every step's variable symbolic (ARCHITECTURE.md §13,
    17), and without the annotation the final expectation samples the chain it prunes."""
    with pytest.raises(sirenc.SirenPlanError, match="plan cannot be satisfied under ds: 'x1'"):
        sirenc.compile(WALK.replace("let x1 <-", "let symbolic x1 <-"), method="ds")
    f = sirenc.compile(WALK, method="ds").filter(particles=1, seed=0)
    f.run(np.arange(5.0).reshape(-1, 1))
    assert f.runtime_plan() == {"x1": "symbolic"}
    f.estimate()
    assert f.runtime_plan() == {"x1": "sample"}


@pytest.mark.parametrize("method", COVERED)
def test_every_particle_of_an_exact_plan_carries_the_same_answer(method):
    """With many particles an exact plan still gives the closed form: every weight is equal."""
    program, mean, log_evidence = gaussian_case()
    f = sirenc.compile(program, method=method).filter(particles=257, seed=5)
    f.run()
    assert f.estimate() == pytest.approx(mean, rel=1e-9)
    assert f.log_evidence == pytest.approx(log_evidence, rel=1e-9)
