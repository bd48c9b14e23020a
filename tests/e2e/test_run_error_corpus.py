"""Run-time and data errors: each `tests/errors/run_*.si` program fails when run,
with the location and message its first line names:

    # EXPECT-RUN: <file relative to tests/errors>:<line>:<col>: <message substring>

The error comes back through the ABI status as `sirenc.SirenRuntimeError`, and
from the command line as a diagnostic with exit status 1; the host never dies.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import sirenc
from markers import needs_runtime

ERRORS = Path(__file__).resolve().parents[1] / "errors"
CASES = sorted(p for p in ERRORS.glob("*.si") if p.read_text().startswith("# EXPECT-RUN:"))


def expectation(path: Path):
    spec = path.read_text().splitlines()[0].removeprefix("# EXPECT-RUN:").strip()
    where, line, col, message = spec.split(":", 3)
    return str((ERRORS / where).resolve()), int(line), int(col), message.strip()


def test_corpus_is_large_enough():
    assert len(CASES) >= 15


@needs_runtime
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_api_reports_the_error_at_its_source(path, threads):
    where, line, col, message = expectation(path)
    model = sirenc.compile(str(path), method="pf")
    f = model.filter(particles=5000, seed=0, threads=threads)
    with pytest.raises(sirenc.SirenRuntimeError) as info:
        f.run()
    text = str(info.value)
    first = text.splitlines()[0]
    assert os.path.realpath(first.split(":")[0]) == where, text
    assert first.split(":")[1:3] == [str(line), str(col)], text
    assert ": error: " in first and message in first, text
    assert "^" in text.splitlines()[2], text


@needs_runtime
@pytest.mark.parametrize("path", CASES[:4], ids=lambda p: p.stem)
def test_cli_exits_1_without_traceback(path):
    r = subprocess.run([sys.executable, "-m", "sirenc.cli", "run", str(path), "-p", "10"],
                       capture_output=True, text=True)
    assert r.returncode == 1
    assert "Traceback" not in r.stderr and ": error: " in r.stderr


def test_malformed_data_given_on_the_command_line(tmp_path):
    rows = tmp_path / "rows.csv"
    rows.write_text("y\n1.0\nabc\n")
    r = subprocess.run([sys.executable, "-m", "sirenc.cli", "run", str(ERRORS.parent.parent / "examples" / "walk.si"),
                        "--data", str(rows)], capture_output=True, text=True)
    assert r.returncode == 1
    assert r.stderr.startswith(f"{rows}:3:1: error: cannot parse 'abc' as a number")
    ragged = tmp_path / "ragged.csv"
    ragged.write_text("a,b\n1,2\n3\n")
    from sirenc.data import read_csv
    from sirenc.diagnostics import SirenDataError

    with pytest.raises(SirenDataError, match="row 2 has 1 fields and row 1 has 2"):
        read_csv(str(ragged))
