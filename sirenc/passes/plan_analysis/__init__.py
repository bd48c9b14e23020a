"""`plan-analysis`: is the program's inference plan satisfiable? (ARCHITECTURE.md §17, 0.4)

Runs the program once on abstract values under the abstract version of the
chosen hybrid algorithm (``ssi``, ``ds`` or ``bp``; ``pf`` samples
everything) and infers, for every random-variable name, ``symbolic`` (never
sampled), ``sample`` or ``dynamic`` (the analysis cannot tell).  A variable
annotated ``symbolic`` that may be sampled, or whose encoding cannot be
determined, is a ``SirenPlanError`` at the annotation::

    result = analyze(module, "ds")          # PlanResult: .plan, .work, .seconds
    print(result.text())                    # "invq: symbolic\\ninvr: sample\\n..."

The analysis stops after ``budget`` steps of work (abstract steps and the
expression nodes it builds; ``DEFAULT_BUDGET``, the ``budget`` option of the
pass, ``--analysis-budget`` on the command line): it counts work, not
seconds, so a program gets the same verdict on any machine.
Running out of budget is giving up: every name is ``dynamic``, and a
``symbolic`` annotation is an error that names the option.

The pass form annotates every ``siren.assume`` with ``plan = "..."`` and the
module with ``siren.plan = {name = "...", ...}`` in order of first assume.
Soundness comes first: an accepted ``symbolic`` annotation is never sampled
at run time under the same algorithm.
"""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import DictionaryAttr, ModuleOp, StringAttr
from xdsl.passes import ModulePass

from sirenc import methods
from sirenc.diagnostics import Note, SirenPlanError, SirenUsageError, Span
from sirenc.ir import siren
from sirenc.ir.locations import span_of
from sirenc.passes.plan_analysis import domain as D
from sirenc.passes.plan_analysis.interpreter import Interpreter
from sirenc.passes.rewriting import ops_of
from sirenc.passes.analysis_budget import check_analysis_options
from sirenc.passes.plan_analysis.base import BUDGET_OPTION, DEFAULT_BUDGET, BudgetExhausted, UnknownOperation
from sirenc.passes.plan_analysis.state import (
    DYNAMIC, SAMPLE, SYMBOLIC, Cause, GiveUp, InternalInconsistency, Shared, Violation,
)

RECURSION_LIMIT = 8000     # deep expressions from long known loops


@dataclass
class PlanResult:
    """The inferred plan: program name -> encoding, in order of first assume."""

    method: str
    plan: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0             # for reports only: the verdict never depends on it
    work: int = 0                    # the work it took (Shared.spent; see DEFAULT_BUDGET)
    note: str | None = None          # why the analysis fell back to "dynamic", if it did
    budget_exhausted: bool = False   # it fell back because the work passed the budget
    # (message, span) pairs, as a program's front-end warnings: the plan is not what it could be
    warnings: list[tuple[str, Span | None]] = field(default_factory=list)

    def text(self) -> str:
        return "\n".join(f"{name}: {enc}" for name, enc in self.plan.items())

    def to_json(self) -> str:
        return json.dumps({"method": self.method, "plan": self.plan, "seconds": self.seconds,
                           "budget_exhausted": self.budget_exhausted})


@dataclass
class _Assumes:
    """What the program declares: every ``siren.assume`` in IR order."""

    ops: list[siren.AssumeOp]

    @property
    def names(self) -> list[str]:
        return list(dict.fromkeys(op.var.data for op in self.ops))

    def annotation_op(self, name: str, annotation: str) -> siren.AssumeOp | None:
        for op in self.ops:
            if op.var.data == name and op.annotation is not None and op.annotation.data == annotation:
                return op
        return None

    @property
    def symbolic(self) -> list[str]:
        return [n for n in self.names if self.annotation_op(n, SYMBOLIC) is not None]


def _main(module: ModuleOp) -> func.FuncOp:
    for op in module.ops:
        if isinstance(op, func.FuncOp) and op.sym_name.data == "main":
            return op
    raise SirenUsageError("plan-analysis needs a module with func.func @main (run inline-functions first)")


