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


# ---------------------------------------------------------------- symbolic particles' own posteriors

COIN = """
let p <- beta(1., 1.) in
let () = observe(bernoulli(p), true) in let () = observe(bernoulli(p), true) in
let () = observe(bernoulli(p), false) in let () = observe(bernoulli(p), true) in
p
"""


@pytest.mark.parametrize("tier", [1, 2])
@pytest.mark.parametrize("method", ["ssi", "ds"])
def test_a_symbolic_posterior_is_summarised_exactly(method, tier):
    # Every particle holds Beta(4, 2): the summary is that Beta, not the spread of the particles'
    # means (which is 0).
    model = sirenc.compile(COIN, method=method, tier=tier)
    assert model.info["tier"] == tier
    s = model.filter(particles=50, seed=1).run().summary(quantiles=[0.05, 0.25, 0.5, 0.95])
    post = stats.beta(4, 2)
    assert s.mean == pytest.approx(post.mean(), rel=1e-12)
    assert s.variance == pytest.approx(post.var(), rel=1e-9)
    for q, value in s.quantiles.items():
        assert value == pytest.approx(post.ppf(q), abs=1e-9), q
    assert s.spread_exact and s.particles == 50


def kalman(ys, q=1.0, r=0.5):
    """The walk's filtered means and variances, x_0 = 0: x_t ~ N(x_{t-1}, q), y_t ~ N(x_t, r)."""
    m, p, ms, ps = 0.0, 0.0, [], []
    for y in ys:
        p += q
        k = p / (p + r)
        m, p = m + k * (y - m), (1 - k) * p
        ms.append(m)
        ps.append(p)
    return np.array(ms), np.array(ps)


def rts(ms, ps, q=1.0):
    """The smoothed means and variances of every x_t given all the observations."""
    sm, sp = ms.copy(), ps.copy()
    for k in range(len(ms) - 2, -1, -1):
        g = ps[k] / (ps[k] + q)
        sm[k] = ms[k] + g * (sm[k + 1] - ms[k])
        sp[k] = ps[k] + g * g * (sp[k + 1] - (ps[k] + q))
    return sm, sp


TRAJECTORY = """
val step = fun (row, (x, xs)) ->
  let x <- gaussian(x, 1.) in
  let () = observe(gaussian(x, 0.5), List.hd(row)) in
  let () = resample() in (x, cons(x, xs))
in
let (x, xs) = fold(step, File.read("d.csv"), (0., [])) in
(x, List.rev(xs))
"""


