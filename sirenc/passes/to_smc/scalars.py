"""How `lower-siren-to-smc` represents a Siren value: a tuple of machine scalars chosen by its
static type (`flatten`), and how a pattern reads them back off a lowered value (`unpack`, and for
pairs `parts` and `split_pair`).

A lowered value is the ``builtin.unrealized_conversion_cast`` of its scalars that its pattern left;
a pair's cast may hold a part of pair type whole, as that part's own cast, so that an n-tuple is not
n^2/2 operands. The builder and the patterns read lowered values through these functions.
"""

from __future__ import annotations

from xdsl.dialects.builtin import UnrealizedConversionCastOp, f64, i1
from xdsl.ir import Attribute, BlockArgument, SSAValue

from sirenc.ir import siren, smc
from sirenc.passes.errors import LoweringError


def flatten(t: Attribute) -> list[Attribute]:
    """The machine scalars that represent a value of siren type `t`."""
    if t == f64 or t == i1:
        return [t]
    if isinstance(t, siren.PairType):
        return flatten(t.first) + flatten(t.second)
    if isinstance(t, siren.ListType):
        return [handle(t)]
    if isinstance(t, siren.DistType):
        return smc.machine_params(t.family.data)  # delta of a bool is widened to f64
    if isinstance(t, siren.SymType):
        return [smc.sym]
    if isinstance(t, siren.SymDistType):
        return smc.sym_params(t.family.data)
    return []  # unit, string


def handle(t: siren.ListType) -> smc.ListHandleType:
    return smc.list_type(descriptor(t.element))


def descriptor(t: Attribute) -> str:
    """A siren type in the runtime's prefix notation (sirenrt.h)."""
    if t == f64:
        return "f"
    if t == i1:
        return "b"
    if isinstance(t, siren.SymType):
        return "S"
    if isinstance(t, siren.PairType):
        return "P" + descriptor(t.first) + descriptor(t.second)
    if isinstance(t, siren.ListType):
        return "L" + descriptor(t.element)
    return "u"


def unpack(value: SSAValue) -> list[SSAValue]:
    """The scalars of a lowered value."""
    t = value.type
    if t is f64 or t is i1 or t == f64 or t == i1 or isinstance(t, smc.ListHandleType | smc.SymType):
        return [value]
    owner = value.owner
    if isinstance(owner, UnrealizedConversionCastOp) and len(owner.outputs) == 1:
        if not isinstance(t, siren.PairType):
            return list(owner.inputs)
        # A pair's cast may hold a part of pair type as that part's own cast (`parts`): expanded
        # here, without recursion (a tuple of 10^5 elements is a chain of 10^5 pairs).
        scalars: list[SSAValue] = []
        work = list(reversed(owner.inputs))
        while work:
            v = work.pop()
            inner = v.owner
            if isinstance(v.type, siren.PairType) and isinstance(inner, UnrealizedConversionCastOp) \
                    and len(inner.outputs) == 1:
                work.extend(reversed(inner.inputs))
            elif isinstance(v.type, siren.PairType):
                scalars += unpack(v)
            else:
                scalars.append(v)
        return scalars
    if isinstance(value, BlockArgument):
        # A fold's or map's body argument, read before its owner is lowered.
        cast = UnrealizedConversionCastOp.get([value], flatten(value.type))
        first = value.block.first_op
        if first is None:
            value.block.add_op(cast)
        else:
            value.block.insert_op_before(cast, first)
        return list(cast.outputs)
    raise LoweringError(f"lower-siren-to-smc: {owner.name} was not lowered before its use")


def parts(value: SSAValue) -> list[SSAValue]:
    """What a pair's cast holds of a lowered value: a lowered pair as its one value, anything else
    as its scalars. Casting a pair from its parts' scalars instead would copy the scalars of a
    tuple's tail into each of its pairs: the n right-nested pairs of an n-tuple (a function of n
    parameters) had n^2/2 operands."""
    owner = value.owner
    if isinstance(value.type, siren.PairType) and isinstance(owner, UnrealizedConversionCastOp) \
            and len(owner.outputs) == 1:
        return [value]
    return unpack(value)


def split_pair(pair: SSAValue) -> tuple[list[SSAValue], list[SSAValue]]:
    """The first's and the second's share of a lowered pair's cast inputs (or scalars)."""
    owner = pair.owner
    if isinstance(owner, UnrealizedConversionCastOp) and len(owner.outputs) == 1:
        held = list(owner.inputs)
    else:
        held = unpack(pair)
    first = pair.type.first
    # A cast of scalars only (a block argument's, a branch's result) holds a pair part flat.
    whole = isinstance(first, siren.PairType) and bool(held) and isinstance(held[0].type, siren.PairType)
    n = 1 if whole else len(flatten(first))
    return held[:n], held[n:]
