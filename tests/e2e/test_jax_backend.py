"""The JAX back end (``sirenc.compile(..., backend="jax")``): the same answers as the native filter
in distribution on every benchmark model, streaming, sharding over host devices, located errors.

The exact-posterior tests (Kalman, Beta-Bernoulli, Gamma-Poisson) run on both back ends in
tests/statistical/test_exact_posteriors.py.

Agreement is statistical: each back end runs R seeds (different generators, so different
numbers), and the difference of the means of a quantity must stay within Z standard errors
of that difference, estimated from the two spreads. Z = 5 over about 50 compared quantities
makes a false alarm rarer than 1 in 10^4 even with the heavier tails of an estimated
spread (R = 10 each); seeds are fixed, so the test is deterministic.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from markers import needs_runtime

import sirenc
from sirenc.diagnostics import SirenRuntimeError, SirenUsageError

pytestmark = needs_runtime

REPO = Path(__file__).resolve().parents[2]
MODELS = sorted(p.name for p in (REPO / "benchmarks" / "models").iterdir() if (p / "model.si").exists())
SEEDS = range(10)
Z = 5.0


def flat(value) -> np.ndarray:
    if isinstance(value, (tuple, list)):
        parts = [flat(v) for v in value]
        return np.concatenate(parts) if parts else np.zeros(0)
    return np.atleast_1d(np.asarray(value, dtype=np.float64)).ravel()


def summaries(f) -> np.ndarray:
    """What is compared per run: the log evidence, and the first, last and mean number of the result."""
    e = flat(f.estimate())
    return np.array([f.log_evidence, e[0], e[-1], e.mean()])


def runs(model, particles: int) -> np.ndarray:
    out = []
    for seed in SEEDS:
        f = model.filter(particles=particles, seed=seed)
        f.run()
        out.append(summaries(f))
    return np.array(out)


def assert_agree(a: np.ndarray, b: np.ndarray) -> None:
    se = np.sqrt(a.var(axis=0, ddof=1) / len(a) + b.var(axis=0, ddof=1) / len(b))
    diff = np.abs(a.mean(axis=0) - b.mean(axis=0))
    assert np.all(diff <= Z * se + 1e-9), (a.mean(axis=0), b.mean(axis=0), se)


@pytest.mark.parametrize("name", MODELS)
def test_agrees_with_the_native_filter_under_pf(name):
    path = REPO / "benchmarks" / "models" / name / "model.si"
    jax_runs = runs(sirenc.compile(path, "pf", backend="jax"), 500)
    native_runs = runs(sirenc.compile(path, "pf"), 500)
    assert np.all(np.isfinite(jax_runs))
    assert_agree(jax_runs, native_runs)


@pytest.mark.parametrize("name", ["noise", "outlier", "slds"])
def test_tier2_agrees_with_the_native_filter(name):
    path = REPO / "benchmarks" / "models" / name / "model.si"
    model = sirenc.compile(path, "ssi", backend="jax")
    assert model.info["tier"] == 2
    assert_agree(runs(model, 300), runs(sirenc.compile(path, "ssi"), 300))


def test_tier2_kalman_is_exact_on_both_back_ends():
    # The symbolic walk on tier 2 is a Kalman filter: every particle holds the exact posterior.
    path = REPO / "benchmarks" / "models" / "walk" / "model.si"
    f = sirenc.compile(path, "ssi", backend="jax").filter(particles=64, seed=0).run()
    g = sirenc.compile(path, "ssi").filter(particles=64, seed=0).run()
    assert f.estimate() == pytest.approx(g.estimate(), abs=1e-10)
    assert f.log_evidence == pytest.approx(g.log_evidence, abs=1e-9)
    # ... which the summaries report, the particles' own spread included (the same atoms).
    from sirenc.summary import leaves

    got, want = leaves(f.summary()), leaves(g.summary())
    assert [p for p, _ in got] == [p for p, _ in want] and all(s.variance > 0 for _, s in want)
    for (_, a), (_, b) in zip(got, want):
        assert (a.mean, a.variance, *a.quantiles.values()) == pytest.approx(
            (b.mean, b.variance, *b.quantiles.values()), abs=1e-9)


# -- streaming ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["walk", "noise"])
def test_steps_give_the_answers_of_a_whole_run(name):
    from sirenc.data import read_csv

    model = sirenc.compile(REPO / "benchmarks" / "models" / name / "model.si", "pf", backend="jax")
    rows = read_csv(REPO / "benchmarks" / "models" / name / "data.csv")
    whole = model.filter(particles=200, seed=5).run(rows)
    stream = model.filter(particles=200, seed=5)
    for k, row in enumerate(rows):
        stream.step(row)
        if k == 10:
            assert np.all(np.isfinite(flat(stream.estimate())))   # mid-stream, the program finished on a copy
    assert np.array_equal(flat(whole.estimate()), flat(stream.estimate()))
    assert whole.log_evidence == stream.log_evidence
    assert len(stream.history()["ess"]) == len(rows)


def test_a_checkpoint_goes_on_as_the_saved_filter_would(tmp_path):
    from sirenc.backend.jax_model import JaxFilter
    from sirenc.data import read_csv

    model = sirenc.compile(REPO / "benchmarks" / "models" / "noise" / "model.si", "pf", backend="jax")
    rows = read_csv(REPO / "benchmarks" / "models" / "noise" / "data.csv")
    kept = model.filter(particles=200, seed=2)
    for row in rows[:40]:
        kept.step(row)
    kept.save(tmp_path / "f.ckpt")
    loaded = JaxFilter.load(model, tmp_path / "f.ckpt")
    for row in rows[40:]:
        kept.step(row)
        loaded.step(row)
    assert np.array_equal(flat(kept.estimate()), flat(loaded.estimate()))
    assert kept.log_evidence == loaded.log_evidence
    other = sirenc.compile(REPO / "benchmarks" / "models" / "walk" / "model.si", "pf", backend="jax")
    with pytest.raises(SirenUsageError, match="not saved from a filter of this model"):
        JaxFilter.load(other, tmp_path / "f.ckpt")


class _Planted:
    """A pickle that writes a file when it is unpickled."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (Path(self.marker).write_text, ("the pickle ran\n",))


