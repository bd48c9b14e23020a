"""Progress of long runs (issue 12, item 3): the runtime's hook, the Python API's ``progress=``,
and the bar of ``sirenc run`` on a terminal (and its silence elsewhere)."""

from __future__ import annotations

import io
import os
import pty
import select
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import sirenc
from markers import needs_runtime, needs_tools
from sirenc.progress import Progress, ProgressBar, describe

ROOT = Path(__file__).resolve().parents[2]
WALK = ROOT / "examples" / "walk.si"        # 100 rows, one resample() per row


def test_describe_shows_steps_particles_rate_and_eta():
    p = Progress(steps=25, total=100, particles=1000, elapsed=0.5, done=False)
    assert p.rate == 50.0 and p.eta == 1.5
    text = describe(p, width=90)
    assert len(text) <= 90
    assert "[" in text and "25/100 steps" in text and "1000 particles" in text
    assert "50 steps/s" in text and "ETA 00:02" in text
    assert text.count("=") == (text.index("]") - text.index("[") - 1) // 4
    unknown = describe(Progress(7, None, 10, 2.0, False), width=90)
    assert "7 steps" in unknown and "ETA" not in unknown and "[" not in unknown
    assert len(describe(p, width=30)) <= 30


def test_the_bar_waits_redraws_in_place_and_is_erased():
    out = io.StringIO()
    bar = ProgressBar(out, delay=1.0)
    bar(Progress(1, 10, 5, 0.5, False))
    assert out.getvalue() == ""                      # a short run leaves no trace
    bar(Progress(2, 10, 5, 1.5, False))
    bar(Progress(3, 10, 5, 2.0, False))
    assert out.getvalue().count("\r") == 2 and "3/10 steps" in out.getvalue()
    bar(Progress(10, 10, 5, 2.5, True))
    assert out.getvalue().endswith("\r\x1b[K")


@needs_runtime
def test_a_callback_sees_every_step_and_the_end():
    model = sirenc.compile(WALK)
    reports: list[Progress] = []
    f = model.filter(particles=300, seed=1)
    f.run(progress=reports.append, progress_interval=0)
    assert [p.steps for p in reports[:-1]] == list(range(1, 101))
    assert all(p.total == 100 and p.particles == 300 for p in reports)
    assert not any(p.done for p in reports[:-1]) and reports[-1].done and reports[-1].steps == 100
    assert all(a.elapsed <= b.elapsed for a, b in zip(reports, reports[1:]))
    # The same answers as without a hook; a second run counts from zero again.
    with_hook = f.estimate(), f.log_evidence
    plain = model.filter(particles=300, seed=1).run()
    assert (plain.estimate(), plain.log_evidence) == with_hook
    again: list[Progress] = []
    f.run(progress=again.append, progress_interval=0)
    assert again[0].steps == 1 and (f.estimate(), f.log_evidence) == with_hook


@needs_runtime
def test_reports_are_rate_limited():
    reports: list[Progress] = []
    sirenc.compile(WALK).filter(particles=50).run(progress=reports.append, progress_interval=3600)
    assert [(p.steps, p.done) for p in reports] == [(1, False), (100, True)]


@needs_runtime
def test_rows_given_to_run_are_the_total():
    reports: list[Progress] = []
    rows = np.linspace(0, 1, 40).reshape(40, 1)
    sirenc.compile(WALK).filter(particles=50).run(rows, progress=reports.append, progress_interval=0)
    assert reports[-1].steps == 40 and {p.total for p in reports} == {40}


@needs_runtime
def test_an_exception_in_the_callback_stops_the_run_and_comes_out():
    f = sirenc.compile(WALK).filter(particles=100)

    def stop(p):
        if p.steps == 10:
            raise KeyboardInterrupt

    seen: list[int] = []
    with pytest.raises(KeyboardInterrupt):
        f.run(progress=lambda p: (seen.append(p.steps), stop(p)), progress_interval=0)
    assert seen[-1] == 10                     # stopped at once
    assert np.isfinite(f.run().estimate())   # and the filter runs again, without the hook


@needs_runtime
@pytest.mark.parametrize("bad", [1, "yes", object()])
def test_a_bad_progress_argument_is_a_usage_error(bad):
    f = sirenc.compile(WALK).filter(particles=10)
    with pytest.raises(sirenc.SirenUsageError, match="progress"):
        f.run(progress=bad)
    with pytest.raises(sirenc.SirenUsageError, match="progress_interval"):
        f.run(progress=lambda p: None, progress_interval=-1)


@needs_runtime
@needs_tools("cc")
def test_a_model_so_reports_progress_too(tmp_path):
    model = sirenc.compile(WALK, output=tmp_path / "walk.so")
    reports: list[Progress] = []
    model.filter(particles=20).run(progress=reports.append, progress_interval=0)
    assert reports[-1].done and reports[-1].steps == 100


