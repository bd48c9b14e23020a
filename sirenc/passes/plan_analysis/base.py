"""Small shared types of the plan analysis: encodings, limits, errors, entries."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from sirenc.passes.plan_analysis.domain import Distr, built

SYMBOLIC, SAMPLE, DYNAMIC = "symbolic", "sample", "dynamic"
MAX_SIZE = 200     # more abstract variables than this: give up (ARCHITECTURE.md §17.2)
from sirenc.passes.analysis_budget import BUDGET_OPTION, DEFAULT_BUDGET  # noqa: F401 (re-exported)


class Violation(Exception):
    """A ``symbolic`` annotation may be violated (ARCHITECTURE.md §17.7 (a) and (b))."""

    def __init__(self, kind: str, names: Iterable[str], cause: Any = None):
        super().__init__(kind)
        self.kind = kind                 # "sampled" or "dynamic"
        self.names = sorted(names)
        self.cause = cause


class GiveUp(Exception):
    """The abstract state (ARCHITECTURE.md §17.2 ``max_size``) or the work grew too large."""

    def __init__(self, reason: str, too_large: bool = False, hint: str | None = None):
        super().__init__(reason)
        self.too_large = too_large
        self.hint = hint                 # what the user can do about it


class BudgetExhausted(GiveUp):
    """The work (``Shared.spent``) passed the budget: a verdict the user can change, so it is warned
    about, unlike the other ways of giving up."""


class UnknownOperation(NotImplementedError):
    """The interpreter met an operation it has no rule for: a bug in sirenc, never a
    verdict (an unknown value for it would pass over what the op does)."""


class InternalInconsistency(Exception):
    """The abstract state lost track of a variable (a join renamed it away)."""


@dataclass
class Cause:
    """What the interpreter was doing when something was sampled or lost."""

    op: Any = None                 # the IR operation being evaluated
    what: str = ""                 # e.g. "observation", "join of the branches"
    detail: str | None = None      # e.g. a non-conjugate pair


@dataclass
class Shared:
    """Per-analysis data shared by every copy of the state."""

    max_rvs: int = 4
    cause: Cause = field(default_factory=Cause)
    steps: int = 0                     # the interpreter's and the algorithms' so far
    budget: int = DEFAULT_BUDGET       # give up when spent() exceeds this
    order: dict[str, None] = field(default_factory=dict)   # names by first assume

    def note_name(self, name: str) -> None:
        self.order.setdefault(name, None)

    def spent(self) -> int:
        """All the work so far: the steps and the expression nodes built (``domain.built``)."""
        return self.steps + built()

    def tick(self, amount: int = 1) -> None:
        self.steps += amount
        if self.spent() > self.budget:
            raise BudgetExhausted(f"it used up its budget of {self.budget} steps", hint=(
                f"{BUDGET_OPTION} N (analysis_budget=N in the Python API) raises the budget"))


@dataclass
class Entry:
    distr: Distr
    pv: frozenset
    annotation: str | None
    node: Any = None
    children: list = field(default_factory=list)

    def copy(self) -> Entry:
        return Entry(self.distr, self.pv, self.annotation, self.node, list(self.children))

    def same(self, other: Entry) -> bool:
        return (
            self.distr == other.distr and self.pv == other.pv
            and self.annotation == other.annotation and self.node == other.node
            and self.children == other.children
        )


def join_enc(a: str, b: str) -> str:
    if DYNAMIC in (a, b):
        return DYNAMIC
    return SAMPLE if SAMPLE in (a, b) else SYMBOLIC