def _noise(particles=50, steps=20):
    from sirenc.data import read_csv

    model = sirenc.compile(REPO / "benchmarks" / "models" / "noise" / "model.si", "pf", backend="jax")
    rows = read_csv(REPO / "benchmarks" / "models" / "noise" / "data.csv")
    f = model.filter(particles=particles, seed=3)
    for row in rows[:steps]:
        f.step(row)
    return model, rows, f


def _rewrite_header(data: bytes, change) -> bytes:
    import struct

    magic, version, length = struct.unpack_from("<8sIQ", data)
    header = json.loads(data[20:20 + length])
    change(header)
    text = json.dumps(header).encode()
    return struct.pack("<8sIQ", magic, version, len(text)) + text + data[20 + length:]


def test_a_jax_checkpoint_is_never_unpickled(tmp_path):
    import pickle

    from sirenc.backend.jax_model import JaxFilter

    model, _, _ = _noise()
    marker = tmp_path / "ran"
    (tmp_path / "f.ckpt").write_bytes(pickle.dumps(_Planted(marker)))
    with pytest.raises(SirenUsageError, match="not a sirenc checkpoint of the JAX back end"):
        JaxFilter.load(model, tmp_path / "f.ckpt")
    assert not marker.exists()


def test_damaged_and_crafted_jax_checkpoints_are_refused_saying_why():
    from sirenc.backend.jax_model import JaxFilter

    model, rows, f = _noise()
    data = f.to_bytes()
    refused = {
        "truncated|SHA-256": data[: len(data) - 100],
        "SHA-256": data[:-50] + bytes([data[-50] ^ 1]) + data[-49:],
        "header is not JSON": data[:30] + b"\xff" + data[31:],
        "format version 7": data[:8] + (7).to_bytes(4, "little") + data[12:],
        "does not weigh 60 particles": _rewrite_header(data, lambda h: h.update(n=60)),
        "resampler": _rewrite_header(data, lambda h: h.update(resampler="os.system")),
        "seed": _rewrite_header(data, lambda h: h.update(seed=-1)),
        "describes an array": _rewrite_header(data, lambda h: h["arrays"][0].__setitem__(0, "|O")),
        "larger than the file": _rewrite_header(data, lambda h: h["arrays"][0].__setitem__(1, [2**39])),
        "missing or reused array": _rewrite_header(
            data, lambda h: h["trees"].update(final={"t": [{"a": 0}, {"a": 0}]})),
    }
    for why, bad in refused.items():
        with pytest.raises(SirenUsageError, match=why):
            JaxFilter.load(model, bad)
    walk = sirenc.compile(REPO / "benchmarks" / "models" / "walk" / "model.si", "pf", backend="jax")
    with pytest.raises(SirenUsageError, match="not saved from a filter of this model"):
        JaxFilter.load(walk, data)
    with pytest.raises(SirenUsageError, match="bytes or a path"):
        JaxFilter.load(model, 42)
    loaded = JaxFilter.load(model, data)       # the untouched checkpoint still loads and goes on
    for row in rows[20:]:
        loaded.step(row)
        f.step(row)
    assert np.array_equal(flat(loaded.estimate()), flat(f.estimate()))


