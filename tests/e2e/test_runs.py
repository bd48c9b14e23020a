"""Monte Carlo error: each number's MCSE and ESS in a summary, and independent runs
(``sirenc.runs``, ``sirenc run --runs K``), checked against the asymptotic variances of
importance sampling and of the bootstrap filter on a linear-Gaussian model (tests/linear_gaussian.py)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import sirenc
from sirenc.chain_stats import effective_size
from sirenc.diagnostics import SirenUsageError
from linear_gaussian import bootstrap_variances, importance_variances, kalman
from markers import needs_module, needs_runtime

pytestmark = needs_runtime

YS, R = (0.4, -0.3, 1.1), 1.0
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def chain_program(resample: bool) -> str:
    """x_t = x_t-1 + N(0, 1), y_t ~ N(x_t, R) for the three YS; the result is x_3."""
    sync = "let () = resample() in " if resample else ""
    lines = ["let x0 = 0. in"]
    for t, y in enumerate(YS, 1):
        lines.append(f"let x{t} <- gaussian(x{t - 1}, 1.) in let () = observe(gaussian(x{t}, {R}), {y}) in {sync}")
    return "\n".join(lines) + f"\nx{len(YS)}"


COIN = """
let p <- beta(1., 1.) in
let () = observe(bernoulli(p), true) in let () = observe(bernoulli(p), true) in
let () = observe(bernoulli(p), false) in let () = observe(bernoulli(p), true) in
p
"""


def test_the_mcse_of_a_weighted_population_is_its_importance_sampling_error():
    f = sirenc.compile(chain_program(resample=False)).filter(particles=3000, seed=4).run()
    s = f.summary()
    values, w = f.particles()
    x = np.asarray(values)
    mean = float(np.dot(w, x))
    square = float(np.dot(w * w, (x - mean) ** 2))
    assert s.mcse == pytest.approx(math.sqrt(square), rel=1e-9)
    assert s.ess == pytest.approx(float(np.dot(w, (x - mean) ** 2)) / square, rel=1e-9)
    assert 0 < s.ess < f.n_particles


def test_the_mcse_is_calibrated_against_the_spread_of_independent_runs():
    # Without resampling the population is an importance sample; its MCSE estimates
    # N * Var = importance_variances' first number, and so does the spread of K runs.
    n, k = 1000, 1500
    theory = importance_variances(YS, q=1.0, r=R)[0] / n
    r = sirenc.runs(sirenc.compile(chain_program(resample=False)), k, particles=n, seed=100, quantiles=())
    spread = r.spread()
    mcse2 = np.array([s.mcse ** 2 for s in r.summaries])
    # Relative errors: the sample variance of k runs has sd sqrt(2 / k); the average MCSE^2 less.
    assert spread.sd ** 2 == pytest.approx(theory, rel=5 * math.sqrt(2 / k))
    assert mcse2.mean() == pytest.approx(theory, rel=5 * mcse2.std() / math.sqrt(k) / theory + 0.02)
    assert spread.mcse == pytest.approx(float(np.mean(np.sqrt(mcse2))))


def test_after_resampling_the_runs_see_an_error_the_population_cannot():
    # Multinomial resampling after every observation: the bootstrap filter's asymptotic variance.
    # The final population is equally weighted, so its own MCSE^2 is only Var(x_3 | y) / N.
    n, k = 500, 800
    model = sirenc.compile(chain_program(resample=True))
    r = sirenc.runs(model, k, particles=n, seed=7, resampler="multinomial", quantiles=())
    var_mean, var_logz = bootstrap_variances(YS, q=1.0, r=R)
    m, v, ll, _ = kalman(YS, q=1.0, r=R)
    tol = 5 * math.sqrt(2 / k)
    assert r.spread().sd ** 2 == pytest.approx(var_mean / n, rel=tol)
    assert r.log_evidence_var == pytest.approx(var_logz / n, rel=tol)
    assert abs(r.spread().mean - m) < 5 * r.spread().se
    assert abs(r.log_evidence_mean - ll) < 5 * r.log_evidence_sd / math.sqrt(k) + var_logz / n
    own = np.mean([s.mcse ** 2 for s in r.summaries])
    assert own == pytest.approx(v / n, rel=0.05)
    assert own < 0.8 * r.spread().sd ** 2


@pytest.mark.parametrize("method", ["ssi", "ds"])
def test_exact_particles_have_no_monte_carlo_error(method):
    s = sirenc.compile(COIN, method=method).filter(particles=50, seed=0).run().summary()
    assert s.mcse == 0.0 and s.ess == math.inf
    from sirenc.summary import jsonable
    assert jsonable(s)["mcse"] == 0.0 and jsonable(s)["ess"] is None


def test_a_chain_mcse_comes_from_its_autocorrelation():
    model = sirenc.compile(COIN, method="pf")
    chain = model.filter(handler="mh", samples=2000, seed=3).run()
    s, draws = chain.summary(), chain.draws()[:, 0]
    assert s.ess == pytest.approx(effective_size(draws)) and s.ess < 0.9 * len(draws)
    assert s.mcse == pytest.approx(math.sqrt(s.variance / s.ess))
    # The chain means of independent chains spread as their MCSE says (to the ESS estimate's noise).
    k = 120
    r = sirenc.runs(model, k, handler="mh", samples=1000, warmup=100, seed=50, quantiles=())
    assert r.spread().sd == pytest.approx(r.spread().mcse, rel=0.3)
    assert r.rhat is not None and r.rhat < 1.05


def test_runs_are_the_single_runs_of_consecutive_seeds():
    model = sirenc.compile(chain_program(resample=True), method="ssi")
    r = sirenc.runs(model, 4, particles=200, seed=9)
    for k, seed in enumerate(r.seeds):
        f = model.filter(particles=200, seed=seed).run()
        assert seed == 9 + k
        assert r.estimates[k] == f.estimate() and r.log_evidence[k] == f.log_evidence
    means = [s.mean for s in r.summaries]
    assert r.spread().mean == pytest.approx(np.mean(means)) and r.spread().sd == pytest.approx(np.std(means, ddof=1))
    assert r.estimate() == r.spread().mean and r.spread().runs == 4
    z = r.log_evidence
    assert r.pooled_log_evidence == pytest.approx(math.log(np.mean(np.exp(z))))
    assert r.runtime_plan == {name: "symbolic" for name in r.runtime_plan} and r.runtime_plan


def test_runs_of_a_list_result_follow_its_shape():
    model = sirenc.compile("let x <- gaussian(0., 1.) in let n <- uniform_int(1., 3.) in "
                           "(x, List.range(0., n))")
    r = sirenc.runs(model, 3, particles=300, seed=1)
    first, items = r.spread()
    assert first.runs == 3 and len(items) == 3 and all(item.runs == 3 for item in items)
    assert r.estimate()[1].shape == (3,)


def test_runs_usage_errors():
    model = sirenc.compile(COIN)
    for bad in (0, -1, 1.5, True):
        with pytest.raises(SirenUsageError, match="runs must be a positive integer"):
            sirenc.runs(model, bad)
    with pytest.raises(SirenUsageError, match="seed"):
        sirenc.runs(model, 3, seed=2**64 - 2)


def sirenc_cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "sirenc", *args], capture_output=True, text=True, cwd=cwd)


def section(text: str, name: str) -> list[str]:
    lines = text.splitlines()
    start = lines.index(f"===== {name} =====") + 1
    end = next((i for i in range(start, len(lines)) if lines[i].startswith("=====")), len(lines))
    return lines[start:end]


def test_cli_runs_report_and_json():
    walk = str(EXAMPLES / "walk.si")
    r = sirenc_cli("run", walk, "-p", "200", "--runs", "5", "--seed", "3")
    assert r.returncode == 0, r.stderr
    runs = section(r.stdout, "Runs")
    assert runs[0].startswith("5 runs, seeds 3..7")
    assert runs[1].split() == ["mean", "sd", "se", "mcse"]
    assert runs[2].split()[0] == "result" and runs[3].split()[:2] == ["log", "Z"]
    assert "Posterior" not in r.stdout
    j = sirenc_cli("run", walk, "-p", "200", "--runs", "5", "--seed", "3", "--json", "--no-cache")
    assert j.returncode == 0, j.stderr
    out = json.loads(j.stdout, parse_constant=lambda c: pytest.fail(f"{c} in JSON"))
    assert out["runs"]["seeds"] == [3, 4, 5, 6, 7] and len(out["runs"]["estimates"]) == 5
    assert out["result"] == pytest.approx(np.mean(out["runs"]["estimates"]))
    assert float(section(r.stdout, "Result")[0]) == out["result"]
    single = json.loads(sirenc_cli("run", walk, "-p", "200", "--seed", "5", "--json").stdout)
    assert single["result"] == out["runs"]["estimates"][2]
    assert out["ess"] is None and out["runs"]["spread"]["sd"] > 0


def test_cli_draws_and_steps_csv(tmp_path):
    walk = str(EXAMPLES / "walk.si")
    steps, draws = tmp_path / "steps.csv", tmp_path / "draws.csv"
    r = sirenc_cli("run", walk, "-m", "ssi", "-p", "100", "--steps-csv", str(steps), "--draws-csv", str(draws),
                   "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    lines = steps.read_text().splitlines()
    assert lines[0] == "row,ess,log_evidence,result,result_sd,result_q5,result_q95"
    assert len(lines) == 101 and lines[1].startswith("1,") and lines[-1].startswith("100,")
    last = [float(x) for x in lines[-1].split(",")]
    assert last[2] == out["log_evidence"] and last[3] == out["summary"]["mean"]
    assert last[4] == pytest.approx(math.sqrt(out["summary"]["variance"]))
    assert last[5] == out["summary"]["quantiles"]["0.05"]
    model = sirenc.compile(walk, method="ssi")
    f = model.filter(particles=100, seed=0).run()
    f.to_csv(tmp_path / "api.csv")
    assert draws.read_text() == (tmp_path / "api.csv").read_text()


def test_cli_output_options_are_checked_before_the_run(tmp_path):
    walk, coin = str(EXAMPLES / "walk.si"), str(EXAMPLES / "coin.si")
    out = tmp_path / "x.csv"
    for args, message in [
        ((walk, "--runs", "0"), "--runs must be a positive integer"),
        ((walk, "--runs", "2", "--draws-csv", str(out)), "without --runs"),
        ((coin, "--steps-csv", str(out)), "--steps-csv needs a streamable program"),
        ((walk, "--handler", "mh", "--steps-csv", str(out)), "SMC handler"),
        ((walk, "--draws-csv", str(tmp_path)), "directory"),
    ]:
        r = sirenc_cli("run", *args)
        assert r.returncode == 2 and message in r.stderr, (args, r.stderr)
        assert "Result" not in r.stdout and not out.exists()


@needs_module("jax")
def test_runs_and_variables_on_the_jax_back_end():
    # The same helper over the other back end: its runs are its single runs, its names the native ones.
    src = chain_program(resample=True)
    model = sirenc.compile(src, backend="jax")
    r = sirenc.runs(model, 2, particles=300, seed=4)
    for k, seed in enumerate(r.seeds):
        assert r.estimates[k] == model.filter(particles=300, seed=seed).run().estimate()
    assert model.info["result_names"] == sirenc.compile(src).info["result_names"] == ["x3"]
    assert set(model.filter(particles=300, seed=0).run().variables()) == {"x3"}
