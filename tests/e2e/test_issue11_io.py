"""Issue 11: nothing a user feeds sirenc takes the host down.

Output files are written through a renamed temporary file and never through a directory, a device
or a symbolic link; API and command-line misuse are clear errors (exit 2); one CSV reader (the C
runtime's) serves File.read and `sirenc run --data`, with one grammar; a JIT model's engine is freed
with the model and a rewritten model.so leaves no old copies behind.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import sirenc
import sirenc.data
from sirenc.diagnostics import SirenDataError, SirenUsageError

ROOT = Path(__file__).resolve().parents[2]
WALK = ROOT / "examples" / "walk.si"
TINY = "let x <- gaussian(0., 1.) in x"


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sirenc.cli", *args], capture_output=True, text=True)


# ------------------------------------------------------------------------------- 1. output files

def test_compile_output_refuses_a_directory(tmp_path):
    with pytest.raises(SirenUsageError, match="it is a directory"):
        sirenc.compile(TINY, output=tmp_path)
    with pytest.raises(SirenUsageError, match="it is a directory"):
        sirenc.compile("1.", output="/tmp")
    assert list(tmp_path.iterdir()) == []


def test_compile_output_refuses_devices_before_writing(monkeypatch):
    # The check comes before compiling and linking: nothing is ever opened for writing.
    import sirenc.backend.link as link

    monkeypatch.setattr(link, "link_shared", lambda *a, **k: pytest.fail("must not link"))
    for device in ("/dev/null", "/dev/full"):
        if not os.path.exists(device):
            continue
        with pytest.raises(SirenUsageError, match="not a regular file"):
            sirenc.compile(TINY, output=device)
        assert stat.S_ISCHR(os.stat(device).st_mode)


def test_compile_output_refuses_a_symlink_and_a_missing_folder(tmp_path):
    target = tmp_path / "target.so"
    target.write_bytes(b"keep me")
    link = tmp_path / "link.so"
    link.symlink_to(target)
    with pytest.raises(SirenUsageError, match="symbolic link"):
        sirenc.compile(TINY, output=link)
    assert target.read_bytes() == b"keep me" and link.is_symlink()
    with pytest.raises(SirenUsageError, match="does not exist"):
        sirenc.compile(TINY, output=tmp_path / "missing" / "model.so")
    assert not (tmp_path / "missing").exists()


def test_compile_output_replaces_a_regular_file(tmp_path):
    out = tmp_path / "model.so"
    out.write_bytes(b"old")
    model = sirenc.compile(TINY, output=out)
    assert out.read_bytes()[:4] == b"\x7fELF" and model.path == out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.so"]   # no temporary left over


@pytest.mark.parametrize("target, message", [
    ("{tmp}", "it is a directory"),
    ("/dev/null", "not a regular file"),
    ("/dev/full", "not a regular file"),
    ("{tmp}/missing/model.so", "does not exist"),
    ("{tmp}/link.so", "symbolic link"),
])
def test_cli_output_refusals_exit_2(tmp_path, target, message):
    if target.startswith("/dev/") and not os.path.exists(target):
        pytest.skip(f"no {target}")
    (tmp_path / "link.so").symlink_to(tmp_path / "elsewhere.so")
    for args in ([], ["--emit=llvm"]):
        r = cli(str(WALK), "-o", target.format(tmp=tmp_path), *args)
        assert r.returncode == 2, r.stderr
        assert message in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "elsewhere.so").exists()


def test_cli_output_writes_through_a_temporary_file(tmp_path):
    out = tmp_path / "walk.ll"
    out.write_text("old\n")
    r = cli(str(WALK), "--emit=llvm", "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert "sirenc_model" in out.read_text()
    r = cli(str(WALK), "-o", str(tmp_path / "walk.so"))
    assert r.returncode == 0, r.stderr
    assert os.access(tmp_path / "walk.so", os.X_OK)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["walk.ll", "walk.so"]


# ------------------------------------------------------------------------------- 2. misuse

@pytest.mark.parametrize("kwargs, message", [
    ({"particles": 2**63}, "particles must be an integer"),
    ({"particles": 2**64}, "particles must be an integer"),
    ({"particles": 2**31}, "particles must be an integer in \\[1, 2\\*\\*31\\)"),
    ({"particles": 2**31 - 1, "memory_limit": "64G"},
     "particles need [0-9.]+ GiB for their state .* more than the memory limit of 64.0 GiB"),
    ({"ess_threshold": None}, "ess_threshold must be a number"),
    ({"ess_threshold": "0.5"}, "ess_threshold must be a number"),
    ({"ess_threshold": float("nan")}, "ess_threshold must lie in"),
    ({"resampler": ["systematic"]}, "unknown resampler"),
])
def test_filter_misuse_is_a_usage_error(kwargs, message):
    model = sirenc.compile(TINY)
    with pytest.raises(SirenUsageError, match=message):
        model.filter(**kwargs)


@pytest.mark.parametrize("source, message", [
    (None, "not NoneType"),
    (b"1.", "not bytes"),
    (42, "not int"),
])
def test_compile_misuse_is_a_usage_error(source, message):
    with pytest.raises(SirenUsageError, match=message):
        sirenc.compile(source)


def test_load_misuse_is_a_usage_error():
    with pytest.raises(SirenUsageError, match="takes a path"):
        sirenc.load(None)


@pytest.mark.parametrize("args, message", [
    (["-p", "9223372036854775808"], "--particles must be an integer"),
    (["-p", "0"], "--particles must be an integer"),
    (["-p", "2147483648"], "--particles must be an integer in [1, 2**31)"),
    (["-p", str(2**31 - 1), "--memory-limit", "64G"], "more than the memory limit of"),
    (["--seed", "-1"], "--seed must be an integer"),
])
def test_cli_misuse_exits_2(args, message):
    r = cli("run", str(WALK), *args)
    assert r.returncode == 2 and message in r.stderr and "Traceback" not in r.stderr


def test_data_not_utf8_names_the_file(tmp_path):
    data = tmp_path / "latin1.csv"
    data.write_bytes(b"y\n1.0\n2,\xe9\n")
    r = cli("run", str(WALK), "--data", str(data), "-p", "10")
    assert r.returncode == 1, r.stderr
    assert r.stderr.startswith(f"{data}:3:3: error: the file is not UTF-8 text (byte 0xE9)\n2,\\xE9\n  ^~~~")


def test_data_file_missing_or_a_directory_exits_2(tmp_path):
    for path in (tmp_path / "missing.csv", tmp_path):
        r = cli("run", str(WALK), "--data", str(path))
        assert r.returncode == 2 and "cannot read data file" in r.stderr and str(path) in r.stderr


@pytest.mark.parametrize("threads", ["1", "4"])
def test_missing_data_file_of_a_streamed_fold_is_located(tmp_path, threads):
    """The common pattern, fold over File.read: sirenrt_stream_row reads file 0 from disk and
    reported a failure without a location; it now points at the File.read, with its line and a caret."""
    prog = tmp_path / "walk.si"
    source = WALK.read_text().replace('File.read("walk.csv")', 'File.read("missing.csv")')
    prog.write_text(source)
    line_no, line = next((i, l) for i, l in enumerate(source.splitlines(), 1) if "File.read" in l)
    col = line.index("File.read") + 1
    r = cli("run", str(prog), "-p", "5000", "--threads", threads)
    assert r.returncode == 1, r.stderr
    assert r.stderr == (f"{prog}:{line_no}:{col}: error: cannot read data file '{tmp_path / 'missing.csv'}': "
                        f"No such file or directory\n{line}\n{' ' * (col - 1)}^\n")


@pytest.mark.parametrize("rows, message", [
    ([[1.0], [2.0, 3.0]], "row 2 has 2 values and row 1 has 1 value;"),
    ([[1.0, 2.0], [3.0, 4.0], [5.0]], "row 3 has 1 value and row 1 has 2 values;"),
    ([(1.0,), ()], "row 2 has 0 values and row 1 has 1 value;"),
    ([np.array([1.0]), np.array([1.0, 2.0])], "row 2 has 2 values and row 1 has 1 value;"),
])
def test_run_with_ragged_rows_is_a_clear_usage_error(rows, message):
    """The CSV grammar allows rows of different lengths in a file; Filter.run takes a table, and
    says so (NumPy's 'inhomogeneous shape' message before)."""
    f = sirenc.compile(WALK).filter(particles=10)
    with pytest.raises(SirenUsageError, match=f"rows must be a table \\(n_rows x n_cols\\), but {message} "
                                              "rows of different lengths are read from a data file"):
        f.run(rows)
    assert f.run([[1.0], [2.0]]).estimate() == f.run(np.array([[1.0], [2.0]])).estimate()


def test_run_with_no_rows_is_a_file_with_only_its_header(tmp_path):
    data = tmp_path / "empty.csv"
    data.write_text("y\n")
    model = sirenc.compile(WALK)
    expected = sirenc.compile(WALK.read_text().replace("walk.csv", str(data))).filter(particles=10).run().estimate()
    assert model.filter(particles=10).run([]).estimate() == expected == 0.0
    assert model.filter(particles=10).run(()).estimate() == 0.0


def test_data_for_a_program_without_a_file_exits_2(tmp_path):
    prog = tmp_path / "p.si"
    prog.write_text(TINY + "\n")
    data = tmp_path / "d.csv"
    data.write_text("y\n1\n")
    r = cli("run", str(prog), "--data", str(data))
    assert r.returncode == 2 and "reads no file" in r.stderr


# ------------------------------------------------------------------------------- 3. one CSV reader

ROW_SUMS = """val add = fun (v, acc) -> v + acc in
val row_sum = fun row -> fold(add, row, 0.) in
List.map(row_sum, File.read("{path}"))
"""

GOOD = {
    "cr.csv": (b"y,z\r1,2\r3,4\r\r", [3.0, 7.0]),
    "crlf.csv": (b"y,z\r\n1,2\r\n3,4\r\n", [3.0, 7.0]),
    "mixed.csv": (b"y\n1\r\n2\r3\n\n  \n", [1.0, 2.0, 3.0]),
    "bom.csv": (b"\xef\xbb\xbfy\n5\n", [5.0]),
    "ragged.csv": (b"a,b,c\n1,2,3\n4\n5,6\n", [6.0, 4.0, 11.0]),
    "spaces.csv": (b"h\n 1e2 ,\t-inf\n", [-np.inf]),
}

BAD = {
    "underscore.csv": (b"y\n1_000\n", ":2:1: error: cannot parse '1_000' as a number"),
    "arabic.csv": ("y\n\u0663\n".encode(), ":2:1: error: cannot parse '\u0663' as a number"),
    "fullwidth.csv": ("y\n1,\uff12\n".encode(), ":2:3: error: cannot parse '\uff12' as a number"),
    "nul.csv": (b"y\n1,2\x00 3\n", ":2:3: error: cannot parse '2\\0 3' as a number\n1,2\\0 3\n  ^~~~~"),
    "empty_line.csv": (b"y\r1\r\r2\r", ":3:1: error: empty line"),
    "empty_field.csv": (b"y\n1,,2\n", ":2:3: error: empty field"),
    "hex.csv": (b"y\n0x10\n", ":2:1: error: cannot parse '0x10' as a number"),
}


def _file_read(path: Path) -> list[float]:
    model = sirenc.compile(ROW_SUMS.format(path=path))
    return list(model.filter(particles=2).run().estimate())


def _cli_data(path: Path) -> subprocess.CompletedProcess:
    # walk.si folds over the first column of its data: its estimate is finite for any good file.
    return cli("run", str(WALK), "--data", str(path), "-p", "20", "--json")


@pytest.mark.parametrize("name", sorted(GOOD))
def test_both_paths_read_the_same_good_files(tmp_path, name):
    text, sums = GOOD[name]
    path = tmp_path / name
    path.write_bytes(text)
    assert _file_read(path) == sums
    rows = sirenc.data.read_rows(path)
    assert [float(np.sum(r)) for r in rows] == sums
    r = _cli_data(path)
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("name", sorted(BAD))
def test_both_paths_reject_the_same_bad_files(tmp_path, name):
    text, message = BAD[name]
    path = tmp_path / name
    path.write_bytes(text)
    expected = f"{path}{message}"
    with pytest.raises(sirenc.SirenError) as e:
        _file_read(path)
    assert str(e.value).startswith(expected), str(e.value)
    with pytest.raises(SirenDataError) as e:
        sirenc.data.read_rows(path)
    assert str(e.value).startswith(expected)
    r = _cli_data(path)
    assert r.returncode == 1 and r.stderr.startswith(expected), r.stderr


def test_a_row_too_wide_is_reported_as_such(tmp_path):
    path = tmp_path / "wide.csv"
    path.write_bytes(b"h\n" + b"0," * (1 << 23) + b"0\n")
    with pytest.raises(SirenDataError, match=r":2:16777215: error: row too wide: more than 8388607 fields"):
        sirenc.data.read_rows(path)
    with pytest.raises(SirenDataError) as e:
        sirenc.data.read_rows(path)
    assert len(str(e.value)) < 400 and "\n...0,0," in str(e.value)   # the line is shown around the field


def test_read_csv_wants_rows_of_one_length(tmp_path):
    path = tmp_path / "ragged.csv"
    path.write_bytes(GOOD["ragged.csv"][0])
    with pytest.raises(SirenDataError, match="row 2 has 1 fields and row 1 has 3"):
        sirenc.data.read_csv(path)
    path.write_bytes(GOOD["cr.csv"][0])
    assert sirenc.data.read_csv(path).tolist() == [[1.0, 2.0], [3.0, 4.0]]


# ------------------------------------------------------------------------------- 4. JIT and copies

def test_a_jit_engine_is_freed_with_its_model():
    import gc

    model = sirenc.compile(TINY)
    jit = model._pin.keepalive
    f = model.filter(particles=3)
    del model
    gc.collect()
    assert jit.engine is not None          # a filter still uses the code
    f.run()
    del f
    gc.collect()
    assert jit.engine is None


def test_rewriting_a_model_so_keeps_no_old_copies(tmp_path, monkeypatch):
    import gc

    from sirenc import api

    cache = tmp_path / "cache"
    monkeypatch.setenv("SIRENC_CACHE_DIR", str(cache))
    out = tmp_path / "model.so"
    first = sirenc.compile("let x <- gaussian(0., 1.) in 1.", output=out)
    assert first.filter(particles=2).run().estimate() == 1.0
    for k in range(2, 6):
        model = sirenc.compile(f"let x <- gaussian(0., 1.) in {k}.", output=out)
        assert model.filter(particles=2).run().estimate() == float(k)
    assert first.filter(particles=2).run().estimate() == 1.0   # the first is still loaded and usable
    assert not cache.exists() or [p for p in cache.iterdir() if p.name.startswith("load_")] == []
    stale = api._loaded[str(out.resolve())]
    del model, first
    gc.collect()
    assert api._loaded[str(out.resolve())] is stale and stale.lib is not None   # the current one stays
