"""A streamed row's elements, ``List.hd(List.tl^k(row))``, are read in place along with the row
(sirenc/passes/to_llvm/row_elements.py): the answers, and the errors of a row too short for a read, are
what the list operations give, for rows read from the data file and rows fed one at a time."""

from __future__ import annotations

import numpy as np
import pytest

import sirenc
from markers import needs_runtime

pytestmark = needs_runtime

# Each program sums what it reads from every row, with no draw: the estimate is that sum.
READS = {
    "head": ("List.hd(row)", lambda row: row[0]),
    "second": ("List.hd(List.tl(row))", lambda row: row[1]),
    "shared_tails": ("let t = List.tl(row) in List.hd(t) + 10. * List.hd(List.tl(t))",
                     lambda row: row[1] + 10. * row[2]),
    "third_and_first": ("let (a, b) = (List.hd(List.tl(List.tl(row))), List.hd(row)) in a - b",
                        lambda row: row[2] - row[0]),
    "arithmetic_between": ("let a = List.hd(List.tl(row)) * 2. in a + List.hd(List.tl(List.tl(row)))",
                           lambda row: row[1] * 2. + row[2]),
}

ROWS = [[1., 2., 3.], [4., 5., 6., 7.], [-1.5, 0.25, 8.]]


def source(read: str, path) -> str:
    return (f"val read = fun row -> {read} in\n"
            "val add = fun (x, acc) -> acc + x in\n"
            f"fold(add, List.map(read, File.read(\"{path}\")), 0.)")


def write_rows(path, rows) -> None:
    path.write_text("a,b,c\n" + "".join(",".join(map(str, row)) + "\n" for row in rows))


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "rows.csv"
    write_rows(path, ROWS)
    return path


@pytest.mark.parametrize("name", READS)
def test_rows_of_the_file(name, data):
    read, expected = READS[name]
    model = sirenc.compile(source(read, data), method="pf")
    f = model.filter(particles=20, seed=0)
    f.run()
    assert f.estimate() == sum(expected(row) for row in ROWS)


@pytest.mark.parametrize("name", READS)
def test_rows_fed_one_at_a_time(name, data):
    read, expected = READS[name]
    model = sirenc.compile(source(read, data), method="pf")
    assert model.info["streamable"]
    f = model.filter(particles=20, seed=0)
    total = 0.
    for row in ROWS:
        f.step(np.array(row))
        total += expected(row)
        assert f.estimate() == total


def _error(f, rows) -> str:
    with pytest.raises(sirenc.SirenRuntimeError) as info:
        for row in rows:
            f.step(np.array(row))
    return str(info.value).splitlines()[0]


def _at(src: str, op: str) -> str:
    """`line:col` of the first `op` in the program's source."""
    before = src[:src.index(op)]
    return f"{before.count(chr(10)) + 1}:{len(before) - before.rfind(chr(10))}"


def test_a_short_row_fails_at_the_op_it_fails_at(data):
    src = source("List.hd(List.tl(row))", data)
    model = sirenc.compile(src, method="pf")
    # [4.]: List.tl gives the empty list, whose List.hd fails; []: List.tl itself fails.
    assert f"<string>:{_at(src, 'List.hd(')}: error: List.hd of an empty list" in \
        _error(model.filter(particles=5, seed=0), [[1., 2.], [4.]])
    assert f"<string>:{_at(src, 'List.tl(')}: error: List.tl of an empty list" in \
        _error(model.filter(particles=5, seed=0), [[1., 2.], []])


def test_a_short_row_of_the_file_fails_as_fed(tmp_path):
    path = tmp_path / "short.csv"
    write_rows(path, [[1., 2., 3.], [4.]])
    src = source("List.hd(List.tl(row))", path)
    f = sirenc.compile(src, method="pf").filter(particles=5, seed=0)
    with pytest.raises(sirenc.SirenRuntimeError, match=f"<string>:{_at(src, 'List.hd(')}: error: List.hd of an empty list"):
        f.run()


def test_an_empty_row(data):
    src = source("List.hd(row)", data)
    f = sirenc.compile(src, method="pf").filter(particles=5, seed=0)
    assert f"<string>:{_at(src, 'List.hd(')}: error: List.hd of an empty list" in _error(f, [[1.], []])

