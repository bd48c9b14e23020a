"""The `smc` dialect's types: machine scalars, list handles typed by their element's descriptor
(sirenrt.h's grammar), and symbolic words."""

from __future__ import annotations

from xdsl.dialects.builtin import Float64Type, IntegerType, StringAttr, f64, i1
from xdsl.ir import Attribute, ParametrizedAttribute, SSAValue, TypeAttribute
from xdsl.irdl import irdl_attr_definition, param_def
from xdsl.utils.exceptions import VerifyException


@irdl_attr_definition
class ListHandleType(ParametrizedAttribute, TypeAttribute):
    """A list whose elements have the type descriptor `element` (``f``, ``b``, ``P..``, ``L..``)."""

    name = "smc.list"
    element: StringAttr = param_def()

    @property
    def descriptor(self) -> str:
        return "L" + self.element.data

    def verify(self) -> None:
        scalars_of(self.element.data)


def list_type(element: str) -> ListHandleType:
    return ListHandleType(StringAttr(element))


@irdl_attr_definition
class SymType(ParametrizedAttribute, TypeAttribute):
    """A symbolic word (``-m ssi|ds|bp``): a constant number (bools 0.0 / 1.0) or a reference to a
    node of the particle's symbolic state. Type descriptor letter ``S``."""

    name = "smc.sym"


sym = SymType()


def scalars_of(descriptor: str) -> list[Attribute]:
    """The machine scalars of a value with type descriptor `descriptor` (sirenrt.h's grammar, with
    a frame result's views ``V k a``: store-result-views); a malformed descriptor is a VerifyException."""
    out: list[Attribute] = []

    def parse(pos: int) -> int:
        kind = kind_at(descriptor, pos)
        if kind == "f":
            out.append(f64)
            return pos + 1
        if kind == "b":
            out.append(i1)
            return pos + 1
        if kind == "S":
            out.append(sym)
            return pos + 1
        if kind == "u":
            return pos + 1
        if kind == "P":
            return parse(parse(pos + 1))
        if kind == "L":
            end = type_end(descriptor, pos + 1)
            out.append(list_type(descriptor[pos + 1:end]))
            return end
        if kind == "V" and descriptor[pos + 1:pos + 2].isdigit() and descriptor[pos + 2:pos + 3] in ("f", "b"):
            out.append(list_type(descriptor[pos + 2]))
            return pos + 3
        raise VerifyException(f"bad type descriptor {descriptor!r}")

    if parse(0) != len(descriptor):
        raise VerifyException(f"bad type descriptor {descriptor!r}")
    return out


def kind_at(descriptor: str, pos: int) -> str:
    """The letter of the type that starts at ``descriptor[pos]``."""
    if pos >= len(descriptor):
        raise VerifyException(f"bad type descriptor {descriptor!r}")
    return descriptor[pos]


def type_end(descriptor: str, pos: int) -> int:
    """Where the type that starts at ``descriptor[pos]`` ends."""
    kind = kind_at(descriptor, pos)
    if kind == "P":
        return type_end(descriptor, type_end(descriptor, pos + 1))
    if kind == "L":
        return type_end(descriptor, pos + 1)
    if kind == "V":
        return pos + 3
    return pos + 1


_SCALARS = (Float64Type, IntegerType, ListHandleType, SymType)


def check_scalar(value: SSAValue, what: str) -> None:
    if not isinstance(value.type, _SCALARS):
        raise VerifyException(f"{what} must be a machine scalar or a list handle, got {value.type}")

