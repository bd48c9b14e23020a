"""The chains' effective sample size and split R-hat against series whose answers are known."""

from __future__ import annotations

import numpy as np
import pytest

from sirenc.chain_stats import autocorrelation, effective_size, split_rhat


def ar1(rho: float, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    e = rng.normal(size=n) * np.sqrt(1 - rho * rho)
    x = np.empty(n)
    x[0] = rng.normal()
    for t in range(1, n):
        x[t] = rho * x[t - 1] + e[t]
    return x


@pytest.mark.parametrize("rho", [0.0, 0.5, 0.8, -0.3])
def test_the_ess_of_an_ar1_series_is_n_times_1_minus_rho_over_1_plus_rho(rho):
    # Over 20 series of 20000 the mean estimate is within 5 standard errors of the truth (its
    # spread measured over the same series) and within 5% of it.
    n = 20000
    got = np.array([effective_size(ar1(rho, n, seed)) / n for seed in range(20)])
    exact = (1 - rho) / (1 + rho)
    assert abs(got.mean() - exact) < 5 * got.std(ddof=1) / np.sqrt(got.size) + 0.01 * exact
    assert abs(got.mean() - exact) < 0.05 * exact


def test_autocorrelation_and_the_edges():
    x = ar1(0.6, 50000, 1)
    assert autocorrelation(x)[:3] == pytest.approx([1.0, 0.6, 0.36], abs=0.02)
    assert effective_size(np.full(100, 2.0)) == 100      # every draw says the same
    assert effective_size(np.array([1.0, 2.0])) == 2


def test_split_rhat_is_one_for_agreeing_chains_and_large_for_shifted_ones():
    rng = np.random.default_rng(3)
    agreeing = [rng.normal(size=2000) for _ in range(4)]
    assert split_rhat(agreeing) < 1.01
    shifted = [rng.normal(size=2000) + k for k in range(4)]
    assert split_rhat(shifted) > 1.3
    trending = [np.linspace(0, 3, 2000) + rng.normal(size=2000) for _ in range(4)]   # halves disagree
    assert split_rhat(trending) > 1.1
