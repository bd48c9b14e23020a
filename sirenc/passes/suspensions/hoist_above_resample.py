"""`hoist-above-resample`: pure arithmetic after an ``smc.resample`` runs before it instead.

Whatever is live across a resample point lives in the particle's frame: stored before it,
copied with the particle when it is resampled, loaded after it. Code after the point often
combines several such values into one, for example a conjugate posterior's mean kept as the
pieces ``m + k * (y - m0)`` until it is used (specialize-conjugacy's tier 2). Computing it
before the point keeps one number in the frame instead of four, and computes it once per
parent rather than once per copy. The answers do not change: pure ops (xDSL's ``Pure``
trait: arithmetic, comparisons, constants) give the same result wherever they run.

An op right after the point (in the same block) moves above it when all its operands are
already available there and moving it does not make more values live across the point:
its results count one each, an operand counts minus one when this op is its last use after
the point. Constants an op needs come along. The ops are visited in order, so a chain that
folds many values into one moves as a whole.

    "smc.resample"() : () -> ()                      %a = arith.addf %y, %m0 : f64
    %a = arith.addf %y, %m0 : f64              ->    %b = arith.mulf %k, %a : f64
    %b = arith.mulf %k, %a : f64                     "smc.resample"() : () -> ()
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.traits import IsTerminator, Pure

from sirenc.ir import smc
from sirenc.passes.rewriting import ops_of
from sirenc.passes.suspensions.spill_across_suspends import defined_inside, enclosing_loops, meeting, path_to


def _movable(op: Operation) -> bool:
    return op.has_trait(Pure) and not op.regions and not op.has_trait(IsTerminator)


def _after(path: dict[Block, Operation], user: Operation) -> bool:
    """Whether `user` may run after the point `path` leads to."""
    met = meeting(path, user)
    if met is None:
        return True
    on_path = path[met.parent_block()]
    if met is on_path:   # in another region of an op around the point
        return not isinstance(met, scf.IfOp)   # an if's other branch never follows; a loop's does
    block = met.parent_block()
    return block.get_operation_index(met) > block.get_operation_index(on_path)


def _available(value: SSAValue, path: dict[Block, Operation]) -> bool:
    """Whether `value` is defined before the point (a constant: wherever, it moves along)."""
    owner = value.owner
    if isinstance(owner, Block):
        return owner in path
    if isinstance(owner, arith.ConstantOp):
        return True
    block = owner.parent_block()
    return block in path and block.get_operation_index(owner) < block.get_operation_index(path[block])


def _in_loop_around(value: SSAValue, point: Operation) -> bool:
    """Whether a loop around the point does not hold `value`'s definition: the next iteration
    reads it again, so it lives across the point whatever moves."""
    return any(not defined_inside(value, loop) for loop in enclosing_loops(point))


def _dies_at(value: SSAValue, op: Operation, point: Operation, path: dict[Block, Operation]) -> bool:
    """Whether `op` is the last use of `value` after the point, and `value` is worth a slot."""
    if isinstance(value.owner, arith.ConstantOp) or _in_loop_around(value, point):
        return False  # a constant is recreated after the point, never spilled
    return all(use.operation is op or not _after(path, use.operation) for use in value.uses)


def _lives_longer(op: Operation, point: Operation, path: dict[Block, Operation]) -> bool:
    live = len(op.results) - sum(_dies_at(v, op, point, path) for v in set(op.operands))
    return live > 0


def hoist(point: Operation) -> None:
    path = path_to(point)
    block = point.parent_block()
    op = point.next_op
    while op is not None:
        following = op.next_op
        if (_movable(op) and not isinstance(op, arith.ConstantOp)
                and all(_available(v, path) for v in op.operands) and not _lives_longer(op, point, path)):
            for v in op.operands:
                owner = v.owner
                if isinstance(owner, arith.ConstantOp) and owner.parent_block() is block \
                        and block.get_operation_index(owner) > block.get_operation_index(point):
                    owner.detach()
                    block.insert_op_before(owner, point)
            op.detach()
            block.insert_op_before(op, point)
        op = following


@dataclass(frozen=True)
class HoistAboveResample(ModulePass):
    name = "hoist-above-resample"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for point in [o for o in ops_of(op) if type(o) is smc.ResampleOp]:
            hoist(point)
