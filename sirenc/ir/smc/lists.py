"""List handles: building, taking apart and measuring lists, constant lists, and data files' rows."""

from __future__ import annotations

import struct
from collections.abc import Sequence

from xdsl.dialects.builtin import BytesAttr, DenseArrayBase, Float64Type, IntegerType, StringAttr, f64, i1, i64
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    IRDLOperation, irdl_op_definition, operand_def, prop_def, result_def, traits_def, var_operand_def, var_result_def,
)
from xdsl.traits import MemoryReadEffect, MemoryWriteEffect, Pure
from xdsl.utils.exceptions import VerifyException

from sirenc.ir.smc.types import ListHandleType, kind_at, list_type, scalars_of, type_end


def _element_scalars(lst: SSAValue) -> list[Attribute]:
    return scalars_of(lst.type.element.data)


@irdl_op_definition
class NilOp(IRDLOperation):
    """The empty list. `%l = "smc.nil"() : () -> !smc.list<"f">`"""

    name = "smc.nil"
    result = result_def(ListHandleType)
    traits = traits_def(Pure())

    def __init__(self, typ: ListHandleType):
        super().__init__(result_types=[typ])


def _i64_array(words: Sequence[int]) -> DenseArrayBase:
    """``DenseArrayBase.from_list(i64, words)``: words in the signed range, as they come, are
    what its normalisation (a range check per word, a third of lowering a literal of 10^5
    constants) makes of them, so they are packed as they are."""
    try:
        data = struct.pack(f"<{len(words)}q", *words)
    except struct.error:
        return DenseArrayBase.from_list(i64, words)
    return DenseArrayBase(i64, BytesAttr(data))


@irdl_op_definition
class ConstListOp(IRDLOperation):
    """A non-empty list whose elements were all known at compile time (a literal of constants),
    built at once: `words` holds element after element, each element's scalars in descriptor
    order as 64-bit words (a double's bits, a bool 0 or 1), as `smc.cons` would store them.
    So a literal of 10^5 constants is one op, not 10^5 conses.

    `%l = "smc.const_list"() <{words = array<i64: 4607182418800017408, 0>}> : () -> !smc.list<"Pfb">`

    When the elements hold lists (`[[1., 2.], []]`), `words` is the list's encoding instead
    (``nested_words``): its length, then each element, a list in it encoded the same way, and a
    unit as no word at all.
    Like `smc.cons` it allocates (the memory limit is a run-time error at the op's location).
    """

    name = "smc.const_list"
    words = prop_def(DenseArrayBase)
    result = result_def(ListHandleType)
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())

    def __init__(self, typ: ListHandleType, words: Sequence[int]):
        super().__init__(properties={"words": _i64_array(words)}, result_types=[typ])

    @property
    def nested(self) -> bool:
        return "L" in self.result.type.element.data

    @property
    def element_words(self) -> int:
        return len(_element_scalars(self.result))

    @property
    def length(self) -> int:
        return self.words.get_values()[0] if self.nested else len(self.words) // self.element_words

    def verify_(self) -> None:
        if self.words.elt_type != i64:
            raise VerifyException("smc.const_list's words are i64")
        words = self.words.get_values()
        if self.nested:
            if nested_words_end(self.result.type.descriptor, words, 0) != len(words) or not words[0]:
                raise VerifyException("smc.const_list's words are not the encoding of a non-empty list of its type")
            return
        scalars = _element_scalars(self.result)
        if not scalars or any(t not in (f64, i1) for t in scalars):
            raise VerifyException("smc.const_list's elements are floats and bools (in tuples), at least one word each")
        if not words or len(words) % len(scalars):
            raise VerifyException(f"smc.const_list has {len(words)} words, not a positive multiple of "
                                  f"its elements' {len(scalars)}")
        bools = [k for k, t in enumerate(scalars) if t == i1]
        if any(words[at + k] not in (0, 1) for at in range(0, len(words), len(scalars)) for k in bools):
            raise VerifyException("smc.const_list's bool words are 0 or 1")


def nested_words_end(descriptor: str, words: Sequence[int], at: int, t: int = 0) -> int:
    """Where the encoding (ConstListOp) of one value of the type at descriptor[t:] that starts at
    words[at] ends, or -1 when it is not one."""
    kind = kind_at(descriptor, t)
    if at < 0 or kind not in ("f", "b", "u", "P", "L"):   # a symbolic word is no constant
        return -1
    if kind in "fb":
        return at + 1 if at < len(words) and (kind == "f" or words[at] in (0, 1)) else -1
    if kind == "u":
        return at
    if kind == "P":
        at = nested_words_end(descriptor, words, at, t + 1)
        return nested_words_end(descriptor, words, at, type_end(descriptor, t + 1))
    n = words[at] if at < len(words) else -1
    at = at + 1 if n >= 0 else -1
    for _ in range(max(n, 0)):
        at = nested_words_end(descriptor, words, at, t + 1)
    return at


