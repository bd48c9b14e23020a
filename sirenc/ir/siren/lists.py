"""Lists: building them, the `List.*` library functions, and `File.read`'s rows."""

from __future__ import annotations

from xdsl.dialects.builtin import Float64Type, IntegerAttr, f64
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def, opt_prop_def, result_def, traits_def
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from sirenc.ir.build import init_op
from sirenc.ir.siren.types import ListType, StringType


def list_type_of(value: SSAValue, what: str) -> ListType:
    # Every caller's operand is declared ListType, which IRDL checks before verify_.
    assert isinstance(value.type, ListType), f"{what} must be a list, got {value.type}"
    return value.type


@irdl_op_definition
class NilOp(IRDLOperation):
    """`[]`. `%l = "siren.nil"() : () -> !siren.list<f64>`"""

    name = "siren.nil"
    result = result_def(ListType)
    traits = traits_def(Pure())

    def __init__(self, list_type: ListType):
        init_op(self, (), [list_type])


@irdl_op_definition
class ConsOp(IRDLOperation):
    """`x :: l`. `%l2 = "siren.cons"(%x, %l) : (f64, !siren.list<f64>) -> !siren.list<f64>`"""

    name = "siren.cons"
    head = operand_def()
    tail = operand_def(ListType)
    result = result_def(ListType)
    traits = traits_def(Pure())

    def __init__(self, head: SSAValue, tail: SSAValue):
        init_op(self, [head, tail], [tail.type])

    def verify_(self) -> None:
        t = list_type_of(self.tail, "cons tail")
        if t.element != self.head.type or self.result.type != t:
            raise VerifyException("siren.cons: head, tail and result types disagree")


class ListUnaryOp(IRDLOperation):
    """Shared shape of the `List.*` ops; errors (empty list) are reported at run time."""

    operand = operand_def(ListType)
    result = result_def()
    site = opt_prop_def(IntegerAttr)

    def __init__(self, operand: SSAValue):
        t = operand.type
        assert isinstance(t, ListType)
        init_op(self, [operand], [self.result_of(t)])

    @staticmethod
    def result_of(t: ListType) -> Attribute:
        return t

    def verify_(self) -> None:
        t = list_type_of(self.operand, f"{self.name} operand")
        if self.result.type != self.result_of(t):
            raise VerifyException(f"{self.name} result type must be {self.result_of(t)}")


@irdl_op_definition
class HdOp(ListUnaryOp):
    """`List.hd(l)`; an empty list is a run-time error. `%x = "siren.hd"(%l)`"""

    name = "siren.hd"
    # Not Pure: it can fail, so it must not be hoisted or removed.

    @staticmethod
    def result_of(t: ListType) -> Attribute:
        return t.element


@irdl_op_definition
class TlOp(ListUnaryOp):
    """`List.tl(l)`; an empty list is a run-time error. `%t = "siren.tl"(%l)`"""

    name = "siren.tl"


@irdl_op_definition
class LenOp(ListUnaryOp):
    """`List.len(l)` as a float. `%n = "siren.len"(%l) : (!siren.list<f64>) -> f64`"""

    name = "siren.len"
    traits = traits_def(Pure())

    @staticmethod
    def result_of(t: ListType) -> Attribute:
        return f64


@irdl_op_definition
class RevOp(ListUnaryOp):
    """`List.rev(l)`. `%r = "siren.rev"(%l)`"""

    name = "siren.rev"
    traits = traits_def(Pure())


@irdl_op_definition
class RangeOp(IRDLOperation):
    """`List.range(a, b)`: floats int(a) .. int(b)-1; a > b is a run-time error.

    `%l = "siren.range"(%a, %b) : (f64, f64) -> !siren.list<f64>`
    """

    name = "siren.range"
    lo = operand_def(Float64Type)
    hi = operand_def(Float64Type)
    result = result_def(ListType)

    def __init__(self, lo: SSAValue, hi: SSAValue):
        init_op(self, [lo, hi], [ListType(f64)])


@irdl_op_definition
class FileReadOp(IRDLOperation):
    """`File.read(path)`: rows of floats, read once per run (or supplied by the caller).

    `%d = "siren.file_read"(%path) : (!siren.string) -> !siren.list<!siren.list<f64>>`
    """

    name = "siren.file_read"
    path = operand_def(StringType)
    result = result_def(ListType)
    traits = traits_def(Pure())

    def __init__(self, path: SSAValue):
        init_op(self, [path], [ListType(ListType(f64))])