def test_a_finished_jax_run_saves_its_answers():
    from sirenc.backend.jax_model import JaxFilter

    model, rows, _ = _noise()
    done = model.filter(particles=40, seed=1).run(rows)
    again = JaxFilter.load(model, done.to_bytes())
    assert np.array_equal(flat(again.estimate()), flat(done.estimate()))
    assert again.log_evidence == done.log_evidence
    assert np.array_equal(again.history()["ess"], done.history()["ess"])


def test_use_file_reads_other_data(tmp_path):
    path = REPO / "benchmarks" / "models" / "walk" / "model.si"
    (tmp_path / "d.csv").write_text("y\n1.0\n2.0\n")
    model = sirenc.compile(path, "pf", backend="jax")
    f = model.filter(particles=100, seed=0).use_file(0, tmp_path / "d.csv").run()
    assert len(f.history()["ess"]) == 2
    with pytest.raises(SirenUsageError, match="no file 3"):
        f.use_file(3, tmp_path / "d.csv")


def test_step_needs_a_streamed_program():
    model = sirenc.compile("let x <- gaussian(0., 1.) in x", backend="jax")
    with pytest.raises(SirenUsageError, match="use run"):
        model.filter(particles=10).step([1.0])


# -- devices and precision ----------------------------------------------------------------------------


def test_particles_sharded_over_four_host_devices_give_the_same_answers():
    code = textwrap.dedent(f"""
        import os, json
        os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"
        import jax, numpy as np, sirenc
        assert len(jax.devices()) == 4, jax.devices()
        model = sirenc.compile({str(REPO / "benchmarks/models/noise/model.si")!r}, "pf", backend="jax")
        a = model.filter(particles=400, seed=1, devices=jax.devices()).run()
        b = model.filter(particles=400, seed=1).run()
        shards = len(a._final[1]["logw"].sharding.device_set)
        flat = lambda e: np.concatenate([np.atleast_1d(np.asarray(x, float)) for x in e]).tolist()
        print(json.dumps([shards, flat(a.estimate()), a.log_evidence, flat(b.estimate()), b.log_evidence]))
    """)
    out = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=600,
                         env={**os.environ, "JAX_PLATFORMS": "cpu"})
    assert out.returncode == 0, out.stderr
    shards, est_a, logz_a, est_b, logz_b = json.loads(out.stdout.splitlines()[-1])
    assert shards == 4
    assert np.allclose(est_a, est_b, rtol=1e-9, atol=1e-9)
    assert logz_a == pytest.approx(logz_b, rel=1e-12)


