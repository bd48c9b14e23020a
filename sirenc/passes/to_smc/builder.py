"""What the patterns of `lower-siren-to-smc` build with: `Facts`, what the patterns of one lowering
share (the method, the streamed fold, strings for File.read, where distributions were written, the
program variables), and `Builder`, which inserts the new ops of one pattern located at its op, with
the shapes every pattern reuses: loops and branches of `scf`, a lowered region inlined, list
operations and structural equality.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, IntegerType, UnrealizedConversionCastOp, f64, i1, i64
from xdsl.ir import Attribute, Block, BlockArgument, Operation, SSAValue

from sirenc import methods
from sirenc.ir import siren, smc
from sirenc.ir.build import new_op
from sirenc.passes.rewriting import append, drop, insert_before
from sirenc.passes.to_smc.scalars import flatten, unpack


@dataclass
class Facts:
    """What the patterns of one lowering share."""

    base_dir: str
    method: str = "pf"
    streamed: siren.FoldOp | None = None
    skipped: set[Operation] = field(default_factory=set)   # the streamed fold's data source
    strings: dict[SSAValue, str] = field(default_factory=dict)
    # Where each distribution value was written: a draw's invalid parameter is reported there.
    dist_locations: dict[SSAValue, Attribute] = field(default_factory=dict)
    # Symbolic methods: the program variables, in order of first appearance among the assumes.
    vars: dict[str, int] = field(default_factory=dict)

    @property
    def symbolic(self) -> bool:
        return methods.get(self.method).symbolic

    def abs_path(self, relative: str) -> str:
        return os.path.abspath(os.path.join(self.base_dir, relative))


class Builder:
    """Inserts new ops before the matched op (or at the end of a block being built),
    located at the matched op, so run-time errors point at the user's source."""

    # (slots: one is made for each op lowered)
    __slots__ = ("at", "facts", "block")

    def __init__(self, at: Operation, facts: Facts, block: Block | None = None):
        self.at = at
        self.facts = facts
        self.block = block

    def add(self, op: Operation) -> Operation:
        op.location = self.at.location
        if self.block is not None:
            append(op, self.block)
        else:
            insert_before(op, self.at)
        return op

    def const_f(self, v: float) -> SSAValue:
        return self.add(new_op(arith.ConstantOp, (), [f64], {"value": FloatAttr(v, f64)})).result

    def const_i(self, v: int, t: IntegerType = i64) -> SSAValue:
        return self.add(arith.ConstantOp(IntegerAttr(v, t))).result

    def in_block(self, block: Block, build: Callable[[], list[SSAValue]]) -> list[SSAValue]:
        saved, self.block = self.block, block
        try:
            return build()
        finally:
            self.block = saved

    def get(self, value: SSAValue) -> list[SSAValue]:
        return unpack(value)

    def bool_to_float(self, b: SSAValue) -> SSAValue:
        return self.add(arith.SelectOp(b, self.const_f(1.0), self.const_f(0.0))).result

    def sym_const(self, v: float) -> SSAValue:
        return self.add(smc.SymConstOp(self.const_f(v))).result

    def to_sym(self, v: SSAValue) -> SSAValue:
        """A scalar as a symbolic word: numbers and bools become constants; list handles
        (categorical's probabilities) and symbolic words stay."""
        if v.type == f64 or v.type == i1:
            return self.add(smc.SymConstOp(v)).result
        return v

    def not_nil(self, lst: SSAValue) -> SSAValue:
        is_nil = self.add(smc.IsNilOp(lst)).result
        return self.add(arith.XOrIOp(is_nil, self.const_i(1, i1))).result

    def loop(self, init: list[SSAValue], before, after) -> list[SSAValue]:
        """scf.while over `init`; `before(args) -> (cond, passed)`, `after(args) -> next`."""
        before_block = Block(arg_types=[v.type for v in init])

        def build_before():
            cond, passed = before(list(before_block.args))
            self.add(scf.ConditionOp(cond, *passed))
            return [v.type for v in passed]

        passed_types = self.in_block(before_block, build_before)
        after_block = Block(arg_types=passed_types)
        self.in_block(after_block, lambda: [self.add(scf.YieldOp(*after(list(after_block.args))))])
        return list(self.add(scf.WhileOp(init, passed_types, [before_block], [after_block])).results)

    def if_else(self, cond: SSAValue, then, otherwise) -> list[SSAValue]:
        blocks = []
        for build in (then, otherwise):
            block = Block()
            out = self.in_block(block, build)
            self.in_block(block, lambda: [self.add(scf.YieldOp(*out))])
            blocks.append(block)
        types = [v.type for v in blocks[0].last_op.operands]
        return list(self.add(scf.IfOp(cond, types, [blocks[0]], [blocks[1]])).results)

    def inline_region(self, region_block: Block, args: Sequence[Sequence[SSAValue]]) -> list[SSAValue]:
        """Move a lowered region body to the end of the current block, its arguments
        replaced by `args` (scalars each); returns the scalars it yields."""
        for arg, flat in zip(region_block.args, args, strict=True):
            _replace_argument(arg, list(flat), self)
        terminator = region_block.last_op
        for op in list(region_block.ops):
            if op is terminator:
                break
            op.detach()
            self.block.add_op(op)
        return unpack(terminator.operands[0])

    # -- lists --------------------------------------------------------------------------

    def cons(self, head: list[SSAValue], tail: SSAValue) -> SSAValue:
        return self.add(smc.ConsOp(head, tail)).result

    def head(self, lst: SSAValue) -> list[SSAValue]:
        return list(self.add(smc.HeadOp(lst)).results)

    def tail(self, lst: SSAValue) -> SSAValue:
        return self.add(smc.TailOp(lst)).result

    def equal(self, a: list[SSAValue], b: list[SSAValue], typ: Attribute) -> SSAValue:
        """Structural equality of two values of siren type `typ` (Python's `==`)."""
        if isinstance(typ, siren.PairType):
            n = len(flatten(typ.first))
            first = self.equal(a[:n], b[:n], typ.first)
            return self.add(arith.AndIOp(first, self.equal(a[n:], b[n:], typ.second))).result
        if isinstance(typ, siren.ListType):
            return self.lists_equal(a[0], b[0], typ.element)
        if typ == f64:
            return self.add(arith.CmpfOp(a[0], b[0], "oeq")).result
        if typ == i1:
            return self.add(arith.CmpiOp(a[0], b[0], "eq")).result
        return self.const_i(1, i1)  # unit

    def lists_equal(self, a: SSAValue, b: SSAValue, elem: Attribute) -> SSAValue:
        """Walk both lists while their heads are equal; equal if both end together."""

        def before(args):
            x, y, same = args
            both = self.add(arith.AndIOp(self.not_nil(x), self.not_nil(y))).result
            return self.add(arith.AndIOp(same, both)).result, args

        def after(args):
            x, y, _ = args
            same = self.equal(self.head(x), self.head(y), elem)
            return [self.tail(x), self.tail(y), same]

        x, y, same = self.loop([a, b, self.const_i(1, i1)], before, after)
        ended = self.add(arith.AndIOp(self.add(smc.IsNilOp(x)).result, self.add(smc.IsNilOp(y)).result)).result
        return self.add(arith.AndIOp(same, ended)).result


def _replace_argument(arg: BlockArgument, flat: list[SSAValue], b: Builder) -> None:
    if flatten(arg.type) == [arg.type]:
        arg.replace_all_uses_with(flat[0])
        return
    for use in list(arg.uses):
        user = use.operation
        if isinstance(user, UnrealizedConversionCastOp) and len(user.inputs) == 1:
            for old, new in zip(user.outputs, flat, strict=True):
                old.replace_all_uses_with(new)
            drop(user)
        else:
            user.operands[use.index] = b.add(UnrealizedConversionCastOp.get(flat, [arg.type])).results[0]
