"""Compiled `-m pf` filters against exact posteriors (Kalman, Beta-Bernoulli, Gamma-Poisson).

Tolerances come from the Monte Carlo error itself: each model runs with R
independent seeds; the spread of the R estimates gives the standard error of
one run, and every run must lie within 4 standard errors of the exact answer
(with R = 12 runs a correct filter fails this with probability < 1e-3), and
their mean within 4 standard errors of the mean. Seeds are fixed, so the test
is deterministic.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import sirenc
from markers import needs_runtime

pytestmark = needs_runtime
SEEDS = range(12)


def spread_check(estimates, exact, bias=0.0):
    est = np.asarray(estimates)
    sd = est.std(ddof=1)
    assert sd > 0, "independent seeds gave identical answers"
    assert np.all(np.abs(est - exact) < 4 * sd + bias), (est, exact, sd)
    assert abs(est.mean() - exact) < 4 * sd / math.sqrt(len(est)) + bias, (est.mean(), exact, sd)
    return sd


WALK = """
val step = fun (row, x) ->
  let y = List.hd(row) in
  let x1 <- gaussian(x, 1.) in
  let () = observe(gaussian(x1, 0.5), y) in
  let () = resample() in
  x1
in
fold(step, File.read("walk.csv"), 0.)
"""


def kalman(ys, q=1.0, r=0.5):
    m, v, ll = 0.0, 0.0, 0.0
    for y in ys:
        v += q
        s = v + r
        ll += -0.5 * math.log(2 * math.pi * s) - 0.5 * (y - m) ** 2 / s
        k = v / s
        m, v = m + k * (y - m), (1 - k) * v
    return m, v, ll


@pytest.fixture(scope="module")
def walk_data():
    rng = np.random.default_rng(7)
    x, ys = 0.0, []
    for _ in range(100):
        x = rng.normal(x, 1.0)
        ys.append(rng.normal(x, math.sqrt(0.5)))
    return np.array(ys).reshape(-1, 1)


@pytest.mark.parametrize("resampler", ["systematic", "multinomial", "stratified", "residual"])
def test_random_walk_matches_kalman(walk_data, resampler):
    exact_mean, exact_var, exact_ll = kalman(walk_data[:, 0])
    model = sirenc.compile(WALK, method="pf")
    means, evidences = [], []
    for seed in SEEDS:
        f = model.filter(particles=10_000, seed=seed, resampler=resampler)
        f.run(walk_data)
        means.append(f.estimate())
        evidences.append(f.log_evidence)
    sd = spread_check(means, exact_mean)
    # One run's error is of the order of the posterior sd over sqrt(N) (a few times more after
    # resampling); far more would mean the estimator is not the filtering mean.
    assert sd < 10 * math.sqrt(exact_var / 10_000)
    # log Z-hat is biased low by about Var/2 (Jensen): allow that on top of the spread.
    lz = np.asarray(evidences)
    spread_check(lz, exact_ll, bias=lz.var(ddof=1) / 2 + 1e-9)


def test_random_walk_with_ess_threshold(walk_data):
    exact_mean, _, exact_ll = kalman(walk_data[:, 0])
    model = sirenc.compile(WALK, method="pf")
    means, evidences = [], []
    for seed in SEEDS:
        f = model.filter(particles=10_000, seed=seed, ess_threshold=0.5)
        f.run(walk_data)
        means.append(f.estimate())
        evidences.append(f.log_evidence)
    spread_check(means, exact_mean)
    lz = np.asarray(evidences)
    spread_check(lz, exact_ll, bias=lz.var(ddof=1) / 2 + 1e-9)


COIN = """
val flip = fun (x, p) -> let () = observe(bernoulli(p), x) in p in
let p <- beta(2., 3.) in
fold(flip, [true, true, false, true, true, true, false, true, true, true, true, false], p)
"""


def test_beta_bernoulli():
    a, b, data = 2.0, 3.0, [1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 1, 0]
    exact = (a + sum(data)) / (a + b + len(data))
    model = sirenc.compile(COIN, method="pf")
    estimates = []
    for seed in SEEDS:
        f = model.filter(particles=20_000, seed=seed)
        f.run()
        estimates.append(f.estimate())
        assert 1.0 <= f.ess <= 20_000
    spread_check(estimates, exact)


POISSON = """
val count = fun (k, rate) -> let () = observe(poisson(rate), k) in rate in
let rate <- gamma(3., 0.5) in
fold(count, [4., 7., 5., 6., 9., 3., 5.], rate)
"""


def test_gamma_poisson():
    a, b, data = 3.0, 0.5, [4, 7, 5, 6, 9, 3, 5]
    exact = (a + sum(data)) / (b + len(data))
    model = sirenc.compile(POISSON, method="pf")
    estimates = []
    for seed in SEEDS:
        f = model.filter(particles=20_000, seed=seed)
        f.run()
        estimates.append(f.estimate())
    spread_check(estimates, exact)


def test_seeds_reproduce_and_differ():
    model = sirenc.compile(POISSON, method="pf")
    runs = []
    for seed in (1, 1, 2):
        f = model.filter(particles=1000, seed=seed)
        f.run()
        runs.append(f.estimate())
    assert runs[0] == runs[1]
    assert runs[0] != runs[2]