def test_particles_must_split_evenly_over_devices():
    import jax

    model = sirenc.compile("let x <- gaussian(0., 1.) in x", backend="jax")
    with pytest.raises(SirenUsageError, match="split evenly"):
        model.filter(particles=7, devices=[jax.devices()[0]] * 2)


def test_float32_agrees_with_float64():
    path = REPO / "benchmarks" / "models" / "walk" / "model.si"
    single = sirenc.compile(path, "pf", backend="jax", float32=True)
    assert single.info["dtype"] == "float32"
    assert_agree(runs(single, 1000), runs(sirenc.compile(path, "pf", backend="jax"), 1000))


# -- errors ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("source", [
    "let x <- gaussian(0., -1.) in x",
    "let l = List.tl([1.]) in List.hd(l)",
    "let x <- gaussian(0., 1.) in\nlet () = observe(delta(1.), 2.) in\nlet () = resample() in x",
])
def test_run_time_errors_are_located_as_the_native_filter_locates_them(source):
    with pytest.raises(SirenRuntimeError) as native:
        sirenc.compile(source).filter(particles=50).run()
    with pytest.raises(SirenRuntimeError) as jax:
        sirenc.compile(source, backend="jax").filter(particles=50).run()
    assert jax.value.render() == native.value.render()


def test_an_error_in_a_branch_no_particle_takes_is_no_error():
    source = "let c <- bernoulli(0.) in if c then (let y <- gaussian(0., -1.) in y) else 2."
    assert sirenc.compile(source, backend="jax").filter(particles=50).run().estimate() == 2.0


def test_tier1_symbolic_programs_are_refused_with_a_location():
    from sirenc.backend.jax_trace import JaxBackendError

    with pytest.raises(JaxBackendError) as err:
        sirenc.compile(REPO / "benchmarks" / "models" / "wheels" / "model.si", "ssi", backend="jax")
    assert "native back end" in err.value.message and err.value.span is not None


def test_a_jax_filter_closes():
    with sirenc.compile("let x <- gaussian(0., 1.) in x", backend="jax").filter(particles=64, seed=0) as f:
        f.run()
        assert np.isfinite(f.estimate())
    assert f.closed
    with pytest.raises(SirenUsageError, match="closed"):
        f.estimate()
    with pytest.raises(SirenUsageError, match="closed"):
        f.run()


def test_options_of_the_other_back_end_are_refused():
    model = sirenc.compile("1.", backend="jax")
    with pytest.raises(SirenUsageError, match="options of the native back end"):
        model.filter(threads=2)
    with pytest.raises(SirenUsageError, match="unknown filter option"):
        model.filter(bogus=1)
    with pytest.raises(SirenUsageError, match="float32"):
        sirenc.compile("1.", float32=True)
    with pytest.raises(SirenUsageError, match="model.so"):
        sirenc.compile("1.", backend="jax", output="m.so")
    with pytest.raises(SirenUsageError, match="unknown backend"):
        sirenc.compile("1.", backend="gpu")


# -- the command line ------------------------------------------------------------------------------------


def sirenc_cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "sirenc", *args], check=False, capture_output=True, text=True, cwd=cwd,
                          timeout=600)


def test_cli_runs_on_the_jax_back_end():
    walk = str(REPO / "benchmarks" / "models" / "walk" / "model.si")
    out = sirenc_cli("run", walk, "--backend", "jax", "-p", "500", "--json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert -9 < report["result"] < -4 and len(report["history"]["ess"]) == 100
    refused = sirenc_cli("run", walk, "--backend", "jax", "--threads", "2")
    assert refused.returncode == 2 and "native" in refused.stderr
    emitted = sirenc_cli(walk, "--emit=jax")
    assert emitted.returncode == 0 and "lambda" in emitted.stdout


def test_cli_reports_a_refused_program_with_exit_1():
    out = sirenc_cli("run", str(REPO / "benchmarks" / "models" / "wheels" / "model.si"), "-m", "ssi",
                     "--backend", "jax")
    assert out.returncode == 1
    assert "model.si:" in out.stderr and "native back end" in out.stderr and "Traceback" not in out.stderr
