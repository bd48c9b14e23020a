"""The list patterns of `lower-smc-to-llvm`: a list is an int64 handle (NIL, -1, is the empty
list) and a list op a ``sirenrt_list_*`` call, whose cells hold an element as 64-bit words.

A constant literal (``smc.const_list``) is its words in the pool and one call that builds the list
as its conses would have; ``List.hd`` of a list of floats reads a row of the streamed file in place
when the handle is one; ``File.read`` numbers its file in the table the runtime reads.
"""

from __future__ import annotations

import struct

from xdsl.dialects import llvm
from xdsl.dialects.builtin import IntegerAttr, f64, i32, i64
from xdsl.ir import SSAValue

from sirenc.ir import smc
from sirenc.passes.to_llvm.emitter import Emitter, Pattern
from sirenc.passes.to_llvm.resume_abi import EQ, FIRST_ROW, NIL, ROW_SHIFT, SGE, ULT, WORD


class _Nil(Pattern):
    op_type = smc.NilOp

    def rewrite(self, op: smc.NilOp) -> None:
        e = Emitter(self.low, op)
        e.replace([e.const_i(NIL, i64)])


class _IsNil(Pattern):
    op_type = smc.IsNilOp

    def rewrite(self, op: smc.IsNilOp) -> None:
        e = Emitter(self.low, op)
        nil = e.const_i(NIL, i64)
        e.replace([e.add(llvm.ICmpOp(op.list, nil, IntegerAttr(0, i64))).res])  # eq


class _Cons(Pattern):
    """A cell for the element's words in front of the tail, then each word set (one call for a
    one-word element).  The runtime is told the element's type (its descriptor, NUL-terminated in the
    pool): a cell made straight in the population's heap needs it there for the collector."""

    op_type = smc.ConsOp

    def rewrite(self, op: smc.ConsOp) -> None:
        e = Emitter(self.low, op)
        elem = e.pool_address(self.low.pooled_text(op.result.type.element.data))
        if len(op.head) == 1:
            e.replace([e.call("list_cons_word", op.tail, e.to_word(op.head[0]), elem, e.site_if_known())])
            return
        cell = e.call("list_cons_typed", op.tail, e.const_i(len(op.head), i32), elem, e.site_if_known())
        for i, value in enumerate(op.head):
            e.call("list_set", cell, e.const_i(i, i32), e.to_word(value))
        e.replace([cell])


class _ConstList(Pattern):
    """One runtime call builds the whole list from the words array, cell by cell as the
    conses it replaces would have."""

    op_type = smc.ConstListOp

    def rewrite(self, op: smc.ConstListOp) -> None:
        e = Emitter(self.low, op)
        if op.nested:   # sirenrt_list_from_nested_words: the element type, then the encoding
            element = op.result.type.element.data
            data = struct.pack(f"<{1 + len(element)}q", len(element), *map(ord, element)) + op.words.data.data
        else:
            data = op.words.data.data
        words = e.pool_address(self.low.pooled(data))
        if op.nested:
            n = e.const_i(len(data) // WORD, i64)
            e.replace([e.call("list_from_nested_words", words, n, e.site_if_known())])
            return
        n, width = e.const_i(op.length, i64), e.const_i(op.element_words, i32)
        e.replace([e.call("list_from_words", words, n, width, e.site_if_known())])


class _Head(Pattern):
    op_type = smc.HeadOp

    def rewrite(self, op: smc.HeadOp) -> None:
        e = Emitter(self.low, op)
        site = e.site()
        if [r.type for r in op.values] == [f64]:   # a list of floats: maybe a data row
            e.replace([e.from_word(self.row_head(e, op.list, site), f64)])
            return
        out = []
        for i, result in enumerate(op.values):
            word = e.call("list_head_word", op.list, e.const_i(i, i32), site)
            out.append(e.from_word(word, result.type))
        e.replace(out)

    @staticmethod
    def row_head(e: Emitter, handle: SSAValue, site: SSAValue) -> SSAValue:
        """The head of a row of file 0 from its element 0 (``List.hd`` of a streamed row: once per
        particle-step), read in place; the runtime's call for any other list, and for a row
        that is empty or not readable here, whose error is then the call's."""
        # Handle = FIRST_ROW | r << ROW_SHIFT exactly when the bits other than r's are FIRST_ROW's.
        # (The handle is still typed !smc.list here: the integer ops say their result type.)
        other_bits = ~(0xFFFFFFFF << ROW_SHIFT)
        masked = e.add(llvm.AndOp.create(operands=[handle, e.const_i(other_bits, i64)], result_types=[i64]))
        is_row = e.icmp(EQ, masked.results[0], e.const_i(FIRST_ROW, i64))
        low = e.add(llvm.XOrOp.create(operands=[handle, e.const_i(FIRST_ROW, i64)], result_types=[i64])).results[0]
        r = e.add(llvm.LShrOp(low, e.const_i(ROW_SHIFT, i64))).res   # the row, when is_row
        readable = e.add(llvm.AndOp(is_row, e.icmp(ULT, r, e.rows_field("n_rows")))).res

        def position(b: Emitter) -> list[SSAValue]:   # row r's element 0, if it has one, else -1
            first, nonempty = b.row_start(r)
            return [b.add(llvm.SelectOp(nonempty, first, b.const_i(-1, i64))).res]

        at, = e.if_else(readable, position, lambda b: [b.const_i(-1, i64)], [i64])
        word, = e.if_else(e.icmp(SGE, at, e.const_i(0, i64)),
                          lambda b: [b.word_at(b.rows_field("vals"), at)],
                          lambda b: [b.call("list_head_word", handle, b.const_i(0, i32), site, cold=True)], [i64])
        return word


class _Tail(Pattern):
    op_type = smc.TailOp

    def rewrite(self, op: smc.TailOp) -> None:
        e = Emitter(self.low, op)
        e.replace([e.call("list_tl", op.list, e.site())])


class _Length(Pattern):
    op_type = smc.LengthOp

    def rewrite(self, op: smc.LengthOp) -> None:
        e = Emitter(self.low, op)
        e.replace([e.call("list_len", op.list)])


class _Reverse(Pattern):
    op_type = smc.ReverseOp

    def rewrite(self, op: smc.ReverseOp) -> None:
        e = Emitter(self.low, op)
        elem = op.result.type.element.data
        e.replace([e.call("list_rev_typed", op.list, e.const_i(len(smc.scalars_of(elem)), i32),
                          e.pool_address(self.low.pooled_text(elem)), e.site_if_known())])


class _Range(Pattern):
    op_type = smc.RangeOp

    def rewrite(self, op: smc.RangeOp) -> None:
        e = Emitter(self.low, op)
        e.replace([e.call("list_range", op.lo, op.hi, e.site())])


class _ReadFile(Pattern):
    op_type = smc.ReadFileOp

    def rewrite(self, op: smc.ReadFileOp) -> None:
        e = Emitter(self.low, op)
        file_id = e.const_i(self.low.file_id(op.path.data, op), i32)
        e.replace([e.call("file", file_id, e.site())])


PATTERNS = [_Nil, _IsNil, _Cons, _ConstList, _Head, _Tail, _Length, _Reverse, _Range, _ReadFile]
