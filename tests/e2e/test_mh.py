"""The MH handler (ARCHITECTURE.md §15.2; runtime_c/src/population/mh.c, sirenc/mh.py) end to end.

Statistics: on conjugate models (and a categorical one) with a known posterior, a chain's mean and variance of the result
lie within 5 Monte Carlo standard errors of the exact ones, where the standard errors come from
batch means over the chain's own samples (so autocorrelation, i.e. the chain's effective sample
size, is accounted for), and the effective sample size must be a fair fraction of the samples so
that a sticky, broken chain cannot pass by being noisy.  Seeds are fixed: the tests are
deterministic.  The acceptance ratio itself is checked proposal by proposal against a hand
computation in runtime_c/tests/test_mh.c.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

import sirenc
import sirenc.mh
from markers import needs_runtime
from sirenc.diagnostics import SirenUsageError

pytestmark = needs_runtime
ROOT = Path(__file__).resolve().parents[2]
BATCHES = 40

GAUSSIAN = """
let mu <- gaussian(1., 4.) in
let () = observe(gaussian(mu, 4.), 1.2) in
let () = resample() in
let () = observe(gaussian(mu, 4.), 2.1) in
mu
"""
# prior N(1, 4), two observations of variance 4 (weak, so that the prior's density matters)
GAUSSIAN_POST = stats.norm(loc=(1 / 4 + 3.3 / 4) / (1 / 4 + 2 / 4), scale=(1 / (1 / 4 + 2 / 4)) ** 0.5)

BERNOULLI = """
val flip = fun (heads, p) -> let () = observe(bernoulli(p), heads) in p in
let p <- beta(2., 3.) in
fold(flip, [true, true, false, true, true, true, false, true, true, false], p)
"""
BERNOULLI_POST = stats.beta(2 + 7, 3 + 3)

POISSON = """
val count = fun (k, l) -> let () = observe(poisson(l), k) in l in
let l <- gamma(2., 1.) in
fold(count, [3., 5., 4., 6., 2.], l)
"""
POISSON_POST = stats.gamma(2 + 20, scale=1 / (1 + 5))

CATEGORICAL = """
let k <- categorical(0., 2., [0.2, 0.5, 0.3]) in
let () = observe(gaussian(k, 1.), 1.7) in
let () = observe(gaussian(k, 1.), 2.2) in
k
"""
_K = np.arange(3)
_W = np.array([0.2, 0.5, 0.3]) * stats.norm.pdf(1.7, _K, 1) * stats.norm.pdf(2.2, _K, 1)
CATEGORICAL_POST = stats.rv_discrete(values=(_K, _W / _W.sum()))


def batch_se(x: np.ndarray) -> float:
    """The standard error of the mean of a chain's samples x, by batch means."""
    means = x[: len(x) // BATCHES * BATCHES].reshape(BATCHES, -1).mean(axis=1)
    return float(means.std(ddof=1) / np.sqrt(BATCHES))


def check_chain(x: np.ndarray, exact, min_ess_fraction: float = 0.05) -> None:
    """Mean and variance of samples x against the exact posterior `exact` (a scipy distribution)."""
    mean, var = exact.mean(), exact.var()
    se_mean = batch_se(x)
    se_var = batch_se((x - mean) ** 2)
    ess = var / se_mean**2
    assert ess > min_ess_fraction * len(x), f"effective sample size {ess:.0f} of {len(x)}"
    assert abs(x.mean() - mean) < 5 * se_mean, (x.mean(), mean, se_mean)
    assert abs(x.var() - var) < 5 * se_var, (x.var(), var, se_var)


def samples_of(chain) -> np.ndarray:
    values, weights = chain.particles()
    assert np.allclose(weights, 1 / len(weights))
    return np.array(values, dtype=float)


@pytest.fixture(scope="module")
def models():
    cache = {}

    def get(source: str, method: str = "pf"):
        if (source, method) not in cache:
            cache[source, method] = sirenc.compile(source, method=method)
        return cache[source, method]
    return get


@pytest.mark.parametrize("source, exact", [(GAUSSIAN, GAUSSIAN_POST), (BERNOULLI, BERNOULLI_POST),
                                           (POISSON, POISSON_POST), (CATEGORICAL, CATEGORICAL_POST)],
                         ids=["gaussian", "beta-bernoulli", "gamma-poisson", "categorical"])
def test_conjugate_posteriors_pf(models, source, exact):
    chain = models(source).filter(handler="mh", samples=8000, warmup=200, seed=5).run()
    x = samples_of(chain)
    assert len(x) == 8000 and 0.05 < chain.acceptance_rate < 0.95
    check_chain(x, exact)
    assert chain.estimate() == pytest.approx(x.mean(), rel=1e-12)
    s = chain.summary()
    assert s.mean == pytest.approx(x.mean(), rel=1e-12) and s.particles == 8000


# -m ssi with a sampled site: tau is sampled (annotation), mu stays symbolic given tau, so every
# state's result is E[mu | tau, y] and the chain moves tau under the marginal likelihood of y.
HIERARCHICAL = """
let sample tau <- gamma(3., 2.) in
let mu <- gaussian(0., 1. / tau) in
let () = observe(gaussian(mu, 1.), 1.5) in
let () = observe(gaussian(mu, 1.), 0.7) in
(tau, mu)
"""
YS = np.array([1.5, 0.7])


def hierarchical_exact():
    """E[tau | y], Var[tau | y] and E[mu | y] by quadrature over tau."""
    tau = np.linspace(1e-6, 25, 200001)
    prior = stats.gamma(3, scale=1 / 2).pdf(tau)
    # y ~ N(0, I + 11'/tau): determinant 1 + 2/tau, inverse I - 11'/(tau + 2)
    quad = YS @ YS - YS.sum() ** 2 / (tau + 2)
    lik = np.exp(-0.5 * quad) / np.sqrt(1 + 2 / tau)
    w = prior * lik
    w /= w.sum()
    m_tau = (w * tau).sum()
    return m_tau, (w * (tau - m_tau) ** 2).sum(), (w * YS.sum() / (tau + 2)).sum()


@pytest.mark.parametrize("method", ["ssi", "ds", "bp"])
def test_a_symbolic_method_with_a_sampled_site(models, method):
    """mu's one parent tau is sampled: SSI, DS and BP keep mu the same way (BP samples a Gamma
    parent anyway, and here it is annotated so)."""
    m_tau, v_tau, m_mu = hierarchical_exact()
    chain = models(HIERARCHICAL, method).filter(handler="mh", samples=8000, warmup=200, seed=2).run()
    (values, weights) = chain.particles()
    tau = np.array([v[0] for v in values])
    mu = np.array([v[1] for v in values])
    assert chain.runtime_plan() == {"tau": "sample", "mu": "symbolic"}
    assert np.allclose(mu, YS.sum() / (tau + 2)), "each state's mu is its exact conditional mean"
    check_chain(tau, stats.norm(m_tau, v_tau**0.5))    # mean and variance of tau only
    assert abs(mu.mean() - m_mu) < 5 * batch_se(mu)


def test_pf_with_two_sites(models):
    """The same model under pf: two sites, mu sampled too."""
    m_tau, v_tau, m_mu = hierarchical_exact()
    pf = models(HIERARCHICAL, "pf").filter(handler="mh", samples=8000, warmup=200, seed=2).run()
    values, _ = pf.particles()
    tau, mu = np.array([v[0] for v in values]), np.array([v[1] for v in values])
    check_chain(tau, stats.norm(m_tau, v_tau**0.5))
    assert abs(mu.mean() - m_mu) < 5 * batch_se(mu)


def test_fully_symbolic_program_has_one_state(models):
    chain = models(BERNOULLI, "ssi").filter(handler="mh", samples=50, seed=1).run()
    assert chain.samples == 1 and chain.estimate() == pytest.approx(BERNOULLI_POST.mean())
    assert np.isnan(chain.acceptance_rate)


def test_reproducible_for_a_seed(models):
    model = models(GAUSSIAN)
    a = samples_of(model.filter(handler="mh", samples=300, seed=11).run())
    b = samples_of(model.filter(handler="mh", samples=300, seed=11).run())
    c = samples_of(model.filter(handler="mh", samples=300, seed=12).run())
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)


