"""Semi-symbolic inference is exact where the plan is (SPEC 11, 12): with every variable symbolic,
one particle's answer is the closed-form posterior mean and its log evidence the closed-form
marginal likelihood, whatever the seed.  The closed forms are computed here, independently of the
runtime's conjugacy rules."""

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


def one_particle(program: str, seed: int):
    f = sirenc.compile(program, method="ssi").filter(particles=1, seed=seed)
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


@pytest.mark.parametrize("pair", CASES)
def test_a_conjugate_pair_is_exact_with_one_particle(pair):
    program, mean, log_evidence = CASES[pair]()
    for seed in SEEDS:
        got, ll, plan = one_particle(program, seed)
        assert got == pytest.approx(mean, rel=1e-9, abs=1e-12), (pair, seed)
        assert ll == pytest.approx(log_evidence, rel=1e-9, abs=1e-12), (pair, seed)
        assert set(plan.values()) == {"symbolic"}, plan


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


def test_a_symbolic_random_walk_gives_the_smoother_means(tmp_path):
    ys = np.random.default_rng(3).normal(np.cumsum(np.random.default_rng(4).normal(size=40)), math.sqrt(0.5))
    _, _, log_evidence, steps = kalman(ys, q=1.0, r=0.5)
    smoothed, _ = _smooth(steps)
    model = sirenc.compile(WALK, method="ssi")
    for seed in SEEDS[:2]:
        f = model.filter(particles=1, seed=seed)
        f.run(ys.reshape(-1, 1))
        np.testing.assert_allclose(f.estimate(), smoothed, rtol=1e-9, atol=1e-9)
        assert f.log_evidence == pytest.approx(log_evidence, rel=1e-9)
        assert f.runtime_plan() == {"x1": "symbolic"}


def test_every_particle_of_an_exact_plan_carries_the_same_answer():
    """With many particles an exact plan still gives the closed form: every weight is equal."""
    program, mean, log_evidence = gaussian_case()
    f = sirenc.compile(program, method="ssi").filter(particles=257, seed=5)
    f.run()
    assert f.estimate() == pytest.approx(mean, rel=1e-9)
    assert f.log_evidence == pytest.approx(log_evidence, rel=1e-9)
