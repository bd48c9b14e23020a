"""`fold-constants`: float arithmetic whose operands are all constants becomes one constant.

irgen folds arithmetic on literals and on variables bound to constants (`- - 1.`, `let x1 = x0 +
1. in ...`), but not across a call. After inline-functions a call's result is a plain SSA value,
and functions each adding to the result of the one before (`val f1 = fun x -> f0(x) + 1. in ...`)
are folded here into one constant instead of an op per operator through every later stage
(issue 11). The values are ``siren.folded``'s, bit for bit those the compiled code computes; a
NaN result is left to the compiled code. A constant that no op uses any more goes with the last
op that read it.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from sirenc.ir import siren
from sirenc.ir.build import Attributes
from sirenc.passes.rewriting import drop, insert_before, ops_of, replace


def _fold(op: Operation, attrs: Attributes) -> None:
    operands = op._operands
    values = []
    for operand in operands:
        number = siren.float_constant(operand)
        if number is None:
            return
        values.append(number)
    result = siren.folded(type(op), values)
    if result is None:
        return
    # A constant only op reads is reused for the value: it comes before op, so before every use
    # of op's result too.
    dead = [value.owner for value in dict.fromkeys(operands) if _only_user(value, op)]
    if dead:
        const = dead.pop()
        const.properties["value"] = attrs.float(result)
    else:
        const = siren.ConstOp(attrs.float(result))
        insert_before(const, op)
    const.location = op.location
    replace(op, [const.result])
    for unused in dead:
        drop(unused)


def _only_user(value, op: Operation) -> bool:
    use = value.first_use
    while use is not None:
        if use._operation is not op:
            return False
        use = use._next_use
    return True


def fold_constants(module: ModuleOp) -> None:
    attrs = Attributes()
    # In program order: an op's operands are folded before it is.
    for op in [op for op in ops_of(module) if type(op) in siren.FOLDS]:
        _fold(op, attrs)


@dataclass(frozen=True)
class FoldConstants(ModulePass):
    name = "fold-constants"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        fold_constants(op)
