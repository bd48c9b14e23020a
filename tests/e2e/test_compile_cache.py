"""The compile cache of ``sirenc run`` (issue 12, item 7): an unchanged program is loaded, not
compiled; anything the code depends on changes the key; the folder stays bounded."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from markers import needs_runtime, needs_tools

ROOT = Path(__file__).resolve().parents[2]
WALK_SI = (ROOT / "examples" / "walk.si").read_text()

pytestmark = [needs_runtime, needs_tools("cc")]

# Runs `sirenc ARGS` in a fresh interpreter and reports which heavy modules it imported.
PROBE = """\
import sys
from sirenc.cli import main
status = main(sys.argv[1:])
print("LOADED", *sorted(m for m in ("xdsl", "llvmlite") if m in sys.modules), file=sys.stderr)
sys.exit(status)
"""


@pytest.fixture
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("SIRENC_CACHE_DIR", str(folder))
    monkeypatch.delenv("SIRENC_CACHE_MAX_BYTES", raising=False)
    return folder


@pytest.fixture
def program(tmp_path):
    shutil.copy(ROOT / "examples" / "walk.csv", tmp_path / "walk.csv")
    path = tmp_path / "walk.si"
    path.write_text(WALK_SI)
    return path


def sirenc(*args, cwd=None):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    r = subprocess.run([sys.executable, "-c", PROBE, *map(str, args)], capture_output=True, text=True,
                       cwd=cwd, env=env)
    loaded = next(line for line in r.stderr.splitlines() if line.startswith("LOADED")).split()[1:]
    r.stderr = "\n".join(line for line in r.stderr.splitlines() if not line.startswith("LOADED"))
    return r, loaded


def result(stdout: str) -> str:
    lines = stdout.splitlines()
    return lines[lines.index("===== Result =====") + 1]


def entries(cache: Path) -> list[str]:
    folder = cache / "run"
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


def test_a_repeated_run_loads_the_compiled_program(cache, program):
    first, loaded = sirenc("run", program, "-p", "200", "-v")
    assert first.returncode == 0, first.stderr
    assert "xdsl" in loaded                                  # compiled
    assert [Path(n).suffix for n in entries(cache)] == [".json", ".so"]
    again, loaded = sirenc("run", program, "-p", "200", "-v")
    assert again.returncode == 0, again.stderr
    assert loaded == []                                      # neither xDSL nor LLVM: loaded
    assert again.stdout.replace(_block(again.stdout, "Evaluation Time"), "") == \
        first.stdout.replace(_block(first.stdout, "Evaluation Time"), "")
    fresh, loaded = sirenc("run", program, "-p", "200", "-v", "--no-cache")
    assert "llvmlite" in loaded and result(fresh.stdout) == result(first.stdout)


def _block(stdout: str, name: str) -> str:
    lines = stdout.splitlines()
    return lines[lines.index(f"===== {name} =====") + 1]


def test_no_cache_writes_nothing(cache, program):
    r, _ = sirenc("run", program, "-p", "50", "--no-cache")
    assert r.returncode == 0, r.stderr
    assert entries(cache) == []


def test_what_changes_the_code_changes_the_key(cache, program, tmp_path):
    assert sirenc("run", program, "-p", "50")[0].returncode == 0
    assert len(entries(cache)) == 2
    for options in (["-m", "pf", "--no-check"], ["--max-rvs", "3"], ["--analysis-budget", "50000"]):
        r, loaded = sirenc("run", program, "-p", "50", *options)
        assert r.returncode == 0 and "xdsl" in loaded, (options, r.stderr)
    program.write_text(WALK_SI.replace("gaussian(x1, 0.5)", "gaussian(x1, 0.25)"))
    r, loaded = sirenc("run", program, "-p", "50")
    assert r.returncode == 0 and "xdsl" in loaded
    # The same text elsewhere reads its own walk.csv: the folder is part of the key.
    other = tmp_path / "other"
    other.mkdir()
    (other / "walk.csv").write_text("y\n3.0\n")      # posterior mean 3 / 1.25 = 2.4
    (other / "walk.si").write_text(program.read_text())
    r, loaded = sirenc("run", other / "walk.si", "-p", "50")
    assert r.returncode == 0 and "xdsl" in loaded and 1.5 < float(result(r.stdout)) < 3.5
    assert len(entries(cache)) == 2 * 6
    # Runtime options do not change the code.
    r, loaded = sirenc("run", program, "-p", "70", "--seed", "4", "--resampler", "residual")
    assert r.returncode == 0 and loaded == []


def test_data_is_read_afresh_and_its_path_is_keyed(cache, program, tmp_path):
    data = tmp_path / "rows.csv"
    data.write_text("y\n1.0\n")                      # posterior mean 1 / 1.5
    r, _ = sirenc("run", program, "-p", "100", "--data", data)
    assert r.returncode == 0, r.stderr
    near_one = float(result(r.stdout))
    data.write_text("y\n3.0\n")
    r, loaded = sirenc("run", program, "-p", "100", "--data", data)
    assert loaded == [] and float(result(r.stdout)) > near_one + 1    # same entry, new contents
    moved = tmp_path / "moved.csv"
    moved.write_text("y\n-3.0\n")
    r, loaded = sirenc("run", program, "-p", "100", "--data", moved)
    assert "xdsl" in loaded and float(result(r.stdout)) < near_one - 1


def test_warnings_and_errors_survive_a_hit(cache, tmp_path):
    path = tmp_path / "bad.si"
    path.write_text("val unused = fun x -> x in\nlet x <- gaussian(0., -1.) in\nx\n")
    for expect_compile in (True, False):
        r, loaded = sirenc("run", path, "-p", "10", "-W", "unused")
        assert ("xdsl" in loaded) == expect_compile
        assert r.returncode == 1
        assert "function 'unused' is never called" in r.stderr
        assert f"{path}:2:10: error:" in r.stderr and "gaussian(0., -1.)" in r.stderr
        assert "Traceback" not in r.stderr


def test_a_damaged_entry_is_rebuilt(cache, program):
    first, _ = sirenc("run", program, "-p", "50")
    for name in entries(cache):
        (cache / "run" / name).write_bytes(b"garbage")
    r, loaded = sirenc("run", program, "-p", "50")
    assert r.returncode == 0 and "xdsl" in loaded, r.stderr
    assert result(r.stdout) == result(first.stdout)
    assert sirenc("run", program, "-p", "50")[1] == []


def test_the_folder_is_bounded_least_recently_used_first(cache, program, monkeypatch):
    assert sirenc("run", program, "-p", "10")[0].returncode == 0
    one_entry = sum((cache / "run" / n).stat().st_size for n in entries(cache))
    monkeypatch.setenv("SIRENC_CACHE_MAX_BYTES", str(int(2.5 * one_entry)))
    for variance in ("0.25", "0.125"):
        program.write_text(WALK_SI.replace("gaussian(x1, 0.5)", f"gaussian(x1, {variance})"))
        assert sirenc("run", program, "-p", "10")[0].returncode == 0
    assert len(entries(cache)) == 4        # the first entry, the least recently used, went
    program.write_text(WALK_SI)
    assert "xdsl" in sirenc("run", program, "-p", "10")[1]
    monkeypatch.setenv("SIRENC_CACHE_MAX_BYTES", "0")
    assert sirenc("run", program, "-p", "10")[1] == []     # a hit evicts nothing
    assert len(entries(cache)) == 4
    program.write_text(WALK_SI.replace("gaussian(x1, 0.5)", "gaussian(x1, 2.)"))
    assert sirenc("run", program, "-p", "10")[0].returncode == 0
    assert len(entries(cache)) == 2        # the entry just made stays, alone
    assert sirenc("run", program, "-p", "10")[1] == []
    monkeypatch.setenv("SIRENC_CACHE_MAX_BYTES", "lots")
    program.write_text(WALK_SI.replace("gaussian(x1, 0.5)", "gaussian(x1, 3.)"))
    r, _ = sirenc("run", program, "-p", "10")
    assert r.returncode == 2 and "SIRENC_CACHE_MAX_BYTES" in r.stderr and "Traceback" not in r.stderr


def test_the_compiler_identity_covers_sources_and_runtime(tmp_path):
    from sirenc.compile_cache import identity_of

    package = tmp_path / "sirenc"
    shutil.copytree(ROOT / "sirenc", package, ignore=shutil.ignore_patterns("__pycache__", "_rt"))
    lib = tmp_path / "libsirenrt.a"
    lib.write_bytes(b"runtime")
    before = identity_of("0.1.0", package, [lib])
    assert identity_of("0.1.0", package, [lib]) == before
    assert identity_of("0.2.0", package, [lib]) != before
    (package / "frontend" / "parser.py").write_text((package / "frontend" / "parser.py").read_text() + "#\n")
    edited = identity_of("0.1.0", package, [lib])
    assert edited != before
    lib.write_bytes(b"runtime, rebuilt")
    assert identity_of("0.1.0", package, [lib]) != edited


def test_an_unwritable_cache_folder_warns_and_runs_without_it(tmp_path, monkeypatch, program):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("SIRENC_CACHE_DIR", str(blocker / "cache"))
    r, loaded = sirenc("run", program, "-p", "10")
    assert r.returncode == 0 and "llvmlite" in loaded, r.stderr
    assert "warning: the compile cache is not usable" in r.stderr and "--no-cache" in r.stderr
    assert "Traceback" not in r.stderr
    fresh, _ = sirenc("run", program, "-p", "10", "--no-cache")
    assert fresh.returncode == 0 and fresh.stderr == "" and result(fresh.stdout) == result(r.stdout)


def test_a_failed_link_warns_and_runs_without_the_cache(cache, program, tmp_path, monkeypatch):
    fake = tmp_path / "fakecc"
    fake.write_text("#!/bin/sh\necho 'fakecc: cannot link' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("CC", str(fake))
    r, _ = sirenc("run", program, "-p", "10")
    assert r.returncode == 0 and "compile cache is not usable" in r.stderr and "fakecc" in r.stderr
    assert entries(cache) == []


# -- what is read back cannot hurt (issue 42) -----------------------------------------------------

PLANTED_C = """\
#include <stdio.h>
__attribute__((constructor)) static void planted(void) {
    FILE *f = fopen("%s", "w");
    if (f) { fputs("the planted library ran\\n", f); fclose(f); }
}
"""


def _entry(cache: Path, suffix: str) -> Path:
    (name,) = [n for n in entries(cache) if n.endswith(suffix)]
    return cache / "run" / name


def _planted_library(tmp_path: Path) -> tuple[Path, Path]:
    marker = tmp_path / "planted-ran"
    source = tmp_path / "planted.c"
    source.write_text(PLANTED_C % marker)
    library = tmp_path / "planted.so"
    subprocess.run([os.environ.get("CC", "cc"), "-shared", "-fPIC", "-o", library, source], check=True)
    return library, marker


def test_a_planted_library_is_never_loaded(cache, program, tmp_path):
    first, _ = sirenc("run", program, "-p", "50")
    assert first.returncode == 0, first.stderr
    library, marker = _planted_library(tmp_path)
    shutil.copy(library, _entry(cache, ".so"))
    r, loaded = sirenc("run", program, "-p", "50")
    assert not marker.exists()
    assert r.returncode == 0 and "xdsl" in loaded, r.stderr
    assert "warning: the compile cache entry" in r.stderr and "removed" in r.stderr
    assert result(r.stdout) == result(first.stdout)
    again, loaded = sirenc("run", program, "-p", "50")
    assert loaded == [] and again.stderr == ""


def test_another_programs_entry_under_the_key_is_not_used(cache, program, tmp_path):
    mine, _ = sirenc("run", program, "-p", "50")
    so, meta = _entry(cache, ".so"), _entry(cache, ".json")
    other = tmp_path / "other"
    other.mkdir()
    (other / "walk.csv").write_text("y\n30.0\n")
    (other / "walk.si").write_text(WALK_SI)
    theirs, _ = sirenc("run", other / "walk.si", "-p", "50")
    assert abs(float(result(theirs.stdout)) - float(result(mine.stdout))) > 5
    their_meta, their_so = [cache / "run" / n for n in entries(cache) if not n.startswith(so.stem)]
    for planted in ((their_so, their_meta), (their_so, None)):    # the whole entry, or its library
        shutil.copy(planted[0], so)
        if planted[1] is not None:
            shutil.copy(planted[1], meta)
        r, loaded = sirenc("run", program, "-p", "50")
        assert r.returncode == 0 and "xdsl" in loaded, r.stderr
        assert result(r.stdout) == result(mine.stdout)


def test_a_truncated_entry_is_compiled_again(cache, program):
    first, _ = sirenc("run", program, "-p", "50")
    so = _entry(cache, ".so")
    so.write_bytes(so.read_bytes()[: so.stat().st_size // 2])
    r, loaded = sirenc("run", program, "-p", "50")
    assert r.returncode == 0 and "xdsl" in loaded, r.stderr
    assert "warning: the compile cache entry" in r.stderr
    assert result(r.stdout) == result(first.stdout)
    assert sirenc("run", program, "-p", "50")[0].returncode == 0


def test_entries_are_private(cache, program):
    old = os.umask(0o002)      # a umask that leaves files group-writable
    try:
        assert sirenc("run", program, "-p", "10")[0].returncode == 0
    finally:
        os.umask(old)
    assert (cache / "run").stat().st_mode & 0o077 == 0
    for name in entries(cache):
        assert (cache / "run" / name).stat().st_mode & 0o077 == 0, name


def test_a_folder_others_can_write_is_emptied_and_made_private(cache, program, tmp_path):
    first, _ = sirenc("run", program, "-p", "50")
    library, marker = _planted_library(tmp_path)
    shutil.copy(library, _entry(cache, ".so"))
    (cache / "run").chmod(0o777)
    r, loaded = sirenc("run", program, "-p", "50")
    assert not marker.exists()
    assert r.returncode == 0 and "xdsl" in loaded, r.stderr
    assert "writable by others" in r.stderr
    assert (cache / "run").stat().st_mode & 0o777 == 0o700
    assert result(r.stdout) == result(first.stdout)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="giving a folder away needs root")
def test_a_folder_of_another_user_is_not_used(cache, program, tmp_path):
    (cache / "run").mkdir(parents=True, mode=0o700)
    os.chown(cache / "run", 65534, 65534)
    r, loaded = sirenc("run", program, "-p", "10")
    assert r.returncode == 0 and "llvmlite" in loaded, r.stderr
    assert "belongs to another user" in r.stderr and "Traceback" not in r.stderr
    assert entries(cache) == []
