"""Before any run: which plans the plan analysis accepts, what each compiles to (tier 1 or 2,
what it keeps symbolic), the cost model that orders them, and compiling one into a model.

The analysis takes milliseconds a plan, so every candidate is screened; only the accepted ones
are compiled (a few tenths of a second each) and run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sirenc.diagnostics import SirenError
from sirenc.tuning.plans import Candidate, Program


@dataclass(frozen=True)
class Options:
    """The compiler's options for every plan (``sirenc check``'s)."""

    max_rvs: int = 4
    analysis_budget: int | None = None


@dataclass
class Verdict:
    """What the analysis and tier 2 made of one candidate. A rejected one has ``reason`` (the
    diagnostic's message), ``location`` (``file:line:col`` of the annotation it rejects) and
    ``diagnostic`` (the whole rendered error, with its notes)."""

    accepted: bool
    reason: str | None = None
    location: str | None = None
    diagnostic: str | None = None
    inferred: dict[str, str] = field(default_factory=dict)    # the analysis' plan
    tier: int | None = None                                    # None under pf
    runtime_plan: dict[str, str] = field(default_factory=dict)   # tier 2's, fixed when compiling
    loop_shapes: list[int] = field(default_factory=list)
    # The accepted candidate's compilation, as far as screening took it: compile_model goes on
    # from there instead of parsing, analysing and specialising the plan again.
    compilation: Any = field(default=None, repr=False, compare=False)


def compilation(program: Program, candidate: Candidate, options: Options):
    """The candidate's program as a compilation of the program's own path, so that its data
    files are found where the program's are."""
    from sirenc import driver

    return driver.Compilation(program.write(candidate.plan), program.path, candidate.method,
                              max_rvs=options.max_rvs, analysis_budget=options.analysis_budget,
                              snapshots=False)


def screen(program: Program, candidate: Candidate, options: Options) -> Verdict:
    """The analysis' verdict on the candidate and, if it accepts it, whether it runs on tier 2."""
    from sirenc import driver

    c = compilation(program, candidate, options)
    try:
        driver.run_until(c, "plan")
        verdict = Verdict(True, inferred=dict(c.plan.plan))
        if c.inference.symbolic:
            driver.run_until(c, "specialized")
            if driver.specialized(c):
                verdict.tier = 2
                verdict.runtime_plan = dict(c.specialization.runtime_plan)
                verdict.loop_shapes = list(c.specialization.shapes)
            else:
                verdict.tier = 1
        verdict.compilation = c
    except SirenError as e:
        return Verdict(False, reason=e.message.splitlines()[0], location=None if e.span is None else str(e.span),
                       diagnostic=e.render())
    return verdict


def cost_key(candidate: Candidate, verdict: Verdict) -> tuple:
    """The cost model: the order in which plans are tried, and which of several that run
    equally fast is chosen.

    1. A program without a symbolic runtime first: pf, and a symbolic method's program that
       tier 2 resolved into arithmetic, before one that keeps the general symbolic runtime
       (tier 1), whose particles carry and update a graph of distributions.
    2. Then fewer variables kept symbolic (tier 2's runtime plan; on tier 1, those the analysis
       says are symbolic or may be): each is state a particle carries and updates in closed
       form at every observation of it.
    3. Then fewer loop shapes (tier 2 compiles a loop once per shape of its symbolic state).
    4. Then a plan written out before the program as written, which leaves the choice to the
       method: the tuned program then says what it does.
    5. Then the enumeration's order.

    It says nothing about accuracy: the pilot runs measure that. What it orders is work per
    particle, so among plans the pilots cannot tell apart, the simpler one wins.
    """
    if verdict.tier == 1:
        kept = sum(enc != "sample" for enc in verdict.inferred.values())
        return (1, kept, 0, candidate.as_written, candidate.index)
    kept = sum(enc == "symbolic" for enc in verdict.runtime_plan.values())
    return (0, kept, sum(verdict.loop_shapes), candidate.as_written, candidate.index)


def compile_model(program: Program, candidate: Candidate, options: Options, data: str | None, started: Any = None):
    """The candidate compiled into this process; ``data`` (a CSV path) replaces the program's
    data file, as ``sirenc run --data`` does. ``started``: its compilation as screening left it
    (``Verdict.compilation``), which this finishes; without it, a compilation from the text."""
    from sirenc import api, driver

    c = started if started is not None else compilation(program, candidate, options)
    module = driver.run_until(c, "llvm-dialect")
    info = driver.model_info(c, module)
    if data is not None:
        info.replace_data(data)
    return api.from_llvm_dialect(module, info)


def restore_source(program: Program) -> None:
    """Each plan's compilation registered its own text under the program's path, for its
    diagnostics; a later diagnostic about the program must quote the program's lines."""
    from sirenc.diagnostics import register_source

    register_source(program.path, program.text)

