"""Plots of a run (issue 12, item 2): ``sirenc run --plot`` and ``sirenc.plot``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import sirenc
from markers import needs_module, needs_runtime

ROOT = Path(__file__).resolve().parents[2]
WALK = ROOT / "examples" / "walk.si"          # streamable, 100 rows
PNG = b"\x89PNG\r\n\x1a\n"
NOT_STREAMABLE = ("let x <- gaussian(0., 1.) in let () = observe(gaussian(x, 1.), 2.) in "
                  "let () = resample() in (x, [x, 2. * x])")

pytestmark = [needs_runtime]


def sirenc_cli(*args, without_matplotlib=False):
    hide = "sys.modules['matplotlib'] = None; " if without_matplotlib else ""
    code = f"import sys; {hide}from sirenc.cli import main; sys.exit(main(sys.argv[1:]))"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True,
                          env=env)


def result(stdout: str) -> str:
    lines = stdout.splitlines()
    return lines[lines.index("===== Result =====") + 1]


@needs_module("matplotlib")
def test_run_plot_writes_a_png_and_the_same_report(tmp_path):
    out = tmp_path / "walk.png"
    plotted = sirenc_cli("run", WALK, "-p", "300", "--seed", "5", "--plot", out)
    assert plotted.returncode == 0, plotted.stderr
    assert out.read_bytes().startswith(PNG) and out.stat().st_size > 10_000
    plain = sirenc_cli("run", WALK, "-p", "300", "--seed", "5")
    assert result(plotted.stdout) == result(plain.stdout)       # stepping gives the run's answer
    assert sorted(p.name for p in tmp_path.iterdir()) == ["walk.png"]   # no temporary left


@needs_module("matplotlib")
def test_record_keeps_every_step_of_a_streamable_run(tmp_path):
    from sirenc import plot

    f = sirenc.compile(WALK).filter(particles=400, seed=2)
    history = plot.record(f)
    plain = sirenc.compile(WALK).filter(particles=400, seed=2).run()
    assert history.final == plain.estimate() and f.log_evidence == plain.log_evidence
    assert history.estimate.shape == (100, 1) and history.labels == ["result"]
    # the summaries' means are the estimates (up to rounding), inside their 90% bands
    assert history.estimate[-1, 0] == pytest.approx(history.final, rel=1e-12)
    assert history.lower.shape == history.upper.shape == (100, 1)
    assert np.all((history.lower <= history.estimate) & (history.estimate <= history.upper))
    assert np.all(history.upper - history.lower > 0)
    assert len(history.ess) == len(history.log_evidence) == 100
    assert np.all((history.ess > 0) & (history.ess <= 400)) and history.ess.min() < 400
    assert history.log_evidence[-1] == pytest.approx(plain.log_evidence, rel=1e-12)
    assert np.all(np.diff(history.log_evidence) < 0)     # each Gaussian observation costs evidence
    plot.save(history, tmp_path / "walk.png", title="walk")
    assert (tmp_path / "walk.png").read_bytes().startswith(PNG)


@needs_module("matplotlib")
def test_a_program_that_is_not_streamable_still_plots(tmp_path):
    from sirenc import plot

    history = plot.record(sirenc.compile(NOT_STREAMABLE).filter(particles=500))
    assert history.estimate is None and len(history.ess) == 1 and history.ess[0] < 500
    assert plot.components(history.final) == [("result.0", history.final[0]),
                                              ("result.1[-1]", history.final[1][-1])]
    plot.save(history, tmp_path / "one.png")
    assert (tmp_path / "one.png").read_bytes().startswith(PNG)


def test_without_matplotlib_the_error_says_what_to_install(tmp_path, monkeypatch):
    r = sirenc_cli("run", WALK, "-p", "10", "--plot", tmp_path / "walk.png", without_matplotlib=True)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "matplotlib" in r.stderr and "sirenc[plot]" in r.stderr
    assert "=====" not in r.stdout and not (tmp_path / "walk.png").exists()   # refused before running
    from sirenc import plot
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(sirenc.SirenUsageError, match=r"sirenc\[plot\]"):
        plot.require_matplotlib()


@needs_module("matplotlib")
def test_a_plot_that_cannot_be_written_is_refused_before_running(tmp_path):
    r = sirenc_cli("run", WALK, "-p", "10", "--plot", tmp_path / "missing" / "walk.png")
    assert r.returncode == 2 and "does not exist" in r.stderr and "=====" not in r.stdout
    r = sirenc_cli("run", WALK, "-p", "10", "--plot", tmp_path)
    assert r.returncode == 2 and "directory" in r.stderr
