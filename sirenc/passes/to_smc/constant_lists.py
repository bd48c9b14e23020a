"""The step of `lower-siren-to-smc` before its patterns: each list literal of constants becomes one
``smc.const_list`` (`fold_constant_lists`).

It stands apart from the patterns because it reads a whole literal, a chain of conses and the
constants they hold, where a pattern reads one op; the cast of the new list it leaves is unpacked
as any other lowered value.
"""

from __future__ import annotations

import struct

from xdsl.dialects.builtin import UnrealizedConversionCastOp, f64, i1
from xdsl.ir import Block, Operation, SSAValue

from sirenc.ir import siren, smc
from sirenc.passes.rewriting import drop
from sirenc.passes.to_smc.scalars import handle


def fold_constant_lists(ops: list[Operation]) -> None:
    """Each list literal whose elements are constants (floats, bools, units, tuples of them; a
    bool standing for a number) becomes one ``smc.const_list`` of their words, behind a cast the
    patterns unpack, instead of an op per element and a cons per element all the way to machine
    code: a literal of 10^5 constants then compiles in seconds (issue 11). A literal is a chain of `siren.cons` at
    one location ending in `siren.nil`; a cons written elsewhere (``x :: [1., 2.]``) and a
    non-constant element keep their cons, so they fold only the constant rest. A literal of
    units only (no words to count its elements by) keeps its conses. Literals are met outermost
    first, so a literal of literals (``[[1.], [2., 3.]]``) is one op too, its inner conses read
    and erased with it. `ops` are the program's ops in program order or with a region's ops
    before their owner's: a cons has no regions, so both list the conses in one order."""
    for op in reversed(ops):
        if type(op) is siren.ConsOp and op.parent is not None and not _inner_constant_cons(op):
            _fold_literal(op)


def _inner_constant_cons(op: siren.ConsOp) -> bool:
    """Whether `op` is only the tail of the literal's cons before it, whose head is constant:
    then it folds as part of that cons's chain."""
    before = _cons_before(op)
    return before is not None and _element_words(before.head) is not None


def _cons_before(op: siren.ConsOp) -> siren.ConsOp | None:
    """The cons of the same literal whose tail `op` is, if `op` is nothing else."""
    use = op.results[0].first_use
    if use is None or use._next_use is not None:
        return None
    user = use._operation
    if type(user) is siren.ConsOp and use._index == 1 and (user.location is op.location or user.location == op.location):
        return user
    return None


def _element_words(value: SSAValue) -> list[int] | None:
    """The 64-bit words `smc.cons` would store for a constant element (a double's bits, a
    bool 0/1, nothing for a unit), or None when it is not a constant of floats, bools and units.
    A bool standing for a number (`[1., true]`) is the number the lowering's select makes of it.
    A list in it (a literal of constants, or `[]`) is its encoding in smc.const_list's nested
    form: its length, then its elements."""
    owner = value.owner
    kind = type(owner)
    if kind is siren.NilOp:
        return [0]
    if kind is siren.ConsOp:
        literal = _literal(owner)
        return None if literal is None else [len(literal[0]), *literal[1]]
    if kind is siren.PairOp:
        first, second = _element_words(owner.first), _element_words(owner.second)
        return None if first is None or second is None else first + second
    if kind is siren.BoolToFloatOp:
        inner = _constant(owner.operand)
        return None if inner is None else [_float_word(1.0 if inner else 0.0)]
    number = siren.float_constant(value)
    if number is not None:
        return [_float_word(number)]
    constant = _constant(value)
    if constant is None:
        return [] if kind is siren.ConstOp and value.type == siren.unit else None
    return [_float_word(constant)] if value.type == f64 else [int(constant)]


def _constant(value: SSAValue) -> float | bool | None:
    """The float or bool a `siren.const` of one holds, else None."""
    number = siren.float_constant(value)
    if number is not None or not isinstance(value.owner, siren.ConstOp) or value.type != i1:
        return number
    return value.owner.value.value.data != 0


def _float_word(x: float) -> int:
    return int.from_bytes(struct.pack("<d", x), "little", signed=True)


def _literal(top: siren.ConsOp) -> tuple[list[siren.ConsOp], list[int]] | None:
    """The conses of the literal of constants that starts at `top` and its elements' words, or
    None when it is not one."""
    chain, words = [], []
    cur: Operation = top
    while type(cur) is siren.ConsOp:
        if cur is not top and _cons_before(cur) is None:
            return None
        head, tail = cur._operands
        head = _element_words(head)
        if head is None:
            return None
        chain.append(cur)
        words += head
        cur = tail.owner
    return (chain, words) if type(cur) is siren.NilOp else None


def _fold_literal(top: siren.ConsOp) -> None:
    """Folds the constant chain that starts at `top`, if it is one, into an smc.const_list."""
    literal = _literal(top)
    if literal is None:
        return
    chain, words = literal
    typ = handle(top.result.type)
    if "L" in typ.element.data:    # elements holding lists: the nested form, which counts them
        words = [len(chain), *words]
    elif not words:                # elements of units only: nothing to count them by
        return
    const = smc.ConstListOp(typ, words)
    const.location = top.location
    const.result.name_hint = top.result.name_hint
    cast = UnrealizedConversionCastOp.get([const.result], [top.result.type])
    top.parent_block().insert_ops_before([const, cast], top)
    top.result.replace_all_uses_with(cast.outputs[0])
    _erase_unused(top)


def _erase_unused(op: Operation) -> None:
    """Erases `op` and then, one after another, the definitions its erasure leaves unused (a
    literal's conses, its elements, the inner literals of a literal of literals)."""
    work = [op]
    while work:
        op = work.pop()
        if op.parent is None:
            continue
        owners = [v.owner for v in op._operands]
        drop(op)
        for owner in owners:
            if type(owner) is not Block and _unused(owner):
                work.append(owner)


def _unused(op: Operation) -> bool:
    for result in op.results:
        if result.first_use is not None:
            return False
    return True
