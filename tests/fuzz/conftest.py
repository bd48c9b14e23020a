"""Fixtures of the fuzzing tests: one sirenc worker process for the whole session (fuzzrun.py)."""

from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import fuzzrun  # noqa: E402


@pytest.fixture(scope="session")
def worker():
    # A hang is a case that has not answered in 120 s: far beyond any generated program's
    # compile and run time (well under a second each) even on a loaded machine.
    with fuzzrun.Worker(timeout=120.0) as w:
        yield w


@pytest.fixture
def case_dir(tmp_path):
    """The folder each example's files are written to (overwritten example by example)."""
    return str(tmp_path)
