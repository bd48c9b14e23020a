"""Between the concrete and the symbolic worlds (``-m ssi|ds|bp``): `siren.to_sym`, `siren.force`."""

from __future__ import annotations

from xdsl.dialects.builtin import Float64Type, IntegerType, f64, i1
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import IRDLOperation, base, irdl_op_definition, operand_def, result_def, traits_def
from xdsl.traits import MemoryReadEffect, MemoryWriteEffect, Pure
from xdsl.utils.exceptions import VerifyException

from sirenc.ir.build import init_op
from sirenc.ir.siren.types import DistType, SymDistType, SymType, expect_type, sym, symdist_type


@irdl_op_definition
class ToSymOp(IRDLOperation):
    """A concrete value where a symbolic one is expected: a number's or a bool's constant
    symbolic word (bools 0.0 / 1.0), or a distribution's parameters as symbolic words.

    `%s = "siren.to_sym"(%x) : (f64) -> !siren.sym`
    """

    name = "siren.to_sym"
    operand = operand_def(base(Float64Type) | base(IntegerType) | base(DistType))
    result = result_def(base(SymType) | base(SymDistType))
    traits = traits_def(Pure())

    def __init__(self, operand: SSAValue):
        t = operand.type
        result = symdist_type(t.family.data) if isinstance(t, DistType) else sym
        init_op(self, [operand], [result])

    def verify_(self) -> None:
        t = self.operand.type
        if isinstance(t, DistType):
            expect_type(self.result, symdist_type(t.family.data), "result of siren.to_sym of a distribution")
            return
        if t not in (f64, i1):
            raise VerifyException(f"siren.to_sym takes f64, i1 or a distribution, got {t}")
        expect_type(self.result, sym, "result of siren.to_sym")


@irdl_op_definition
class ForceOp(IRDLOperation):
    """`value_expr` (ARCHITECTURE.md §6.4): the concrete value of a symbolic word, sampling the random
    variables it depends on; a bool is true unless the value is 0. Its location is the
    construct that needs the value (an observation, a condition, a bound).

    `%x = "siren.force"(%s) : (!siren.sym) -> f64`
    """

    name = "siren.force"
    operand = operand_def(SymType)
    result = result_def(base(Float64Type) | base(IntegerType))
    # Forcing samples: never merged, moved or removed.
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())

    def __init__(self, operand: SSAValue, result_type: Attribute):
        init_op(self, [operand], [result_type])

    def verify_(self) -> None:
        if self.result.type not in (f64, i1):
            raise VerifyException("siren.force gives f64 or i1")

