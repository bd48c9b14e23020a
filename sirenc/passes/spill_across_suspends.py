"""`spill-across-suspends`: keep values alive across suspension points in the frame.

A particle stops at every suspension point (``smc.resample``, ``smc.next_row``)
and is re-entered there later, so no SSA value may flow across one: after
re-entry the code that defined it has not run. A value V is *live across* a
suspension S when V is visible at S and either some use of V comes after S in
program order, or V is defined outside a loop that contains S and used inside
that loop (the next iteration reads it again). ``smc.next_row`` runs again
after re-entry (it waits by suspending and then repeats the same row request),
so its own ``index`` operand is live across it as well.

Such a value gets a frame slot (numbered from 0): it is stored right after its
definition and every use that a suspension may separate from the definition
reads the slot. A constant is recreated before such a use instead: cheaper
than keeping it. Values not live across any suspension stay in registers,
which is why the random-walk model's frame has four slots (the row index
twice, the accumulator, the draw), not one per temporary.

    %x = "smc.sample"(%m, %v) <{family = "gaussian"}> : (f64, f64) -> f64
    "smc.frame_store"(%x) <{slot = 0 : i64}> : (f64) -> ()
    "smc.resample"() <{point = 1 : i32}> : () -> ()
    %x1 = "smc.frame_load"() <{slot = 0 : i64}> : () -> f64

The suspension points are numbered 1, 2, ... in walk order (0 is the start),
and the particle's ``#smc.model`` records the number of slots and, per point,
the slots holding list handles (where the runtime's collector starts) and, under
a symbolic method, the slots holding ``!smc.sym`` words (descriptor ``S``: spilled
like an ``f64``, one word, and traced by the runtime's symbolic state).

Contract with `lower-smc-to-llvm`: afterwards the ``index`` of every
``smc.next_row`` is defined by the op right before it, an ``smc.frame_load``
or an ``arith.constant``, so the code that re-enters the particle at that
point starts at that op and repeats the request with the index reloaded.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i32
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from sirenc.ir import smc


def _preorder(op: Operation, order: dict[Operation, int]) -> None:
    order[op] = len(order)
    for region in op.regions:
        for block in region.blocks:
            for inner in block.ops:
                _preorder(inner, order)


def _visible(suspend: Operation, entry: Block) -> list[SSAValue]:
    """Values defined before `suspend` on its path from the particle's entry."""
    out: list[SSAValue] = []
    op: Operation = suspend
    while True:
        block = op.parent_block()
        if block is not entry:
            out.extend(block.args)
        for earlier in block.ops:
            if earlier is op:
                break
            out.extend(earlier.results)
        if block is entry:
            return out
        op = block.parent_op()


def _enclosing_loops(op: Operation) -> list[scf.WhileOp]:
    loops = []
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, smc.ParticleOp):
        if isinstance(parent, scf.WhileOp):
            loops.append(parent)
        parent = parent.parent_op()
    return loops


def _defined_inside(value: SSAValue, loop: scf.WhileOp) -> bool:
    # A block argument of a loop's own region is redefined every iteration.
    if isinstance(value, BlockArgument):
        return loop.is_ancestor(value.block)
    return loop.is_ancestor(value.owner)


def reloaded(next_row: smc.NextRowOp) -> bool:
    """Whether `next_row`'s index is already recomputed right before it (the contract above)."""
    owner = next_row.index.owner
    return owner is next_row.prev_op and isinstance(owner, smc.FrameLoadOp | arith.ConstantOp)


def _retried(suspend: Operation) -> bool:
    """`suspend` is a row request that reads its index again when it is retried after re-entry."""
    return isinstance(suspend, smc.NextRowOp) and not reloaded(suspend)


def live_across(particle: smc.ParticleOp) -> dict[Operation, list[SSAValue]]:
    """For every suspension point, the values that must survive it."""
    order: dict[Operation, int] = {}
    for op in particle.body.block.ops:
        _preorder(op, order)
    entry = particle.body.block
    live: dict[Operation, list[SSAValue]] = {}
    for suspend in (op for op in order if isinstance(op, smc.SUSPENSIONS)):
        position = order[suspend]
        loops = _enclosing_loops(suspend)
        live[suspend] = []
        for value in _visible(suspend, entry):
            for use in value.uses:
                user = use.operation
                later = order[user] > position or (user is suspend and _retried(suspend))
                reread = any(
                    user is not loop and loop.is_ancestor(user) and not _defined_inside(value, loop)
                    for loop in loops
                )
                if later or reread:
                    live[suspend].append(value)
                    break
    return live


def _suspending(particle: smc.ParticleOp) -> set[Operation]:
    """Every suspension point and every op with one somewhere inside it."""
    out: set[Operation] = set()
    for op in particle.walk():
        if isinstance(op, smc.SUSPENSIONS):
            parent: Operation | None = op
            while parent is not None and parent is not particle:
                out.add(parent)
                parent = parent.parent_op()
    return out


def _needs_reload(value: SSAValue, user: Operation, suspending: set[Operation]) -> bool:
    """False when `user` reads `value` in its own block before any suspension can intervene."""
    if user in suspending and _retried(user):
        return True  # re-entry repeats the request: its index must be read from the frame
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


def spill(particle: smc.ParticleOp) -> None:
    model = particle.model
    suspending = _suspending(particle)
    live = live_across(particle)
    slots: dict[SSAValue, int] = {}
    next_slot = model.frame_slots.value.data
    for value in dict.fromkeys(v for values in live.values() for v in values):
        uses = [u for u in value.uses if _needs_reload(value, u.operation, suspending)]
        if isinstance(value.owner, arith.ConstantOp):
            for use in uses:
                copy = value.owner.clone()
                Rewriter.insert_op(copy, InsertPoint.before(use.operation))
                use.operation.operands[use.index] = copy.result
            continue
        slot = next_slot
        next_slot += 1
        store = smc.FrameStoreOp(value, slot)
        if isinstance(value, BlockArgument):
            block = value.block
            if block.first_op is None:
                block.add_op(store)
            else:
                Rewriter.insert_op(store, InsertPoint.before(block.first_op))
        else:
            Rewriter.insert_op(store, InsertPoint.after(value.owner))
        for use in uses:
            load = smc.FrameLoadOp(slot, value.type)
            Rewriter.insert_op(load, InsertPoint.before(use.operation))
            use.operation.operands[use.index] = load.result
        slots[value] = slot
    # Number the suspension points, and record which slots hold list handles or symbolic
    # words at each.
    roots = model.root_list()
    for point, suspend in enumerate((op for op in particle.walk() if isinstance(op, smc.SUSPENSIONS)), start=1):
        suspend.point = IntegerAttr(point, i32)
        for value in live.get(suspend, []):
            if isinstance(value.type, smc.ListHandleType) and value in slots:
                roots.append((point, slots[value], value.type.descriptor))
            elif isinstance(value.type, smc.SymType) and value in slots:
                roots.append((point, slots[value], "S"))
    particle.model = model.with_frame(next_slot, roots)


@dataclass(frozen=True)
class SpillAcrossSuspends(ModulePass):
    name = "spill-across-suspends"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for particle in op.ops:
            if isinstance(particle, smc.ParticleOp):
                spill(particle)
