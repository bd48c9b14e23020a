"""The inference methods, one entry each: whatever names a method, or branches on one, reads it here.

The driver, ``sirenc``'s and ``siren``'s ``-m`` (choices, default, help), the plan analysis (its
abstract state, ARCHITECTURE.md §17), the lowering and tier 2 (``specialize-conjugacy``) take what
they need from an entry, and the C runtime its engines' ids and names, through
``runtime_c/src/engine/methods.h``, which ``python -m sirenc.runtime.methods_header`` writes from this
table. So a new method is an entry here plus the code of its algorithm: its plan-analysis state,
its runtime engine, tier 2's operations where its flags below do not already say what they do, and
the conjugate pairs it uses (§11.8: each pair's `methods` in sirenc/conjugate_pairs.py).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from sirenc.diagnostics import SirenUsageError


@dataclass(frozen=True)
class Method:
    name: str        # what -m takes
    summary: str     # what the name stands for, in -m's help
    # Keeps what it can symbolic (§10.3); otherwise every random variable is sampled where it is
    # bound, no symbolic value exists, and the program's plan is every variable sampled.
    symbolic: bool
    # The plan analysis' abstract state of a symbolic method, "module:class", imported when first
    # used (as registry.py's entries are): -m's help must not load the analysis.
    plan_state: str | None = None
    # Tier 1: the runtime's engine for the method (RT_METHOD_<NAME> in runtime_c/src/engine/methods.h).
    # A checkpoint of a symbolic state holds the id, so a method keeps its id for good.
    engine: int | None = None
    # How the operations of §10.3 run where tier 2 (staged_inference.py) differs by method; the
    # runtime's engine makes the same choices by its id (rv.c, ds.c).
    # A variable is made a root by delayed sampling's graft, through its node states (§13.1-13.3),
    # rather than by hoisting (§12.2).
    grafts: bool = False
    # An assume keeps at most one symbolic parent and draws the others (§13.2, 14.1).
    one_parent: bool = False

    def plan_state_class(self) -> type:
        module, _, attribute = self.plan_state.partition(":")
        return getattr(importlib.import_module(module), attribute)


METHODS: dict[str, Method] = {m.name: m for m in (
    Method("pf", "plain particle filter", symbolic=False),
    Method("ssi", "semi-symbolic inference", symbolic=True,
           plan_state="sirenc.passes.plan_analysis.ssi:SSIState", engine=0),
    Method("ds", "delayed sampling", symbolic=True,
           plan_state="sirenc.passes.plan_analysis.ds:DSState", engine=1, grafts=True, one_parent=True),
    Method("bp", "belief propagation", symbolic=True,
           plan_state="sirenc.passes.plan_analysis.bp:BPState", engine=2, one_parent=True),
)}

# The method that keeps nothing symbolic: what a program runs as once compiling has resolved all
# its symbolic state into numbers (tier 2).
PARTICLE_FILTER = "pf"
# What `sirenc`, `sirenc run`, `sirenc check` and `sirenc.compile` use without -m: the one method
# whose plan analysis accepts every program. (The original defaults to ssi; the `siren` command
# keeps that default, siren_cli.py.)
DEFAULT = PARTICLE_FILTER


def get(name: str) -> Method:
    method = METHODS.get(name)
    if method is None:
        raise SirenUsageError(f"unknown method '{name}' (choose one of {', '.join(METHODS)})")
    return method


def symbolic_names() -> list[str]:
    return [m.name for m in METHODS.values() if m.symbolic]


def keeps_symbolic_state(name: str) -> bool:
    """Whether a model whose descriptor names method `name` may keep symbolic state (and so has a
    runtime plan): a name this table does not know is one the runtime runs as ssi (sym.c)."""
    method = METHODS.get(name)
    return method is None or method.symbolic