@pytest.mark.parametrize("tier", [1, 2])
def test_the_walk_under_ssi_is_the_kalman_posterior(tier, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    ys = np.random.default_rng(4).normal(size=12).cumsum()
    (tmp_path / "d.csv").write_text("y\n" + "".join(f"{float(y)!r}\n" for y in ys))
    model = sirenc.compile(WALK, method="ssi", tier=tier)
    assert model.info["tier"] == tier
    s = model.filter(particles=20, seed=3).run().summary(quantiles=[0.05, 0.5, 0.9])
    ms, ps = kalman(ys)
    assert s.mean == pytest.approx(ms[-1], rel=1e-9, abs=1e-12)
    assert s.variance == pytest.approx(ps[-1], rel=1e-9)
    for q, value in s.quantiles.items():
        assert value == pytest.approx(stats.norm.ppf(q, ms[-1], math.sqrt(ps[-1])), abs=1e-9), q


@pytest.mark.parametrize("tier", [1, 2])
@pytest.mark.parametrize("tail,pick", [
    ("(x, List.rev(xs))", lambda s, n: s[1]),
    ("(List.hd(xs), xs)", lambda s, n: s[1][::-1]),   # newest first, as consed
    ("(List.hd(List.rev(xs)), List.tl(List.rev(xs)))", lambda s, n: [s[0], *s[1]]),
])
def test_a_trajectory_under_ssi_is_the_smoothed_posterior(tier, tail, pick, tmp_path, monkeypatch):
    # Each element's posterior given every observation (the RTS smoother's), exactly: tier 2 keeps
    # the older elements as (a, b, c) records and runs the backward pass on their variances too.
    monkeypatch.chdir(tmp_path)
    ys = np.random.default_rng(5).normal(size=8).cumsum()
    (tmp_path / "d.csv").write_text("y\n" + "".join(f"{float(y)!r}\n" for y in ys))
    model = sirenc.compile(TRAJECTORY.replace("(x, List.rev(xs))", tail), method="ssi", tier=tier)
    assert model.info["tier"] == tier
    xs = pick(model.filter(particles=10, seed=3).run().summary(quantiles=[0.1]), len(ys))
    sm, sp = rts(*kalman(ys))
    assert len(xs) == len(ys)
    assert [s.mean for s in xs] == pytest.approx(sm, rel=1e-9, abs=1e-12)
    assert [s.variance for s in xs] == pytest.approx(sp, rel=1e-9)
    assert [s.quantiles[0.1] for s in xs] == pytest.approx(stats.norm.ppf(0.1, sm, np.sqrt(sp)), abs=1e-9)
    assert all(s.spread_exact for s in xs)


MIXTURE = """
let sample z <- bernoulli(0.3) in
let symbolic x <- gaussian(if z then 5. else 0., 1.) in
let () = observe(gaussian(x, 1.), 1.) in
(z, 3. - 2. * x)
"""


@pytest.mark.parametrize("tier", [1, 2])
def test_a_mixture_of_symbolic_particles(tier):
    # Each particle drew z and holds x | z, y = 1 exactly: 3 - 2x is N(3 - (mu_z + 1), 2) given z.
    # The summary is the mixture of the two with the particles' weight of z; that weight is
    # Monte Carlo, within its error of the exact P(z | y).
    f = sirenc.compile(MIXTURE, method="ssi", tier=tier).filter(particles=4000, seed=2).run()
    values, w = f.particles()
    pi = float(np.dot(w, [z for z, _ in values]))
    prior = np.array([0.7 * stats.norm.pdf(1, 0, math.sqrt(2)), 0.3 * stats.norm.pdf(1, 5, math.sqrt(2))])
    exact_pi = prior[1] / prior.sum()
    assert abs(pi - exact_pi) < 5 * math.sqrt(exact_pi * (1 - exact_pi) / f.ess)
    sz, sx = f.summary(quantiles=[0.01, 0.3, 0.5, 0.95])
    assert sz.mean == pytest.approx(pi, rel=1e-12)
    parts = [stats.norm(3 - 1, math.sqrt(2)), stats.norm(3 - 6, math.sqrt(2))]
    mean = (1 - pi) * parts[0].mean() + pi * parts[1].mean()
    var = (1 - pi) * 2 + pi * 2 + (1 - pi) * (parts[0].mean() - mean) ** 2 + pi * (parts[1].mean() - mean) ** 2
    assert sx.mean == pytest.approx(mean, rel=1e-12) and sx.variance == pytest.approx(var, rel=1e-9)
    for q, value in sx.quantiles.items():
        exact = optimize_root(lambda x: (1 - pi) * parts[0].cdf(x) + pi * parts[1].cdf(x) - q)
        assert value == pytest.approx(exact, abs=1e-9), q


def optimize_root(fn):
    from scipy.optimize import brentq

    return brentq(fn, -50, 50, xtol=1e-14)


DISCRETE = [
    ("let p <- beta(2., 3.) in let symbolic k <- binomial(10., p) in k", stats.betabinom(10, 2, 3), 1),
    # Gamma(5, 2) after the count; the next count's predictive is a negative binomial.
    ("let l <- gamma(2., 1.) in let () = observe(poisson(l), 3.) in let symbolic k <- poisson(l) in k",
     stats.nbinom(5, 2 / 3), 1),
    ("let symbolic k <- poisson(3.5) in 2. - k", stats.poisson(3.5), -1),
]


@pytest.mark.parametrize("src,dist,sign", DISCRETE)
def test_a_discrete_symbolic_posterior_has_its_quantiles_on_the_support(src, dist, sign):
    # 2 - k reflects the distribution: its quantile q is the smallest x with P(2 - k <= x) >= q.
    s = sirenc.compile(src, method="ssi").filter(particles=10, seed=1).run().summary(quantiles=[0.1, 0.5, 0.9])
    support = np.arange(0, 200)
    x, p = (support, dist.pmf(support)) if sign > 0 else (2.0 - support[::-1], dist.pmf(support)[::-1])
    assert s.mean == pytest.approx(np.dot(x, p), rel=1e-9)
    assert s.variance == pytest.approx(np.dot((x - np.dot(x, p)) ** 2, p), rel=1e-9)
    for q, value in s.quantiles.items():
        assert value == x[np.searchsorted(np.cumsum(p), q - 1e-12)], q


def test_mh_samples_are_points():
    # An MH chain over the symbolic plan: each sample is a draw of p, a point.
    s = sirenc.compile(COIN, method="pf").filter(handler="mh", samples=3000, warmup=200, seed=2).run().summary()
    assert s.spread_exact and s.particles > 100 and 0 < s.sd < 0.3
