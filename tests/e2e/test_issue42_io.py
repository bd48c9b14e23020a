"""Issue 42: what sirenc reads back cannot hurt it, and what it writes never destroys a user's file.

Points 3 (output files), 5 (strict JSON, bounded history, memory sizes, out of memory), 6 (messages)
and 7 (the model.so's C ABI around sirenc_save).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import sirenc
import sirenc.data
from sirenc.arguments import memory_size
from sirenc.diagnostics import SirenDataError, SirenRuntimeError, SirenUsageError

ROOT = Path(__file__).resolve().parents[2]
WALK = ROOT / "examples" / "walk.si"


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sirenc.cli", *args], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


@pytest.fixture
def walk(tmp_path) -> Path:
    """A copy of examples/walk.si beside its walk.csv, in a folder of its own."""
    for name in ("walk.si", "walk.csv"):
        shutil.copy(ROOT / "examples" / name, tmp_path / name)
    return tmp_path / "walk.si"


# ------------------------------------------------------------------------------- 3. output files

@pytest.mark.parametrize("emit", [[], ["--emit=llvm"], ["--emit=ast"], ["--emit=obj"]])
@pytest.mark.parametrize("target", ["walk.si", "./walk.si", "walk.csv", "link.si"])
def test_output_never_overwrites_an_input(walk, emit, target):
    os.link(walk, walk.parent / "link.si")      # another name of the program: the same file
    before = {p.name: p.read_bytes() for p in walk.parent.iterdir()}
    r = cli("walk.si", "-o", target, *emit, cwd=walk.parent)
    assert r.returncode == 2, r.stderr
    assert "would overwrite" in r.stderr and "Traceback" not in r.stderr
    assert ("a data file of the program" in r.stderr) == (target == "walk.csv")
    assert {p.name: p.read_bytes() for p in walk.parent.iterdir()} == before


@pytest.mark.parametrize("stage, marker", [("ast", "Program(path="), ("siren", "builtin.module"),
                                           ("plan", "builtin.module"), ("llvm", "sirenc_model")])
def test_emit_writes_every_stage_to_the_output_file(walk, stage, marker):
    out = walk.parent / f"walk.{stage}"
    out.write_text("stale output\n")
    r = cli(str(walk), f"--emit={stage}", "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert r.stdout == ""
    assert marker in out.read_text() and "stale output" not in out.read_text()
    assert sorted(p.name for p in walk.parent.iterdir()) == sorted(["walk.si", "walk.csv", out.name])


@pytest.mark.parametrize("emit", [[], ["--emit=ast"], ["--emit=llvm"]])
def test_empty_output_name_is_a_usage_error(walk, emit):
    r = cli(str(walk), "-o", "", *emit)
    assert r.returncode == 2, r.stderr
    assert "-o needs a file name" in r.stderr
    assert r.stdout == ""


# ------------------------------------------------------------------------------- 5. formats and limits

def _refuse_constant(name):
    raise ValueError(f"not JSON: {name}")


def test_run_and_check_json_are_strict(tmp_path):
    prog = tmp_path / "inf.si"
    prog.write_text("let x <- gaussian(0., 1.) in (1e308 * 10., x)\n")
    r = cli("run", str(prog), "-p", "20", "--json", "--no-cache")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout, parse_constant=_refuse_constant)
    assert report["result"][0] is None and isinstance(report["result"][1], float)
    assert report["summary"][0]["mean"] is None
    r = cli("check", str(prog), "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout, parse_constant=_refuse_constant)["plan"] == {"x": "sample"}


def test_strict_json_refuses_what_it_does_not_know():
    from sirenc.cli.report import strict_json

    assert json.loads(strict_json({"a": [float("inf"), (float("nan"), 1.5)], "b": np.float64("-inf")}),
                      parse_constant=_refuse_constant) == {"a": [None, [None, 1.5]], "b": None}


def test_memory_error_is_an_out_of_memory_error(walk, monkeypatch, capsys):
    from sirenc import cli as sirenc_cli
    from sirenc.native_filter import Filter

    def summary(self, *args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(Filter, "summary", summary)
    assert sirenc_cli.main(["run", str(walk), "-p", "10", "--no-cache", "-q"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("sirenc: error: out of memory") and "use fewer particles" in err
    assert "internal compiler error" not in err


@pytest.mark.parametrize("text, size", [("9223372036854775807", 2**63 - 1), ("1.5K", 1536), ("2", 2),
                                        ("7.5G", 15 << 29), ("0.5K", 512)])
def test_memory_sizes_in_the_documented_range(text, size):
    assert memory_size(text) == size


@pytest.mark.parametrize("text, message", [("1.5", "whole number of bytes"), ("0.5", "whole number of bytes"),
                                           ("9223372036854775808", r"\[1, 2\*\*63\)"), ("0", r"\[1, 2\*\*63\)")])
def test_memory_sizes_refused(text, message):
    with pytest.raises(SirenUsageError, match=message):
        memory_size(text)


def test_largest_memory_limit_runs(walk):
    r = cli("run", str(walk), "-p", "10", "--memory-limit", "9223372036854775807", "--no-cache")
    assert r.returncode == 0, r.stderr
    r = cli("run", str(walk), "-p", "10", "--memory-limit", "1.5", "--no-cache")
    assert r.returncode == 2 and "--memory-limit must be a whole number of bytes" in r.stderr


def test_history_keeps_the_latest_barriers(walk):
    from sirenc.runtime import abi

    keep = abi.defines()["SIRENRT_HISTORY_ROWS"]
    assert keep == 2**20
    f = sirenc.compile(str(walk)).filter(particles=1, seed=3)
    rows = np.linspace(-1.0, 1.0, keep + 7).reshape(-1, 1)
    f.run(rows)
    h = f.history()
    assert len(h["ess"]) == keep and f.history_dropped == 7
    assert f.history_dropped_resampled == 7 and h["resampled"].all()   # threshold 0: every barrier
    assert h["log_evidence"][-1] == f.log_evidence
    # The increments still add up from the barrier before the first one kept.
    short = sirenc.compile(str(walk)).filter(particles=1, seed=3).run(rows[:8])
    assert np.isclose(h["log_evidence_increment"][0],
                      short.history()["log_evidence"][7] - short.history()["log_evidence"][6])
    assert short.history_dropped == 0 and len(short.history()["ess"]) == 8
    f.run(rows[:3])                                   # a new run starts a new history
    assert f.history_dropped == 0 and f.history_dropped_resampled == 0 and len(f.history()["ess"]) == 3


def test_verbose_counts_the_barriers_the_history_dropped(walk):
    keep = 2**20
    rows = walk.parent / "long.csv"
    header = (walk.parent / "walk.csv").read_text().splitlines()[0]
    rows.write_text(header + "\n" + "0.5\n" * (keep + 7))
    r = cli("run", str(walk), "-p", "1", "-v", "--data", str(rows), "--no-cache")
    assert r.returncode == 0, r.stderr
    line = next(l for l in r.stdout.splitlines() if "resample() steps" in l)
    assert line.startswith(f"{keep + 7} resample() steps, {keep + 7} resampled; ESS before resampling "
                           f"(the latest {keep}): min 1, median 1, last 1"), line


# ------------------------------------------------------------------------------- 7. the C ABI

EMBED_SAVE = r"""
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include "sirenrt.h"

