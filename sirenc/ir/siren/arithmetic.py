"""Literals, arithmetic, comparisons and the conversions between bools and numbers; what the
compiler computes of constants (``FOLDS``)."""

from __future__ import annotations

import operator
from collections.abc import Sequence

from xdsl.dialects.builtin import FloatAttr, IntegerAttr, StringAttr, UnitAttr, f64, i1
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def, prop_def, result_def, traits_def
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from sirenc.ir.build import init_op
from sirenc.ir.siren.types import BOOL, NUMBER, SymType, expect_type, is_sym, string, sym, unit


@irdl_op_definition
class ConstOp(IRDLOperation):
    """A literal: `1.5`, `true`, `()` or `"data.csv"`.

    `%c = "siren.const"() <{value = 1.5 : f64}> : () -> f64`
    """

    name = "siren.const"
    value = prop_def(Attribute)
    result = result_def()
    traits = traits_def(Pure())

    def __init__(self, value: float | bool | str | FloatAttr | None):
        # A FloatAttr: a number whose attribute the caller shares among equal constants.
        if type(value) is FloatAttr:
            attr, typ = value, f64
        elif value is None:
            attr, typ = UnitAttr(), unit
        elif isinstance(value, bool):
            attr, typ = IntegerAttr(int(value), i1), i1
        elif isinstance(value, str):
            attr, typ = StringAttr(value), string
        elif isinstance(value, FloatAttr):
            attr, typ = value, f64
        else:
            attr, typ = FloatAttr(float(value), f64), f64
        init_op(self, (), [typ], {"value": attr})

    def verify_(self) -> None:
        # Numbers are f64 and booleans i1: `1 : i64` or `1.0 : f32` is no Siren value.
        expected = {FloatAttr: f64, IntegerAttr: i1, UnitAttr: unit, StringAttr: string}
        attr = self.value
        want = expected.get(type(attr))
        if want is None or want != self.result.type or getattr(attr, "type", want) != want:
            raise VerifyException(
                f"siren.const value {attr} with result type {self.result.type} is not a Siren "
                "literal (f64, i1, unit or string)"
            )


class BinaryFloatOp(IRDLOperation):
    """On floats; or, under a symbolic method, on two symbolic words (the `symbolic-values`
    pass coerces both operands), building a symbolic expression."""

    lhs = operand_def(NUMBER)
    rhs = operand_def(NUMBER)
    result = result_def()
    traits = traits_def(Pure())

    def __init__(self, lhs: SSAValue, rhs: SSAValue):
        symbolic = type(lhs.type) is SymType or type(rhs.type) is SymType   # (is_sym, inline)
        init_op(self, [lhs, rhs], [sym if symbolic else self.result_type()])

    @classmethod
    def result_type(cls) -> Attribute:
        return f64

    def verify_(self) -> None:
        if is_sym(self.lhs.type) or is_sym(self.rhs.type):
            if self.lhs.type != self.rhs.type:
                raise VerifyException(f"{self.name} on a symbolic value takes two symbolic operands")
            expect_type(self.result, sym, f"result of {self.name}")
            return
        expect_type(self.result, self.result_type(), f"result of {self.name}")


@irdl_op_definition
class AddOp(BinaryFloatOp):
    """`a + b`. `%r = "siren.add"(%a, %b) : (f64, f64) -> f64`"""

    name = "siren.add"


@irdl_op_definition
class SubOp(BinaryFloatOp):
    """`a - b`. `%r = "siren.sub"(%a, %b) : (f64, f64) -> f64`"""

    name = "siren.sub"


@irdl_op_definition
class MulOp(BinaryFloatOp):
    """`a * b`. `%r = "siren.mul"(%a, %b) : (f64, f64) -> f64`"""

    name = "siren.mul"


@irdl_op_definition
class DivOp(BinaryFloatOp):
    """`a / b` with IEEE semantics. `%r = "siren.div"(%a, %b) : (f64, f64) -> f64`"""

    name = "siren.div"


