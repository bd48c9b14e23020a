"""The back-end interface (sirenc/backend/interface.py): the same calls on the native and the JAX
back end, on a program whose posterior is known exactly (a gaussian mean observed with unit
noise), give answers of the same structure that agree with the exact posterior.

Where the two back ends differ on a point of the contract, the test says so, naming each one's
answer, rather than asking one answer of both.
"""

from __future__ import annotations

import math
import threading

import numpy as np
import pytest
from markers import needs_module, needs_runtime

import sirenc
from sirenc.backend import interface
from sirenc.diagnostics import SirenRuntimeError, SirenUsageError
from sirenc.summary import Summary

pytestmark = needs_runtime

PROGRAM = """\
val step = fun (row, x) ->
  let () = observe(gaussian(x, 1.), List.hd(row)) in
  let () = resample() in
  x
in
let x <- gaussian(0., 1.) in
fold(step, File.read("data.csv"), x)
"""
ROWS = np.array([[0.5], [1.5], [0.9], [1.2]])
# x ~ N(0, 1) and y_i ~ N(x, 1): x | y ~ N(sum(y) / (n + 1), 1 / (n + 1)), and y ~ N(0, I + 11').
N = len(ROWS)
MEAN, VARIANCE = ROWS.sum() / (N + 1), 1 / (N + 1)
LOG_EVIDENCE = -0.5 * (N * math.log(2 * math.pi) + math.log(N + 1) + (ROWS ** 2).sum() - ROWS.sum() ** 2 / (N + 1))
PARTICLES = 2000


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("interface")
    (folder / "model.si").write_text(PROGRAM)
    (folder / "data.csv").write_text("y\n" + "".join(f"{y}\n" for y in ROWS[:, 0]))
    return folder


@pytest.fixture(scope="module", params=["native", pytest.param("jax", marks=needs_module("jax"))])
def model(request, folder):
    return sirenc.compile(folder / "model.si", backend=request.param)


def native(model) -> bool:
    return model.info.get("backend", "native") == "native"


def test_both_back_ends_declare_the_interface(model, folder):
    f = model.filter(particles=10)
    assert isinstance(model, interface.Model) and isinstance(f, interface.Filter)
    assert f.model is model and f.n_particles == 10 and not f.closed and not f.states_in_order
    common = {k: model.info[k] for k in ("name", "method", "plan", "result_type", "result_names", "files",
                                         "streamable", "tier")}
    assert common == {"name": "model", "method": "pf", "plan": "x: sample", "result_type": "f",
                      "result_names": ["x"], "files": [str(folder / "data.csv")], "streamable": True, "tier": 1}


def test_a_run_agrees_with_the_exact_posterior(model):
    f = model.filter(particles=PARTICLES, seed=1)
    assert f.run(ROWS) is f
    estimate = f.estimate()
    assert isinstance(estimate, float) and abs(estimate - MEAN) < 0.05
    assert abs(f.log_evidence - LOG_EVIDENCE) < 0.15
    assert 0 < f.ess <= PARTICLES
    summary = f.summary()
    assert isinstance(summary, Summary) and summary.mean == pytest.approx(estimate, rel=1e-9)
    assert abs(summary.variance - VARIANCE) < 0.05
    q = summary.quantiles
    assert list(q) == [0.05, 0.5, 0.95] and q[0.05] < q[0.5] < q[0.95]
    assert f.variables() == {"x": summary}
    values, weights = f.particles()
    assert len(values) == PARTICLES and weights.sum() == pytest.approx(1.0)
    assert np.dot(weights, values) == pytest.approx(estimate, rel=1e-9)
    (flat, offsets), flat_weights = f.particles(flat=True)
    assert offsets.shape == (PARTICLES + 1,) and np.array_equal(flat, values) and np.array_equal(flat_weights, weights)
    assert f.runtime_plan() == {}        # pf samples every variable


def test_the_history_has_an_entry_per_resample(model):
    f = model.filter(particles=100, seed=1).run(ROWS)
    history = f.history()
    # The contract's three columns; the native filter's history also has log_evidence_increment and
    # rows, the JAX filter's nothing more.
    assert {"ess", "resampled", "log_evidence"} <= set(history)
    assert set(history) - {"ess", "resampled", "log_evidence"} == ({"log_evidence_increment", "rows"}
                                                                 if native(model) else set())
    assert all(len(history[k]) == N for k in ("ess", "resampled", "log_evidence"))
    assert history["resampled"].all()    # ess_threshold=0 resamples at every resample()
    assert history["log_evidence"][-1] == pytest.approx(f.log_evidence, rel=1e-12)