@irdl_op_definition
class IsNilOp(IRDLOperation):
    """Whether a list is empty. `%b = "smc.is_nil"(%l) : (!smc.list<"f">) -> i1`"""

    name = "smc.is_nil"
    list = operand_def(ListHandleType)
    result = result_def(IntegerType)
    traits = traits_def(Pure())

    def __init__(self, lst: SSAValue):
        super().__init__(operands=[lst], result_types=[i1])


@irdl_op_definition
class ConsOp(IRDLOperation):
    """A new cell: the element's scalars in front of `tail`.

    `%l = "smc.cons"(%x, %t) : (f64, !smc.list<"f">) -> !smc.list<"f">`
    """

    name = "smc.cons"
    head = var_operand_def()
    tail = operand_def(ListHandleType)
    result = result_def(ListHandleType)
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())

    def __init__(self, head: Sequence[SSAValue], tail: SSAValue):
        super().__init__(operands=[head, tail], result_types=[tail.type])

    def verify_(self) -> None:
        if self.result.type != self.tail.type:
            raise VerifyException("smc.cons gives a list of its tail's type")
        if [v.type for v in self.head] != _element_scalars(self.tail):
            raise VerifyException("smc.cons's head does not match the list's element type")


@irdl_op_definition
class HeadOp(IRDLOperation):
    """The first element's scalars; the empty list is a run-time error at the op's location.

    `%x = "smc.head"(%l) : (!smc.list<"f">) -> f64`
    """

    name = "smc.head"
    list = operand_def(ListHandleType)
    values = var_result_def()
    traits = traits_def(MemoryReadEffect())

    def __init__(self, lst: SSAValue):
        super().__init__(operands=[lst], result_types=[_element_scalars(lst)])

    def verify_(self) -> None:
        if [v.type for v in self.values] != _element_scalars(self.list):
            raise VerifyException("smc.head's results do not match the list's element type")


@irdl_op_definition
class TailOp(IRDLOperation):
    """The list without its first element (the empty list is a run-time error).

    `%t = "smc.tail"(%l) : (!smc.list<"f">) -> !smc.list<"f">`
    """

    name = "smc.tail"
    list = operand_def(ListHandleType)
    result = result_def(ListHandleType)
    traits = traits_def(MemoryReadEffect())

    def __init__(self, lst: SSAValue):
        super().__init__(operands=[lst], result_types=[lst.type])

    def verify_(self) -> None:
        if self.result.type != self.list.type:
            raise VerifyException("smc.tail gives a list of its operand's type")


@irdl_op_definition
class LengthOp(IRDLOperation):
    """The number of elements, as a float. `%n = "smc.length"(%l) : (!smc.list<"f">) -> f64`"""

    name = "smc.length"
    list = operand_def(ListHandleType)
    result = result_def(Float64Type)
    traits = traits_def(MemoryReadEffect())

    def __init__(self, lst: SSAValue):
        super().__init__(operands=[lst], result_types=[f64])


@irdl_op_definition
class ReverseOp(IRDLOperation):
    """The list reversed (new cells). `%r = "smc.reverse"(%l) : (!smc.list<"f">) -> !smc.list<"f">`"""

    name = "smc.reverse"
    list = operand_def(ListHandleType)
    result = result_def(ListHandleType)
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())

    def __init__(self, lst: SSAValue):
        super().__init__(operands=[lst], result_types=[lst.type])

    def verify_(self) -> None:
        if self.result.type != self.list.type:
            raise VerifyException("smc.reverse gives a list of its operand's type")


@irdl_op_definition
class RangeOp(IRDLOperation):
    """`List.range(lo, hi)`: the floats int(lo) .. int(hi)-1; lo > hi is a run-time error.

    `%l = "smc.range"(%lo, %hi) : (f64, f64) -> !smc.list<"f">`
    """

    name = "smc.range"
    lo = operand_def(Float64Type)
    hi = operand_def(Float64Type)
    result = result_def(ListHandleType)
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())

    def __init__(self, lo: SSAValue, hi: SSAValue):
        super().__init__(operands=[lo, hi], result_types=[list_type("f")])

    def verify_(self) -> None:
        if self.result.type != list_type("f"):
            raise VerifyException("smc.range gives a list of floats")


@irdl_op_definition
class ReadFileOp(IRDLOperation):
    """A CSV data file's rows (read once per run, shared by all particles).

    `%d = "smc.read_file"() <{path = "/abs/data.csv"}> : () -> !smc.list<"Lf">`
    """

    name = "smc.read_file"
    path = prop_def(StringAttr)
    result = result_def(ListHandleType)
    traits = traits_def(MemoryReadEffect())

    def __init__(self, path: str):
        super().__init__(properties={"path": StringAttr(path)}, result_types=[list_type("Lf")])

    def verify_(self) -> None:
        if self.result.type != list_type("Lf"):
            raise VerifyException("smc.read_file gives a list of rows (!smc.list<\"Lf\">)")
        if not self.path.data.startswith("/"):
            raise VerifyException("smc.read_file takes an absolute path")
