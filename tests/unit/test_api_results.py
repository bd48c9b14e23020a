"""The Python API without a compiled model: result unflattening and input checks."""

from __future__ import annotations

import numpy as np
import pytest

from sirenc.arguments import as_float64
from sirenc.descriptors import unflatten
from sirenc.diagnostics import SirenUsageError
from sirenc.native_filter import CompiledModelError


@pytest.mark.parametrize("desc, flat, expected", [
    ("f", [1.5], 1.5),
    ("b", [0.25], 0.25),
    ("u", [], None),
    ("Pfb", [1.0, 0.5], (1.0, 0.5)),
    ("PuPff", [2.0, 3.0], (None, (2.0, 3.0))),
    ("Lu", [2.0], [None, None]),
    ("LPff", [2.0, 1.0, 2.0, 3.0, 4.0], [(1.0, 2.0), (3.0, 4.0)]),
])
def test_unflatten_structures(desc, flat, expected):
    assert unflatten(desc, np.array(flat)) == expected


def test_list_of_scalars_is_a_float64_array():
    value = unflatten("PfLf", np.array([1.0, 3.0, 0.1, 0.2, 0.3]))
    assert value[0] == 1.0
    assert isinstance(value[1], np.ndarray) and value[1].dtype == np.float64
    assert value[1].tolist() == [0.1, 0.2, 0.3]


def test_empty_list_of_scalars():
    value = unflatten("PLfu", np.array([0.0]))
    assert isinstance(value[0], np.ndarray) and value[0].size == 0 and value[1] is None


def test_list_of_lists():
    value = unflatten("LLf", np.array([2.0, 1.0, 5.0, 2.0, 6.0, 7.0]))
    assert isinstance(value, list) and len(value) == 2
    assert value[0].tolist() == [5.0] and value[1].tolist() == [6.0, 7.0]


def test_length_mismatch_is_reported():
    with pytest.raises(SirenUsageError, match="does not match"):
        unflatten("f", np.array([1.0, 2.0]))


def test_rows_must_be_float64_c_contiguous_2d():
    ok = as_float64([[1, 2], [3, 4]], 2, "rows")
    assert ok.dtype == np.float64 and ok.shape == (2, 2)
    with pytest.raises(SirenUsageError, match="dtype float64"):
        as_float64(np.zeros((2, 2), dtype=np.float32), 2, "rows")
    with pytest.raises(SirenUsageError, match="C-contiguous"):
        as_float64(np.zeros((3, 4))[:, ::2], 2, "rows")
    with pytest.raises(SirenUsageError, match="2-D"):
        as_float64(np.zeros(3), 2, "rows")
    with pytest.raises(SirenUsageError, match="numbers"):
        as_float64([["a", "b"]], 2, "rows")
    with pytest.raises(SirenUsageError, match="1-D"):
        as_float64(np.zeros((1, 3)), 1, "row")


def test_runtime_messages_are_shown_as_rendered():
    rendered = "toy.si:1:9: error: gaussian variance must be > 0\nlet x = ...\n        ^"
    assert CompiledModelError(rendered).render() == rendered
    assert CompiledModelError("no particles").render() == "error: no particles"