def test_rows_streamed_one_at_a_time_answer_as_a_run_over_them(model):
    whole = model.filter(particles=PARTICLES, seed=2).run(ROWS)
    stream = model.filter(particles=PARTICLES, seed=2)
    for row in ROWS:
        assert stream.step(row) is stream
    assert stream.estimate() == whole.estimate() and stream.log_evidence == whole.log_evidence
    assert np.array_equal(stream.history()["ess"], whole.history()["ess"])


def test_a_checkpoint_goes_on_as_the_saved_filter_would(model, tmp_path):
    kept = model.filter(particles=PARTICLES, seed=3)
    for row in ROWS[:2]:
        kept.step(row)
    kept.save(tmp_path / "f.ckpt")
    loaded = [type(kept).load(model, kept.to_bytes()), type(kept).load(model, tmp_path / "f.ckpt")]
    for row in ROWS[2:]:
        for f in [kept, *loaded]:
            f.step(row)
    for f in loaded:
        assert f.estimate() == kept.estimate() and f.log_evidence == kept.log_evidence


def test_use_file_reads_the_data_from_elsewhere(model, tmp_path):
    (tmp_path / "other.csv").write_text("y\n" + "".join(f"{y}\n" for y in ROWS[::-1, 0]))
    other = model.filter(particles=PARTICLES, seed=4).use_file(0, tmp_path / "other.csv").run()
    assert other.estimate() == model.filter(particles=PARTICLES, seed=4).run(ROWS[::-1].copy()).estimate()
    compiled_in = model.filter(particles=PARTICLES, seed=4).run()
    assert compiled_in.estimate() == model.filter(particles=PARTICLES, seed=4).run(ROWS).estimate()


def test_a_closed_filter_refuses_every_call(model):
    with model.filter(particles=10) as f:
        f.run(ROWS)
    assert f.closed
    for call in (f.estimate, lambda: f.run(ROWS), lambda: f.step(ROWS[0])):
        with pytest.raises(SirenUsageError, match="closed"):
            call()
    f.close()                            # closing twice is no error


def test_a_filter_serves_one_thread_at_a_time(model):
    f = model.filter(particles=10)
    inside, leave = threading.Event(), threading.Event()

    def report(_progress):               # holds the filter inside run() until told to leave
        inside.set()
        leave.wait(30)

    worker = threading.Thread(target=f.run, args=(ROWS,), kwargs={"progress": report, "progress_interval": 0})
    worker.start()
    try:
        assert inside.wait(30)
        with pytest.raises(SirenUsageError, match="in use by another thread"):
            f.estimate()
    finally:
        leave.set()
        worker.join(30)
    assert np.isfinite(f.estimate())


def test_bad_arguments_are_usage_errors_naming_them(model):
    for options, name in [({"particles": 0}, "particles"), ({"seed": -1}, "seed"), ({"resampler": "bogus"}, "resampler"),
                          ({"ess_threshold": 2.0}, "ess_threshold")]:
        with pytest.raises(SirenUsageError, match=name):
            model.filter(**options)
    f = model.filter(particles=10)
    with pytest.raises(SirenUsageError, match="dtype float64"):
        f.run(ROWS.astype(np.float32))
    with pytest.raises(SirenUsageError, match="must be a table"):
        f.run([[1.0], [1.0, 2.0]])
    with pytest.raises(SirenUsageError, match="1-D"):
        f.step(ROWS)


def test_where_the_back_ends_differ(model):
    # An answer before any row: both refuse, saying what to call, but the native refusal is the
    # runtime's (a SirenRuntimeError), the JAX one a SirenUsageError.
    with pytest.raises(SirenRuntimeError if native(model) else SirenUsageError, match=r"call run\(\) or step\(\) first"):
        model.filter(particles=10).estimate()
    # The other back end's options: the JAX model refuses the native ones with a message; the native
    # model has no parameter for the JAX ones, so Python's TypeError says it.
    if native(model):
        with pytest.raises(TypeError, match="devices"):
            model.filter(devices=[])
    else:
        with pytest.raises(SirenUsageError, match="options of the native back end"):
            model.filter(threads=2)