@irdl_op_definition
class LtOp(BinaryFloatOp):
    """`a < b`. `%r = "siren.lt"(%a, %b) : (f64, f64) -> i1`"""

    name = "siren.lt"

    @classmethod
    def result_type(cls) -> Attribute:
        return i1


@irdl_op_definition
class NegOp(IRDLOperation):
    """`-a`. `%r = "siren.neg"(%a) : (f64) -> f64`"""

    name = "siren.neg"
    operand = operand_def(NUMBER)
    result = result_def(NUMBER)
    traits = traits_def(Pure())

    def __init__(self, operand: SSAValue):
        init_op(self, [operand], [operand.type])

    def verify_(self) -> None:
        expect_type(self.result, self.operand.type, "result of siren.neg")


# The float arithmetic that is computed when compiling where every operand is a constant (irgen,
# fold-constants): Python's float `+`, `-`, `*` and negation are the IEEE operations the compiled
# code performs (or LLVM folds), so the value is the same, except for the sign of a NaN: a NaN is
# left to the compiled code. (`/` is not folded: by zero it would raise in Python.)
FOLDS = {AddOp: operator.add, SubOp: operator.sub, MulOp: operator.mul, NegOp: operator.neg}


def float_constant(value: SSAValue) -> float | None:
    """The number a `siren.const` of a float holds, else None."""
    owner = value.owner
    if type(owner) is ConstOp:
        attr = owner.properties["value"]
        if type(attr) is FloatAttr:
            return attr.value.data
    return None


def folded(op_type: type, values: Sequence[float]) -> float | None:
    """What an op of `op_type` (a key of FOLDS) computes of constant `values`; None for a NaN."""
    result = FOLDS[op_type](*values)
    return None if result != result else result


@irdl_op_definition
class BoolToFloatOp(IRDLOperation):
    """A bool standing for a number, as the original Siren allows: `if b then 1. else 0.`.

    The type checker inserts it, with a warning, where a program relies on it.
    `%r = "siren.bool_to_float"(%b) : (i1) -> f64`
    """

    name = "siren.bool_to_float"
    operand = operand_def(BOOL)
    result = result_def(NUMBER)
    traits = traits_def(Pure())

    def __init__(self, operand: SSAValue):
        init_op(self, [operand], [sym if is_sym(operand.type) else f64])

    def verify_(self) -> None:
        if is_sym(self.operand.type):
            expect_type(self.result, sym, "result of siren.bool_to_float of a symbolic bool")
            return
        expect_type(self.operand, i1, "operand of siren.bool_to_float")
        expect_type(self.result, f64, "result of siren.bool_to_float")


@irdl_op_definition
class FloatToBoolOp(IRDLOperation):
    """A number standing for a bool, as the original Siren allows: true unless it is 0.
    (Python's truthiness, so NaN is true); `if x = 0. then false else true`.

    The type checker inserts it, with a warning, where a program relies on it.
    `%r = "siren.float_to_bool"(%x) : (f64) -> i1`
    """

    name = "siren.float_to_bool"
    operand = operand_def(NUMBER)
    result = result_def(BOOL)
    traits = traits_def(Pure())

    def __init__(self, operand: SSAValue):
        init_op(self, [operand], [sym if is_sym(operand.type) else i1])

    def verify_(self) -> None:
        expect_type(self.result, sym if is_sym(self.operand.type) else i1, "result of siren.float_to_bool")


@irdl_op_definition
class EqOp(IRDLOperation):
    """`a = b`, structural equality. `%r = "siren.eq"(%a, %b) : (f64, f64) -> i1`"""

    name = "siren.eq"
    lhs = operand_def()
    rhs = operand_def()
    result = result_def(BOOL)
    traits = traits_def(Pure())

    def __init__(self, lhs: SSAValue, rhs: SSAValue):
        init_op(self, [lhs, rhs], [sym if is_sym(lhs.type) else i1])

    def verify_(self) -> None:
        if self.lhs.type != self.rhs.type:
            raise VerifyException("siren.eq compares values of one type")
        # Two symbolic words build an Eq expression; compound values compare concretely.
        expect_type(self.result, sym if is_sym(self.lhs.type) else i1, "result of siren.eq")

