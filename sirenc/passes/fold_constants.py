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
from sirenc.passes.rewriting import drop, ops_of, replace


def _fold(op: Operation, attrs: Attributes) -> None:
    operands = op.operands
    values = [siren.float_constant(operand) for operand in operands]
    if None in values:
        return
    result = siren.folded(type(op), values)
    if result is None:
        return
    # A constant only op reads is reused for the value: it comes before op, so before every use
    # of op's result too.
    block = op.parent
    dead = [value.owner for value in dict.fromkeys(operands)
            if all(use.operation is op for use in value.uses)]
    if dead:
        const = dead.pop()
        const.properties["value"] = attrs.float(result)
    else:
        const = siren.ConstOp(attrs.float(result))
        block.insert_op_before(const, op)
    const.location = op.location
    replace(op, [const.result])
    for unused in dead:
        drop(unused)


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
