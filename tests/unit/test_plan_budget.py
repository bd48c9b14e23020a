"""The plan analysis' budget counts work, not seconds (issue 6).

A verdict is a function of the program and the budget only: an analysis that
needs W steps is the same with a budget of W on any machine, under any load and
in any process (string hashing differs between processes), and gives up at W - 1.
Giving up keeps its meaning (ARCHITECTURE.md §17.2): every name dynamic, and a ``symbolic``
annotation an error at the annotation that names the option to raise.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import sirenc
from sirenc.diagnostics import SirenPlanError, SirenUsageError
from sirenc.driver import lower_to_siren
from sirenc.passes.plan_analysis import DEFAULT_BUDGET, analyze

PROGRAM = """\
val step = fun (y, x) ->
  let x1 <- gaussian(x, 1.) in
  let () = observe(gaussian(x1, 0.5), y) in
  x1
in
let symbolic mu <- gaussian(0., 1.) in
fold(step, List.range(0., 20.), mu)
"""


@pytest.mark.parametrize("method", ["ssi", "ds", "bp"])
def test_the_work_decides_the_verdict(method):
    module = lower_to_siren(PROGRAM)
    result = analyze(module, method)
    assert result.note is None and 0 < result.work < DEFAULT_BUDGET
    assert not result.budget_exhausted and result.warnings == []
    again = analyze(module, method, budget=result.work)
    assert (again.plan, again.work) == (result.plan, result.work)
    with pytest.raises(SirenPlanError) as e:
        analyze(module, method, budget=result.work - 1)
    assert f"budget of {result.work - 1} steps" in e.value.notes[0].message


def test_the_work_is_the_same_in_another_process():
    script = (
        "from sirenc.driver import lower_to_siren\n"
        "from sirenc.passes.plan_analysis import analyze\n"
        f"print([analyze(lower_to_siren({PROGRAM!r}), m).work for m in ('ssi', 'ds', 'bp')])\n"
    )
    here = [analyze(lower_to_siren(PROGRAM), m).work for m in ("ssi", "ds", "bp")]
    for seed in ("1", "4242"):
        out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                             env=dict(os.environ, PYTHONHASHSEED=seed))
        assert out.stdout.strip() == str(here)


def test_a_tiny_budget_is_the_documented_error():
    with pytest.raises(SirenPlanError) as e:
        analyze(lower_to_siren(PROGRAM), "ssi", budget=10)
    text = e.value.render()
    assert e.value.message == ("plan cannot be satisfied under ssi: "
                               "'mu' is annotated symbolic but its encoding cannot be determined")
    assert e.value.span is not None and (e.value.span.line, e.value.span.col) == (6, 5)
    assert "note: the analysis gave up: it used up its budget of 10 steps here, " \
           "so 'mu' cannot be shown to stay symbolic" in text
    assert "--analysis-budget N (analysis_budget=N in the Python API) raises the budget" in text


def test_without_symbolic_annotations_giving_up_makes_everything_dynamic():
    result = analyze(lower_to_siren(PROGRAM.replace("symbolic ", "")), "ds", budget=10)
    assert set(result.plan.values()) == {"dynamic"}
    assert "used up its budget of 10 steps" in result.note and "--analysis-budget" in result.note
    # ... and says so: a plan of all dynamic would otherwise read as the analysis' verdict.
    assert result.budget_exhausted and json.loads(result.to_json())["budget_exhausted"] is True
    [(message, span)] = result.warnings
    assert message == ("the plan analysis used up its budget of 10 steps here and gave up, so every variable "
                       "is reported dynamic; --analysis-budget N raises the budget (e.g. --analysis-budget 100)")
    assert span is not None and span.line in range(1, 8)


def test_the_budget_must_be_positive():
    with pytest.raises(SirenUsageError, match="--analysis-budget must be at least 1"):
        analyze(lower_to_siren(PROGRAM), "ssi", budget=0)


def test_the_python_api_passes_the_budget_on():
    with pytest.raises(SirenUsageError, match="--analysis-budget must be at least 1"):
        sirenc.compile(PROGRAM.replace("symbolic ", ""), method="pf", analysis_budget=0)


def _list_literal(n: int) -> str:
    items = ", ".join(f"{i}." for i in range(n))
    return f"let symbolic x <- gaussian(0., 1.) in\nlet l = [{items}] in\n(x + List.hd(l), List.len(l))\n"


@pytest.mark.parametrize("method", ["ssi", "ds", "bp"])
def test_a_list_literal_costs_work_linear_in_its_length(method):
    """Issue 11: each cons of a literal built a list node with all the items so far (quadratic),
    so within the default budget the analysis gave up on literals of a few thousand elements."""
    small, large = (analyze(lower_to_siren(_list_literal(n)), method) for n in (1_000, 10_000))
    assert small.note is None and large.note is None
    assert large.plan == small.plan and large.plan["x"] == "symbolic"
    assert large.work < 11 * small.work
