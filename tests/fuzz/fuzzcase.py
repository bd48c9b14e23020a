"""What every fuzzing test shares: hypothesis settings and the invariant check (a module, not
conftest.py, so the tests import it by a name no other folder's conftest shares)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, settings

import fuzzrun

# Deterministic and bounded: the same examples on every run, no deadline (a first compilation
# takes a while on a loaded machine), no example database.
FUZZ = settings(derandomize=True, deadline=None, database=None, print_blob=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture, HealthCheck.filter_too_much,
                                       HealthCheck.large_base_example])


def check(outcome: fuzzrun.Outcome, program=None) -> None:
    """Fail with the program, the command line and the output when the invariant is broken."""
    problem = fuzzrun.violation(outcome)
    if problem is not None:
        shown = program.decode("utf-8", "backslashreplace") if isinstance(program, bytes) else program
        pytest.fail(f"{problem}\ncommand: sirenc {' '.join(outcome.argv)}\n--- program ---\n{shown}\n"
                    f"--- stderr ---\n{outcome.stderr[-3000:]}", pytrace=False)
