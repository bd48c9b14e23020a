"""`spill-across-suspends`: keep values alive across suspension points in the frame.

A particle's procedure returns at every ``smc.suspend`` and is re-entered at
the same point later, so no SSA value may flow across a suspension: after
re-entry the code that defined it has not run. A value V is *live across* a
suspension S when V is visible at S and either some use of V comes after S in
program order, or V is defined outside a loop that contains S and used inside
that loop (the next iteration reads it again). Such a value gets an 8-byte
frame slot: it is stored right after its definition and every use reads the
slot. Values not live across any suspension stay in registers, which is why
the frame of the random-walk model holds two words, not every temporary.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, ModuleOp, StringAttr, i32, i64
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from sirenc.ir import smc

WORD = 8


def _preorder(op: Operation, order: dict[Operation, int]) -> None:
    order[op] = len(order)
    for region in op.regions:
        for block in region.blocks:
            for inner in block.ops:
                _preorder(inner, order)


def _visible(suspend: smc.SuspendOp, entry: Block) -> list[SSAValue]:
    """Values defined before `suspend` on its path from the function entry."""
    out: list[SSAValue] = []
    op: Operation = suspend
    while True:
        block = op.parent_block()
        if block is entry:
            prior = block.ops
        else:
            out.extend(block.args)
            prior = block.ops
        for earlier in prior:
            if earlier is op:
                break
            out.extend(earlier.results)
        if block is entry:
            return out
        op = block.parent_op()


def _enclosing_loops(op: Operation) -> list[scf.WhileOp]:
    loops = []
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, func.FuncOp):
        if isinstance(parent, scf.WhileOp):
            loops.append(parent)
        parent = parent.parent_op()
    return loops


def _defined_inside(value: SSAValue, loop: scf.WhileOp) -> bool:
    # A block argument of a loop's own region is redefined every iteration.
    if isinstance(value, BlockArgument):
        return loop.is_ancestor(value.block)
    return loop.is_ancestor(value.owner)


def live_across(fn: func.FuncOp) -> dict[smc.SuspendOp, list[SSAValue]]:
    """For every suspension, the values that must survive it, in definition order."""
    order: dict[Operation, int] = {}
    for op in fn.body.block.ops:
        _preorder(op, order)
    entry = fn.body.block
    live: dict[smc.SuspendOp, list[SSAValue]] = {}
    for suspend in (op for op in order if isinstance(op, smc.SuspendOp)):
        position = order[suspend]
        loops = _enclosing_loops(suspend)
        live[suspend] = []
        for value in _visible(suspend, entry):
            for use in value.uses:
                user = use.operation
                later = order[user] > position
                reread = any(
                    user is not loop and loop.is_ancestor(user) and not _defined_inside(value, loop)
                    for loop in loops
                )
                if later or reread:
                    live[suspend].append(value)
                    break
    return live


def _suspending(fn: func.FuncOp) -> set[Operation]:
    """Every suspension and every op with one somewhere inside it."""
    out: set[Operation] = set()
    for op in fn.walk():
        if isinstance(op, smc.SuspendOp):
            parent: Operation | None = op
            while parent is not None and parent is not fn:
                out.add(parent)
                parent = parent.parent_op()
    return out


def _needs_reload(value: SSAValue, user: Operation, suspending: set[Operation]) -> bool:
    """False when `user` reads `value` in its own block before any suspension can intervene."""
    if isinstance(value, BlockArgument):
        block, op = value.block, value.block.first_op
    else:
        block, op = value.owner.parent_block(), value.owner.next_op
    if user.parent_block() is not block:
        return True
    while op is not None and op is not user:
        if op in suspending:
            return True
        op = op.next_op
    return False


def spill(fn: func.FuncOp) -> None:
    frame = fn.body.block.args[1]
    offset = fn.attributes["smc.frame_size"].value.data
    suspending = _suspending(fn)
    live = live_across(fn)
    slots: dict[SSAValue, int] = {}
    for value in dict.fromkeys(v for values in live.values() for v in values):
        uses = [u for u in value.uses if _needs_reload(value, u.operation, suspending)]
        if isinstance(value.owner, arith.ConstantOp):
            # Cheaper to recreate a constant after re-entry than to keep it.
            for use in uses:
                copy = value.owner.clone()
                Rewriter.insert_op(copy, InsertPoint.before(use.operation))
                use.operation.operands[use.index] = copy.result
            continue
        store = smc.FrameStoreOp(frame, value, offset)
        if isinstance(value, BlockArgument):
            block = value.block
            if block.first_op is None:
                block.add_op(store)
            else:
                Rewriter.insert_op(store, InsertPoint.before(block.first_op))
        else:
            Rewriter.insert_op(store, InsertPoint.after(value.owner))
        for use in uses:
            load = smc.FrameLoadOp(frame, offset, value.type)
            Rewriter.insert_op(load, InsertPoint.before(use.operation))
            use.operation.operands[use.index] = load.result
        slots[value] = offset
        offset += WORD
    fn.attributes["smc.frame_size"] = IntegerAttr(offset, i64)
    # Number the resume points, and record which frame slots hold list handles
    # at each: the runtime's collector starts from these roots.
    roots = []
    for point, suspend in enumerate((op for op in fn.walk() if isinstance(op, smc.SuspendOp)), start=1):
        suspend.point = IntegerAttr(point, suspend.status.type)
        for value in live.get(suspend, []):
            if isinstance(value.type, smc.ListHandleType) and value in slots:
                roots.append(ArrayAttr([IntegerAttr(point, i32), IntegerAttr(slots[value], i64),
                                        StringAttr(value.type.descriptor)]))
    fn.attributes["smc.roots"] = ArrayAttr(roots)


@dataclass(frozen=True)
class SpillAcrossSuspends(ModulePass):
    name = "spill-across-suspends"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for fn in op.ops:
            if isinstance(fn, func.FuncOp):
                spill(fn)
