"""Every distribution family through the whole compiler: the parameters reach
the runtime in the order ARCHITECTURE.md §9 gives them.

Observations are checked exactly: a program that only observes has a log
evidence equal to the log density, which scipy computes independently. The
posterior mean of a draw is checked against the family's mean with a Monte Carlo
tolerance (4 standard errors of the sample mean of N independent particles); the
draws' whole distribution is checked in test_compiled_draws_fit.py. Every test runs on both back
ends (native and JAX).
"""

from __future__ import annotations

import math

import pytest
from scipy import stats

import sirenc
from markers import needs_runtime

pytestmark = needs_runtime
BACKENDS = ["native", "jax"]

# (surface call, observed value, scipy log density, mean, variance)
CASES = [
    ("gaussian(1.5, 4.)", 0.3, stats.norm(1.5, 2.0).logpdf(0.3), 1.5, 4.0),
    ("beta(2., 5.)", 0.3, stats.beta(2, 5).logpdf(0.3), 2 / 7, 10 / (49 * 8)),
    ("binomial(10., 0.3)", 4.0, stats.binom(10, 0.3).logpmf(4), 3.0, 2.1),
    ("beta_binomial(10., 2., 3.)", 4.0, stats.betabinom(10, 2, 3).logpmf(4), 4.0, 10 * 2 * 3 * 15 / (25 * 6)),
    ("negative_binomial(3., 0.4)", 2.0, stats.nbinom(3, 0.4).logpmf(2), 3 * 0.6 / 0.4, 3 * 0.6 / 0.16),
    ("exponential(2.)", 0.7, stats.expon(scale=0.5).logpdf(0.7), 0.5, 0.25),
    ("gamma(3., 2.)", 0.7, stats.gamma(3, scale=0.5).logpdf(0.7), 1.5, 0.75),
    ("poisson(3.5)", 2.0, stats.poisson(3.5).logpmf(2), 3.5, 3.5),
    ("student_t(1., 4., 5.)", 0.2, stats.t(5, loc=1, scale=2).logpdf(0.2), 1.0, 4 * 5 / 3),
    ("categorical(2., 4., [0.2, 0.5, 0.3])", 3.0, math.log(0.5), 2 * 0.2 + 3 * 0.5 + 4 * 0.3,
     4 * 0.2 + 9 * 0.5 + 16 * 0.3 - (2 * 0.2 + 3 * 0.5 + 4 * 0.3) ** 2),
    ("uniform_int(1., 6.)", 4.0, math.log(1 / 6), 3.5, 35 / 12),
    ("delta(2.5)", 2.5, 0.0, 2.5, 0.0),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("call, x, logpdf, mean, var", CASES, ids=[c[0].split("(")[0] for c in CASES])
def test_observe_scores_the_density(call, x, logpdf, mean, var, backend):
    model = sirenc.compile(f"let () = observe({call}, {x!r}) in 0.", method="pf", backend=backend)
    f = model.filter(particles=4, seed=0)
    f.run()
    assert math.isclose(f.log_evidence, logpdf, rel_tol=1e-9, abs_tol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_observe_bernoulli_of_a_bool(backend):
    model = sirenc.compile("let () = observe(bernoulli(0.3), true) in let () = observe(bernoulli(0.3), false) in 0.",
                           method="pf", backend=backend)
    f = model.filter(particles=4, seed=0)
    f.run()
    assert math.isclose(f.log_evidence, math.log(0.3) + math.log(0.7), rel_tol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("call, x, logpdf, mean, var", CASES, ids=[c[0].split("(")[0] for c in CASES])
def test_draws_have_the_family_mean(call, x, logpdf, mean, var, backend):
    n = 40_000
    model = sirenc.compile(f"let v <- {call} in v", method="pf", backend=backend)
    f = model.filter(particles=n, seed=3)
    f.run()
    assert abs(f.estimate() - mean) <= 4 * math.sqrt(var / n) + 1e-12


@pytest.mark.parametrize("backend", BACKENDS)
def test_bernoulli_draws_are_bools(backend):
    n = 40_000
    model = sirenc.compile("let b <- bernoulli(0.3) in if b then 1. else 0.", method="pf", backend=backend)
    f = model.filter(particles=n, seed=5)
    f.run()
    assert abs(f.estimate() - 0.3) <= 4 * math.sqrt(0.21 / n)


@pytest.mark.parametrize("backend", BACKENDS)
def test_out_of_support_scores_minus_infinity_not_an_error(backend):
    # One impossible observation among possible ones: that particle gets weight 0.
    source = """
    let x <- uniform_int(0., 1.) in
    let () = observe(poisson(1.), if x = 0. then -1. else 2.) in x
    """
    n = 2000
    f = sirenc.compile(source, method="pf", backend=backend).filter(particles=n, seed=1)
    f.run()
    assert f.estimate() == 1.0
    # The evidence is (k / n) * P(poisson(1) = 2) with k ~ Binomial(n, 1/2) surviving particles.
    k = n * math.exp(f.log_evidence - stats.poisson(1.0).logpmf(2))
    assert abs(k - round(k)) < 1e-9 * n, k
    assert abs(k - n / 2) < 4 * math.sqrt(n / 4), k