@needs_runtime
def test_progress_true_draws_on_standard_error(monkeypatch, capsys):
    monkeypatch.setenv("SIRENC_PROGRESS_DELAY", "0")
    sirenc.compile(WALK).filter(particles=20).run(progress=True, progress_interval=0)
    err = capsys.readouterr().err
    assert "/100 steps" in err and "20 particles" in err and err.endswith("\r\x1b[K")


# ------------------------------------------------------------------------------- the CLI

def cli(*args, tty: bool):
    """``sirenc ARGS`` with standard error on a pseudo-terminal (tty) or a pipe: (status, out, err)."""
    env = dict(os.environ, SIRENC_PROGRESS_DELAY="0",
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    argv = [sys.executable, "-m", "sirenc", *map(str, args)]
    if not tty:
        r = subprocess.run(argv, capture_output=True, env=env)
        return r.returncode, r.stdout.decode(), r.stderr.decode()
    leader, follower = pty.openpty()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=follower, env=env)
    os.close(follower)
    err = b""
    while True:
        ready, _, _ = select.select([leader], [], [], 60)
        if not ready:
            break
        try:
            chunk = os.read(leader, 65536)
        except OSError:          # EIO: the other end is closed
            break
        if not chunk:
            break
        err += chunk
    out = proc.stdout.read().decode()
    status = proc.wait(timeout=60)
    os.close(leader)
    return status, out, err.decode()


@needs_runtime
def test_the_cli_draws_a_bar_on_a_terminal():
    status, out, err = cli("run", WALK, "-p", "20000", tty=True)
    assert status == 0, err
    assert "sirenc run [" in err and "/100 steps" in err and "20000 particles" in err and "steps/s" in err
    assert err.endswith("\r\x1b[K")                  # erased: the report stands alone
    assert "===== Result =====" in out and "steps" not in out


@needs_runtime
@pytest.mark.parametrize("how", ["quiet", "piped"])
def test_the_cli_is_quiet_off_a_terminal_or_when_asked(how):
    status, out, err = cli("run", WALK, "-p", "20000", *(["--quiet"] if how == "quiet" else []),
                           tty=how == "quiet")
    assert status == 0, err
    assert "steps" not in err and "\r" not in err
    assert "===== Result =====" in out


@needs_runtime
def test_a_stopped_filter_alive_at_exit_does_not_crash(tmp_path):
    # Interpreter exit finalises objects in no particular order; a JIT model's engine was once
    # disposed before a filter whose destructor reads the model's descriptor (a segfault, 139).
    script = tmp_path / "exit.py"
    script.write_text(
        "import sirenc\n"
        f"m = sirenc.compile({str(WALK)!r})\n"
        "f = m.filter(particles=200)\n"
        "def stop(p):\n"
        "    if p.steps > 10: raise KeyError('stop')\n"
        "try:\n"
        "    f.run(progress=stop, progress_interval=0)\n"
        "except KeyError:\n"
        "    print('stopped')\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env)
    assert r.returncode == 0 and r.stdout == "stopped\n", (r.returncode, r.stderr)


@needs_runtime
def test_ctrl_c_stops_a_long_run_at_once(tmp_path):
    import signal
    import time

    (tmp_path / "walk.si").write_text(WALK.read_text())
    (tmp_path / "walk.csv").write_text("y\n" + "0.5\n" * 50000)    # a run of a minute or more
    env = dict(os.environ, SIRENC_PROGRESS_DELAY="0",
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    leader, follower = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "sirenc", "run", str(tmp_path / "walk.si"), "-p", "100000"],
                            stdout=subprocess.PIPE, stderr=follower, env=env)
    os.close(follower)
    err = b""
    try:
        while b"steps" not in err:                        # the run has started: the bar is drawn
            ready, _, _ = select.select([leader], [], [], 120)
            assert ready, "no progress bar within 120 s"
            err += os.read(leader, 65536)
        proc.send_signal(signal.SIGINT)
        sent = time.monotonic()
        while proc.poll() is None and time.monotonic() - sent < 30:   # drain: a full pty blocks it
            ready, _, _ = select.select([leader], [], [], 0.1)
            if ready:
                try:
                    err += os.read(leader, 65536)
                except OSError:
                    break
        status = proc.wait(timeout=30)
        waited = time.monotonic() - sent
        try:
            while chunk := os.read(leader, 65536):
                err += chunk
        except OSError:
            pass
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(leader)
    text = err.decode()
    assert status == 130 and "\r\x1b[Ksirenc: interrupted" in text     # the bar erased first
    assert "Traceback" not in text and waited < 10
    assert proc.stdout.read() == b""                       # no report for a run that did not finish


def test_off_a_terminal_the_cli_still_installs_a_hook_so_ctrl_c_works():
    from types import SimpleNamespace

    from sirenc.cli.runs import progress_bar

    for quiet in (True, False):     # under pytest standard error is not a terminal
        hook = progress_bar(SimpleNamespace(quiet=quiet))
        assert callable(hook) and not isinstance(hook, ProgressBar)
        assert hook(Progress(1, 2, 3, 0.1, False)) is None
