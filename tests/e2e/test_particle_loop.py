"""The particle loop compiled next to each model (``sirenrt_span_fn``, sirenrt.h): the runtime runs
the common case of its pass through it, with ``@siren_resume`` inlined.  It must change no answer:
the same descriptor without it (the runtime's own loop) gives the same numbers bit for bit, for a
model that draws (streams rekeyed at every resampling), one that draws three normals a step (the
third finds fewer than two words buffered: the loop's inline draw leaves it to the runtime), one on
tier 2 that never draws, one whose weights become zero, one whose particles stop at resample() a
different number of times (some finish while others wait at a barrier: the loop must read their
states), and one that carries lists (where the runtime keeps the loop).  And a filter run again
gives its first run's numbers."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import sirenc
from sirenc.native_filter import CompiledModelError
from sirenc.runtime.ffi import ffi, runtime_lib

ROOT = Path(__file__).resolve().parents[2]
WALK = (ROOT / "benchmarks" / "models" / "walk" / "model.si").read_text()

PROGRAMS = {
    "draws": ("pf", WALK),
    "three draws": ("pf", WALK.replace("let () = observe(gaussian(x1, 0.5), y) in",
                                       "let a <- gaussian(0., 1.) in\n  let b <- gaussian(0., 2.) in\n"
                                       "  let () = observe(gaussian(x1 + 0.1 * a - 0.1 * b, 0.5), y) in")),
    "tier 2": ("ssi", WALK.replace("let x1 <- gaussian", "let symbolic x1 <- gaussian")),
    # a particle whose draw falls below -1 gets weight zero (its context is flagged)
    "zero weights": ("pf", WALK.replace("let () = resample() in",
                                        "let () = if x1 < -1. then observe(bernoulli(0.), true) else () in\n"
                                        "  let () = resample() in")),
    # a particle whose draw is above 2 skips that step's resample(): the particles drift apart, and
    # some finish while others stop at resample() (a barrier of mixed states)
    "uneven": ("pf", WALK.replace("let () = resample() in", "let () = if 2. < x1 then () else resample() in")),
    "lists": ("pf", WALK.replace("fold(step, List.map(first, File.read(\"data.csv\")), 0.)",
                                 "val keep = fun (y, xs) -> step(y, List.hd(xs)) :: xs in\n"
                                 "List.hd(fold(keep, List.map(first, File.read(\"data.csv\")), [0.]))")),
}


def _new_filter(descriptor, threads: int):
    rt = runtime_lib()
    opts = ffi.new("sirenrt_options *", {"resampler": 0, "ess_threshold": 0.0, "threads": threads,
                                         "memory_limit": 0})
    f = rt.sirenrt_filter_new(descriptor, 3001, 11, opts)
    assert f != ffi.NULL, ffi.string(rt.sirenrt_last_error()).decode()
    return f


def _run(f, rows: np.ndarray) -> tuple:
    """The estimate, the log evidence and the barriers' history (ESS and log evidence at each) of a
    run of filter f on the rows."""
    rt = runtime_lib()
    data = ffi.cast("const double *", ffi.from_buffer(rows))
    assert rt.sirenrt_filter_run(f, data, rows.shape[0], rows.shape[1]) == 0, \
        ffi.string(rt.sirenrt_filter_error(f)).decode()
    out, n = ffi.new("double[1]"), ffi.new("int64_t *")
    assert rt.sirenrt_filter_estimate(f, out, 1, n) == 0 and n[0] == 1
    ess, evidence = ffi.new("double[1000]"), ffi.new("double[1000]")
    assert rt.sirenrt_filter_history(f, ess, evidence, ffi.NULL, ffi.NULL, 1000, n) == 0
    return out[0], rt.sirenrt_filter_log_evidence(f), list(ess[0:n[0]]), list(evidence[0:n[0]])


def _run_fails(f, rows: np.ndarray) -> str:
    """The error of a run of filter f on the rows, which must fail."""
    rt = runtime_lib()
    assert rt.sirenrt_filter_run(f, ffi.cast("const double *", ffi.from_buffer(rows)), rows.shape[0], 1) != 0
    return ffi.string(rt.sirenrt_filter_error(f)).decode()


def _answers(descriptor, rows: np.ndarray, threads: int) -> tuple:
    """_run on a fresh filter."""
    f = _new_filter(descriptor, threads)
    try:
        return _run(f, rows)
    finally:
        runtime_lib().sirenrt_filter_free(f)


def _compiled(method: str, source: str, tmp_path: Path):
    """The program compiled in tmp_path next to the walk's data: the model, its descriptor, the rows."""
    (tmp_path / "data.csv").write_text((ROOT / "benchmarks" / "models" / "walk" / "data.csv").read_text())
    path = tmp_path / "m.si"
    path.write_text(source)
    model = sirenc.compile(str(path), method=method)
    rows = np.loadtxt(tmp_path / "data.csv", delimiter=",", skiprows=1, ndmin=2)
    return model, ffi.cast("const sirenrt_model *", model._pin.keepalive.model_address), rows


