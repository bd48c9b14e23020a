"""A compiled model finds its data at run time: Filter.use_file (sirenc_set_file in the C ABI)
reads a data file from another path than the one compiled in."""

from __future__ import annotations

import shutil

import pytest

import sirenc
from sirenc.diagnostics import SirenRuntimeError, SirenUsageError
from markers import needs_runtime, needs_tools

pytestmark = needs_runtime

SOURCE = """
val add = fun (row, acc) -> acc + List.hd(row) in
(fold(add, File.read("a.csv"), 0.), List.len(File.read("b.csv")))
"""


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.csv").write_text("y\n1\n2\n")
    (tmp_path / "b.csv").write_text("y\n1\n")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "a2.csv").write_text("y\n10\n20\n30\n")
    (tmp_path / "elsewhere" / "b2.csv").write_text("y\n1\n1\n1\n1\n")
    (tmp_path / "m.si").write_text(SOURCE)
    return tmp_path


def test_use_file_by_name_and_index(folder):
    f = sirenc.compile(str(folder / "m.si")).filter(particles=3)
    assert f.run().estimate() == (3.0, 1.0)
    f.use_file("a.csv", folder / "elsewhere" / "a2.csv").use_file(1, "elsewhere/b2.csv")
    assert f.run().estimate() == (60.0, 4.0)
    f.use_file(str(folder / "a.csv"), folder / "a.csv")      # the compiled path itself names it too
    assert f.run().estimate() == (3.0, 4.0)


def test_use_file_errors(folder):
    f = sirenc.compile(str(folder / "m.si")).filter(particles=3)
    with pytest.raises(SirenUsageError, match="no data file 'c.csv'"):
        f.use_file("c.csv", "x.csv")
    with pytest.raises(SirenUsageError, match="no file 2"):
        f.use_file(2, "x.csv")
    f.use_file(0, folder / "missing.csv")
    with pytest.raises(SirenRuntimeError, match="missing.csv"):
        f.run()


@needs_tools("cc")
def test_a_model_so_moved_away_from_its_data(folder, tmp_path_factory):
    so = folder / "m.so"
    sirenc.compile(str(folder / "m.si"), output=so)
    moved = tmp_path_factory.mktemp("deployed")
    shutil.copy(so, moved / "m.so")
    for name in ("a.csv", "b.csv"):
        (folder / name).rename(moved / name)
    model = sirenc.load(moved / "m.so")
    with pytest.raises(SirenRuntimeError, match="a.csv"):
        model.filter(particles=2).run()         # the compile-time path is gone
    f = model.filter(particles=2).use_file("a.csv", moved / "a.csv").use_file("b.csv", moved / "b.csv")
    assert f.run().estimate() == (3.0, 1.0)
