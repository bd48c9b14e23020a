"""Structured control: `if`, `fold` and `List.map`, whose regions end with `siren.yield`."""

from __future__ import annotations

from xdsl.dialects.builtin import i1
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.irdl import IRDLOperation, irdl_op_definition, lazy_traits_def, operand_def, region_def, result_def
from xdsl.traits import HasParent, IsTerminator
from xdsl.utils.exceptions import VerifyException

from sirenc.ir.build import init_op
from sirenc.ir.siren.lists import list_type_of
from sirenc.ir.siren.types import BOOL, ListType, expect_type, is_sym


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Ends a region of `siren.if`, `siren.fold` or `siren.map` with its value."""

    name = "siren.yield"
    value = operand_def()
    traits = lazy_traits_def(lambda: (IsTerminator(), HasParent(IfOp, FoldOp, MapOp)))

    def __init__(self, value: SSAValue):
        init_op(self, [value], ())


def _yielded(region: Region) -> SSAValue:
    term = region.block.last_op
    if not isinstance(term, YieldOp):
        raise VerifyException("region must end with siren.yield")
    return term.value


@irdl_op_definition
class IfOp(IRDLOperation):
    """`if c then a else b`; both regions yield a value of the result type.

    `%r = "siren.if"(%c) ({ ... "siren.yield"(%a) }, { ... "siren.yield"(%b) }) : (i1) -> f64`
    """

    name = "siren.if"
    cond = operand_def(BOOL)
    result = result_def()
    then_region = region_def("single_block")
    else_region = region_def("single_block")

    def __init__(self, cond: SSAValue, result_type: Attribute, then_block: Block, else_block: Block):
        super().__init__(
            operands=[cond], result_types=[result_type],
            regions=[Region(then_block), Region(else_block)],
        )

    def verify_(self) -> None:
        # A symbolic condition (a symbolic method): both branches are pure and run, and the result
        # is their ite (the `symbolic-values` pass made sure it can be, else it forced it).
        if not is_sym(self.cond.type):
            expect_type(self.cond, i1, "condition of siren.if")
        for region in (self.then_region, self.else_region):
            if _yielded(region).type != self.result.type:
                raise VerifyException("siren.if branches must yield the result type")


@irdl_op_definition
class FoldOp(IRDLOperation):
    """`fold(f, l, init)`: a left fold; the body takes (element, accumulator).

    After `inline-functions` the body holds the inlined step function.
    `%r = "siren.fold"(%l, %init) ({ ^bb0(%x: f64, %acc: f64): ... "siren.yield"(%acc2) })`
    """

    name = "siren.fold"
    list = operand_def(ListType)
    init = operand_def()
    result = result_def()
    body = region_def("single_block")

    def __init__(self, lst: SSAValue, init: SSAValue, body: Block):
        super().__init__(operands=[lst, init], result_types=[init.type], regions=[Region(body)])

    def verify_(self) -> None:
        t = list_type_of(self.list, "fold list")
        args = self.body.block.arg_types
        if args != (t.element, self.init.type):
            takes = ", ".join(str(a) for a in args)
            raise VerifyException(f"siren.fold body must take ({t.element}, {self.init.type}), takes ({takes})")
        if _yielded(self.body).type != self.init.type or self.result.type != self.init.type:
            raise VerifyException("siren.fold body must yield the accumulator type")


@irdl_op_definition
class MapOp(IRDLOperation):
    """`List.map(f, l)`; the body maps one element, left to right.

    `%r = "siren.map"(%l) ({ ^bb0(%x: f64): ... "siren.yield"(%y) }) : (...) -> !siren.list<f64>`
    """

    name = "siren.map"
    list = operand_def(ListType)
    result = result_def(ListType)
    body = region_def("single_block")

    def __init__(self, lst: SSAValue, result_type: ListType, body: Block):
        super().__init__(operands=[lst], result_types=[result_type], regions=[Region(body)])

    def verify_(self) -> None:
        t = list_type_of(self.list, "map list")
        if self.body.block.arg_types != (t.element,):
            raise VerifyException("siren.map body must take one list element")
        out = self.result.type
        assert isinstance(out, ListType)
        if _yielded(self.body).type != out.element:
            raise VerifyException("siren.map body must yield the result element type")

