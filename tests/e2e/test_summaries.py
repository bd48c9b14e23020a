"""Posterior summaries, particles and the per-resampling history, checked against exact
posteriors with tolerances from the Monte Carlo error."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import sirenc
from sirenc.diagnostics import SirenRuntimeError, SirenUsageError
from markers import needs_runtime

pytestmark = needs_runtime


def test_prior_summary_matches_the_gaussian():
    n = 100000
    s = sirenc.compile("let x <- gaussian(1., 4.) in x").filter(particles=n, seed=3).run().summary()
    sd_mean, sd_var = 2 / math.sqrt(n), 4 * math.sqrt(2 / n)
    assert abs(s.mean - 1) < 5 * sd_mean and abs(s.variance - 4) < 5 * sd_var
    for q, value in s.quantiles.items():
        exact = stats.norm.ppf(q, loc=1, scale=2)
        # sd of a sample quantile: sqrt(q (1 - q) / n) / density at it
        sd = math.sqrt(q * (1 - q) / n) / stats.norm.pdf(exact, loc=1, scale=2)
        assert abs(value - exact) < 5 * sd, q
    assert s.particles == n and s.sd == pytest.approx(math.sqrt(s.variance))


BETA_BERNOULLI = """
let p <- beta(2., 2.) in
let () = observe(bernoulli(p), true) in let () = observe(bernoulli(p), true) in
let () = observe(bernoulli(p), false) in let () = observe(bernoulli(p), true) in
let () = observe(bernoulli(p), true) in
p
"""


def test_weighted_summary_matches_the_beta_posterior():
    f = sirenc.compile(BETA_BERNOULLI).filter(particles=40000, seed=11).run()
    s, post = f.summary(quantiles=[0.1, 0.5, 0.9]), stats.beta(2 + 4, 2 + 1)
    ess = f.ess   # no resample(): the importance weights' ESS sets the error
    assert abs(s.mean - post.mean()) < 5 * math.sqrt(post.var() / ess)
    assert abs(s.variance - post.var()) < 5 * post.var() * math.sqrt(2 / ess)
    for q, value in s.quantiles.items():
        sd = math.sqrt(q * (1 - q) / ess) / post.pdf(post.ppf(q))
        assert abs(value - post.ppf(q)) < 5 * sd, q


RAGGED = """
val push = fun (k, (acc, x)) -> (cons(k * x, acc), x) in
let n <- uniform_int(0., 3.) in
let x <- gaussian(0., 1.) in
let () = observe(gaussian(x, 1.), 0.7) in
let (xs, _) = fold(push, List.range(0., n), ([], x)) in
(x < 0., xs)
"""


def test_summary_means_are_the_estimate_and_particles_are_its_parts():
    f = sirenc.compile(RAGGED).filter(particles=3000, seed=5).run()
    below, xs = f.estimate()
    s_below, s_xs = f.summary()
    assert s_below.mean == pytest.approx(below, rel=1e-12, abs=1e-12)
    assert len(s_xs) == len(xs)
    for s, m in zip(s_xs, xs):
        assert s.mean == pytest.approx(m, rel=1e-12, abs=1e-12)
    values, weights = f.particles()
    assert len(values) == 3000 and weights.sum() == pytest.approx(1.0)
    assert np.dot(weights, [b for b, _ in values]) == pytest.approx(below, rel=1e-12)
    # element k averages the particles whose list is longer than k, renormalised
    for k, m in enumerate(xs):
        has = np.array([len(l) > k for _, l in values])
        got = sum(w * l[k] for w, (_, l), h in zip(weights, values, has) if h) / weights[has].sum()
        assert got == pytest.approx(m, rel=1e-12, abs=1e-12)
    (flat, offsets), _ = f.particles(flat=True)
    assert offsets[0] == 0 and offsets[-1] == len(flat)


WALK = """
val step = fun (row, x) ->
  let x <- gaussian(x, 1.) in
  let () = observe(gaussian(x, 0.5), List.hd(row)) in
  let () = resample() in x
in fold(step, File.read("d.csv"), 0.)
"""


def test_history_of_a_stream_and_of_a_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d.csv").write_text("y\n0\n")
    ys = np.random.default_rng(2).normal(size=40).cumsum()
    model = sirenc.compile(WALK)
    f = model.filter(particles=500, seed=1, ess_threshold=0.5)
    for y in ys:
        f.step([y])
    h = f.history()
    assert len(h["ess"]) == 40 and list(h["rows"]) == list(range(1, 41))
    assert np.array_equal(h["resampled"], h["ess"] < 0.5 * 500)
    assert 0 < h["ess"].min() and h["ess"].max() <= 500 + 1e-9
    assert h["log_evidence"][-1] == pytest.approx(f.log_evidence, rel=1e-12)
    assert np.allclose(np.cumsum(h["log_evidence_increment"]), h["log_evidence"])
    f.run(ys[:10, None])
    h = f.history()
    assert len(h["ess"]) == 10 and set(h["rows"]) == {-1}


def test_summary_usage_errors():
    f = sirenc.compile("let x <- gaussian(0., 1.) in x").filter(particles=10)
    with pytest.raises(SirenRuntimeError, match="call run"):
        f.summary()
    f.run()
    with pytest.raises(SirenUsageError, match="quantile"):
        f.summary(quantiles=[1.5])
