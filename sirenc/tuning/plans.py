"""The plans `sirenc.tune` tries: every `symbolic`/`sample` choice for a program's unannotated
random variables, under each method asked for, written into the program as annotations.

A variable the program already annotates keeps its annotation: writing one is how a user fixes
part of the plan and shrinks the search (2**n plans of n free variables per symbolic method).
Under ``pf`` every free variable is sampled, so it has one plan. Each symbolic method also gets
the program as written, where the method decides for the free variables at run time: the plan
a user gets without annotating, and one no annotation can spell when the method samples a
variable in some particles only.
"""

from __future__ import annotations

import itertools
import os
from dataclasses import dataclass

from sirenc import methods
from sirenc.diagnostics import Span, SirenUsageError

SAMPLE, SYMBOLIC = "sample", "symbolic"
MAX_FREE = 10         # 2**10 plans per symbolic method: beyond that, annotate some variables


@dataclass(frozen=True)
class Binding:
    """One `let [annotation] x <- d` of the program."""

    name: str
    name_span: Span
    annotation: str | None
    annotation_span: Span | None


@dataclass(frozen=True)
class Program:
    """A program's text, where it came from (its path fixes where `File.read` looks and what
    the diagnostics name), and its random variables: ``free`` (unannotated, in the order the
    program creates them) and ``fixed`` (annotated in the text: name -> annotation)."""

    text: str
    path: str
    bindings: tuple[Binding, ...]
    free: tuple[str, ...]
    fixed: dict[str, str]

    def write(self, plan: dict[str, str | None]) -> str:
        """The text with every binding of each variable in ``plan`` annotated as it says (None:
        no annotation); the rest of the text is unchanged, byte for byte."""
        starts = [0]
        for line in self.text.split("\n"):
            starts.append(starts[-1] + len(line) + 1)

        def offset(line: int, col: int) -> int:
            return starts[line - 1] + col - 1

        edits = []
        for b in self.bindings:
            if b.name not in plan:
                continue
            first = b.annotation_span or b.name_span
            start = offset(first.line, first.col)
            end = offset(b.name_span.end_line, b.name_span.end_col)
            ann = plan[b.name]
            edits.append((start, end, b.name if ann is None else f"{ann} {b.name}"))
        text = self.text
        for start, end, new in sorted(edits, reverse=True):   # from the end: offsets stay valid
            text = text[:start] + new + text[end:]
        return text


@dataclass(frozen=True)
class Candidate:
    """One plan under one method: ``plan`` maps each free variable to "symbolic", "sample", or
    None (the program as written: the method decides). ``index`` numbers the candidates as
    they are enumerated; it seeds the candidate's pilot runs, so they do not depend on the
    order tune happens to run them in."""

    index: int
    method: str
    plan: dict[str, str | None]

    @property
    def as_written(self) -> bool:
        return all(a is None for a in self.plan.values())


def read_program(source: str | os.PathLike) -> Program:
    """The program at ``source`` (a path or the program text), parsed and type-checked: an error
    in it is the ``SirenError`` compiling it raises."""
    from sirenc import driver
    from sirenc.frontend import ast

    c = driver.open_source(source, methods.PARTICLE_FILTER, snapshots=False)
    if c.text.startswith("\ufeff"):      # the parser drops it, and its columns start after it
        c.text = c.text[1:]
    program = driver.run_until(c, "ast").program
    bindings, pending = [], [program]
    while pending:           # not recursive: a long chain of `let`s is a deep tree
        node = pending.pop()
        if isinstance(node, list):
            pending.extend(node)
        elif isinstance(node, ast.Node):
            if isinstance(node, ast.Assume):
                bindings.append(Binding(node.name, node.name_span, node.annotation, node.annotation_span))
            pending.extend(v for v in vars(node).values() if isinstance(v, ast.Node | list))
    bindings.sort(key=lambda b: (b.name_span.line, b.name_span.col))
    fixed = {b.name: b.annotation for b in bindings if b.annotation is not None}
    draft = Program(c.text, c.path, tuple(bindings), (), fixed)
    free = tuple(name for name in _created(draft) if name not in fixed)
    if len(free) > MAX_FREE:
        span = next(b.name_span for b in bindings if b.name == free[MAX_FREE])
        raise SirenUsageError(
            f"{span}: tune tries every plan of the program's unannotated random variables, 2**{len(free)} "
            f"of them for each symbolic method, and at most 2**{MAX_FREE}; annotate some of them "
            f"(`let sample {free[MAX_FREE]} <- ...` or `let symbolic ...`) to fix their part of the plan")
    return Program(c.text, c.path, tuple(bindings), free, fixed)


def _created(program: Program) -> list[str]:
    """The random variables the program creates, in order of first creation: the names of the
    plan analysis' plan (a function that is never called creates none), read under pf with every
    annotation taken out (pf refuses a `symbolic` one)."""
    from sirenc import driver

    text = program.write({b.name: None for b in program.bindings})
    c = driver.Compilation(text, program.path, methods.PARTICLE_FILTER, snapshots=False)
    driver.run_until(c, "plan")
    return list(c.plan.plan)


def candidates(program: Program, method_names: list[str]) -> list[Candidate]:
    """Every plan of every method in ``method_names``: pf's one (every free variable sampled);
    for a symbolic method, the program as written, then each of the 2**n annotations."""
    out: list[Candidate] = []
    for name in method_names:
        if not methods.get(name).symbolic:
            plans = [dict.fromkeys(program.free, SAMPLE)]
        else:
            plans = [dict.fromkeys(program.free)]
            if program.free:
                plans += [dict(zip(program.free, choice))
                          for choice in itertools.product((SYMBOLIC, SAMPLE), repeat=len(program.free))]
        first = len(out)
        out.extend(Candidate(first + i, name, plan) for i, plan in enumerate(plans))
    return out
