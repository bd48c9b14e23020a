"""The command line's rough edges (issue 12, item 7): version, ``python -m sirenc``, one default
method, binary output kept off terminals, a short CSV row named in the error."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
import tomllib
from pathlib import Path


import sirenc
from markers import needs_runtime

ROOT = Path(__file__).resolve().parents[2]
WALK = ROOT / "examples" / "walk.si"
PYPROJECT_VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


def run(*args, stdout=subprocess.PIPE, cwd=None):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, *map(str, args)], stdout=stdout, stderr=subprocess.PIPE,
                          cwd=cwd, env=env)


def test_version_is_pyprojects():
    assert sirenc.__version__ == PYPROJECT_VERSION
    for module in ("sirenc", "sirenc.cli"):
        r = run("-m", module, "--version")
        assert r.returncode == 0, r.stderr
        assert r.stdout.decode().strip() == f"sirenc {PYPROJECT_VERSION}"


def test_python_dash_m_sirenc_is_the_command():
    r = run("-m", "sirenc", "check", WALK)
    assert r.returncode == 0, r.stderr
    assert r.stdout.decode().strip() == "x1: sample"
    assert run("-m", "sirenc").returncode == 2      # usage error, as `sirenc` with no file


def test_every_command_defaults_to_the_same_method():
    from sirenc.cli import COMMANDS
    from sirenc.cli.options import compile_options
    from sirenc.methods import DEFAULT

    # `sirenc tune` compares methods: without -m it tries them all (docs/tune.md).
    options = [compile_options, *(make for name, (make, _) in COMMANDS.items() if name != "tune")]
    assert {make().parse([str(WALK)]).method for make in options} == {DEFAULT}
    checked = json.loads(run("-m", "sirenc", "check", WALK, "--json").stdout)
    assert checked["method"] == DEFAULT


@needs_runtime
def test_run_and_check_agree_without_m():
    ran = json.loads(run("-m", "sirenc", "run", WALK, "-p", "10", "--json").stdout)
    checked = json.loads(run("-m", "sirenc", "check", WALK, "--json").stdout)
    assert ran["method"] == checked["method"] == "pf"
    assert ran["inferred_plan"] == checked["plan"]


def test_emit_obj_refuses_a_terminal():
    leader, follower = pty.openpty()
    try:
        r = run("-m", "sirenc", WALK, "--emit=obj", stdout=follower)
        os.close(follower)
        follower = None
        written = b""
        try:
            while chunk := os.read(leader, 4096):
                written += chunk
        except OSError:     # EIO: the terminal's other end is closed
            pass
    finally:
        os.close(leader)
        if follower is not None:
            os.close(follower)
    assert r.returncode == 2
    message = r.stderr.decode()
    assert "terminal" in message and "-o FILE" in message and "Traceback" not in message
    assert b"ELF" not in written


def test_emit_obj_goes_to_a_pipe_and_a_file(tmp_path):
    r = run("-m", "sirenc", WALK, "--emit=obj")
    assert r.returncode == 0, r.stderr
    assert r.stdout[:4] == b"\x7fELF"
    r = run("-m", "sirenc", WALK, "--emit=obj", "-o", tmp_path / "walk.o")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "walk.o").read_bytes() == run("-m", "sirenc", WALK, "--emit=obj").stdout


@needs_runtime
def test_a_csv_row_with_a_missing_column_is_named(tmp_path):
    (tmp_path / "d.csv").write_text("a,b\n1,2\n3\n5,6\n")
    (tmp_path / "m.si").write_text(
        "val f = fun (row, acc) -> acc + List.hd(List.tl(row)) in\nfold(f, File.read(\"d.csv\"), 0.)\n")
    r = run("-m", "sirenc", "run", tmp_path / "m.si", "-p", "5")
    message = r.stderr.decode()
    assert r.returncode == 1, message
    assert "m.si:1:33: error: List.hd of an empty list" in message
    assert f"data file {tmp_path / 'd.csv'}, data row 2 (line 3) has 1 field(s) where other rows have 2" \
        in message
    assert "Traceback" not in message
    # An even file gets no note: the empty list is the program's own.
    (tmp_path / "d.csv").write_text("a\n1\n3\n")
    r = run("-m", "sirenc", "run", tmp_path / "m.si", "-p", "5")
    assert r.returncode == 1 and "note:" not in r.stderr.decode()
