"""Posterior draws for other tools: the CSV of particles and the ArviZ InferenceData."""

from __future__ import annotations

import csv
import math

import numpy as np
import pytest
from scipy import stats

import sirenc
import sirenc.export
from markers import needs_runtime

pytestmark = needs_runtime

RAGGED = """
val push = fun (k, (acc, x)) -> (cons(k * x, acc), x) in
let n <- uniform_int(0., 2.) in
let x <- gaussian(0., 1.) in
let () = observe(gaussian(x, 1.), 0.7) in
let (xs, _) = fold(push, List.range(0., n), ([], x)) in
(x, xs)
"""


def test_the_csv_holds_every_particle_its_weight_and_its_numbers(tmp_path):
    f = sirenc.compile(RAGGED).filter(particles=500, seed=4).run()
    f.to_csv(tmp_path / "p.csv")
    rows = list(csv.reader(open(tmp_path / "p.csv")))
    assert rows[0] == ["weight", "result.0", "result.1[0]", "result.1[1]"]
    values, weights = f.particles()
    assert len(rows) == 501
    for row, (x, xs), w in zip(rows[1:], values, weights):
        assert float(row[0]) == w and float(row[1]) == x          # repr round-trips exactly
        assert [float(c) for c in row[2:] if c] == list(xs) and all(c == "" for c in row[2 + len(xs):])


def test_an_unwritable_csv_is_a_usage_error(tmp_path):
    f = sirenc.compile("let x <- gaussian(0., 1.) in x").filter(particles=5).run()
    with pytest.raises(sirenc.SirenUsageError, match="cannot write"):
        f.to_csv(tmp_path / "missing" / "p.csv")


def test_inference_data_of_a_filter_is_its_resampled_posterior():
    # x | y = 0.7 is N(0.35, 0.5): the resampled draws' mean is within 5 MC errors of it.
    f = sirenc.compile("let x <- gaussian(0., 1.) in let () = observe(gaussian(x, 1.), 0.7) in x") \
        .filter(particles=20000, seed=2).run()
    idata = f.to_inference_data(seed=1)
    draws = idata.posterior["result"].values
    assert draws.shape == (1, 20000)
    assert abs(draws.mean() - 0.35) < 5 * math.sqrt(0.5 / f.ess)
    assert idata.attrs["log_evidence"] == f.log_evidence and idata.attrs["method"] == "pf"
    # the same weighted population, resampled: the weighted mean and the draws' mean agree
    assert draws.mean() == pytest.approx(f.estimate(), abs=5 * math.sqrt(0.5 / 20000))


def test_inference_data_of_mh_chains_has_one_arviz_chain_each():
    import arviz

    model = sirenc.compile("let p <- beta(2., 2.) in let () = observe(bernoulli(p), true) in p")
    chains = [model.filter(handler="mh", samples=3000, warmup=100, seed=s).run() for s in range(3)]
    idata = sirenc.export.to_inference_data(chains)
    assert idata.posterior["result"].shape == (3, 3000)
    assert np.array_equal(idata.posterior["result"].values[1], chains[1].draws()[:, 0])
    assert float(arviz.rhat(idata)["result"]) == pytest.approx(sirenc.mh.rhat(chains), abs=0.02)
    mean = idata.posterior["result"].values.mean()
    assert abs(mean - stats.beta(3, 2).mean()) < 0.02
