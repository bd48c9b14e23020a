"""The runtime locator and the cffi layer: files are found, the cffi declarations read
off ``sirenrt.h`` declare its whole API, and the population API works end to end with a
model whose ``resume`` is a Python callback (so the struct layouts cffi uses are the C
ones)."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest

from markers import runtime_missing
from sirenc.diagnostics import SirenUsageError

REPO = Path(__file__).resolve().parents[2]
INCLUDE = REPO / "runtime_c" / "include"

try:
    from sirenc import runtime
    from sirenc.runtime.abi import abi_version, cdef
    from sirenc.runtime.ffi import ffi, last_error, runtime_lib

    LIB = runtime_lib()
except SirenUsageError as exc:  # pragma: no cover - only without a built runtime
    runtime_missing(exc.message)


def test_locator_finds_every_artifact():
    assert runtime.shared_library_path().is_file()
    export, static = runtime.static_libraries()
    assert export.name == "libsirenrt_export.a" and export.is_file()
    assert static.name == "libsirenrt.a" and static.is_file()
    assert (runtime.include_dir() / "sirenrt.h").is_file()


def test_locator_override_must_exist(monkeypatch, tmp_path):
    monkeypatch.setenv("SIRENRT_DIR", str(tmp_path))
    with pytest.raises(SirenUsageError, match="does not contain libsirenrt.so"):
        runtime.shared_library_path()


def test_cdef_declares_exactly_the_header_api():
    text = "".join(h.read_text() for h in (INCLUDE / "sirenrt.h", INCLUDE / "sirenrt_families.h"))
    exported = set(re.findall(r"SIRENRT_API [^;(]*?\b((?:sirenrt|sirenc)_\w+)\(", text))
    declared = set(re.findall(r"\b((?:sirenrt|sirenc)_\w+)\(", cdef(INCLUDE / "sirenrt.h")))
    assert len(exported) == 134         # + sirenc_buffer_free, filter_history_dropped, sirenc_history_dropped
                                        # + filter_posterior, sirenc_posterior (summaries' posterior atoms)
                                        # + particles, size, history, set_file, save, load, set_progress (issue 12), list_head_word;
                                        # + list_cons_at, list_rev_at (the site of a list past the memory limit)
                                        # + list_cons_typed (a lane's cons made in the heap at once), filter_collect
                                        # + list_cons_word (a one-word cons in one call)
                                        # + list_rev_typed (a lane's List.rev made in the heap at once)
                                        # + list_from_words (a list literal of constants at once, issue 11)
                                        # + sym_add..sym_value, sym_assume, sym_observe, filter_runtime_plan (ssi)
                                        # + filter_new_mh, mh_runtime_plan, mh_stats and their sirenc_ exports (MH)
                                        # (stream_rows went: resume is handed the rows, ABI 8)
                                        # + list_from_nested_words (a literal of lists at once)
    assert exported == declared
    assert "SIRENRT_API" not in cdef(INCLUDE / "sirenrt.h")


def test_the_library_exports_every_declared_function():
    names = set(re.findall(r"\b(sirenrt_\w+)\(", cdef()))   # sirenc_* are in the export library
    assert all(getattr(LIB, name) for name in names)   # cffi raises for a missing symbol


# ---------------------------------------------------------------- a model written in Python
# x ~ gaussian(0, 1); observe(gaussian(x, 1), 1.0); x   => posterior N(0.5, 0.5), Z = N(1; 0, 2)
# Frame: int32 pc | pad | double x (offset 8) | double result (offset 16).

class PyModel:
    """Keeps every cdata the model struct points at alive."""

    def __init__(self, resume, result_type="f", frame_size=24, result_offset=16, n_sites=1):
        self.keep = []
        cstr = lambda s: self._keep(ffi.new("char[]", s.encode()))  # noqa: E731
        self.sites = self._keep(ffi.new("sirenrt_site[]", n_sites))
        for i in range(n_sites):
            self.sites[i] = {"file": cstr("py.si"), "line": 2, "col": 5, "end_col": 9,
                             "text": cstr("let x <- gaussian(0., 1.) in")}
        self.callback = ffi.callback("int32_t(sirenrt_ctx *, uint8_t *, double *, sirenrt_rows *)", resume)
        self.model = ffi.new("sirenrt_model *", {
            "abi_version": abi_version(), "name": cstr("py"), "method": cstr("smc"),
            "plan": cstr("x: sample"), "result_type": cstr(result_type),
            "frame_size": frame_size, "result_offset": result_offset, "resume": self.callback,
            "streamable": 0, "not_streamable_reason": cstr("no data"),
            "n_files": 0, "files": ffi.NULL, "n_sites": n_sites, "sites": self.sites,
        })

    def _keep(self, obj):
        self.keep.append(obj)
        return obj


def conjugate_resume(ctx, frame, log_weight, rows):
    x = ffi.cast("double *", frame + 8)
    result = ffi.cast("double *", frame + 16)
    pc = ffi.cast("int32_t *", frame)
    if pc[0] == 0:
        x[0] = LIB.sirenrt_sample_gaussian(ctx, 0.0, 1.0, 0)
        LIB.sirenrt_observe_gaussian(ctx, x[0], 1.0, 1.0, 0)
        pc[0] = 1
        return LIB.SIRENRT_AT_RESAMPLE
    result[0] = x[0]
    return LIB.SIRENRT_FINISHED


def estimate(f, cap=8):
    out = np.zeros(cap)
    n = ffi.new("int64_t *")
    status = LIB.sirenrt_filter_estimate(f, ffi.from_buffer("double[]", out, require_writable=True), cap, n)
    return status, out[: n[0]]


@pytest.mark.parametrize("resampler", [0, 1, 2, 3])
def test_population_api_with_a_python_model(resampler):
    m = PyModel(conjugate_resume)
    opts = ffi.new("sirenrt_options *", {"resampler": resampler, "ess_threshold": 0.0, "threads": 1})
    n = 20000
    f = ffi.gc(LIB.sirenrt_filter_new(m.model, n, 3, opts), LIB.sirenrt_filter_free)
    assert f != ffi.NULL, last_error()
    assert LIB.sirenrt_filter_run(f, ffi.NULL, 0, 0) == 0, ffi.string(LIB.sirenrt_filter_error(f))
    status, est = estimate(f)
    assert status == 0 and len(est) == 1
    assert est[0] == pytest.approx(0.5, abs=5 * 2 * math.sqrt(0.5 / n))
    z = -0.5 * math.log(2 * math.pi * 2.0) - 1.0 / 4.0
    assert LIB.sirenrt_filter_log_evidence(f) == pytest.approx(z, abs=0.05)
    assert LIB.sirenrt_filter_ess(f) == pytest.approx(n)   # resampled at the barrier
    assert ffi.string(LIB.sirenrt_filter_error(f)) == b""


def test_estimate_reports_needed_capacity():
    m = PyModel(conjugate_resume)
    f = ffi.gc(LIB.sirenrt_filter_new(m.model, 10, 0, ffi.NULL), LIB.sirenrt_filter_free)
    assert LIB.sirenrt_filter_run(f, ffi.NULL, 0, 0) == 0
    n = ffi.new("int64_t *")
    assert LIB.sirenrt_filter_estimate(f, ffi.NULL, 0, n) == 2 and n[0] == 1


def test_runtime_errors_are_rendered_not_raised():
    def bad_resume(ctx, frame, log_weight, rows):
        ffi.cast("double *", frame + 16)[0] = LIB.sirenrt_sample_gaussian(ctx, 0.0, -1.0, 0)
        return LIB.SIRENRT_FINISHED

    m = PyModel(bad_resume)
    f = ffi.gc(LIB.sirenrt_filter_new(m.model, 4, 0, ffi.NULL), LIB.sirenrt_filter_free)
    assert LIB.sirenrt_filter_run(f, ffi.NULL, 0, 0) != 0
    text = ffi.string(LIB.sirenrt_filter_error(f)).decode()
    assert text == ("py.si:2:5: error: gaussian: variance must be > 0, got -1\n"
                    "let x <- gaussian(0., 1.) in\n"
                    "    ^~~~")
    assert LIB.sirenrt_filter_step(f, ffi.new("double[]", 1), 1) != 0
    assert "cannot be run as a stream: no data" in ffi.string(LIB.sirenrt_filter_error(f)).decode()


def test_bad_model_is_refused_with_a_reason():
    m = PyModel(conjugate_resume)
    m.model.abi_version = 99
    assert LIB.sirenrt_filter_new(m.model, 4, 0, ffi.NULL) == ffi.NULL
    assert "ABI" in last_error()


def test_never_draws_must_be_a_flag():
    m = PyModel(conjugate_resume)
    m.model.never_draws = 2
    assert LIB.sirenrt_filter_new(m.model, 4, 0, ffi.NULL) == ffi.NULL
    assert "never_draws is 2, not 0 or 1" in last_error()


def _two_steps(draw):
    """Two resample() barriers, then the result: a draw after the first (`draw`) or a constant."""
    def resume(ctx, frame, log_weight, rows):
        pc, x = ffi.cast("int32_t *", frame), ffi.cast("double *", frame + 8)
        pc[0] += 1
        if pc[0] == 1:
            x[0] = LIB.sirenrt_sample_gaussian(ctx, 0.0, 1.0, 0) if draw else 0.25
            LIB.sirenrt_observe_gaussian(ctx, x[0], 1.0, 1.0, 0)
            return LIB.SIRENRT_AT_RESAMPLE
        if pc[0] == 2:
            x[0] += LIB.sirenrt_sample_gaussian(ctx, 0.0, 1.0, 0) if draw else 0.5
            return LIB.SIRENRT_AT_RESAMPLE
        ffi.cast("double *", frame + 16)[0] = x[0]
        return LIB.SIRENRT_FINISHED
    return resume


@pytest.mark.parametrize("draw", [False, True])
def test_never_draws_leaves_the_streams_unkeyed(draw):
    """The flag only skips rekeying the particles' streams at a resampling: the answers of a model
    that never draws are the same with it; a model that draws (and must not set it) sees it."""
    answers = []
    for flag in (0, 1):
        m = PyModel(_two_steps(draw))
        m.model.never_draws = flag
        f = ffi.gc(LIB.sirenrt_filter_new(m.model, 64, 5, ffi.NULL), LIB.sirenrt_filter_free)
        assert f != ffi.NULL and LIB.sirenrt_filter_run(f, ffi.NULL, 0, 0) == 0
        answers.append(estimate(f)[1][0])
    assert (answers[0] == answers[1]) != draw


# ---------------------------------------------------------------- the C ABI and filter() agree

@pytest.fixture(scope="module")
def tiny_model():
    import sirenc
    return sirenc.compile("let x <- gaussian(0., 1.) in x")


@pytest.mark.parametrize("threads, ess_threshold", [
    (1, 0.0), (256, 1.0), (3, 0.5),                             # accepted by both
    (0, 0.0), (-2, 0.0), (257, 0.0), (2**31 - 1, 0.0),          # threads outside [1, 256]
    (1, 5.0), (1, -0.5), (1, 1.0000001), (1, math.nan), (1, math.inf), (1, -math.inf),
])
def test_c_abi_refuses_exactly_what_filter_refuses(tiny_model, threads, ess_threshold):
    """Issue 11: sirenrt_filter_new accepted threads = 0 and ess_threshold = 5, which filter() refuses."""
    m = PyModel(conjugate_resume)
    opts = ffi.new("sirenrt_options *", {"resampler": 0, "ess_threshold": ess_threshold, "threads": threads})
    raw = LIB.sirenrt_filter_new(m.model, 10, 0, opts)
    c_accepts = raw != ffi.NULL
    LIB.sirenrt_filter_free(raw)
    try:
        tiny_model.filter(particles=10, threads=threads, ess_threshold=ess_threshold)
        python_accepts = True
    except SirenUsageError as exc:
        python_accepts = False
        option = "threads" if "threads" in exc.message else "ess_threshold"
        assert option in last_error() and last_error().startswith("sirenrt_filter_new: ")
    assert c_accepts == python_accepts, last_error()


def test_c_abi_and_filter_agree_on_the_memory_limit(tiny_model):
    """0 is the C encoding of filter()'s memory_limit=None (the default); a negative limit is refused
    by both; a limit too small for the particles' state is an argument error of both."""
    m = PyModel(conjugate_resume)
    for limit, accepted in ((0, True), (1 << 30, True), (-1, False), (100, False)):
        opts = ffi.new("sirenrt_options *", {"resampler": 0, "ess_threshold": 0.0, "threads": 1,
                                             "memory_limit": limit})
        raw = LIB.sirenrt_filter_new(m.model, 10, 0, opts)
        assert (raw != ffi.NULL) == accepted, last_error()
        LIB.sirenrt_filter_free(raw)
        if not accepted:
            assert last_error().startswith("sirenrt_filter_new: ")
            with pytest.raises(SirenUsageError, match="memory_limit|memory limit"):
                tiny_model.filter(particles=10, memory_limit=limit)
        else:
            tiny_model.filter(particles=10, memory_limit=limit or None)
