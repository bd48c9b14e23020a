"""The `siren` dialect's types, and what the ops ask of the types of their values."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import Float64Type, IntegerType, StringAttr, f64, i1
from xdsl.ir import Attribute, ParametrizedAttribute, SSAValue, TypeAttribute
from xdsl.irdl import base, irdl_attr_definition, param_def
from xdsl.utils.exceptions import VerifyException

from sirenc import distributions


@irdl_attr_definition
class UnitType(ParametrizedAttribute, TypeAttribute):
    """`()`: carries no data."""

    name = "siren.unit"


@irdl_attr_definition
class StringType(ParametrizedAttribute, TypeAttribute):
    """A string literal; only `File.read` consumes one, at compile time."""

    name = "siren.string"


@irdl_attr_definition
class PairType(ParametrizedAttribute, TypeAttribute):
    """`(a, b)`; longer tuples are right-nested pairs."""

    name = "siren.pair"
    first: Attribute = param_def()
    second: Attribute = param_def()


@irdl_attr_definition
class ListType(ParametrizedAttribute, TypeAttribute):
    """An immutable list whose elements all have one type."""

    name = "siren.list"
    element: Attribute = param_def()


@irdl_attr_definition
class DistType(ParametrizedAttribute, TypeAttribute):
    """A distribution of a statically known family (ARCHITECTURE.md §9)."""

    name = "siren.dist"
    family: StringAttr = param_def()


@irdl_attr_definition
class SymType(ParametrizedAttribute, TypeAttribute):
    """A number or bool that may be a symbolic expression (``-m ssi|ds|bp``; ARCHITECTURE.md §6.2): one
    symbolic word at run time. Bools are 0.0 / 1.0. Only the `symbolic-values` pass
    introduces it, for values it cannot prove concrete."""

    name = "siren.sym"


@irdl_attr_definition
class SymDistType(ParametrizedAttribute, TypeAttribute):
    """A distribution of a known family whose number parameters are symbolic words
    (a list parameter, categorical's probabilities, stays a concrete list)."""

    name = "siren.symdist"
    family: StringAttr = param_def()


unit = UnitType()
string = StringType()
sym = SymType()


def symdist_type(family: str) -> SymDistType:
    return SymDistType(StringAttr(family))


# What an operand may be where a symbolic method may have made it symbolic.
NUMBER = base(Float64Type) | base(SymType)
BOOL = base(IntegerType) | base(SymType)
DIST = base(DistType) | base(SymDistType)


def is_sym(t: Attribute) -> bool:
    return type(t) is SymType


def holds(t: Attribute, leaf) -> bool:
    """Whether type `t` is, or has among its pair components and list elements, a type for which
    `leaf(type)` holds."""
    if leaf(t):
        return True
    if isinstance(t, PairType):
        return holds(t.first, leaf) or holds(t.second, leaf)
    if isinstance(t, ListType):
        return holds(t.element, leaf)
    return False


def dist_type(family: str) -> DistType:
    return DistType(StringAttr(family))


def draw_type(dist: DistType, params: Sequence[Attribute]) -> Attribute:
    """The type of a draw from `dist` with parameters of the types `params`."""
    value = distributions.family(dist.family.data).value
    if value == distributions.POINT:
        return params[0]
    return i1 if value == distributions.BOOL else f64


def expect_type(value: SSAValue, want: Attribute, what: str) -> None:
    """A verifier's check that ``value`` has type ``want``; ``what`` names it in the message."""
    if value.type != want:
        raise VerifyException(f"{what} must be {want}, got {value.type}")

