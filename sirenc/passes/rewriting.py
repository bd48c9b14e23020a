"""Rewriting helpers for the lowerings, cheaper per op than xDSL's pattern rewriter: a big program
is hundreds of thousands of ops, each rewritten once per lowering (issue 11).

A lowering replaces every op once, in one walk over a list of the ops taken before it starts (what
``PatternRewriteWalker(apply_recursively=False)`` does, without its worklist, listeners and
insertion points): the ops a rewrite inserts are already lowered, and a rewrite erases no op the
walk has still to visit. Each helper makes the IR xDSL's rewriter makes (the same ops, uses in the
same order, name hints), less what nothing reads afterwards.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import Block, Operation, SSAValue, SSAValues

_NO_VALUES = SSAValues()


def insert_before(new: Operation, at: Operation) -> None:
    """``at.parent.insert_op_before(new, at)`` for a new op (or one just detached), which no
    region of `at`'s block can contain: without the check of ancestors."""
    _link(new, at.parent, at._prev_op, at, "insert_before")


def append(new: Operation, block: Block) -> None:
    """``block.add_op(new)`` for a new op (or one just detached), without the check of ancestors."""
    _link(new, block, block._last_op, None, "append")


def _link(new: Operation, block: Block, prev: Operation | None, next_op: Operation | None, caller: str) -> None:
    """Puts `new` into `block` between `prev` and `next_op` (None: the block's end)."""
    if new.parent is not None:
        raise ValueError(f"{caller}: the op is still in a block")
    new.parent = block
    new._prev_op, new._next_op = prev, next_op
    if prev is None:
        block._first_op = new
    else:
        prev._next_op = new
    if next_op is None:
        block._last_op = new
    else:
        next_op._prev_op = new


def replace_uses(old: SSAValue, value: SSAValue) -> None:
    """``old.replace_all_uses_with(value)``, each use moved in place rather than through the
    operand list's views (a new use each) and slices (an `SSAValues` each)."""
    if old is value:
        return
    use = old.first_use
    while use is not None:
        following = use._next_use
        user = use._operation
        operands = list(user._operands)
        operands[use._index] = value
        user._operands = SSAValues(operands)
        # value.add_use(use), without a call per use
        first = value.first_use
        use._prev_use, use._next_use = None, first
        if first is not None:
            first._prev_use = use
        value.first_use = use
        use = following
    old.first_use = None
    # The name hint's setter validates the name again: only when there is one to carry over.
    if value._name is None and old._name is not None:
        value.name_hint = old._name


def drop(op: Operation) -> None:
    """Erases `op`, whose results are unused: detached, its operands' uses (and its regions')
    dropped, and its results emptied. Nothing refers to it then, so reference counting frees it
    at once, instead of the cyclic collector (which would find it through its results) later;
    and there is no `ErasedSSAValue` per result, as ``Operation.erase`` makes."""
    for result in op.results:
        if result.first_use is not None:
            raise ValueError(f"drop: a result of {op.name} is still used")
    _unlink(op)
    # Operand by operand, ``op.drop_all_references()`` without a call per use; that takes what
    # else the op refers to.
    for value, use in zip(op._operands, op._operand_uses):
        prev, following = use._prev_use, use._next_use
        if prev is None:
            value.first_use = following
        else:
            prev._next_use = following
        if following is not None:
            following._prev_use = prev
    op._operand_uses = ()
    if op._successors:
        op.drop_all_references()
        op.results = _NO_VALUES
        return
    for region in op.regions:
        # ``region.drop_all_references()``, without a generator per block.
        region.parent = None
        block = region._first_block
        while block is not None:
            following = block._next_block
            block.parent = block._next_block = block._prev_block = None
            inner = block._first_op
            while inner is not None:
                inner.drop_all_references()
                inner = inner._next_op
            block = following
    op.results = _NO_VALUES


def _unlink(op: Operation) -> None:
    """``op.parent.detach_op(op)``."""
    block = op.parent
    prev, following = op._prev_op, op._next_op
    if prev is None:
        block._first_op = following
    else:
        prev._next_op = following
        op._prev_op = None
    if following is None:
        block._last_op = prev
    else:
        following._prev_op = prev
        op._next_op = None
    op.parent = None


def move_ops_before(block: Block, at: Operation) -> list[Operation]:
    """Moves all of `block`'s ops, in order, before `at` (in another block), as one splice of
    the two lists of ops; the ops moved."""
    first, last = block._first_op, block._last_op
    if first is None:
        return []
    parent = at.parent
    moved = []
    op = first
    while op is not None:
        op.parent = parent
        moved.append(op)
        op = op._next_op
    prev = at._prev_op
    first._prev_op = prev
    if prev is None:
        parent._first_op = first
    else:
        prev._next_op = first
    last._next_op = at
    at._prev_op = last
    block._first_op = block._last_op = None
    return moved


def replace(op: Operation, values: Sequence[SSAValue]) -> None:
    """Replaces `op`'s results by `values` (``rewriter.replace(op, [], values)``) and erases it."""
    for old, value in zip(op.results, values, strict=True):
        replace_uses(old, value)
    drop(op)


def ops_of(root: Operation, region_first: bool = False) -> list[Operation]:
    """``list(root.walk(region_first=region_first))``: without xDSL's generator per op and
    level of nesting, half the time of a walk of a big program (several per stage)."""
    out: list[Operation] = []
    _visit(root, out, region_first)
    return out


# Not a closure in ops_of: one calling itself is a cycle that would keep the list, and every op a
# lowering dropped from it, alive until the next full collection.
def _visit(op: Operation, out: list[Operation], region_first: bool) -> None:
    if not region_first:
        out.append(op)
    for region in op.regions:
        for block in region.blocks:
            inner = block._first_op
            while inner is not None:
                if inner.regions:
                    _visit(inner, out, region_first)
                else:
                    out.append(inner)
                inner = inner._next_op
    if region_first:
        out.append(op)