def test_a_model_so_runs_the_same_chain(models, tmp_path):
    """A compiled model.so exports the chain (sirenc_new_mh ...): the same seed gives the same samples."""
    jit = samples_of(models(POISSON).filter(handler="mh", samples=200, seed=8).run())
    sirenc.compile(POISSON, method="pf", output=tmp_path / "poisson.so")
    so = sirenc.load(tmp_path / "poisson.so").filter(handler="mh", samples=200, seed=8).run()
    assert np.array_equal(samples_of(so), jit)
    assert so.runtime_plan() == {}


def test_warmup_and_thinning_pick_states_of_the_same_chain(models):
    """The chain's randomness is keyed by iteration, so options only choose which states are kept:
    warmup w drops the first w, thinning k keeps every k-th, and exactly `samples` are recorded."""
    model = models(POISSON)
    full = samples_of(model.filter(handler="mh", samples=60, seed=4).run())
    warm = samples_of(model.filter(handler="mh", samples=50, warmup=10, seed=4).run())
    thin = samples_of(model.filter(handler="mh", samples=20, warmup=0, thinning=3, seed=4).run())
    assert np.array_equal(warm, full[10:])
    assert np.array_equal(thin, full[::3])


@pytest.mark.parametrize("kwargs, message", [
    (dict(samples=0), "samples must be an integer"),
    (dict(warmup=-1), "warmup must be an integer"),
    (dict(thinning=True), "thinning must be an integer"),
    (dict(particles=10), "options of the SMC handler"),
    (dict(threads=2), "options of the SMC handler"),
    (dict(seed=-1), "seed must be an integer"),
])
def test_bad_options(models, kwargs, message):
    with pytest.raises(SirenUsageError, match=message):
        models(GAUSSIAN).filter(handler="mh", **kwargs)


