"""Fixtures of the fuzzing tests: one sirenc worker process for the whole session (fuzzrun.py)."""

from __future__ import annotations

import os
import sys

import pytest
from hypothesis import HealthCheck, settings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import fuzzrun  # noqa: E402

# Deterministic and bounded: the same examples on every run, no deadline (a first compilation
# takes a while on a loaded machine), no example database.
FUZZ = settings(derandomize=True, deadline=None, database=None, print_blob=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture, HealthCheck.filter_too_much,
                                       HealthCheck.large_base_example])


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


def check(outcome: fuzzrun.Outcome, program=None) -> None:
    """Fail with the program, the command line and the output when the invariant is broken."""
    problem = fuzzrun.violation(outcome)
    if problem is not None:
        shown = program.decode("utf-8", "backslashreplace") if isinstance(program, bytes) else program
        pytest.fail(f"{problem}\ncommand: sirenc {' '.join(outcome.argv)}\n--- program ---\n{shown}\n"
                    f"--- stderr ---\n{outcome.stderr[-3000:]}", pytrace=False)
