"""`spill-across-suspends`: keep values alive across suspension points in the frame.

A particle stops at every suspension point (``smc.resample``, ``smc.next_row``)
and is re-entered there later, so no SSA value may flow across one: after
re-entry the code that defined it has not run. A value V is *live across* a
suspension S when V is visible at S and either some use of V comes after S in
program order, or V is defined outside a loop that contains S and used inside
that loop (the next iteration reads it again). ``smc.next_row`` runs again
after re-entry (it waits by suspending and then repeats the same row request),
so its own ``index`` operand is live across it as well.

A use in the other branch of an ``scf.if`` that holds the suspension in one
branch never follows it, though it comes later in program order.

Such a value gets a frame slot (numbered from 0): it is stored right after its
definition and every use that a suspension may separate from the definition
reads the slot. A constant is recreated before such a use instead: cheaper
than keeping it. Values not live across any suspension stay in registers, and
values never kept at once share a slot (each holds its slot from its store to
its last reload, and through a loop that reads it again): the random-walk
model's frame has two slots (the row index and the accumulator across the row
request, then the next index and the draw across resample()), not one per
temporary. A smaller frame is less to copy when particles are resampled.
A loop-carried value is stored where it is passed (before the loop, before
the back edge), and the value it takes next prefers its slot: the walk's
draw and next index are reloaded after resample() from the slots the loop
carries them in, so its back edge stores nothing.

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

from collections.abc import Iterable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i32
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from sirenc.ir import smc
from sirenc.passes.rewriting import ops_of


def _preorder(op: Operation, order: dict[Operation, int]) -> None:
    order[op] = len(order)
    for region in op.regions:
        for block in region.blocks:
            for inner in block.ops:
                _preorder(inner, order)


def program_order(particle: smc.ParticleOp) -> dict[Operation, int]:
    """Every op of the particle numbered in program order (an op before the ops inside it)."""
    order: dict[Operation, int] = {}
    for op in particle.body.block.ops:
        _preorder(op, order)
    return order


def path_to(point: Operation) -> dict[Block, Operation]:
    """For each block around `point`: the op of that block that is or holds `point`."""
    path = {}
    op: Operation | None = point
    while op is not None:
        path[op.parent_block()] = op
        op = op.parent_op()
    return path


def meeting(path: dict[Block, Operation], user: Operation) -> Operation | None:
    """`user`, or the op around it, in the innermost block of `path` that holds it (None: none)."""
    while user is not None and user.parent_block() not in path:
        user = user.parent_op()
    return user


def in_other_branch(path: dict[Block, Operation], user: Operation) -> bool:
    """Whether `user` is in the other branch of an ``scf.if`` that holds the point of `path` in
    one: it never runs after the point, though it may come later in program order."""
    met = meeting(path, user)
    return met is not None and met is path[met.parent_block()] and isinstance(met, scf.IfOp)


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


def enclosing_loops(op: Operation) -> list[scf.WhileOp]:
    loops = []
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, smc.ParticleOp):
        if isinstance(parent, scf.WhileOp):
            loops.append(parent)
        parent = parent.parent_op()
    return loops


def defined_inside(value: SSAValue, loop: scf.WhileOp) -> bool:
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


def live_across(particle: smc.ParticleOp, order: dict[Operation, int]) -> dict[Operation, list[SSAValue]]:
    """For every suspension point, the values that must survive it (`order`: program_order)."""
    entry = particle.body.block
    live: dict[Operation, list[SSAValue]] = {}
    for suspend in (op for op in order if isinstance(op, smc.SUSPENSIONS)):
        position = order[suspend]
        loops = enclosing_loops(suspend)
        path = path_to(suspend)
        live[suspend] = []
        for value in _visible(suspend, entry):
            for use in value.uses:
                user = use.operation
                later = (order[user] > position and not in_other_branch(path, user)) \
                    or (user is suspend and _retried(suspend))
                reread = any(
                    user is not loop and loop.is_ancestor(user) and not defined_inside(value, loop)
                    for loop in loops
                )
                if later or reread:
                    live[suspend].append(value)
                    break
    return live


def _suspending(particle: smc.ParticleOp, points: list[Operation]) -> set[Operation]:
    """Every suspension point and every op with one somewhere inside it."""
    out: set[Operation] = set()
    for op in points:
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


def _busy(value: SSAValue, uses: list[Operation], order: dict[Operation, int],
          loop_end: dict[Operation, int]) -> tuple[int, int]:
    """The stretch of program order in which `value`'s slot holds it, in half steps (op k at
    2k: its reloads come before it, at 2k - 1, a result's store after it, at 2k + 1): from the
    store to the last reload, and to the end of every loop around a reload that does not
    redefine it."""
    if isinstance(value, BlockArgument):   # stored before the block's first op
        first = value.block.first_op
        start = 2 * order[first] - 1 if first else 2 * order[value.block.parent_op()] + 1
    else:
        start = 2 * order[value.owner] + 1
    stop = start
    for user in uses:
        stop = max(stop, 2 * order[user] - 1)
        for loop in enclosing_loops(user):
            if not defined_inside(value, loop):
                stop = max(stop, 2 * loop_end[loop] + 1)
    return start, stop


def _assign_slots(busy: dict[SSAValue, tuple[int, int]], first: int,
                  prefer: dict[SSAValue, SSAValue]) -> dict[SSAValue, int]:
    """Slots from `first` on, shared by values whose stretches do not overlap (left to right,
    each takes the lowest slot free by its start, or the slot of the value `prefer` names when
    that one is free): the frame is as small as the most values kept at once."""
    slots: dict[SSAValue, int] = {}
    free_after: list[int] = []   # per slot, the end of the last stretch it holds
    for value, (start, stop) in sorted(busy.items(), key=lambda item: item[1]):
        wanted = slots.get(prefer.get(value)) if value in prefer else None
        if wanted is not None and free_after[wanted - first] < start:
            k = wanted - first
        else:
            k = next((k for k, end in enumerate(free_after) if end < start), len(free_after))
        if k == len(free_after):
            free_after.append(stop)
        else:
            free_after[k] = stop
        slots[value] = first + k
    return slots


def _carried(loops: Iterable[scf.WhileOp]) -> dict[BlockArgument, tuple[scf.WhileOp, int]]:
    """Each loop-carried value (an argument of a loop's condition block): its loop and position."""
    return {arg: (loop, i) for loop in loops for i, arg in enumerate(loop.before_region.block.args)}


def _next_values(carried: dict[BlockArgument, tuple[scf.WhileOp, int]]) -> dict[SSAValue, SSAValue]:
    """The value each loop-carried value takes on the next iteration, mapped to it: kept in the
    same slot, the loop's back edge has nothing to store (`_store_on_edges`)."""
    out: dict[SSAValue, SSAValue] = {}
    for arg, (loop, i) in carried.items():
        out.setdefault(loop.after_region.block.last_op.operands[i], arg)
    return out


def _holds(value: SSAValue, slot: int, before: Operation) -> bool:
    """`value` was just reloaded from `slot`, and nothing between that and `before` stores to it."""
    load = value.owner
    if not isinstance(load, smc.FrameLoadOp) or load.slot.value.data != slot \
            or load.parent_block() is not before.parent_block():
        return False
    op = load.next_op
    while op is not before:
        if isinstance(op, smc.FrameStoreOp) and op.slot.value.data == slot:
            return False
        op = op.next_op
    return True


def _store_on_edges(arg: BlockArgument, loop: scf.WhileOp, i: int, slot: int) -> None:
    """A loop-carried value is stored where it is passed, not where the loop's condition block
    starts: its first value before the loop, the next one before the back edge, which is nothing
    to store when that value was reloaded from the slot the carried one keeps (the slot
    assignment prefers it), so each iteration does not copy the frame words it just read."""
    Rewriter.insert_op(smc.FrameStoreOp(loop.arguments[i], slot), InsertPoint.before(loop))
    yield_op = loop.after_region.block.last_op
    following = yield_op.operands[i]
    if not _holds(following, slot, yield_op):
        Rewriter.insert_op(smc.FrameStoreOp(following, slot), InsertPoint.before(yield_op))


def spill(particle: smc.ParticleOp) -> None:
    model = particle.model
    first = model.frame_slots.value.data
    points = [op for op in ops_of(particle) if isinstance(op, smc.SUSPENSIONS)]
    if not points:   # nothing to keep across one: the model as it was
        particle.model = model.with_frame(first, model.root_list())
        return
    suspending = _suspending(particle, points)
    order = program_order(particle)
    live = live_across(particle, order)
    # a loop's last op, in program order: the last of the ops inside it, numbered after it
    loop_end = {op: max(order[inner] for inner in op.walk()) for op in order if isinstance(op, scf.WhileOp)}
    reloads: dict[SSAValue, list] = {}
    for value in dict.fromkeys(v for values in live.values() for v in values):
        uses = [u for u in value.uses if _needs_reload(value, u.operation, suspending)]
        if isinstance(value.owner, arith.ConstantOp):
            for use in uses:
                copy = value.owner.clone()
                Rewriter.insert_op(copy, InsertPoint.before(use.operation))
                use.operation.operands[use.index] = copy.result
            continue
        reloads[value] = uses
    busy = {v: _busy(v, [u.operation for u in uses], order, loop_end) for v, uses in reloads.items()}
    carried = _carried(loop_end)
    slots = _assign_slots(busy, first, _next_values(carried))
    for value, uses in reloads.items():
        for use in uses:
            load = smc.FrameLoadOp(slots[value], value.type)
            Rewriter.insert_op(load, InsertPoint.before(use.operation))
            use.operation.operands[use.index] = load.result
    # The stores come after every reload: a back edge's store must not overwrite a slot before
    # the reload of another value passed on the same edge.
    for value in reloads:
        slot = slots[value]
        if value in carried:
            _store_on_edges(value, *carried[value], slot)
            continue
        store = smc.FrameStoreOp(value, slot)
        if isinstance(value, BlockArgument):
            block = value.block
            if block.first_op is None:
                block.add_op(store)
            else:
                Rewriter.insert_op(store, InsertPoint.before(block.first_op))
        else:
            Rewriter.insert_op(store, InsertPoint.after(value.owner))
    # Number the suspension points, and record which slots hold list handles or symbolic
    # words at each.
    roots = model.root_list()
    for point, suspend in enumerate(points, start=1):
        suspend.point = IntegerAttr(point, i32)
        for value in live.get(suspend, []):
            if isinstance(value.type, smc.ListHandleType) and value in slots:
                roots.append((point, slots[value], value.type.descriptor))
            elif isinstance(value.type, smc.SymType) and value in slots:
                roots.append((point, slots[value], "S"))
    particle.model = model.with_frame(max(slots.values(), default=first - 1) + 1, roots)


@dataclass(frozen=True)
class SpillAcrossSuspends(ModulePass):
    name = "spill-across-suspends"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for particle in op.ops:
            if isinstance(particle, smc.ParticleOp):
                spill(particle)
