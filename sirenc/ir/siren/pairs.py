"""Pairs and their projections; several values as one (``pack``, ``unpack``)."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def, result_def, traits_def
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from sirenc.ir.build import init_op
from sirenc.ir.siren.types import PairType


@irdl_op_definition
class PairOp(IRDLOperation):
    """`(a, b)`. `%p = "siren.pair"(%a, %b) : (f64, i1) -> !siren.pair<f64, i1>`"""

    name = "siren.pair"
    first = operand_def()
    second = operand_def()
    result = result_def(PairType)
    traits = traits_def(Pure())

    def __init__(self, first: SSAValue, second: SSAValue):
        init_op(self, [first, second], [PairType(first.type, second.type)])

    def verify_(self) -> None:
        t = self.result.type
        assert isinstance(t, PairType)
        if (t.first, t.second) != (self.first.type, self.second.type):
            raise VerifyException("siren.pair result type must match its operands")


class ProjectionOp(IRDLOperation):
    pair = operand_def(PairType)
    result = result_def()
    traits = traits_def(Pure())

    def __init__(self, pair: SSAValue):
        t = pair.type
        assert isinstance(t, PairType)
        init_op(self, [pair], [self.component(t)])

    @staticmethod
    def component(t: PairType) -> Attribute:
        raise NotImplementedError

    def verify_(self) -> None:
        t = self.pair.type
        assert isinstance(t, PairType)
        if self.result.type != self.component(t):
            raise VerifyException(f"{self.name} result type does not match {t}")


@irdl_op_definition
class FstOp(ProjectionOp):
    """First component of a pair (from pattern matching). `%a = "siren.fst"(%p)`"""

    name = "siren.fst"

    @staticmethod
    def component(t: PairType) -> Attribute:
        return t.first


@irdl_op_definition
class SndOp(ProjectionOp):
    """Second component of a pair. `%b = "siren.snd"(%p)`"""

    name = "siren.snd"

    @staticmethod
    def component(t: PairType) -> Attribute:
        return t.second



def pack(add, values: Sequence[SSAValue]) -> SSAValue:
    """One value for several (at least one): right-nested pairs, built with `add(op)`, which
    inserts the op where the caller builds and returns its result."""
    value = values[-1]
    for first in reversed(values[:-1]):
        value = add(PairOp(first, value))
    return value


def unpack(add, value: SSAValue, n: int) -> list[SSAValue]:
    """The `n` components of a value `pack` made, projected with `add(op)` as in `pack`."""
    out = []
    for _ in range(n - 1):
        out.append(add(FstOp(value)))
        value = add(SndOp(value))
    out.append(value)
    return out

