"""Goodness of fit of every family's draws made by compiled code.

The runtime's samplers are tested through ``sirenrt_sample_many``
(tests/unit/test_runtime_distributions.py); this module tests what a compiled
program draws, through the code the compiler generates (the Gaussian draw is
``mu + sqrt(var) * z`` inline there, not the runtime's sampler). One particle
runs ``List.map(draw, List.range(0., N))``; the estimate of a single particle is
its value, so it returns the N draws themselves.

Statistic: Pearson's chi-square on binned draws. A continuous family's draws are
binned by their probability integral transform F(x) into the 24 bins between
``PIT_EDGES`` (18 of probability 0.05, three narrower ones in each tail); a
discrete family's by value, the tails lumped until every bin expects at least
20 draws. A test fails when p < ``P_REJECT`` = 1e-4. Seeds are fixed, so the
outcome is deterministic; a correct sampler would fail one of these 16 tests
under a new seed with probability about 16e-4.

Power: N = 200,000 draws of a Gaussian with 1.05 times the variance give the
statistic a noncentrality of 239 (23 degrees of freedom), so it passes with
probability 3e-19 (400 numpy simulations: 400 rejections, the largest p 1e-21);
``test_power_against_five_percent_more_variance`` recomputes this, so the claim
stays true when the bins or N change. The weakest cases are the Student t ones
(noncentrality 148 for a 5% larger squared scale) and uniform_int with one value
5% likelier than the others (noncentrality 68, power 0.9998).

The JAX back end's draws are tested the same way, as N particles that draw once each (its loops
run in step over particles, so a population is how it draws many numbers at once).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import sirenc
from markers import needs_runtime

pytestmark = needs_runtime

N = 200_000
P_REJECT = 1e-4
PIT_EDGES = np.concatenate([[0.0, 1e-3, 1e-2], np.linspace(0.05, 0.95, 19), [0.99, 0.999, 1.0]])
MIN_EXPECTED = 20.0


def compiled_draws(body: str, seed: int, n: int = N, backend: str = "native") -> np.ndarray:
    """The n values of the Siren expression ``body`` (``i`` is the draw's index 0..n-1 natively,
    0 on the JAX back end)."""
    if backend == "jax":
        model = sirenc.compile(f"val draw = fun i -> {body} in draw(0.)", method="pf", backend="jax")
        (x, _), _ = model.filter(particles=n, seed=seed).run().particles(flat=True)
        assert x.shape == (n,)
        return x
    source = f"""