@pytest.mark.parametrize("case", PROGRAMS)
def test_the_compiled_loop_changes_no_answer(case, tmp_path):
    model, compiled, rows = _compiled(*PROGRAMS[case], tmp_path)
    if case == "tier 2":
        assert model.info["tier"] == 2
    assert compiled.resume_span != ffi.NULL
    without = ffi.new("sirenrt_model *", compiled[0])
    without.resume_span = ffi.NULL
    for threads in (1, 3):
        got, expected = _answers(compiled, rows, threads), _answers(without, rows, threads)
        barriers = len(got[2])  # one a row, but where particles skip resample() (fewer then)
        assert np.isfinite(got[:2]).all() and (barriers == rows.shape[0] or case == "uneven" and barriers > 0)
        assert got == expected, f"{case}, {threads} threads"


@pytest.mark.parametrize("case", PROGRAMS)
def test_a_filter_run_again_gives_the_same_answers(case, tmp_path):
    """A run starts the population afresh.  The contexts of particles that ran on the loop's lanes
    and were never handed back are not written again (sirenrt_filter.ctx_clean); those a run wrote
    (zero weights, a stream's waiting particles, the runtime's own loop) are reset.  Either way a
    second run of the same filter, and a run after a stream or after a failed run, give a fresh
    filter's numbers."""
    rt = runtime_lib()
    _, compiled, rows = _compiled(*PROGRAMS[case], tmp_path)
    fresh = _answers(compiled, rows, 1)
    f = _new_filter(compiled, 1)
    try:
        assert _run(f, rows) == fresh
        assert _run(f, rows) == fresh, "run again"
        for r in range(10):  # a stream: its particles wait for rows, handed back by the loop
            assert rt.sirenrt_filter_step(f, ffi.cast("const double *", ffi.from_buffer(rows[r])), 1) == 0
        assert _run(f, rows) == fresh, "run after a stream"
        bad = rows.copy()
        bad[5, 0] = np.nan  # observe(gaussian(x1, 0.5), nan): every weight becomes NaN, the run fails
        _run_fails(f, bad)
        assert _run(f, rows) == fresh, "run after a failed run"
    finally:
        rt.sirenrt_filter_free(f)


def test_a_run_after_particles_failed_reports_no_old_error(tmp_path):
    """Particles whose resume failed keep the error in their contexts until the next run resets
    them: a run after it, whose particles are flagged again (zero weights), must not find it."""
    rt = runtime_lib()
    source = PROGRAMS["zero weights"][1].replace(
        "let () = resample() in",
        "let () = if 100. < y then observe(gaussian(x1, -1.), y) else () in\n  let () = resample() in", 1)
    _, compiled, rows = _compiled("pf", source, tmp_path)
    fresh = _answers(compiled, rows, 1)
    f = _new_filter(compiled, 1)
    try:
        bad = rows.copy()
        bad[5, 0] = 1000.0  # every particle fails: gaussian's variance -1
        assert "variance must be > 0" in _run_fails(f, bad)
        assert _run(f, rows) == fresh
    finally:
        rt.sirenrt_filter_free(f)


