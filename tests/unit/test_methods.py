"""sirenc/methods.py is the one table of inference methods: the command lines, the plan
analysis, the conjugate pairs and the C runtime's generated header all agree with it."""

from __future__ import annotations

from pathlib import Path

import pytest

from sirenc import conjugate_pairs, methods, siren_cli
from sirenc.cli.options import compile_options
from sirenc.diagnostics import SirenUsageError
from sirenc.passes.plan_analysis.state import AbsState
from sirenc.runtime.methods_header import HEADER_PATH, header_text

ROOT = Path(__file__).resolve().parents[2]


def test_committed_methods_header_is_what_the_table_generates():
    assert (ROOT / HEADER_PATH).read_text() == header_text(), (
        f"regenerate it: python -m sirenc.runtime.methods_header > {HEADER_PATH}")


@pytest.mark.parametrize("method", list(methods.METHODS.values()), ids=list(methods.METHODS))
def test_a_symbolic_method_has_an_analysis_and_an_engine(method):
    # ... and one that keeps nothing symbolic has neither: its plan is every variable sampled.
    assert (method.plan_state is not None) == (method.engine is not None) == method.symbolic
    if method.symbolic:
        state = method.plan_state_class()
        assert issubclass(state, AbsState) and state.method == method.name
    else:
        assert not (method.grafts or method.one_parent)


def test_the_engine_ids_are_the_runtimes_and_stay_put():
    # A checkpoint of a symbolic state holds the id (runtime_c/src/engine/sym.c).
    assert {m.name: m.engine for m in methods.METHODS.values() if m.symbolic} == {"ssi": 0, "ds": 1, "bp": 2}


def test_the_conjugate_pairs_name_only_symbolic_methods():
    named = {m for pair in conjugate_pairs.PAIRS for m in pair.methods}
    assert named == set(methods.symbolic_names())


def test_an_unknown_method_is_a_usage_error_that_lists_the_table():
    with pytest.raises(SirenUsageError, match=r"unknown method 'smc' \(choose one of pf, ssi, ds, bp\)"):
        methods.get("smc")


def test_the_command_lines_offer_the_table():
    for parser, default in [(compile_options().parser, methods.DEFAULT), (siren_cli.parser(), siren_cli.ORIGINAL_DEFAULT)]:
        (action,) = [a for a in parser._actions if "--method" in a.option_strings]
        assert list(action.choices) == list(methods.METHODS) and action.default == default
        for m in methods.METHODS.values():
            assert m.name in action.help and m.summary in action.help


def test_a_model_of_a_method_the_table_does_not_know_runs_as_ssi():
    # The runtime gives such a descriptor the ssi engine (sym.c), so it has a runtime plan.
    assert methods.keeps_symbolic_state("ssi") and methods.keeps_symbolic_state("")
    assert not methods.keeps_symbolic_state("pf")