def analyze(module: ModuleOp, method: str = "ssi", max_rvs: int = 4,
            budget: int | None = None) -> PlanResult:
    """Check the plan of ``module`` (inlined) under ``method``; raise ``SirenPlanError`` if unsatisfiable.

    ``budget`` bounds the work (``None``: ``DEFAULT_BUDGET``); see the module docstring.
    """
    if budget is None:
        budget = DEFAULT_BUDGET
    inference = methods.get(method)
    check_analysis_options(max_rvs, budget)
    start = time.perf_counter()
    main = _main(module)
    assumes = _Assumes([op for op in ops_of(main) if type(op) is siren.AssumeOp])
    if inference.symbolic:
        result = _abstract_run(main, assumes, inference, max_rvs, budget)
    else:
        result = _every_variable_sampled(assumes, method)
    result.seconds = time.perf_counter() - start
    return result


def _every_variable_sampled(assumes: _Assumes, method: str) -> PlanResult:
    """The plan of a method that keeps nothing symbolic."""
    for name in assumes.symbolic:
        op = assumes.annotation_op(name, SYMBOLIC)
        *others, last = methods.symbolic_names()
        raise SirenPlanError(
            f"plan cannot be satisfied under {method}: '{name}' is annotated symbolic but may be sampled",
            span_of(op),
            [Note(f"the particle filter (-m {method}) samples every random variable; "
                  f"use -m {', '.join(others)} or {last} to keep it symbolic")],
        )
    return PlanResult(method, {name: SAMPLE for name in assumes.names})


def _abstract_run(main: func.FuncOp, assumes: _Assumes, inference: methods.Method, max_rvs: int,
                  budget: int) -> PlanResult:
    method = inference.name
    # Imported before the interning restarts: what the state's modules build as they load is not
    # the program's work (the work, and so the verdict, is the same in every process).
    state_class = inference.plan_state_class()
    D.reset_interning()
    shared = Shared(max_rvs=max_rvs, budget=budget)
    state = state_class(shared)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, RECURSION_LIMIT))
    try:
        _, final = Interpreter(state).run(main)
        shared.tick(0)  # the nodes built after the last step count too
        work = shared.spent()
    except Violation as v:
        raise _violation_error(v, assumes, method) from None
    except GiveUp as g:
        result = _fallback(assumes, method, shared, f"the analysis gave up: {g}", g.too_large, g.hint)
        if isinstance(g, BudgetExhausted):
            result.budget_exhausted = True
            result.warnings.append(_budget_warning(shared))
        return result
    except (InternalInconsistency, RecursionError) as e:
        if os.environ.get("SIRENC_PLAN_DEBUG"):
            raise
        return _fallback(assumes, method, shared, f"the analysis lost track of the program ({e})")
    except UnknownOperation:
        raise  # a bug in sirenc: an internal compiler error, never a plan
    except Exception as e:  # noqa: BLE001 - never a traceback for a program the frontend accepts
        if os.environ.get("SIRENC_PLAN_DEBUG"):
            raise
        return _fallback(assumes, method, shared, f"internal error: {type(e).__name__}: {e}")
    finally:
        sys.setrecursionlimit(limit)
        D.reset_interning()
    plan = {name: final.plan.get(name, DYNAMIC) for name in shared.order}
    for name in assumes.names:
        if name not in plan:
            plan[name] = SYMBOLIC  # never created: vacuously never sampled
    return PlanResult(method, plan, work=work)


def _fallback(assumes: _Assumes, method: str, shared: Shared, detail: str,
              too_large: bool = False, hint: str | None = None) -> PlanResult:
    """The analysis could not finish: every name is dynamic, a symbolic annotation is an error."""
    symbolic = assumes.symbolic
    if not symbolic:
        note = detail if hint is None else f"{detail}; {hint}"
        return PlanResult(method, {name: DYNAMIC for name in assumes.names}, work=shared.spent(), note=note)
    name = symbolic[0]
    op = assumes.annotation_op(name, SYMBOLIC)
    if too_large:
        message = f"plan cannot be satisfied under {method}: state too large"
    else:
        message = (f"plan cannot be satisfied under {method}: "
                   f"'{name}' is annotated symbolic but its encoding cannot be determined")
    cause = shared.cause
    where = span_of(cause.op) if cause.op is not None else None
    notes = [Note(f"{detail} here, so '{name}' cannot be shown to stay symbolic", where)]
    if hint is not None:
        notes.append(Note(hint))
    raise SirenPlanError(message, span_of(op), notes)


