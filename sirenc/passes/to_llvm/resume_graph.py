"""Step 2 of `lower-smc-to-llvm`, the runtime's side of it.

`ResumeGraph` is the control-flow graph (control_flow.py) of ``@siren_resume``: the pc is the
frame's first word, a structured value's block argument has its machine type, and a suspension
point stores its number in the pc and returns its status. ``smc.next_row`` reads a row the table
holds in place, else asks ``sirenrt_stream_row``; answered SIRENRT_NEED, it suspends, and re-entry
asks again from the reload of the row's index (the contract with `spill-across-suspends`).
"""

from __future__ import annotations

from xdsl.dialects import llvm
from xdsl.dialects.builtin import IntegerAttr, f64, i1, i64
from xdsl.ir import Attribute, Operation, SSAValue

from sirenc.ir import smc
from sirenc.passes.errors import LoweringError, where
from sirenc.passes.to_llvm.control_flow import ControlFlowGraph, point_of
from sirenc.passes.to_llvm.emitter import Emitter, Lowering
from sirenc.passes.to_llvm.resume_abi import AT_RESAMPLE, END, NEED, NEED_ROW, NIL, SLT, ULT, machine
from sirenc.passes.to_llvm.row_elements import NextRowReadingOp


class ResumeGraph(ControlFlowGraph):
    """@siren_resume's graph: the pc is the frame's first word, a structured value's block
    argument is its machine type, and a suspension point returns its status to the runtime."""

    suspensions = (*ControlFlowGraph.suspensions, NextRowReadingOp)

    def __init__(self, low: Lowering):
        super().__init__(low.fn.body, low.frame)
        self.low = low

    def block_type(self, t: Attribute) -> Attribute:
        return machine(t)

    def suspension(self, op: Operation) -> None:
        if isinstance(op, smc.ResampleOp):
            self.resample(op)
        elif isinstance(op, smc.NextRowOp | NextRowReadingOp):
            self.next_row(op)
        else:
            super().suspension(op)

    def resample(self, op: smc.ResampleOp) -> None:
        point = point_of(op)
        self.suspend(point, AT_RESAMPLE, op)
        self.block = self.new_block()
        self.resume_at(point, self.block)
        self.replace(op, [])

    def next_row(self, op: smc.NextRowOp | NextRowReadingOp) -> None:
        """Asks for the row; answered NEED, suspends, and re-entry asks again from the
        reload of the index on."""
        point = point_of(op)
        reload = self.retry_start(op)
        retry = self.new_block()
        for r in reload:
            r.detach()
        self.add(llvm.BrOp(retry), op)
        self.block = retry
        for r in reload:
            self.add(r)
        answer, *elements = self.row_or_call(op)
        e = Emitter(self.low, op)
        need = e.add(llvm.ICmpOp(answer, e.const_i(NEED, i64), IntegerAttr(0, i64))).res  # eq
        self.take(e)
        wait, go = self.new_block(), self.new_block()
        self.add(llvm.CondBrOp(need, wait, [], go, []), op)
        self.block = wait
        self.suspend(point, NEED_ROW, op)
        self.block = go
        e = Emitter(self.low, op)
        more = e.add(llvm.ICmpOp(answer, e.const_i(END, i64), IntegerAttr(1, i64))).res  # ne
        # Past the end the row is the empty list.
        row = e.add(llvm.SelectOp(more, answer, e.const_i(NIL, i64))).res
        self.take(e)
        self.resume_at(point, retry)
        self.replace(op, [more, row, *elements])

    def row_or_call(self, op: smc.NextRowOp | NextRowReadingOp) -> list[SSAValue]:
        """``sirenrt_stream_row(index)``'s answer: read in place for a row the table holds (every
        particle-step of a streamed program), else the call; then, for an
        `smc.next_row_reading`, whether it read the row's elements in place, and the elements."""
        e = Emitter(self.low, op)
        held = e.icmp(ULT, op.index, e.rows_field("n_rows"))   # unsigned: a negative index is the call's
        self.take(e)
        reads = isinstance(op, NextRowReadingOp)
        inline, call = self.new_block(), self.new_block()
        join = self.new_block([i64, *([i1, *op.values.types] if reads else [])])
        self.add(llvm.CondBrOp(held, inline, [], call, []), op)
        self.block = inline
        self.add(llvm.BrOp(join, *self.row_in_place(op)), op)
        self.block = call
        e = Emitter(self.low, op)
        answer = [e.call("stream_row", op.index, e.site(), cold=True)]
        if reads:
            answer += self.not_read(e, op)
        self.take(e)
        self.add(llvm.BrOp(join, *answer), op)
        self.block = join
        return list(join.args)

    def row_in_place(self, op: smc.NextRowOp | NextRowReadingOp) -> list[SSAValue]:
        """Row `index` < n_rows as a list, and for an `smc.next_row_reading` whether it is at
        least `length` long, and if so its elements `at` (loaded only then: the values end where
        the last row does)."""
        e = Emitter(self.low, op)
        first, end = e.row_bounds(op.index)
        handle = e.row_handle(op.index, e.icmp(SLT, first, end))
        if not isinstance(op, NextRowReadingOp):
            self.take(e)
            return [handle]
        long_enough = e.icmp(SLT, e.plus(first, op.length.value.data - 1), end)
        short = self.not_read(e, op)
        self.take(e)
        load, done = self.new_block(), self.new_block([i1, *op.values.types])
        self.add(llvm.CondBrOp(long_enough, load, [], done, short), op)
        self.block = load
        e = Emitter(self.low, op)
        vals = e.rows_field("vals")
        elements = [e.from_word(e.word_at(vals, e.plus(first, k)), f64) for k in op.at.get_values()]
        read = e.const_i(1, i1)
        self.take(e)
        self.add(llvm.BrOp(done, read, *elements), op)
        self.block = done
        return [handle, *done.args]

    @staticmethod
    def not_read(e: Emitter, op: NextRowReadingOp) -> list[SSAValue]:
        """`read` false, and the elements 0.0 (unused then)."""
        return [e.const_i(0, i1), *(e.const_f(0.0) for _ in op.values)]

    def take(self, e: Emitter) -> None:
        """Adds the ops `e` collected to the current block."""
        for new in e.ops:
            self.add(new)

    def retry_start(self, op: smc.NextRowOp) -> list[Operation]:
        """The lowered definition of `op`'s index, which must be the last ops moved (the
        contract with `spill-across-suspends`): a constant, or a frame slot's load."""
        index = op.index.owner
        last = self.block.last_op
        if isinstance(index, llvm.ConstantOp) and index is last:
            return [index]
        if isinstance(index, llvm.LoadOp) and index is last:
            gep = index.ptr.owner
            if isinstance(gep, llvm.GEPOp) and gep is index.prev_op and gep.ptr is self.low.frame:
                return [gep, index]
        raise LoweringError(
            "lower-smc-to-llvm: the index of smc.next_row is not reloaded right before it "
            f"(run spill-across-suspends first){where(op)}"
        )