@pytest.mark.parametrize("last, message", [
    ("let () = observe(bernoulli(0.), true) in\nr", "all particles have zero weight"),
    ("let s <- gaussian(r, -1.) in\ns", "gaussian: variance must be > 0, got -1"),
])
def test_what_particles_record_as_they_finish_is_reported(last, message, tmp_path):
    """The last pass of a run hands every particle back to the runtime as it finishes; one that
    finished with nothing flagged leaves its lane unread.  A zero weight or an error recorded in that
    last step flags the particle: it is read, and reported at its site."""
    source = WALK.replace('fold(step, List.map(first, File.read("data.csv")), 0.)',
                          'let r = fold(step, List.map(first, File.read("data.csv")), 0.) in\n' + last)
    model, _, _ = _compiled("pf", source, tmp_path)
    f = model.filter(particles=300, seed=1)
    for _ in range(2):  # and again: the first run's contexts were left as they were
        with pytest.raises(CompiledModelError, match=message) as e:
            f.run()
        assert "m.si:18:10" in str(e.value)


def test_an_mh_chain_never_runs_the_loop(tmp_path):
    """The loop draws its standard normals inline, past the MH trace's hook: a chain run through it
    would record no site and propose every state afresh from the prior."""
    rt = runtime_lib()
    _, compiled, rows = _compiled("pf", WALK, tmp_path)
    without = ffi.new("sirenrt_model *", compiled[0])
    without.resume_span = ffi.NULL
    rows = rows[:20]
    data = ffi.cast("const double *", ffi.from_buffer(rows))

    def chain(descriptor) -> tuple:
        mh = ffi.new("sirenrt_mh_options *", {"samples": 50, "warmup": 0, "thinning": 1})
        f = rt.sirenrt_filter_new_mh(descriptor, 7, mh, ffi.NULL)
        assert f != ffi.NULL, ffi.string(rt.sirenrt_last_error()).decode()
        try:
            assert rt.sirenrt_filter_run(f, data, rows.shape[0], 1) == 0, \
                ffi.string(rt.sirenrt_filter_error(f)).decode()
            out = ffi.new("double[1]")
            n, made, accepted = (ffi.new("int64_t *") for _ in range(3))
            assert rt.sirenrt_filter_estimate(f, out, 1, n) == 0
            assert rt.sirenrt_mh_stats(f, made, accepted) == 0
            return out[0], made[0], accepted[0]
        finally:
            rt.sirenrt_filter_free(f)

    got = chain(compiled)
    assert got == chain(without) and got[2] > 0


def test_the_loop_is_in_the_emitted_code(tmp_path, capsys):
    from sirenc.cli import main

    (tmp_path / "data.csv").write_text("y\n1.\n")
    (tmp_path / "m.si").write_text(WALK)
    assert main([str(tmp_path / "m.si"), "--emit=llvm"]) == 0
    text = capsys.readouterr().out
    assert "define internal i64 @siren_resume.span(ptr" in text
    assert re.search(r"ptr @siren_resume\.span, ptr null, ptr @sirenc_model\.str\.\d+, ptr null }", text)
    # then frame_result_type, result_names, var_sites
    # The loop runs a copy of the resume whose standard normal draws are inline; the descriptor's
    # resume, which an MH chain runs, still draws through the runtime.
    resume, copy, draw = (text.split(f"define internal {definition}(")[1].split("\n}")[0]
                          for definition in ("i32 @siren_resume", "i32 @siren_resume.inline_draws",
                                             "double @siren_std_normal.inline"))
    assert "call double @sirenrt_std_normal(" in resume and "@siren_std_normal.inline(" not in resume
    assert "call double @siren_std_normal.inline(" in copy and "@sirenrt_std_normal(" not in copy
    assert "call i32 @siren_resume.inline_draws(" in text.split("@siren_resume.span(ptr")[1]
    assert "@sirenrt_zig_x_scaled" in draw and "call double @sirenrt_std_normal(" in draw
