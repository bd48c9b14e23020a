"""The probabilistic constructs: distributions, random variables, observations, `resample()`."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    IRDLOperation, irdl_op_definition, operand_def, opt_prop_def, prop_def, result_def, traits_def, var_operand_def,
)
from xdsl.traits import MemoryReadEffect, MemoryWriteEffect, Pure
from xdsl.utils.exceptions import VerifyException

from sirenc import distributions
from sirenc.ir.build import init_op
from sirenc.ir.siren.types import (
    DIST, DistType, SymDistType, UnitType, dist_type, draw_type, is_sym, symdist_type, unit,
)


@irdl_op_definition
class DistOp(IRDLOperation):
    """A distribution value: `gaussian(m, v)` etc. (ARCHITECTURE.md §9 parameterisations).

    `%d = "siren.dist"(%m, %v) <{family = "gaussian"}> : (f64, f64) -> !siren.dist<"gaussian">`
    """

    name = "siren.dist"
    family = prop_def(StringAttr)
    params = var_operand_def()
    result = result_def(DIST)
    traits = traits_def(Pure())

    def __init__(self, family: str, params: Sequence[SSAValue]):
        super().__init__(
            operands=[params], properties={"family": StringAttr(family)},
            result_types=[dist_type(family)],
        )

    def verify_(self) -> None:
        family = self.family.data
        if family not in distributions.NAMES:
            raise VerifyException(f"unknown distribution family '{family}'")
        arity = distributions.family(family).arity
        if len(self.params) != arity:
            raise VerifyException(f"{family} takes {arity} parameters")
        if self.result.type not in (dist_type(family), symdist_type(family)):
            raise VerifyException("siren.dist result type must name its family")
        symbolic = isinstance(self.result.type, SymDistType)
        for p in self.params:
            if is_sym(p.type) and not symbolic:
                raise VerifyException("a siren.dist with a symbolic parameter is a !siren.symdist")


@irdl_op_definition
class AssumeOp(IRDLOperation):
    """`let [ann] x <- d in ...`: introduces the random variable `x`.

    `annotation` is absent, "sample" or "symbolic"; `var` is the program name used
    by inference plans. `%x = "siren.assume"(%d) <{var = "x"}> : (!siren.dist<"gaussian">) -> f64`
    """

    name = "siren.assume"
    dist = operand_def(DIST)
    var = prop_def(StringAttr)
    annotation = opt_prop_def(StringAttr)
    result = result_def()
    # Draws must never be merged or removed (ARCHITECTURE.md, toolchain note P2).
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())

    def __init__(self, dist: SSAValue, var: str, annotation: str | None, value_type: Attribute):
        props: dict[str, Attribute] = {"var": StringAttr(var)}
        if annotation is not None:
            props["annotation"] = StringAttr(annotation)
        super().__init__(operands=[dist], properties=props, result_types=[value_type])

    def verify_(self) -> None:
        if self.annotation is not None and self.annotation.data not in ("sample", "symbolic"):
            raise VerifyException("annotation must be 'sample' or 'symbolic'")
        dist_op = self.dist.owner
        if is_sym(self.result.type):
            if self.annotation is not None and self.annotation.data == "sample":
                raise VerifyException("a sampled variable is concrete, not !siren.sym")
            return
        if isinstance(dist_op, DistOp) and isinstance(self.dist.type, DistType):
            want = draw_type(self.dist.type, [p.type for p in dist_op.params])
            if want != self.result.type:
                raise VerifyException(f"a draw from {self.dist.type} has type {want}")


@irdl_op_definition
class ObserveOp(IRDLOperation):
    """`observe(d, v)`: conditions on `v`; evaluates to unit.

    `%u = "siren.observe"(%d, %v) : (!siren.dist<"gaussian">, f64) -> !siren.unit`
    """

    name = "siren.observe"
    dist = operand_def(DIST)
    value = operand_def()
    result = result_def(UnitType)
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())

    def __init__(self, dist: SSAValue, value: SSAValue):
        init_op(self, [dist, value], [unit])


@irdl_op_definition
class ResampleOp(IRDLOperation):
    """`resample()`: a synchronisation point of the particle population.

    `%u = "siren.resample"() : () -> !siren.unit`
    """

    name = "siren.resample"
    result = result_def(UnitType)
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())

    def __init__(self):
        init_op(self, (), [unit])

