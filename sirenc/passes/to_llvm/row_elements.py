"""Step 0 of `lower-smc-to-llvm`: the elements of a streamed row that the step reads, read where the row is.

A streamed program reads the elements of each row, ``List.hd(List.tl^k(row))``, once per
particle-step. As list operations these are a call per ``List.tl`` and, for ``List.hd``, the
decoding of the row's handle that ``smc.next_row`` has just encoded (the handle passes through
the loop's block arguments, so LLVM cannot fold the two). Here an ``smc.next_row`` whose row
only ever goes to such reads, one after another in one block (arithmetic between them aside),
becomes an `smc.next_row_reading`: its lowering reads elements k of the row in place, where it
already has the row's bounds, and says whether the row is long enough for every read (then none
of them can fail). The reads themselves run only when it is not, in order, in the else branch
of an ``scf.if`` where the first of them was, so that a row that is too short or not read in
place (streamed in, or past the end) gets the same answer or the same error at the same op.

    %more, %row, %read, %v0, %v1 = "smc.next_row_reading"(%i) <{point = 1 : i32, at = array<i64: 0, 1>,
                                                                 length = 2 : i64}> ...
    ... the loop's body gets %read, %v0, %v1 as block arguments ...
    %y, %z = scf.if %read -> (f64, f64) { scf.yield %v0, %v1 } else {
      %h = "smc.head"(%row) ; %t = "smc.tail"(%row) ; %h1 = "smc.head"(%t) ; scf.yield %h, %h1 }

It runs after `spill-across-suspends`, so the row the reads take is the body's block argument
only if no suspension comes between the two (otherwise they would take a frame slot's reload,
which this leaves alone): the new block arguments need no slot. The ``smc`` level is unchanged,
and so is what the JAX back end reads.
"""

from __future__ import annotations

from collections.abc import Collection

from xdsl.dialects import scf
from xdsl.dialects.builtin import DenseArrayBase, Float64Type, IntegerAttr, IntegerType, f64, i1, i64
from xdsl.ir import Block, BlockArgument, Operation, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation, irdl_op_definition, operand_def, opt_prop_def, prop_def, result_def, var_result_def,
)

from sirenc.ir import smc
from sirenc.passes.rewriting import insert_before, ops_of, replace


@irdl_op_definition
class NextRowReadingOp(IRDLOperation):
    """``smc.next_row`` that also reads elements `at` of the row in place: `read` is whether the
    row has at least `length` elements and was read here, and then `values` are those elements
    (else 0.0). Internal to `lower-smc-to-llvm`: made by its step 0, lowered by its step 2."""

    name = "smc.next_row_reading"
    index = operand_def(IntegerType)
    point = opt_prop_def(IntegerAttr)
    at = prop_def(DenseArrayBase)
    length = prop_def(IntegerAttr)
    more = result_def(IntegerType)
    row = result_def(smc.ListHandleType)
    read = result_def(IntegerType)
    values = var_result_def(Float64Type)

    def __init__(self, next_row: smc.NextRowOp, at: list[int], length: int):
        super().__init__(operands=[next_row.index],
                         result_types=[i1, next_row.row.type, i1, [f64] * len(at)],
                         properties={"point": next_row.point, "at": DenseArrayBase.from_list(i64, at),
                                     "length": IntegerAttr(length, i64)})
        self.location = next_row.location


def read_rows_in_place(root: Operation) -> None:
    for op in ops_of(root):
        if isinstance(op, smc.NextRowOp):
            _read_in_place(op)


def _read_in_place(next_row: smc.NextRowOp) -> None:
    loop = next_row.parent_op()
    if not isinstance(loop, scf.WhileOp) or next_row.parent_block() is not loop.before_region.block:
        return
    passed = loop.before_region.block.last_op.args
    rows = [arg for arg, value in zip(loop.after_region.block.args, passed, strict=True) if value is next_row.row]
    if len(rows) != 1:
        return
    depths = _reads(rows[0])
    run = _in_a_row(depths) if depths else None
    if run is None:
        return
    heads = [op for op in run if isinstance(op, smc.HeadOp)]
    at = sorted({depths[h] for h in heads})
    # the longest list a read takes is the row without its first max(depths) elements
    reading = NextRowReadingOp(next_row, at, max(depths.values()) + 1)
    insert_before(reading, next_row)
    replace(next_row, [reading.more, reading.row])
    read, *values = _carry(loop, [reading.read, *reading.values])
    _unless_read(run, read, [values[at.index(depths[h])] for h in heads])


def _reads(row: SSAValue) -> dict[Operation, int] | None:
    """The ops that read `row` and the lists taken from it, each with k of the ``List.tl^k(row)``
    it takes; None if one of these lists goes anywhere but to a ``smc.head`` or ``smc.tail``."""
    depths: dict[Operation, int] = {}
    lists = [(row, 0)]
    while lists:
        value, k = lists.pop()
        for use in value.uses:
            user = use.operation
            if isinstance(user, smc.TailOp):
                lists.append((user.result, k + 1))
            elif not isinstance(user, smc.HeadOp):
                return None
            depths[user] = k
    return depths


def _in_a_row(ops: Collection[Operation]) -> list[Operation] | None:
    """`ops` in order, if they are ops of one block between which only arithmetic comes: then
    moving them into a branch before that arithmetic (which cannot fail, and which none of them
    takes) changes which op fails first for no row."""
    first = op = next(iter(ops))
    while op is not None and (op in ops or _arithmetic(op)):
        first = op if op in ops else first
        op = op.prev_op
    run = []
    op = first
    while len(run) < len(ops):
        if op in ops:
            run.append(op)
        elif op is None or not _arithmetic(op):
            return None
        op = op.next_op
    return run


def _arithmetic(op: Operation) -> bool:
    return op.name.startswith("arith.")


def _carry(loop: scf.WhileOp, values: list[SSAValue]) -> list[BlockArgument]:
    """Passes `values`, of `loop`'s before region, to its body as well: the body's new arguments.
    The loop is rebuilt, with a result for each value that nothing uses."""
    condition = loop.before_region.block.last_op
    condition.operands = [*condition.operands, *values]
    body = loop.after_region.block
    args = [body.insert_arg(v.type, len(body.args)) for v in values]
    before, after = loop.before_region, loop.after_region
    rebuilt = scf.WhileOp(list(loop.arguments), [*loop.result_types, *(v.type for v in values)],
                          loop.detach_region(before), loop.detach_region(after))
    rebuilt.location = loop.location
    insert_before(rebuilt, loop)
    replace(loop, rebuilt.results[:len(loop.results)])
    return args


def _unless_read(run: list[Operation], read: SSAValue, values: list[SSAValue]) -> None:
    """``scf.if %read`` gives `values` for the heads of `run`, else runs `run` for them."""
    heads = [op for op in run if isinstance(op, smc.HeadOp)]
    uses = [list(h.values[0].uses) for h in heads]
    otherwise = Block()
    branch = scf.IfOp(read, [f64] * len(heads), Region(Block([scf.YieldOp(*values)])), Region(otherwise))
    branch.location = run[0].location
    insert_before(branch, run[0])
    for op in run:
        op.detach()
        otherwise.add_op(op)
    otherwise.add_op(scf.YieldOp(*(h.values[0] for h in heads)))
    for head_uses, result in zip(uses, branch.results, strict=True):
        for use in head_uses:
            use.operation.operands[use.index] = result