val draw = fun i -> {body} in
List.map(draw, List.range(0., {float(n)!r}))
"""
    f = sirenc.compile(source, method="pf").filter(particles=1, seed=seed)
    f.run()
    x = np.asarray(f.estimate(), dtype=float)
    assert x.shape == (n,)
    return x


def pit_chi_square(u: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """p-value of uniform probability integral transforms u; observed and expected counts."""
    observed = np.histogram(u, bins=PIT_EDGES)[0].astype(float)
    assert observed.sum() == len(u), "a transform outside [0, 1] (a NaN draw?)"
    expected = np.diff(PIT_EDGES) * len(u)
    return float(stats.chisquare(observed, expected).pvalue), observed, expected


def value_chi_square(x: np.ndarray, dist) -> tuple[float, np.ndarray, np.ndarray]:
    """p-value of integer draws x from the scipy distribution dist, tails lumped."""
    lo, hi = int(dist.ppf(1e-12)), int(dist.ppf(1 - 1e-12))
    values = np.arange(lo, hi + 1)
    assert np.all(x == np.floor(x)), "integer families draw integral doubles"
    assert np.all((x >= dist.support()[0]) & (x <= dist.support()[1]))
    observed = np.array([np.count_nonzero(x == v) for v in values], dtype=float)
    observed[0] += np.count_nonzero(x < lo)
    observed[-1] += np.count_nonzero(x > hi)
    expected = dist.pmf(values) * len(x)
    expected[0] += dist.cdf(lo - 1) * len(x)
    expected[-1] += dist.sf(hi) * len(x)
    bins_o, bins_e, acc_o, acc_e = [], [], 0.0, 0.0
    for o, e in zip(observed, expected):
        acc_o, acc_e = acc_o + o, acc_e + e
        if acc_e >= MIN_EXPECTED:
            bins_o.append(acc_o)
            bins_e.append(acc_e)
            acc_o = acc_e = 0.0
    bins_o[-1] += acc_o
    bins_e[-1] += acc_e
    observed, expected = np.array(bins_o), np.array(bins_e) * (len(x) / np.sum(bins_e))
    return float(stats.chisquare(observed, expected).pvalue), observed, expected


def assert_fits(p: float, observed: np.ndarray, expected: np.ndarray) -> None:
    worst = np.argsort(-np.abs(observed - expected) / np.sqrt(expected))[:3]
    assert p >= P_REJECT, (f"chi-square p = {p:.3g} < {P_REJECT}; worst bins (observed, expected): "
                           + ", ".join(f"#{i} ({observed[i]:.0f}, {expected[i]:.1f})" for i in worst))


FAMILIES = {"gaussian", "beta", "bernoulli", "binomial", "beta_binomial", "negative_binomial",
            "exponential", "gamma", "poisson", "delta", "categorical", "uniform_int", "student_t"}


def draw(call: str) -> str:
    return f"let v <- {call} in v"


# id, Siren expression of one draw, scipy distribution of the draws, seed
CONTINUOUS = [
    ("gaussian", draw("gaussian(1.5, 4.)"), stats.norm(1.5, 2.0), 11),
    ("gaussian-small-variance", draw("gaussian(-5., 0.0001)"), stats.norm(-5.0, 0.01), 12),
    # A variance drawn at run time: a Gamma(5/2, rate 5/2) precision makes x a Student t, 5 dof.
    ("gaussian-drawn-precision", "let tau <- gamma(2.5, 2.5) in let v <- gaussian(1., 1. / tau) in v",
     stats.t(5.0, loc=1.0, scale=1.0), 13),
    ("beta", draw("beta(2., 5.)"), stats.beta(2.0, 5.0), 14),
    ("exponential", draw("exponential(2.)"), stats.expon(scale=0.5), 15),
    ("gamma", draw("gamma(3., 2.)"), stats.gamma(3.0, scale=0.5), 16),
    ("gamma-shape-below-one", draw("gamma(0.4, 3.)"), stats.gamma(0.4, scale=1 / 3.0), 17),
    ("student_t", draw("student_t(1., 4., 5.)"), stats.t(5.0, loc=1.0, scale=2.0), 18),
]

DISCRETE = [
    ("bernoulli", draw("bernoulli(0.3)"), stats.bernoulli(0.3), 21),
    ("binomial", draw("binomial(10., 0.3)"), stats.binom(10, 0.3), 22),
    ("beta_binomial", draw("beta_binomial(10., 2., 3.)"), stats.betabinom(10, 2.0, 3.0), 23),
    ("negative_binomial", draw("negative_binomial(3., 0.4)"), stats.nbinom(3.0, 0.4), 24),
    ("poisson", draw("poisson(3.5)"), stats.poisson(3.5), 25),
    ("categorical", draw("categorical(2., 4., [0.2, 0.5, 0.3])"),
     stats.rv_discrete(values=([2, 3, 4], [0.2, 0.5, 0.3])), 26),
    ("uniform_int", draw("uniform_int(1., 6.)"), stats.randint(1, 7), 27),
]


@pytest.mark.parametrize("backend", ["native", "jax"])
@pytest.mark.parametrize("body, dist, seed", [c[1:] for c in CONTINUOUS], ids=[c[0] for c in CONTINUOUS])
def test_continuous_draws_fit(body, dist, seed, backend):
    x = compiled_draws(body, seed, backend=backend)
    lo, hi = dist.support()
    assert np.all((lo <= x) & (x <= hi) & np.isfinite(x)), "a draw outside the support"
    assert_fits(*pit_chi_square(dist.cdf(x)))


def test_gaussian_with_a_mean_and_variance_computed_at_run_time():
    # Draw i has mean i/N - 1/2 and variance 1/2 + 3 i/N, values only the running program
    # knows (the generated code computes sqrt(var) at run time, where a constant variance
    # has it folded); standardised with them, the draws must be N(0, 1).
    i = np.arange(N, dtype=float)
    x = compiled_draws(draw(f"gaussian(i / {float(N)!r} - 0.5, 0.5 + 3. * i / {float(N)!r})"), seed=19)
    z = (x - (i / N - 0.5)) / np.sqrt(0.5 + 3.0 * i / N)
    assert_fits(*pit_chi_square(stats.norm.cdf(z)))


@pytest.mark.parametrize("backend", ["native", "jax"])
@pytest.mark.parametrize("body, dist, seed", [c[1:] for c in DISCRETE], ids=[c[0] for c in DISCRETE])
def test_discrete_draws_fit(body, dist, seed, backend):
    assert_fits(*value_chi_square(compiled_draws(body, seed, backend=backend), dist))


def test_delta_draws_are_the_point():
    assert np.all(compiled_draws(draw("delta(2.5)"), seed=28, n=1000) == 2.5)


def test_every_family_is_drawn():
    bodies = [c[1] for c in CONTINUOUS + DISCRETE] + [draw("delta(2.5)")]
    assert {name for name in FAMILIES if any(f"<- {name}(" in body for body in bodies)} == FAMILIES


def test_power_against_five_percent_more_variance():
    """The test above rejects N draws of N(0, 1.05) instead of N(0, 1) almost surely."""
    q = np.diff(stats.norm(0.0, math.sqrt(1.05)).cdf(stats.norm.ppf(PIT_EDGES)))
    expected = np.diff(PIT_EDGES)
    noncentrality = N * np.sum((q - expected) ** 2 / expected)
    dof = len(expected) - 1
    power = stats.ncx2.sf(stats.chi2.isf(P_REJECT, dof), dof, noncentrality)
    assert power > 0.999, (noncentrality, power)
