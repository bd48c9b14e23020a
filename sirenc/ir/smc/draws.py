"""Drawing from a distribution family and observing it, with concrete parameters."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import Float64Type, StringAttr, f64
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def, prop_def, result_def, traits_def, var_operand_def
from xdsl.traits import MemoryReadEffect, MemoryWriteEffect
from xdsl.utils.exceptions import VerifyException

from sirenc import distributions
from sirenc.ir.smc.types import list_type


def machine_params(name: str) -> list[Attribute]:
    """The scalars a family's parameters are passed as: floats (delta's point too, a bool
    widened), and categorical's probabilities as a list handle."""
    return [list_type("f") if p.shape == distributions.LIST else f64 for p in distributions.family(name).params]


def _check_family(op: IRDLOperation, params: Sequence[SSAValue]) -> None:
    name = op.family.data
    if name not in distributions.NAMES:
        raise VerifyException(f"unknown distribution family '{name}'")
    want = machine_params(name)
    got = [p.type for p in params]
    if got != want:
        raise VerifyException(f"{name} takes parameters ({', '.join(map(str, want))}), got ({', '.join(map(str, got))})")


@irdl_op_definition
class SampleOp(IRDLOperation):
    """A draw from a family with these parameters (ARCHITECTURE.md §9), as a float.

    `%x = "smc.sample"(%m, %v) <{family = "gaussian"}> : (f64, f64) -> f64`
    Invalid parameters are a run-time error at the op's location.
    """

    name = "smc.sample"
    family = prop_def(StringAttr)
    params = var_operand_def()
    result = result_def(Float64Type)
    # A draw advances the particle's random stream: never merged or removed.
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())

    def __init__(self, name: str, params: Sequence[SSAValue]):
        super().__init__(operands=[params], properties={"family": StringAttr(name)}, result_types=[f64])

    def verify_(self) -> None:
        _check_family(self, self.params)


@irdl_op_definition
class ObserveOp(IRDLOperation):
    """Weights the particle by the family's density at `value` (a float; bools as 0/1).

    `"smc.observe"(%m, %v, %y) <{family = "gaussian"}> : (f64, f64, f64) -> ()`
    """

    name = "smc.observe"
    family = prop_def(StringAttr)
    params = var_operand_def()
    value = operand_def(Float64Type)
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())

    def __init__(self, name: str, params: Sequence[SSAValue], value: SSAValue):
        super().__init__(operands=[params, value], properties={"family": StringAttr(name)})

    def verify_(self) -> None:
        _check_family(self, self.params)

