"""The C runtime's 13 distributions against scipy.stats, through cffi.

Samplers: goodness of fit (Kolmogorov-Smirnov for continuous families, chi-square for
discrete ones) with fixed seeds, so a correct sampler passes deterministically and a
wrong one fails with p far below the 1e-3 threshold.  Densities and means: agreement
with scipy under ARCHITECTURE.md §9's parameterisations (gaussian takes the variance, gamma and
exponential a rate, student_t a squared scale).  Invalid parameters: an error message,
never a crash.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from markers import runtime_missing
from sirenc.diagnostics import SirenUsageError
from sirenc.distributions import NAMES as FAMILIES
from sirenc.distributions import family as family_of

try:
    from sirenc.runtime.ffi import ffi, runtime_lib

    LIB = runtime_lib()
except SirenUsageError as exc:  # pragma: no cover - only without a built runtime
    runtime_missing(exc.message)

N = 20000
P_MIN = 1e-3
# A correct sampler fails one fixed-seed test with probability P_MIN; with ~25 such tests that
# would happen now and then (binomial(10, 0.3) at seed 12345 has p = 9e-4, while 5 x 2e6 draws
# fit perfectly).  So a test fails only when the draws of both seeds fit badly: probability
# P_MIN^2 for a correct sampler, while a wrong one has p-values far below P_MIN for every seed.
SEEDS = (12345, 67890)


def sample(family: str, params: list[float], n: int = N, seed: int = 12345) -> np.ndarray:
    out = np.empty(n, dtype=np.float64)
    p = ffi.new("double[]", [float(v) for v in params])
    status = LIB.sirenrt_sample_many(family_of(family).id, p, n, seed,
                                     ffi.from_buffer("double[]", out, require_writable=True))
    assert status == 0, ffi.string(LIB.sirenrt_last_error()).decode()
    return out


def categorical_params(lo: int, probs: list[float]) -> list[float]:
    return [lo, lo + len(probs) - 1, len(probs), *probs]


# family, runtime params, frozen scipy distribution with the same law
CONTINUOUS = [
    ("gaussian", [1.0, 2.0], stats.norm(1.0, math.sqrt(2.0))),
    ("gaussian", [-5.0, 1e-4], stats.norm(-5.0, 1e-2)),
    ("beta", [2.5, 1.5], stats.beta(2.5, 1.5)),
    ("beta", [0.3, 0.4], stats.beta(0.3, 0.4)),
    ("beta", [50.0, 20.0], stats.beta(50.0, 20.0)),
    ("exponential", [2.0], stats.expon(scale=0.5)),
    ("gamma", [2.5, 1.5], stats.gamma(2.5, scale=1 / 1.5)),
    ("gamma", [0.4, 3.0], stats.gamma(0.4, scale=1 / 3.0)),
    ("gamma", [1.0, 1.0], stats.gamma(1.0)),
    ("student_t", [1.0, 2.0, 3.0], stats.t(3.0, loc=1.0, scale=math.sqrt(2.0))),
    ("student_t", [0.0, 1.0, 1.5], stats.t(1.5)),
]

DISCRETE = [
    ("bernoulli", [0.3], stats.bernoulli(0.3)),
    ("binomial", [10, 0.3], stats.binom(10, 0.3)),         # inversion
    ("binomial", [1000, 0.3], stats.binom(1000, 0.3)),     # BTRS
    ("binomial", [60, 0.9], stats.binom(60, 0.9)),         # p > 1/2, reflected
    ("beta_binomial", [10, 2.0, 3.0], stats.betabinom(10, 2.0, 3.0)),
    ("negative_binomial", [3.0, 0.4], stats.nbinom(3.0, 0.4)),
    ("negative_binomial", [0.7, 0.05], stats.nbinom(0.7, 0.05)),
    ("poisson", [3.5], stats.poisson(3.5)),                # product of uniforms
    ("poisson", [80.0], stats.poisson(80.0)),              # PTRS
    ("categorical", categorical_params(2, [0.2, 0.5, 0.3]),
     stats.rv_discrete(values=([2, 3, 4], [0.2, 0.5, 0.3]))),
    ("uniform_int", [-2, 3], stats.randint(-2, 4)),
]


@pytest.mark.parametrize("family,params,dist", CONTINUOUS, ids=[f"{c[0]}-{c[1]}" for c in CONTINUOUS])
def test_continuous_sampler_ks(family, params, dist):
    pvalues = []
    for seed in SEEDS:
        x = sample(family, params, seed=seed)
        lo, hi = dist.support()
        assert np.all((lo <= x) & (x <= hi) & np.isfinite(x)), "a draw outside the support"
        pvalues.append(stats.kstest(x, dist.cdf).pvalue)
    assert max(pvalues) > P_MIN, pvalues


def _chi_square_p(x: np.ndarray, dist) -> float:
    """Chi-square over the support, tails lumped until every bin expects >= 20 draws."""
    lo, hi = dist.ppf(1e-9), dist.ppf(1 - 1e-9)
    values = np.arange(lo, hi + 1)
    expected = dist.pmf(values) * len(x)
    observed = np.array([np.count_nonzero(x == v) for v in values], dtype=float)
    # Fold the far tails (outside [lo, hi]) into the end bins.
    observed[0] += np.count_nonzero(x < lo)
    observed[-1] += np.count_nonzero(x > hi)
    expected[0] += dist.cdf(lo - 1) * len(x)
    expected[-1] += dist.sf(hi) * len(x)
    bins_o, bins_e, acc_o, acc_e = [], [], 0.0, 0.0
    for o, e in zip(observed, expected):
        acc_o += o
        acc_e += e
        if acc_e >= 20:
            bins_o.append(acc_o)
            bins_e.append(acc_e)
            acc_o = acc_e = 0.0
    bins_o[-1] += acc_o
    bins_e[-1] += acc_e
    bins_e = np.array(bins_e) * (len(x) / np.sum(bins_e))
    if len(bins_o) < 2:
        return 1.0
    return stats.chisquare(bins_o, bins_e).pvalue


@pytest.mark.parametrize("family,params,dist", DISCRETE, ids=[f"{c[0]}-{c[1]}" for c in DISCRETE])
def test_discrete_sampler_chi_square(family, params, dist):
    pvalues = []
    for seed in SEEDS:
        x = sample(family, params, seed=seed)
        assert np.all(x == np.floor(x)), "integer families draw integral doubles"
        pvalues.append(_chi_square_p(x, dist))
    assert max(pvalues) > P_MIN, pvalues


def test_delta_and_degenerate_cases():
    assert np.all(sample("delta", [4.25], 100) == 4.25)
    assert np.all(sample("bernoulli", [0.0], 100) == 0.0)
    assert np.all(sample("bernoulli", [1.0], 100) == 1.0)
    assert np.all(sample("binomial", [7, 1.0], 100) == 7.0)
    assert np.all(sample("poisson", [0.0], 100) == 0.0)
    assert np.all(sample("uniform_int", [5, 5], 100) == 5.0)
    assert np.all(sample("negative_binomial", [2.0, 1.0], 100) == 0.0)


def test_seeds_are_reproducible_and_distinct():
    a, b, c = sample("gaussian", [0, 1], 64, 1), sample("gaussian", [0, 1], 64, 1), sample("gaussian", [0, 1], 64, 2)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)


# ---------------------------------------------------------------- densities and means

def _categorical_logpdf(lo, hi, probs, x):
    p = ffi.new("double[]", probs)
    return LIB.sirenrt_logpdf_categorical(lo, hi, p, len(probs), x)


LOGPDF_CASES = [
    # name, runtime call, scipy log density, points
    ("gaussian", lambda x: LIB.sirenrt_logpdf_gaussian(1.0, 2.0, x),
     stats.norm(1.0, math.sqrt(2.0)).logpdf, [-3.0, 0.0, 1.0, 2.5, 40.0]),
    ("beta", lambda x: LIB.sirenrt_logpdf_beta(2.5, 1.5, x),
     stats.beta(2.5, 1.5).logpdf, [-0.1, 0.0, 0.3, 0.99, 1.0, 1.5]),
    ("bernoulli", lambda x: LIB.sirenrt_logpdf_bernoulli(0.3, x),
     stats.bernoulli(0.3).logpmf, [0.0, 1.0]),
    ("binomial", lambda x: LIB.sirenrt_logpdf_binomial(10, 0.3, x),
     stats.binom(10, 0.3).logpmf, [-1.0, 0.0, 4.0, 10.0, 11.0, 2.5]),
    ("beta_binomial", lambda x: LIB.sirenrt_logpdf_beta_binomial(10, 2.0, 3.0, x),
     stats.betabinom(10, 2.0, 3.0).logpmf, [-1.0, 0.0, 4.0, 10.0, 11.0]),
    ("negative_binomial", lambda x: LIB.sirenrt_logpdf_negative_binomial(3.0, 0.4, x),
     stats.nbinom(3.0, 0.4).logpmf, [-1.0, 0.0, 5.0, 60.0, 2.5]),
    ("exponential", lambda x: LIB.sirenrt_logpdf_exponential(2.0, x),
     stats.expon(scale=0.5).logpdf, [-1.0, 0.0, 0.7, 12.0]),
    ("gamma", lambda x: LIB.sirenrt_logpdf_gamma(2.5, 1.5, x),
     stats.gamma(2.5, scale=1 / 1.5).logpdf, [-1.0, 0.0, 1.2, 30.0]),
    ("poisson", lambda x: LIB.sirenrt_logpdf_poisson(3.5, x),
     stats.poisson(3.5).logpmf, [-1.0, 0.0, 2.0, 40.0, 2.5]),
    ("categorical", lambda x: _categorical_logpdf(2, 4, [0.2, 0.5, 0.3], x),
     stats.rv_discrete(values=([2, 3, 4], [0.2, 0.5, 0.3])).logpmf, [1.0, 2.0, 3.0, 4.0, 5.0, 2.5]),
    ("uniform_int", lambda x: LIB.sirenrt_logpdf_uniform_int(-2, 3, x),
     stats.randint(-2, 4).logpmf, [-3.0, -2.0, 0.0, 3.0, 4.0, 0.5]),
    ("student_t", lambda x: LIB.sirenrt_logpdf_student_t(1.0, 2.0, 4.0, x),
     stats.t(4.0, loc=1.0, scale=math.sqrt(2.0)).logpdf, [-30.0, 0.3, 1.0, 5.0]),
]


@pytest.mark.parametrize("name,ours,ref,points", LOGPDF_CASES, ids=[c[0] for c in LOGPDF_CASES])
def test_logpdf_matches_scipy(name, ours, ref, points):
    for x in points:
        a, b = ours(x), float(ref(x))
        if math.isinf(b):
            assert a == b, f"{name} at {x}: {a} vs {b}"
        else:
            assert a == pytest.approx(b, rel=1e-10, abs=1e-12), f"{name} at {x}"


def test_logpdf_delta_and_boundaries():
    assert LIB.sirenrt_logpdf_delta(2.5, 2.5) == 0.0
    assert LIB.sirenrt_logpdf_delta(2.5, 2.0) == -math.inf
    # 0 * log 0 = 0 at boundary parameters; never NaN, never an exception (ARCHITECTURE.md §0.2).
    assert LIB.sirenrt_logpdf_bernoulli(0.0, 0.0) == 0.0
    assert LIB.sirenrt_logpdf_bernoulli(0.0, 1.0) == -math.inf
    assert LIB.sirenrt_logpdf_binomial(5, 1.0, 5) == 0.0
    assert LIB.sirenrt_logpdf_poisson(0.0, 0.0) == 0.0
    assert LIB.sirenrt_logpdf_gamma(1.0, 2.0, 0.0) == pytest.approx(math.log(2.0))
    assert LIB.sirenrt_logpdf_beta(0.5, 0.5, 0.0) == math.inf
    # invalid parameters: NaN from the pure helpers (the particle-level calls report errors)
    assert math.isnan(LIB.sirenrt_logpdf_gaussian(0.0, -1.0, 0.0))


@settings(max_examples=60, deadline=None)
@given(mu=st.floats(-50, 50), var=st.floats(1e-3, 1e3), a=st.floats(0.05, 50), b=st.floats(0.05, 50),
       u=st.floats(0.001, 0.999))
def test_logpdf_property_continuous(mu, var, a, b, u):
    x = mu + math.sqrt(var) * stats.norm.ppf(u)
    assert LIB.sirenrt_logpdf_gaussian(mu, var, x) == pytest.approx(
        stats.norm(mu, math.sqrt(var)).logpdf(x), rel=1e-9, abs=1e-9)
    y = stats.beta(a, b).ppf(u)
    if 0.0 < y < 1.0:
        assert LIB.sirenrt_logpdf_beta(a, b, y) == pytest.approx(stats.beta(a, b).logpdf(y), rel=1e-7, abs=1e-7)
    g = stats.gamma(a, scale=1 / b).ppf(u)
    if g > 0.0:
        assert LIB.sirenrt_logpdf_gamma(a, b, g) == pytest.approx(
            stats.gamma(a, scale=1 / b).logpdf(g), rel=1e-7, abs=1e-7)


MEAN_CASES = [
    ("gaussian", LIB.sirenrt_mean_gaussian(1.0, 2.0), stats.norm(1.0, math.sqrt(2.0)).mean()),
    ("beta", LIB.sirenrt_mean_beta(2.5, 1.5), stats.beta(2.5, 1.5).mean()),
    ("bernoulli", LIB.sirenrt_mean_bernoulli(0.3), stats.bernoulli(0.3).mean()),
    ("binomial", LIB.sirenrt_mean_binomial(10, 0.3), stats.binom(10, 0.3).mean()),
    ("beta_binomial", LIB.sirenrt_mean_beta_binomial(10, 2, 3), stats.betabinom(10, 2, 3).mean()),
    ("negative_binomial", LIB.sirenrt_mean_negative_binomial(3, 0.4), stats.nbinom(3, 0.4).mean()),
    ("exponential", LIB.sirenrt_mean_exponential(2.0), stats.expon(scale=0.5).mean()),
    ("gamma", LIB.sirenrt_mean_gamma(2.5, 1.5), stats.gamma(2.5, scale=1 / 1.5).mean()),
    ("poisson", LIB.sirenrt_mean_poisson(3.5), stats.poisson(3.5).mean()),
    ("delta", LIB.sirenrt_mean_delta(4.25), 4.25),
    ("categorical", LIB.sirenrt_mean_categorical(2, 4, ffi.new("double[]", [0.2, 0.5, 0.3]), 3),
     stats.rv_discrete(values=([2, 3, 4], [0.2, 0.5, 0.3])).mean()),
    ("uniform_int", LIB.sirenrt_mean_uniform_int(-2, 3), stats.randint(-2, 4).mean()),
    ("student_t", LIB.sirenrt_mean_student_t(1.0, 2.0, 4.0), stats.t(4.0, loc=1.0, scale=math.sqrt(2.0)).mean()),
]


@pytest.mark.parametrize("name,ours,ref", MEAN_CASES, ids=[c[0] for c in MEAN_CASES])
def test_mean_matches_scipy(name, ours, ref):
    assert ours == pytest.approx(float(ref), rel=1e-12)


def test_every_family_is_covered():
    covered = {c[0] for c in LOGPDF_CASES} | {"delta"}
    assert covered == set(FAMILIES)
    assert {c[0] for c in MEAN_CASES} == set(FAMILIES)
    sampled = {c[0] for c in CONTINUOUS} | {c[0] for c in DISCRETE} | {"delta"}
    assert sampled == set(FAMILIES)


# ---------------------------------------------------------------- invalid parameters

INVALID = [
    ("gaussian", [0.0, -1.0], "gaussian: variance must be > 0, got -1"),
    ("gaussian", [0.0, 0.0], "gaussian: variance must be > 0, got 0"),
    ("beta", [0.0, 1.0], "beta: alpha must be > 0"),
    ("beta", [1.0, float("nan")], "beta: beta must be > 0, got nan"),
    ("bernoulli", [1.5], "bernoulli: probability must be in [0, 1], got 1.5"),
    ("binomial", [-3, 0.5], "binomial: n must be >= 0"),
    ("binomial", [3, 2.0], "binomial: probability must be in [0, 1]"),
    ("beta_binomial", [3, 1.0, -1.0], "beta_binomial: beta must be > 0"),
    ("negative_binomial", [-1.0, 0.5], "negative_binomial: n must be > 0"),
    ("negative_binomial", [2.0, 1.5], "negative_binomial: probability must be in [0, 1]"),
    ("exponential", [-2.0], "exponential: rate must be > 0, got -2"),
    ("gamma", [0.0, 1.0], "gamma: shape must be > 0"),
    ("gamma", [1.0, -1.0], "gamma: rate must be > 0"),
    ("poisson", [-0.5], "poisson: rate must be >= 0 and finite, got -0.5"),
    ("poisson", [math.inf], "poisson: rate must be >= 0 and finite, got inf"),
    ("categorical", categorical_params(0, [0.5, 0.6]), "categorical: probabilities must sum to 1"),
    ("categorical", [0, 3, 2, 0.5, 0.5], "categorical: 2 probabilities given for the values 0..3, expected 4"),
    ("categorical", [1.5, 2, 1, 1.0], "categorical: lower bound must be an integer >= 0"),
    ("uniform_int", [0.5, 3], "uniform_int: bounds must be integers"),
    ("uniform_int", [4, 3], "uniform_int: lower bound must be <= upper bound, got 4 > 3"),
    ("student_t", [0.0, 1.0, 1.0], "student_t: degrees of freedom must be > 1, got 1"),
    ("student_t", [0.0, -1.0, 3.0], "student_t: squared scale must be > 0"),
]


@pytest.mark.parametrize("family,params,message", INVALID, ids=[f"{c[0]}{c[1]}" for c in INVALID])
def test_invalid_parameters_are_errors(family, params, message):
    out = ffi.new("double[]", 4)
    p = ffi.new("double[]", params)
    status = LIB.sirenrt_sample_many(family_of(family).id, p, 4, 0, out)
    assert status != 0
    assert message in ffi.string(LIB.sirenrt_last_error()).decode()