def _budget_warning(shared: Shared) -> tuple[str, Span | None]:
    """Giving up for want of budget, said where the analysis was: without it a plan of all
    ``dynamic`` reads as the analysis' verdict on the program, not as a limit one can raise."""
    where = span_of(shared.cause.op) if shared.cause.op is not None else None
    return (f"the plan analysis used up its budget of {shared.budget} steps{' here' if where else ''} and gave "
            f"up, so every variable is reported dynamic; {BUDGET_OPTION} N raises the budget "
            f"(e.g. {BUDGET_OPTION} {shared.budget * 10})", where)


def _violation_error(v: Violation, assumes: _Assumes, method: str) -> SirenPlanError:
    candidates = [n for n in assumes.symbolic if n in v.names] or assumes.symbolic or v.names
    name = candidates[0] if candidates else "?"
    op = assumes.annotation_op(name, SYMBOLIC)
    if v.kind == "sampled":
        message = f"plan cannot be satisfied under {method}: '{name}' is annotated symbolic but may be sampled"
    else:
        message = f"plan cannot be satisfied under {method}: '{name}' is annotated symbolic but its encoding cannot be determined"
    notes = []
    note = _cause_note(v.cause, name, v.kind)
    if note is not None:
        notes.append(note)
    return SirenPlanError(message, span_of(op) if op is not None else None, notes)


_WHAT = {
    "assume": ("is sampled when this random variable is created",
               "cannot be determined when this random variable is created"),
    "observe-assume": ("is sampled when this observation's distribution is built",
                       "cannot be determined when this observation's distribution is built"),
    "observe-value": ("is sampled because this observed value depends on it",
                      "cannot be determined because this observed value depends on it"),
    "observe": ("is sampled to condition on this observation",
                "cannot be determined when conditioning on this observation"),
    "condition": ("is sampled because this condition depends on it",
                  "cannot be determined because this condition depends on it"),
    "force": ("is sampled because its value is needed here",
              "cannot be determined because its value is needed here"),
    "ite": ("is sampled while building this conditional value",
            "cannot be determined after this conditional value"),
    "if-join": ("may be sampled in one branch of this conditional",
                "differs between the branches of this conditional"),
    "loop-join": ("may be sampled by another iteration of this loop",
                  "differs between iterations of this loop"),
    "result": ("is sampled while computing the expected value of the result, here",
               "cannot be determined while computing the expected value of the result, here"),
}


def _cause_note(cause: Cause | None, name: str, kind: str) -> Note | None:
    if cause is None or cause.op is None:
        return None
    sampled_text, dynamic_text = _WHAT.get(cause.what, ("is sampled here", "cannot be determined here"))
    text = f"'{name}' " + (sampled_text if kind == "sampled" else dynamic_text)
    if cause.detail:
        text += f" ({cause.detail})"
    return Note(text, span_of(cause.op))


def annotate(module: ModuleOp, result: PlanResult) -> None:
    """Record ``result`` on the module and on every ``siren.assume``."""
    for op in ops_of(module):
        if type(op) is siren.AssumeOp:
            name = op.var.data
            enc = result.plan.get(name)
            if enc is None:
                enc = SAMPLE if op.annotation is not None and op.annotation.data == SAMPLE else SYMBOLIC
            op.attributes["plan"] = StringAttr(enc)
    module.attributes["siren.plan"] = DictionaryAttr(
        {name: StringAttr(enc) for name, enc in result.plan.items()})


@dataclass(frozen=True)
class PlanAnalysis(ModulePass):
    """Check and record the inference plan (ARCHITECTURE.md §17); see the module docstring."""

    name = "plan-analysis"

    method: str = "ssi"
    max_rvs: int = 4
    budget: int = DEFAULT_BUDGET
    # What the last `apply` found, which the driver reports (not an option: the module keeps the plan).
    result: PlanResult | None = field(default=None, init=False, compare=False, repr=False)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        result = analyze(op, self.method, self.max_rvs, self.budget)
        annotate(op, result)
        object.__setattr__(self, "result", result)   # a ModulePass is frozen; its options stay so


__all__ = ["DEFAULT_BUDGET", "PlanAnalysis", "PlanResult", "UnknownOperation", "analyze", "annotate"]