int main(int argc, char **argv) {
  void *so = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!so) { printf("dlopen %s\n", dlerror()); return 1; }
  sirenrt_filter *(*new_)(int64_t, uint64_t, const sirenrt_options *) = dlsym(so, "sirenc_new");
  int32_t (*run)(sirenrt_filter *, const double *, int64_t, int64_t) = dlsym(so, "sirenc_run");
  int32_t (*step)(sirenrt_filter *, const double *, int64_t) = dlsym(so, "sirenc_step");
  int32_t (*save)(sirenrt_filter *, uint8_t **, int64_t *) = dlsym(so, "sirenc_save");
  const char *(*error)(const sirenrt_filter *) = dlsym(so, "sirenc_error");
  void (*buffer_free)(uint8_t *) = dlsym(so, "sirenc_buffer_free");
  printf("buffer_free %s\n", buffer_free ? "exported" : "missing");
  printf("runtime_buffer_free %s\n", dlsym(so, "sirenrt_buffer_free") ? "exported" : "hidden");
  sirenrt_filter *f = new_(10, 1, NULL);
  double row = 0.5;
  int32_t status = step(f, &row, -1); /* each call before its message: printf's arguments are unordered */
  printf("bad_step %d %s\n", status, error(f));
  status = save(f, NULL, NULL);
  printf("save_null %d %s\n", status, error(f));
  uint8_t *buf = NULL;
  status = save(f, &buf, NULL);
  printf("save_null_len %d %s\n", status, error(f));
  printf("step %d\n", step(f, &row, 1));
  int64_t n = 0;
  status = save(f, &buf, &n);
  printf("save %d %d\n", status, n > 0 && buf != NULL);
  if (buffer_free) buffer_free(buf);
  (void)run;
  return 0;
}
"""


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler")
def test_c_host_saves_and_frees_through_the_model(walk, tmp_path):
    from sirenc.runtime import include_dir

    so = tmp_path / "walk.so"
    r = cli(str(walk), "-o", str(so))
    assert r.returncode == 0, r.stderr
    (tmp_path / "host.c").write_text(EMBED_SAVE)
    subprocess.run(["cc", "-I", str(include_dir()), "-o", str(tmp_path / "host"), str(tmp_path / "host.c"), "-ldl"],
                   check=True)
    out = subprocess.run([str(tmp_path / "host"), str(so)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr
    lines = dict(line.split(" ", 1) for line in out.stdout.splitlines())
    assert lines["buffer_free"] == "exported"
    assert lines["runtime_buffer_free"] == "hidden"     # what the docs must not tell a host to call
    assert lines["bad_step"].startswith("1 ") and "bad row" in lines["bad_step"]
    assert lines["save_null"] == "1 error: sirenc_save: buf and len must not be NULL"
    assert lines["save_null_len"] == "1 error: sirenc_save: buf and len must not be NULL"
    assert lines["step"] == "0" and lines["save"] == "0 1"


# ------------------------------------------------------------------------------- 6. messages

def _program(tmp_path, path_literal: str) -> Path:
    prog = tmp_path / "reads.si"
    prog.write_text(f'val g = fun (r, a) -> a in\nfold(g, File.read("{path_literal}"), 0.)\n')
    return prog


def test_a_nul_in_a_data_path_is_refused_where_it_is(walk):
    prog = walk.parent / "nul.si"
    prog.write_bytes(b'val g = fun (r, a) -> a in\nfold(g, File.read("walk.csv\0x"), 0.)\n')
    r = cli("run", str(prog), "-p", "10", "--no-cache")
    assert r.returncode == 1
    assert r.stderr.startswith(f"{prog}:2:19: error: a file name cannot contain a NUL character"), r.stderr
    f = sirenc.compile(str(walk)).filter(particles=10)
    with pytest.raises(SirenUsageError, match="use_file needs a file name"):
        f.use_file(0, str(walk.parent / "walk.csv\0x"))
    with pytest.raises(SirenUsageError, match="no NUL"):
        sirenc.data.read_rows(str(walk.parent / "walk.csv\0x"))


def test_empty_file_name_and_directory(tmp_path):
    r = cli("run", str(_program(tmp_path, "")), "-p", "10", "--no-cache")
    assert r.returncode == 1 and ":2:19: error: a file name cannot be empty" in r.stderr, r.stderr
    (tmp_path / "folder").mkdir()
    r = cli("run", str(_program(tmp_path, "folder")), "-p", "10", "--no-cache")
    assert r.returncode == 1, r.stderr
    assert f"cannot read data file '{tmp_path / 'folder'}': it is a directory" in r.stderr
    assert "EiB" not in r.stderr


def test_a_fifo_is_refused_without_blocking(walk):
    fifo = walk.parent / "rows.csv"
    os.mkfifo(fifo)
    model = sirenc.compile(str(walk))
    with pytest.raises(SirenDataError, match="it is not a regular file"):
        model.filter(particles=10).use_file(0, fifo).run()
    with pytest.raises(SirenUsageError, match="it is not a regular file"):
        sirenc.data.read_rows(fifo)
    r = cli("run", str(walk), "-p", "10", "--data", str(fifo), "--no-cache")
    assert r.returncode == 2 and "it is not a regular file" in r.stderr


def test_data_errors_are_siren_data_errors(walk):
    bad = walk.parent / "bad.csv"
    bad.write_text("y\n1\nabc\n")
    model = sirenc.compile(str(walk))
    for path in (bad, walk.parent / "missing.csv"):
        with pytest.raises(SirenDataError) as info:
            model.filter(particles=10).use_file(0, path).run()
        assert isinstance(info.value, SirenRuntimeError)        # what `except SirenRuntimeError` caught before
    with pytest.raises(SirenRuntimeError) as info:
        sirenc.compile("let x <- gaussian(0., 1.) in List.hd(nil)").filter(particles=10).run()
    assert not isinstance(info.value, SirenDataError)


def test_bad_quantiles_are_usage_errors(walk):
    f = sirenc.compile(str(walk)).filter(particles=10).run()
    for bad in ("abc", [0.5, "x"], [[0.1, 0.2]]):
        with pytest.raises(SirenUsageError, match="quantiles must be"):
            f.summary(quantiles=bad)


def test_after_a_failed_run_estimate_names_the_failure():
    f = sirenc.compile("let x <- gaussian(0., 1.) in List.hd(nil)").filter(particles=10)
    with pytest.raises(SirenRuntimeError, match="List.hd of an empty list"):
        f.run()
    with pytest.raises(SirenRuntimeError, match="cannot be saved"):
        f.to_bytes()
    for call in (f.estimate, f.particles):
        with pytest.raises(SirenRuntimeError, match="List.hd of an empty list"):
            call()


@pytest.mark.parametrize("src, message", [
    ("M.x + 1", "unknown module 'M' (the library has List and File)"),
    ("let f = List.m in 1.", "unknown library function 'List.m'; did you mean 'List.map'?"),
    ("List.map(File.reed, [1.])", "unknown library function 'File.reed'; did you mean 'File.read'?"),
])
def test_an_uncalled_unknown_library_name_is_unknown(src, message):
    from sirenc.diagnostics import SirenNameError
    from sirenc.frontend.parsing import parse

    with pytest.raises(SirenNameError) as info:
        parse(src, "t.si")
    assert info.value.message == message