def test_other_bad_uses(models):
    model = models(GAUSSIAN)
    with pytest.raises(SirenUsageError, match="options of the MH handler"):
        model.filter(particles=10, samples=5)
    with pytest.raises(SirenUsageError, match="unknown handler"):
        model.filter(handler="gibbs")
    chain = model.filter(handler="mh", samples=10)
    with pytest.raises(sirenc.SirenRuntimeError, match="call run\\(\\) first"):
        chain.estimate()
    chain.run()
    for action, match in [(lambda: chain.step([1.0]), "cannot be streamed"),
                          (lambda: chain.log_evidence, "log evidence"),
                          (lambda: chain.history(), "no resampling history"),
                          (lambda: chain.to_bytes(), "cannot be saved"),
                          (lambda: pickle.dumps(chain), "cannot be pickled"),
                          (lambda: chain.run(progress=True), "progress")]:
        with pytest.raises(SirenUsageError, match=match):
            action()
    assert chain.estimate() is not None and chain.ess == 10.0


def run_cli(module, *args, cwd):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-m", module, *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, env=env)


def test_cli(tmp_path):
    program = tmp_path / "coin.si"
    program.write_text(BERNOULLI)
    out = run_cli("sirenc.cli", "run", program, "--handler", "mh", "--samples", 400, "-w", 50, "-t", 2,
                  "--seed", 3, "-v", "--no-cache", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[:2] == ["===== Handler =====", "MH"]
    result = float(lines[lines.index("===== Result =====") + 1])
    assert abs(result - BERNOULLI_POST.mean()) < 0.05
    assert lines[lines.index("===== Samples =====") + 1] == "400"
    bad = run_cli("sirenc.cli", "run", program, "--handler", "mh", "-p", 10, cwd=tmp_path)
    assert bad.returncode == 2 and "--particles: an option of the SMC handler" in bad.stderr
    bad = run_cli("sirenc.cli", "run", program, "--thinning", 2, cwd=tmp_path)
    assert bad.returncode == 2 and "--thinning is an option of the MH handler" in bad.stderr
    bad = run_cli("sirenc.cli", "run", program, "-l", "mh", "--samples", 0, cwd=tmp_path)
    assert bad.returncode == 2 and "--samples must be an integer" in bad.stderr
    assert "Traceback" not in bad.stderr
    siren = run_cli("sirenc.siren_cli", program, "-l", "mh", "-m", "ssi", "--samples", 20, "-s", 1, cwd=tmp_path)
    assert siren.returncode == 0, siren.stderr
    lines = siren.stdout.splitlines()
    assert lines[:4] == ["===== Handler =====", "MH", "===== Inference Algorithm =====", "SSI"]
    assert float(lines[lines.index("===== Result =====") + 1]) == pytest.approx(BERNOULLI_POST.mean())


def test_the_chain_ess_is_its_autocorrelation_estimate_and_rhat_compares_chains(models):
    # The ESS agrees with the batch-means one (var / se_mean^2, noisy: within a factor of 2) and is
    # well below the sample count for a random-walk chain, whose successive states are alike.
    chains = [models(BERNOULLI).filter(handler="mh", samples=8000, warmup=200, seed=s).run() for s in range(4)]
    for chain in chains:
        x = samples_of(chain)
        batch = BERNOULLI_POST.var() / batch_se(x) ** 2
        assert 0.5 < chain.ess / batch < 2 and chain.ess < 0.8 * chain.samples
        assert chain.draws().shape == (8000, 1) and np.array_equal(chain.draws()[:, 0], x)
    assert sirenc.mh.rhat(chains) < 1.01
    other = models(BERNOULLI.replace("true", "false")).filter(handler="mh", samples=8000, warmup=200, seed=9).run()
    assert sirenc.mh.rhat([*chains[:2], other]) > 1.2     # another posterior: the chains disagree
