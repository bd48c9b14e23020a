"""What `sirenc.tune` returns: a row per plan tried, the chosen plan, its program, and how
sure the choice is; as a table (``sirenc tune``'s) and as JSON (``--json``)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from sirenc.tuning.plans import Program

CHOSEN, TIED, DROPPED, REJECTED, FAILED, NOT_RUN = (
    "chosen", "indistinguishable", "dropped", "rejected", "failed", "not run")
RACING = "racing"        # while tune runs: accepted, and neither dropped nor failed yet


@dataclass
class Row:
    """One plan: ``plan`` maps each free variable to its annotation (None: as written, the method
    decides); ``particles`` and ``seconds`` are the particles it needs for the target and the time
    of one run with them; ``error`` is its measured error at ``error_particles``, the most it was
    run with. ``status`` is one of chosen, indistinguishable (from the chosen, within the pilots'
    noise), dropped (at halving rung ``rung``), rejected (by the plan analysis or the compiler:
    ``reason`` at ``location``), failed (a run stopped with an error) or not run (the time budget
    ran out before it)."""

    index: int
    method: str
    plan: dict[str, str | None]
    status: str = NOT_RUN
    rung: int | None = None
    reason: str | None = None
    location: str | None = None
    tier: int | None = None
    inferred: dict[str, str] = field(default_factory=dict)
    particles: float | None = None
    seconds: float | None = None
    error: float | None = None
    error_particles: int | None = None
    exact: bool = False
    runs: int = 0
    wins: float | None = None       # share of the bootstrap resamplings in which it was fastest

    def describe(self) -> str:
        """The plan in words: ``ssi: x symbolic, y sample``."""
        if not self.plan or all(a is None for a in self.plan.values()):
            return f"{self.method}: as written"
        return f"{self.method}: " + ", ".join(f"{v} {'(method decides)' if a is None else a}"
                                              for v, a in self.plan.items())

    def status_text(self) -> str:
        if self.status in (CHOSEN, TIED):
            return self.status
        if self.status == DROPPED:
            return f"dropped at rung {self.rung}" + (f": {self.reason}" if self.reason else "")
        if self.status == FAILED:
            return f"failed at rung {self.rung}: {self.reason}"
        if self.status == REJECTED:
            return f"rejected: {self.reason}" + (f" ({self.location})" if self.location else "")
        return f"not run: {self.reason}" if self.reason else "not run"

    def to_json(self) -> dict:
        return {"index": self.index, "method": self.method, "plan": self.plan, "status": self.status,
                "rung": self.rung, "reason": self.reason, "location": self.location, "tier": self.tier,
                "inferred_plan": self.inferred, "particles": _number(self.particles),
                "seconds": _number(self.seconds), "error": _number(self.error),
                "error_particles": self.error_particles, "exact": self.exact, "runs": self.runs,
                "wins": self.wins}


@dataclass
class Tuning:
    """The outcome of `sirenc.tune`. ``target_error`` is the user's (a tuple: one per part of the
    result, and then every row's ``error`` is the largest over the parts of the part's error
    over its target), or without one the smallest error the pilots measured (``target_given``
    says which); ``reference`` is "exact" when a plan gave the exact answer, else "pooled";
    ``win_share`` and ``regret`` measure the uncertainty of the choice (choice.py); ``seconds``
    is tune's own time."""

    program: Program
    rows: list[Row]
    chosen: Row
    target_error: float | tuple[float, ...]
    target_given: bool
    reference: str
    win_share: float
    regret: float
    bootstrap: int
    rungs: int
    seconds: float
    seed: int

    @property
    def source(self) -> str:
        """The program with the chosen plan written in as annotations."""
        return self.program.write(self.chosen.plan)

    @property
    def default(self) -> Row | None:
        """The program as written under pf, if it was tried: what a user gets without tuning."""
        return next((r for r in self.rows if r.method == "pf"), None)

    def speedup(self) -> float | None:
        """How much faster the chosen plan reaches the target than the default, predicted."""
        d = self.default
        if d is None or d.seconds is None or not self.chosen.seconds:
            return None
        return d.seconds / self.chosen.seconds

    def table(self) -> str:
        variables = list(self.program.free)
        head = ["method", *variables, "tier", "particles", "time", "error (at N)", "status"]
        body = []
        for r in sorted(self.rows, key=_table_order):
            body.append([r.method, *[_annotation(r.plan.get(v)) for v in variables],
                         "-" if r.tier is None else str(r.tier),
                         "-" if r.particles is None else _particles(r.particles),
                         "-" if r.seconds is None else _seconds(r.seconds),
                         "-" if r.error is None else f"{r.error:.3g} ({r.error_particles})",
                         r.status_text()])
        widths = [max(len(row[i]) for row in [head, *body]) for i in range(len(head) - 1)]
        lines = [self.heading()]
        lines += ["  ".join([*(c.ljust(w) for c, w in zip(row, widths)), row[-1]]).rstrip()
                  for row in [head, *body]]
        lines += self.footer()
        return "\n".join(lines)

    def heading(self) -> str:
        what = "the user's" if self.target_given else "the smallest the pilot runs reached"
        against = "the exact answer" if self.reference == "exact" else "the pooled most accurate runs"
        fixed = ""
        if self.program.fixed:
            fixed = "; fixed by the program: " + ", ".join(f"{v} {a}" for v, a in self.program.fixed.items())
        if isinstance(self.target_error, tuple):
            return (f"target errors {target_text(self.target_error)} ({what}, one per part of the result): mean "
                    f"squared error of each part's numbers over its target (the largest) against {against}; "
                    f"particles and time: one run that reaches them{fixed}")
        return (f"target error {target_text(self.target_error)} ({what}): mean squared error of each part of the "
                f"result's numbers (the largest) against {against}; particles and time: one run that reaches it{fixed}")

    def footer(self) -> list[str]:
        c = self.chosen
        lines = [f"chosen: {c.describe()}, {_particles(c.particles)} particle{'' if c.particles == 1 else 's'}, "
                 f"{_seconds(c.seconds)} a run"]
        speedup = self.speedup()
        if speedup is not None and c.method != "pf":
            lines[-1] += (f" (predicted {speedup:.3g}x faster than pf, the program as written)"
                          if math.isfinite(speedup) else " (pf, the program as written, does not reach the target)")
        lines.append(f"the choice: fastest in {self.win_share:.0%} of {self.bootstrap} bootstrap resamplings of "
                     f"the pilot runs; in 90% of them within {self.regret:.3g}x of the fastest")
        counts = {s: sum(r.status == s for r in self.rows) for s in (REJECTED, FAILED, NOT_RUN)}
        rungs = f"{self.rungs} rung{'' if self.rungs == 1 else 's'}"
        plans = f"{len(self.rows)} plan{'' if len(self.rows) == 1 else 's'}"
        lines.append(f"{plans}, {counts[REJECTED]} rejected, {counts[FAILED]} failed, "
                     f"{counts[NOT_RUN]} not run; {rungs}; {self.seconds:.3g} s")
        return lines

    def to_json(self) -> dict:
        target = [_number(e) for e in self.target_error] if isinstance(self.target_error, tuple) \
            else _number(self.target_error)
        return {"target_error": target, "target_given": self.target_given,
                "reference": self.reference, "variables": list(self.program.free),
                "fixed": self.program.fixed, "chosen": self.chosen.to_json(),
                "default": None if self.default is None else self.default.index,
                "speedup": _number(self.speedup()), "win_share": self.win_share, "regret": _number(self.regret),
                "bootstrap": self.bootstrap, "rungs": self.rungs, "seconds": self.seconds, "seed": self.seed,
                "plans": [r.to_json() for r in self.rows], "source": self.source}


def target_text(target: float | tuple[float, ...]) -> str:
    """A target error as the table and the messages write it: one number, or one per part."""
    if isinstance(target, tuple):
        return ", ".join(f"{e:.3g}" for e in target)
    return f"{target:.3g}"


def _number(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else x


_ORDER = {CHOSEN: 0, TIED: 1, DROPPED: 2, FAILED: 3, NOT_RUN: 4, REJECTED: 5}


def _table_order(r: Row) -> tuple:
    return (_ORDER[r.status], -(r.rung or 0), math.inf if r.seconds is None else r.seconds, r.index)


def _annotation(a: str | None) -> str:
    return "auto" if a is None else a


def _particles(n: float | None) -> str:
    return "never" if n is None or not math.isfinite(n) else f"{int(n)}"


def _seconds(s: float | None) -> str:
    if s is None or not math.isfinite(s):
        return "never"
    return f"{s * 1e3:.3g} ms" if s < 1 else f"{s:.3g} s"
