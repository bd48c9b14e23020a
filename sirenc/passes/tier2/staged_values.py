"""The values `specialize-conjugacy` stages besides numbers: a pair, a distribution and a list of
symbolic values (a trajectory), whose parts are staged numbers (staged_symbolic's expressions),
concrete values of the program being built, or such values again.

With them, what every part of the specializer asks of a type (`has_sym`) and does with a block
built for nothing (`discard`: a trial run of a loop body, a branch given up).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Attribute, Block, SSAValue

from sirenc.ir import siren
from sirenc.ir.siren import is_sym
from sirenc.passes.tier2.staged_symbolic import Expr


@dataclass
class SymDist:
    family: str
    params: list[Expr]


@dataclass
class SPair:
    first: object
    second: object


CHAINED = "chained"


@dataclass
class SList:
    """A list of symbolic values (a trajectory, `x :: xs`): its first elements as staged values
    (in a loop's accumulator, at most one),
    then `records`, the concrete list of the others as (a, b) pairs: each element's mean is
    a * (the mean of the element before it) + b (as (a, (b, c)) where the result carries posterior
    atoms: c is the element's variance given the element before it, so its own variance is
    a^2 * (that element's variance) + c). An element goes into the records once nothing
    can change it any more but the final expectation (ARCHITECTURE.md §10.4), which is then a backward pass
    (the smoothing that tier 1's final marginalisation performs swap by swap). `records` is None
    for a list literal, whose elements are all in `items`. With `anchor` (a variable the loop
    keeps, gtree's root `a` of its leaves `b :: bs`), each record is of that variable instead of
    the element before it: an element's mean is a * (the anchor's mean) + b, its variance given it
    c. `anchor` is None while every record is a constant's (valid either way: a is 0), CHAINED once
    one is of the element before it."""

    items: list
    records: SSAValue | None
    anchor: object = None


def has_sym(t: Attribute) -> bool:
    return siren.holds(t, lambda leaf: is_sym(leaf) or isinstance(leaf, siren.SymDistType))


def discard(block: Block) -> None:
    for op in reversed(list(block.ops)):
        op.detach()
        op.erase(safe_erase=False)
