"""Checkpoints: a filter saved mid-stream and restored (here or in a new process) goes on
exactly as one that never stopped; pickling works; foreign, truncated and damaged
checkpoints are refused with a message saying which."""

from __future__ import annotations

import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import sirenc
from sirenc.diagnostics import SirenUsageError
from markers import needs_runtime, needs_tools

pytestmark = needs_runtime

# A trajectory (shared lists across barriers), a sampled parameter and an ESS threshold.
SOURCE = """
val step = fun (row, (xs, s)) ->
  let y = List.hd(row) in
  let x <- gaussian(List.hd(xs) + s, 1.) in
  let () = observe(gaussian(x, 0.5), y) in
  let () = resample() in
  (cons(x, xs), s)
in
let s <- gaussian(0., 0.1) in
let (xs, s) = fold(step, File.read("d.csv"), ([0.], s)) in
(List.rev(xs), s)
"""
ROWS = np.random.default_rng(5).normal(size=(80, 1)).cumsum(axis=0)


@pytest.fixture
def model(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d.csv").write_text("y\n0\n")
    (tmp_path / "m.si").write_text(SOURCE)
    return sirenc.compile(str(tmp_path / "m.si"), method="pf")


def fingerprint(f):
    xs, s = f.estimate()
    return [float(v).hex() for v in xs] + [float(s).hex(), float(f.log_evidence).hex(), float(f.ess).hex()]


def stream(f, rows):
    for r in rows:
        f.step(r)
    return f


def test_resumed_in_a_new_process_is_bit_identical(model, tmp_path):
    whole = stream(model.filter(particles=300, seed=9, ess_threshold=0.5), ROWS)
    half = stream(model.filter(particles=300, seed=9, ess_threshold=0.5), ROWS[:40])
    half.save(tmp_path / "half.ckpt")
    np.save(tmp_path / "rest.npy", ROWS[40:])
    script = textwrap.dedent(f"""
        import json, numpy as np, sirenc
        model = sirenc.compile({str(tmp_path / "m.si")!r}, method="pf")
        f = sirenc.Filter.load(model, {str(tmp_path / "half.ckpt")!r}, threads=2)
        for r in np.load({str(tmp_path / "rest.npy")!r}):
            f.step(r)
        xs, s = f.estimate()
        print(json.dumps([float(v).hex() for v in xs] + [float(s).hex(), float(f.log_evidence).hex(),
                                                         float(f.ess).hex()]))
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    import json
    assert json.loads(out.stdout) == fingerprint(whole)


def test_pickle_round_trip_and_saving_leaves_the_filter_alone(model):
    whole = stream(model.filter(particles=200, seed=1), ROWS)
    f = stream(model.filter(particles=200, seed=1), ROWS[:30])
    copy = pickle.loads(pickle.dumps(f))
    assert fingerprint(stream(copy, ROWS[30:])) == fingerprint(whole)
    assert fingerprint(stream(f, ROWS[30:])) == fingerprint(whole)


def test_a_model_compiled_from_a_relative_path_pickles_with_its_filters(model, tmp_path):
    # The model pickles as its absolute path, whose sites name the file differently: the same
    # program all the same (the fingerprint leaves out where the source lay).
    relative = sirenc.compile("m.si", method="pf")
    f = stream(relative.filter(particles=100, seed=3), ROWS[:25])
    g = pickle.loads(pickle.dumps(f))
    assert fingerprint(stream(g, ROWS[25:])) == fingerprint(stream(relative.filter(particles=100, seed=3), ROWS))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "m.si").write_text(SOURCE)
    (elsewhere / "d.csv").write_text("y\n0\n")
    moved = sirenc.Filter.load(sirenc.compile(elsewhere / "m.si", method="pf"), f.to_bytes())
    assert fingerprint(stream(moved, ROWS[25:])) == fingerprint(g)


def test_a_finished_run_restores_its_answer(model):
    f = model.filter(particles=100, seed=2).run(ROWS)
    g = sirenc.Filter.load(model, f.to_bytes())
    assert fingerprint(g) == fingerprint(f)


def test_foreign_truncated_and_damaged_checkpoints_are_refused(model, tmp_path):
    data = stream(model.filter(particles=50, seed=0), ROWS[:10]).to_bytes()
    other = sirenc.compile(SOURCE.replace("0.5", "0.25"), method="pf")
    with pytest.raises(SirenUsageError, match="another model"):
        sirenc.Filter.load(other, data)
    with pytest.raises(SirenUsageError, match="truncated|damaged"):
        sirenc.Filter.load(model, data[: len(data) // 2])
    damaged = bytearray(data)
    damaged[len(data) // 3] ^= 0x40
    with pytest.raises(SirenUsageError, match="damaged"):
        sirenc.Filter.load(model, bytes(damaged))
    with pytest.raises(SirenUsageError, match="not a sirenc checkpoint"):
        sirenc.Filter.load(model, b"#!/bin/sh\necho hello\n" * 4)
    with pytest.raises(SirenUsageError, match="cannot read checkpoint"):
        sirenc.Filter.load(model, tmp_path / "missing.ckpt")
    with pytest.raises(SirenUsageError, match="bytes or a path"):
        sirenc.Filter.load(model, 42)


def test_a_failed_filter_cannot_be_saved(model):
    bad = sirenc.compile("let x <- gaussian(0., -1.) in x", method="pf").filter(particles=5)
    with pytest.raises(sirenc.SirenRuntimeError):
        bad.run()
    with pytest.raises(sirenc.SirenRuntimeError, match="failed cannot be saved"):
        bad.to_bytes()


@needs_tools("cc")
def test_a_model_so_saves_and_loads_through_its_own_exports(model, tmp_path):
    so = sirenc.compile(str(tmp_path / "m.si"), method="pf", output=tmp_path / "m.so")
    whole = stream(so.filter(particles=100, seed=4), ROWS)
    f = stream(so.filter(particles=100, seed=4), ROWS[:20])
    g = pickle.loads(pickle.dumps(f))      # reloads m.so by its path
    assert fingerprint(stream(g, ROWS[20:])) == fingerprint(whole)


# -- pickles carry the program, not a path to load (issue 42) -------------------------------------

PLANTED_C = """\
#include <stdio.h>
__attribute__((constructor)) static void planted(void) {
    FILE *f = fopen("%s", "w");
    if (f) { fputs("the planted library ran\\n", f); fclose(f); }
}
"""


@needs_tools("cc")
def test_a_model_so_pickles_as_its_library_not_its_path(model, tmp_path):
    so = sirenc.compile(str(tmp_path / "m.si"), method="pf", output=tmp_path / "m.so")
    whole = stream(so.filter(particles=100, seed=4), ROWS)
    blob = pickle.dumps(stream(so.filter(particles=100, seed=4), ROWS[:20]))
    # What now lies at the path runs code when loaded: the pickle does not load it.
    marker = tmp_path / "planted-ran"
    (tmp_path / "planted.c").write_text(PLANTED_C % marker)
    (tmp_path / "m.so").unlink()
    subprocess.run(["cc", "-shared", "-fPIC", "-o", tmp_path / "m.so", tmp_path / "planted.c"], check=True)
    script = textwrap.dedent(f"""
        import pickle, sys
        import numpy as np
        f = pickle.loads(open({str(tmp_path / "f.pickle")!r}, "rb").read())
        for r in np.load({str(tmp_path / "rest.npy")!r}):
            f.step(r)
        xs, s = f.estimate()
        print([float(v).hex() for v in xs] + [float(s).hex(), float(f.log_evidence).hex(), float(f.ess).hex()])
    """)
    (tmp_path / "f.pickle").write_bytes(blob)
    np.save(tmp_path / "rest.npy", ROWS[20:])
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == str(fingerprint(whole))
    assert not marker.exists()


@needs_tools("cc")
def test_a_damaged_pickled_library_is_refused(model, tmp_path):
    so = sirenc.compile(str(tmp_path / "m.si"), method="pf", output=tmp_path / "m.so")
    library = (tmp_path / "m.so").read_bytes()
    blob = bytearray(pickle.dumps(so))
    at = blob.find(library[4096:4160]) + 32
    blob[at] ^= 0xFF
    with pytest.raises(SirenUsageError, match="damaged: its library does not match its SHA-256"):
        pickle.loads(bytes(blob))


def test_a_jit_model_pickles_as_its_program_text(model, tmp_path):
    whole = stream(model.filter(particles=100, seed=6), ROWS)
    blob = pickle.dumps(stream(model.filter(particles=100, seed=6), ROWS[:30]))
    (tmp_path / "m.si").write_text(SOURCE.replace("gaussian(x, 0.5)", "gaussian(x, 5.)"))   # edited since
    g = pickle.loads(blob)
    assert fingerprint(stream(g, ROWS[30:])) == fingerprint(whole)


@needs_tools("cc")
def test_filters_of_a_model_so_go_through_multiprocessing(model, tmp_path):
    import multiprocessing

    so = sirenc.compile(str(tmp_path / "m.si"), method="pf", output=tmp_path / "m.so")
    halves = [stream(so.filter(particles=100, seed=k), ROWS[:20]) for k in range(2)]
    (tmp_path / "m.so").unlink()      # the workers need no file: the pickles carry the library
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        answers = pool.map_async(_finish, halves).get(timeout=300)
    assert answers == [fingerprint(stream(h, ROWS[20:])) for h in halves]


def _finish(f):
    return fingerprint(stream(f, ROWS[20:]))
