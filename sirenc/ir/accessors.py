"""Faster reads of an op's operands, results and regions by name."""

from __future__ import annotations

import operator

from xdsl.irdl import IRDLOperation, VarIRConstruct
from xdsl.irdl.operations import BeforeVariadicSingleAccessor

_item = tuple.__getitem__


def direct_accessors(cls: type[IRDLOperation]) -> None:
    """Replaces the op's accessors of single operands, results and regions placed before any
    variadic one (``op.lhs``, ``op.result``, ``op.body``) by plain indexing of its lists: xDSL's
    accessor looks its list up by a match on the kind of construct and indexes a view of it, a
    microsecond and more per read, and the passes read them a few times per op of a 10^5-op
    program. The value read is the same."""
    lists = {VarIRConstruct.OPERAND: "_operands", VarIRConstruct.RESULT: "results",
             VarIRConstruct.REGION: "regions"}
    seen = set()
    for klass in cls.__mro__:
        for name, accessor in vars(klass).items():
            if name in seen:
                continue
            seen.add(name)
            if type(accessor) is BeforeVariadicSingleAccessor and accessor.construct in lists:
                getter = operator.attrgetter(lists[accessor.construct])
                setattr(cls, name, property(lambda op, get=getter, i=accessor.idx: _item(get(op), i)))

