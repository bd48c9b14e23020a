"""Symbolic values (``-m ssi|ds|bp``): building expressions over symbolic words, forcing them,
random variables and observations with symbolic parameters."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import Float64Type, IntegerAttr, IntegerType, StringAttr, f64, i1, i32
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def, prop_def, result_def, traits_def, var_operand_def
from xdsl.traits import MemoryReadEffect, MemoryWriteEffect, Pure
from xdsl.utils.exceptions import VerifyException

from sirenc import distributions
from sirenc.ir.smc.types import SymType, list_type, sym


ANNOTATIONS = {None: 0, "sample": 1, "symbolic": 2}   # sirenrt.h's SIRENRT_ANN_*
SYM_BINOPS = ("add", "sub", "mul", "div", "eq", "lt")


def sym_params(name: str) -> list[Attribute]:
    """The scalars a family's parameters are passed as to a symbolic method: symbolic
    words, and categorical's probabilities as a (concrete) list handle."""
    return [list_type("f") if p.shape == distributions.LIST else sym for p in distributions.family(name).params]


def _check_sym_family(op: IRDLOperation, params: Sequence[SSAValue]) -> None:
    name = op.family.data
    if name not in distributions.NAMES:
        raise VerifyException(f"unknown distribution family '{name}'")
    want, got = sym_params(name), [p.type for p in params]
    if got != want:
        raise VerifyException(f"{op.name} {name} takes ({', '.join(map(str, want))}), got ({', '.join(map(str, got))})")


@irdl_op_definition
class SymConstOp(IRDLOperation):
    """A concrete number's symbolic word (a bool: 0.0 or 1.0).

    `%s = "smc.sym_const"(%x) : (f64) -> !smc.sym`
    """

    name = "smc.sym_const"
    value = operand_def(Float64Type | IntegerType)
    result = result_def(SymType)
    traits = traits_def(Pure())

    def __init__(self, value: SSAValue):
        super().__init__(operands=[value], result_types=[sym])

    def verify_(self) -> None:
        if self.value.type not in (f64, i1):
            raise VerifyException("smc.sym_const takes an f64 or an i1")


@irdl_op_definition
class SymBinOp(IRDLOperation):
    """The expression `lhs kind rhs` (ARCHITECTURE.md §7.4's raw node; two constants are folded).
    `kind` is add, sub, mul, div, eq or lt (eq and lt give a bool word).

    `%s = "smc.sym_binop"(%a, %b) <{kind = "add"}> : (!smc.sym, !smc.sym) -> !smc.sym`
    """

    name = "smc.sym_binop"
    kind = prop_def(StringAttr)
    lhs = operand_def(SymType)
    rhs = operand_def(SymType)
    result = result_def(SymType)
    # Builds a node in the particle's state (and may record an error): not Pure.
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())

    def __init__(self, kind: str, lhs: SSAValue, rhs: SSAValue):
        super().__init__(operands=[lhs, rhs], properties={"kind": StringAttr(kind)}, result_types=[sym])

    def verify_(self) -> None:
        if self.kind.data not in SYM_BINOPS:
            raise VerifyException(f"smc.sym_binop kind must be one of {', '.join(SYM_BINOPS)}")


@irdl_op_definition
class SymNegOp(IRDLOperation):
    """`-a` as an expression (Mul(-1, a)). `%s = "smc.sym_neg"(%a) : (!smc.sym) -> !smc.sym`"""

    name = "smc.sym_neg"
    operand = operand_def(SymType)
    result = result_def(SymType)
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())

    def __init__(self, operand: SSAValue):
        super().__init__(operands=[operand], result_types=[sym])


@irdl_op_definition
class SymIteOp(IRDLOperation):
    """`ite(cond, then, else)` (ARCHITECTURE.md §6.3; a constant condition picks its branch).

    `%s = "smc.sym_ite"(%c, %t, %f) : (!smc.sym, !smc.sym, !smc.sym) -> !smc.sym`
    """

    name = "smc.sym_ite"
    cond = operand_def(SymType)
    then_value = operand_def(SymType)
    else_value = operand_def(SymType)
    result = result_def(SymType)
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())

    def __init__(self, cond: SSAValue, then_value: SSAValue, else_value: SSAValue):
        super().__init__(operands=[cond, then_value, else_value], result_types=[sym])


@irdl_op_definition
class SymValueOp(IRDLOperation):
    """`value_expr` (ARCHITECTURE.md §6.4): the concrete value of a symbolic word, sampling what it
    depends on (bools as 0.0 / 1.0). Errors are reported at the op's location.

    `%x = "smc.sym_value"(%s) : (!smc.sym) -> f64`
    """

    name = "smc.sym_value"
    operand = operand_def(SymType)
    result = result_def(Float64Type)
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())

    def __init__(self, operand: SSAValue):
        super().__init__(operands=[operand], result_types=[f64])


@irdl_op_definition
class AssumeOp(IRDLOperation):
    """`let [ann] x <- family(params)` under a symbolic method: a new random variable.

    `var` indexes the particle's ``smc.vars`` (-1: anonymous), `annotation` is 0 (none),
    1 (sample) or 2 (symbolic). The result is the variable's symbolic word, or for
    `sample` its drawn value (f64).
    `%x = "smc.assume"(%m, %v) <{family = "gaussian", var = 0 : i32, annotation = 0 : i32}> : (!smc.sym, !smc.sym) -> !smc.sym`
    """

    name = "smc.assume"
    family = prop_def(StringAttr)
    var = prop_def(IntegerAttr)
    annotation = prop_def(IntegerAttr)
    params = var_operand_def()
    result = result_def(SymType | Float64Type)
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())

    def __init__(self, name: str, params: Sequence[SSAValue], var: int, annotation: int):
        super().__init__(
            operands=[params],
            properties={"family": StringAttr(name), "var": IntegerAttr(var, i32),
                        "annotation": IntegerAttr(annotation, i32)},
            result_types=[f64 if annotation == ANNOTATIONS["sample"] else sym],
        )

    def verify_(self) -> None:
        _check_sym_family(self, self.params)
        annotation = self.annotation.value.data
        if annotation not in ANNOTATIONS.values():
            raise VerifyException("smc.assume annotation is 0 (none), 1 (sample) or 2 (symbolic)")
        if self.result.type != (f64 if annotation == ANNOTATIONS["sample"] else sym):
            raise VerifyException("smc.assume gives a drawn f64 for `sample`, else a symbolic word")
        if self.var.value.data < -1:
            raise VerifyException("smc.assume var is an index into smc.vars, or -1")


@irdl_op_definition
class SymObserveOp(IRDLOperation):
    """Observes `value` (already concrete) from a family with symbolic parameters; adds the
    log-likelihood under the observation's marginal (ARCHITECTURE.md §12.1) to the particle's weight.

    `"smc.sym_observe"(%m, %v, %y) <{family = "gaussian"}> : (!smc.sym, !smc.sym, f64) -> ()`
    """

    name = "smc.sym_observe"
    family = prop_def(StringAttr)
    params = var_operand_def()
    value = operand_def(Float64Type)
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())

    def __init__(self, name: str, params: Sequence[SSAValue], value: SSAValue):
        super().__init__(operands=[params, value], properties={"family": StringAttr(name)})

    def verify_(self) -> None:
        _check_sym_family(self, self.params)


SYMBOLIC_OPS = (SymConstOp, SymBinOp, SymNegOp, SymIteOp, SymValueOp, AssumeOp, SymObserveOp)
