"""The Python API on the toy model, through the JIT and through a model.so."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import sirenc
from sirenc.runtime.abi import abi_version
from markers import needs_runtime
from sirenc.api import from_llvm_dialect
from sirenc.diagnostics import SirenRuntimeError, SirenUsageError
from toy_model import (exact_log_evidence, exact_posterior, one_observation_standard_errors,
                       toy_model)

pytestmark = needs_runtime

PARTICLES = 10_000
Y = 1.0


@pytest.fixture(scope="module", params=["jit", "so"])
def model(request, tmp_path_factory, data_file):
    module, info = toy_model(data_file=str(data_file))
    if request.param == "jit":
        return from_llvm_dialect(module, info)
    return from_llvm_dialect(module, info, output=tmp_path_factory.mktemp("api") / "toy.so")


def test_info(model, data_file):
    assert model.info == {
        "abi_version": abi_version(), "name": "toy", "method": "pf", "plan": "x: sample",
        "result_type": "f", "frame_size": 40, "streamable": True,
        "not_streamable_reason": "", "files": [str(data_file)], "vars": [], "tier": 1,
        "result_names": [],
    }


def test_posterior_mean_and_evidence(model):
    f = model.filter(particles=PARTICLES, seed=0)
    f.run(np.array([[Y]]))
    mean, _ = exact_posterior([Y])
    se_mean, se_logz = one_observation_standard_errors(Y, PARTICLES)
    estimate = f.estimate()
    assert isinstance(estimate, float)
    assert abs(estimate - mean) < 4 * se_mean
    assert abs(f.log_evidence - exact_log_evidence([Y])) < 4 * se_logz
    assert 0 < f.ess <= PARTICLES


@pytest.mark.parametrize("resampler", ["systematic", "multinomial", "stratified", "residual"])
def test_every_resampler(model, resampler):
    f = model.filter(particles=PARTICLES, seed=3, resampler=resampler, ess_threshold=0.5)
    f.run([[Y]])
    se_mean, _ = one_observation_standard_errors(Y, PARTICLES)
    assert abs(f.estimate() - exact_posterior([Y])[0]) < 4 * se_mean


def test_data_file_is_read_without_rows(model):
    f = model.filter(particles=PARTICLES, seed=1)
    f.run()
    se_mean, _ = one_observation_standard_errors(Y, PARTICLES)
    assert abs(f.estimate() - exact_posterior([Y])[0]) < 4 * se_mean


def test_same_seed_same_answer(model):
    a = model.filter(particles=500, seed=11).run([[0.3], [1.2]])
    b = model.filter(particles=500, seed=11).run([[0.3], [1.2]])
    assert a.estimate() == b.estimate() and a.log_evidence == b.log_evidence


def test_streaming_several_rows(model):
    ys = [0.4, 1.1, 0.7]
    f = model.filter(particles=PARTICLES, seed=5)
    for y in ys:
        f.step(np.array([y]))
    mean, var = exact_posterior(ys)
    # generous bound: several importance-sampling steps inflate the error
    assert abs(f.estimate() - mean) < 8 * np.sqrt(var / PARTICLES)
    assert abs(f.log_evidence - exact_log_evidence(ys)) < 0.1


def test_pair_and_list_result():
    model = from_llvm_dialect(*toy_model(result_type="PfLf"))
    f = model.filter(particles=PARTICLES, seed=2).run([[Y]])
    x, moments = f.estimate()
    mean, var = exact_posterior([Y])
    se_mean, _ = one_observation_standard_errors(Y, PARTICLES)
    assert isinstance(moments, np.ndarray) and moments.dtype == np.float64 and moments.shape == (2,)
    assert moments[0] == pytest.approx(x)
    assert abs(x - mean) < 4 * se_mean
    assert abs(moments[1] - (var + mean**2)) < 0.05


def test_runtime_error_points_at_the_source(model):
    bad = from_llvm_dialect(*toy_model(prior_var=-1.0))
    f = bad.filter(particles=10, seed=0)
    with pytest.raises(SirenRuntimeError) as err:
        f.run([[Y]])
    text = err.value.render()
    assert text.startswith("toy.si:1:9: error:")
    assert "let x = sample(gaussian(0., 1.)) in" in text
    assert "^" in text


def test_step_on_a_model_that_cannot_stream():
    module, info = toy_model()
    info.streamable = False
    info.not_streamable_reason = "the main expression is not a fold over the data"
    f = from_llvm_dialect(module, info).filter(particles=10)
    with pytest.raises(SirenRuntimeError, match="not a fold over the data"):
        f.step([1.0])


@pytest.mark.parametrize("kwargs, message", [
    ({"particles": 0}, "particles"),
    ({"particles": 2.5}, "particles"),
    ({"seed": -1}, "seed"),
    ({"resampler": "bogus"}, "resampler"),
    ({"ess_threshold": 2.0}, "ess_threshold"),
])
def test_bad_filter_arguments(model, kwargs, message):
    with pytest.raises(SirenUsageError, match=message):
        model.filter(**kwargs)


def test_bad_rows_are_rejected_before_the_runtime(model):
    f = model.filter(particles=10)
    with pytest.raises(SirenUsageError, match="float64"):
        f.run(np.ones((2, 1), dtype=np.float32))
    with pytest.raises(SirenUsageError, match="C-contiguous"):
        f.run(np.ones((2, 4))[:, ::2])
    with pytest.raises(SirenUsageError, match="1-D"):
        f.step(np.ones((1, 1)))


def test_filters_keep_their_model_alive():
    f = from_llvm_dialect(*toy_model()).filter(particles=200, seed=0)
    gc.collect()              # the Model is unreachable except through f
    f.run([[Y]])
    se_mean, _ = one_observation_standard_errors(Y, 200)
    assert abs(f.estimate() - exact_posterior([Y])[0]) < 4 * se_mean
    del f
    gc.collect()              # frees the filter, then the JIT engine


def test_load_a_rewritten_file_gives_the_new_code(tmp_path):
    path = tmp_path / "m.so"
    from_llvm_dialect(*toy_model(), output=path)
    first = sirenc.load(path)
    assert first.info["result_type"] == "f"
    from_llvm_dialect(*toy_model(result_type="PfLf"), output=path)
    second = sirenc.load(path)
    assert second.info["result_type"] == "PfLf"
    assert isinstance(second.filter(particles=10).run([[Y]]).estimate(), tuple)


def test_load_rejects_other_files(tmp_path):
    with pytest.raises(SirenUsageError, match="cannot read"):
        sirenc.load(tmp_path / "missing.so")
    junk = tmp_path / "junk.so"
    junk.write_bytes(b"not an ELF file")
    with pytest.raises(SirenUsageError, match="not a loadable sirenc model"):
        sirenc.load(junk)


def test_a_filter_closes_and_then_refuses_every_use():
    model = sirenc.compile("let x <- gaussian(0., 1.) in x")
    with model.filter(particles=1000, seed=1) as f:
        f.run()
        assert not f.closed and np.isfinite(f.estimate())
    assert f.closed
    for use in (f.run, f.estimate, f.summary, f.particles, f.to_bytes, lambda: f.ess):
        with pytest.raises(SirenUsageError, match="closed"):
            use()
    f.close()   # twice: no error
    g = model.filter(particles=10, seed=1).run()
    g.close()
    with pytest.raises(SirenUsageError, match="closed"):
        g.step([1.0])


def test_the_package_says_it_is_typed():
    from importlib import resources

    assert (resources.files("sirenc") / "py.typed").is_file()


def test_a_failed_creation_names_the_entry_the_host_called(model):
    # A model.so's host called sirenc_new, and the message says so; the JIT's caller called the
    # runtime's sirenrt_filter_new. Python reports either as a usage error without the prefix.
    from sirenc.runtime.ffi import ffi

    assert model._entry.new(0, 1, ffi.NULL) == ffi.NULL
    message = ffi.string(model._entry.error(ffi.NULL)).decode()
    entry = "sirenc_new" if model.path is not None else "sirenrt_filter_new"
    assert message.startswith(f"{entry}: the number of particles must be in [1, 2^31)"), message
    with pytest.raises(SirenUsageError, match="memory_limit") as info:
        model.filter(particles=10, memory_limit=-1)
    assert "sirenc_new" not in str(info.value) and "sirenrt_filter_new" not in str(info.value)
