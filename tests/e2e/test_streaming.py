"""Streaming (ARCHITECTURE.md, Streaming and the C ABI): feeding rows one at a time gives exactly what a
batch run over the same rows gives, with the same seed; programs that cannot be
streamed still run in batch, and `step` says why it refuses."""

from __future__ import annotations

import math

import numpy as np
import pytest

import sirenc
from linear_gaussian import importance_variances, kalman
from markers import needs_runtime

pytestmark = needs_runtime

TRACKER = """
(* A 2-D constant-velocity tracker observed through noisy positions; the rows are (x, y). *)
val predict = fun (p, v) -> let p1 <- gaussian(p + v, 0.1) in let v1 <- gaussian(v, 0.01) in (p1, v1) in
val step = fun ((ox, oy), (sx, sy, n)) ->
  let sx1 = predict(sx) in
  let sy1 = predict(sy) in
  let (px, _) = sx1 in
  let (py, _) = sy1 in
  let () = observe(gaussian(px, 1.), ox) in
  let () = observe(gaussian(py, 1.), oy) in
  let () = resample() in
  (sx1, sy1, n + 1.)
in
val as_pair = fun row -> (List.hd(row), List.hd(List.tl(row))) in
fold(step, List.map(as_pair, File.read("track.csv")), ((0., 1.), (0., -1.), 0.))
"""


@pytest.fixture(scope="module")
def rows():
    t = np.arange(1, 31, dtype=float)
    noise = np.random.default_rng(1).normal(size=(30, 2))
    return np.ascontiguousarray(np.stack([t, -t], axis=1) + noise)


@pytest.fixture(scope="module", params=["jit", "so"])
def model(request, tmp_path_factory):
    if request.param == "so":
        return sirenc.compile(TRACKER, method="pf", output=str(tmp_path_factory.mktemp("so") / "t.so"))
    return sirenc.compile(TRACKER, method="pf")


def test_stepping_equals_batch_at_every_prefix(model, rows):
    assert model.info["streamable"]
    streamed = model.filter(particles=500, seed=11)
    for k in range(len(rows)):
        streamed.step(rows[k])
        batch = model.filter(particles=500, seed=11)
        batch.run(rows[: k + 1])
        assert streamed.estimate() == batch.estimate()
        assert streamed.log_evidence == batch.log_evidence
    sx, (sy, n) = streamed.estimate()  # tuples are right-nested pairs
    assert n == len(rows)
    assert abs(sx[0] - 30) < 3 and abs(sy[0] + 30) < 3


def test_estimate_does_not_disturb_the_stream(model, rows):
    a = model.filter(particles=300, seed=5)
    b = model.filter(particles=300, seed=5)
    for row in rows:
        a.step(row)
        a.estimate()
        b.step(row)
    assert a.estimate() == b.estimate()


def test_run_after_steps_starts_over(model, rows):
    f = model.filter(particles=300, seed=2)
    for row in rows[:5]:
        f.step(row)
    f.run(rows)
    g = model.filter(particles=300, seed=2)
    g.run(rows)
    assert f.estimate() == g.estimate()


def test_a_program_that_is_not_streamable_runs_in_batch_only():
    source = """
    val step = fun (y, acc) -> let x <- gaussian(acc, 1.) in let () = observe(gaussian(x, 1.), y) in x in
    let data = List.map(List.hd, File.read("d.csv")) in
    fold(step, List.rev(data), 0.)
    """.replace("List.map(List.hd,", "List.map(first,")
    source = "val first = fun row -> List.hd(row) in\n" + source
    model = sirenc.compile(source, method="pf")
    assert not model.info["streamable"]
    n = 10_000
    f = model.filter(particles=n, seed=0)
    f.run(np.array([[1.0], [2.0], [3.0]]))
    # A random walk observed at 3, 2, 1 (the rows reversed), weighted without resampling.
    exact_mean, _, exact_ll, _ = kalman([3.0, 2.0, 1.0], q=1.0, r=1.0)
    var_mean, var_logz = importance_variances([3.0, 2.0, 1.0], q=1.0, r=1.0)
    assert abs(f.estimate() - exact_mean) < 4 * math.sqrt(var_mean / n)
    assert abs(f.log_evidence - exact_ll) < 4 * math.sqrt(var_logz / n)
    with pytest.raises(sirenc.SirenRuntimeError, match="does not fold over File.read data"):
        f.step(np.array([1.0]))


@pytest.mark.parametrize("threads", [2, 3, 4, 7])
def test_threads_change_nothing(model, rows, threads):
    # Enough particles that every thread count runs on the pool (the runtime keeps fewer than 2048 a
    # thread on one) and the barrier has several blocks of 4096 to split between them.
    one = model.filter(particles=20001, seed=8)
    many = model.filter(particles=20001, seed=8, threads=threads)
    one.run(rows)
    many.run(rows)
    assert one.estimate() == many.estimate() and one.log_evidence == many.log_evidence
    for row in rows[:5]:
        one.step(row)
        many.step(row)
    assert one.estimate() == many.estimate()
