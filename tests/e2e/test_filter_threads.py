"""One filter used from two threads at once (issue 42, item 4): cffi lets go of the GIL in C
calls, so both threads could be inside the runtime on one population. A filter refuses the
second thread with a SirenUsageError, and the first goes on to the right answers.

The hammering runs in a child interpreter: were the refusal missing, the crash would take down
that process, not the test session."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from markers import needs_runtime

pytestmark = needs_runtime

ROOT = Path(__file__).resolve().parents[2]

HAMMER = textwrap.dedent("""
    import json, sys, threading
    import numpy as np
    import sirenc
    from sirenc.diagnostics import SirenUsageError

    backend = sys.argv[1]
    model = sirenc.compile(sys.argv[2], method="pf", backend=backend)
    rows = np.loadtxt(sys.argv[3], delimiter=",", skiprows=1, ndmin=2)
    reference = model.filter(particles=500, seed=7).run(rows)
    expected = float(reference.estimate()), float(reference.log_evidence)
    f = model.filter(particles=500, seed=7)
    first_run, done = threading.Event(), threading.Event()
    refused, wrong = {"runner": 0, "reader": 0}, []

    def runner():
        try:
            runs = 0
            while runs < 40:
                try:
                    f.run(rows)
                    runs += 1
                except SirenUsageError as e:
                    assert "in use by another thread" in e.message, e.message
                    refused["runner"] += 1
                first_run.set()
        finally:
            first_run.set()
            done.set()

    def reader():
        first_run.wait()
        while not done.is_set():
            for call in (f.estimate, f.particles, f.history, f.to_bytes, f.summary):
                try:
                    out = call()
                except SirenUsageError as e:
                    assert "in use by another thread" in e.message, e.message
                    refused["reader"] += 1
                    continue
                if call is f.estimate and out != expected[0]:
                    wrong.append(f"estimate {out} != {expected[0]}")

    threads = [threading.Thread(target=runner), threading.Thread(target=reader)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(json.dumps({"refused": refused, "wrong": wrong, "got": [float(f.estimate()), float(f.log_evidence)],
                      "expected": expected}))
""")


@pytest.mark.parametrize("backend", ["native", "jax"])
def test_a_filter_refuses_a_second_thread(backend, tmp_path):
    (tmp_path / "walk.si").write_text((ROOT / "benchmarks" / "models" / "walk" / "model.si").read_text())
    data = ROOT / "benchmarks" / "models" / "walk" / "data.csv"
    (tmp_path / "data.csv").write_text(data.read_text())
    out = subprocess.run([sys.executable, "-c", HAMMER, backend, str(tmp_path / "walk.si"), str(data)],
                         capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    report = json.loads(out.stdout)
    assert report["wrong"] == []
    assert report["refused"]["reader"] > 0          # the reader met the runner inside
    assert report["got"] == list(report["expected"])


@pytest.mark.parametrize("backend", ["native", "jax"])
def test_close_from_another_thread_is_refused_while_in_use(backend):
    import threading

    import numpy as np

    import sirenc
    from sirenc.diagnostics import SirenUsageError

    folder = ROOT / "benchmarks" / "models" / "walk"
    model = sirenc.compile(folder / "model.si", method="pf", backend=backend)
    rows = np.loadtxt(folder / "data.csv", delimiter=",", skiprows=1, ndmin=2)
    f = model.filter(particles=50, seed=1)
    seen = []

    def close_elsewhere():
        try:
            f.close()
            seen.append("closed")
        except SirenUsageError as e:
            seen.append(e.message)

    def progress(report):      # called inside run(), on the running thread
        if not seen:
            other = threading.Thread(target=close_elsewhere)
            other.start()
            other.join()
    f.run(rows, progress=progress)
    assert seen and "in use by another thread" in seen[0]
    assert not f.closed and np.isfinite(f.log_evidence)
    worker = threading.Thread(target=lambda: f.step(rows[0]))     # one thread after another is fine
    worker.start()
    worker.join()
    assert np.isfinite(f.estimate())
    f.close()
    assert f.closed
