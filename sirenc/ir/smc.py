"""The `smc` dialect: one particle's program, typed, with no C runtime in sight.

After `lower-siren-to-smc` a model is one ``smc.particle`` op: the program a
single particle runs, over machine scalars (``f64``, ``i1``, ``i64``) and list
handles (``!smc.list<"f">``, typed by the element's descriptor so a collector
knows which words are handles), with ``arith``/``math`` for arithmetic and
``scf.if``/``scf.while`` for control. The ops below are what is particular to
a particle filter: drawing from and observing a distribution family, the two
suspension points (a resampling barrier, and waiting for the next row of the
observation stream), the frame slots that carry values across a suspension,
lists, data files, and the result. Nothing here names a C function, a byte
offset or a pointer: the LLVM backend (`lower-smc-to-llvm`) and a JAX backend
both consume this level.

Under the symbolic methods (``-m ssi|ds|bp``) a value that may be symbolic is one ``!smc.sym`` scalar (a symbolic
word: a constant or a reference to a node of the particle's symbolic state), built by
``smc.sym_const``/``smc.sym_binop``/``smc.sym_neg``/``smc.sym_ite``, forced by
``smc.sym_value``; ``smc.assume`` creates a random variable and ``smc.sym_observe``
observes a distribution with symbolic parameters.

    "smc.particle"() <{sym_name = "main", model = #smc.model<"f", false, "...", "", 1 : i64, []>}> ({
      %x = "smc.sample"(%m, %v) <{family = "gaussian"}> : (f64, f64) -> f64
      "smc.frame_store"(%x) <{slot = 0 : i64}> : (f64) -> ()
      "smc.observe"(%x, %s, %y) <{family = "gaussian"}> : (f64, f64, f64) -> ()
      "smc.resample"() <{point = 1 : i32}> : () -> ()
      %x1 = "smc.frame_load"() <{slot = 0 : i64}> : () -> f64
      "smc.finish"(%x1) : (f64) -> ()
    }) : () -> ()
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

from xdsl.dialects.builtin import (
    ArrayAttr, BytesAttr, DenseArrayBase, Float64Type, IntegerAttr, IntegerType, StringAttr, SymbolNameConstraint, f64, i1,
    i32, i64,
)
from xdsl.ir import Attribute, Dialect, ParametrizedAttribute, Region, SSAValue, TypeAttribute
from xdsl.irdl import (
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    param_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import IsTerminator, MemoryReadEffect, MemoryWriteEffect, Pure, SymbolOpInterface
from xdsl.utils.exceptions import VerifyException

from sirenc import distributions


# -- types ---------------------------------------------------------------------------


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
    """The machine scalars of a value with type descriptor `descriptor` (sirenrt.h's grammar);
    a malformed descriptor is a VerifyException."""
    out: list[Attribute] = []

    def parse(pos: int) -> int:
        kind = _kind(descriptor, pos)
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
            end = _skip(descriptor, pos + 1)
            out.append(list_type(descriptor[pos + 1:end]))
            return end
        raise VerifyException(f"bad type descriptor {descriptor!r}")

    if parse(0) != len(descriptor):
        raise VerifyException(f"bad type descriptor {descriptor!r}")
    return out


def _kind(descriptor: str, pos: int) -> str:
    if pos >= len(descriptor):
        raise VerifyException(f"bad type descriptor {descriptor!r}")
    return descriptor[pos]


def _skip(descriptor: str, pos: int) -> int:
    kind = _kind(descriptor, pos)
    if kind == "P":
        return _skip(descriptor, _skip(descriptor, pos + 1))
    if kind == "L":
        return _skip(descriptor, pos + 1)
    return pos + 1


_SCALARS = (Float64Type, IntegerType, ListHandleType, SymType)


def _check_scalar(value: SSAValue, what: str) -> None:
    if not isinstance(value.type, _SCALARS):
        raise VerifyException(f"{what} must be a machine scalar or a list handle, got {value.type}")


# -- the model -------------------------------------------------------------------------


@irdl_attr_definition
class ModelAttr(ParametrizedAttribute):
    """What a backend needs to know about the particle program besides its code.

    `result`: the result's type descriptor; `streamable`: whether the program folds over
    the observation stream (`data_file`, "" when none), else `not_streamable_reason`;
    `frame_slots`: how many frame slots `spill-across-suspends` allocated; `roots`: per
    suspension point, the slots holding list handles, as [point, slot, descriptor], and
    the slots holding symbolic words, as [point, slot, "S"].

    Under a symbolic method the particle op also carries ``smc.vars``, the program
    variables by the `var` index of ``smc.assume``.
    """

    name = "smc.model"
    result: StringAttr = param_def()
    streamable: IntegerAttr = param_def()
    not_streamable_reason: StringAttr = param_def()
    data_file: StringAttr = param_def()
    frame_slots: IntegerAttr = param_def()
    roots: ArrayAttr = param_def()

    @staticmethod
    def build(result: str, streamable: bool, reason: str, data_file: str,
              frame_slots: int = 0, roots: Sequence[tuple[int, int, str]] = ()) -> "ModelAttr":
        return ModelAttr(
            StringAttr(result), IntegerAttr(int(streamable), i1), StringAttr(reason), StringAttr(data_file),
            IntegerAttr(frame_slots, i64),
            ArrayAttr([ArrayAttr([IntegerAttr(p, i32), IntegerAttr(s, i64), StringAttr(d)]) for p, s, d in roots]),
        )

    def with_frame(self, frame_slots: int, roots: Sequence[tuple[int, int, str]]) -> "ModelAttr":
        return ModelAttr.build(self.result.data, bool(self.streamable.value.data), self.not_streamable_reason.data,
                               self.data_file.data, frame_slots, roots)

    def root_list(self) -> list[tuple[int, int, str]]:
        return [(r.data[0].value.data, r.data[1].value.data, r.data[2].data) for r in self.roots.data]

    def verify(self) -> None:
        scalars_of(self.result.data)


@irdl_op_definition
class ParticleOp(IRDLOperation):
    """The program one particle runs, from the start to ``smc.finish``.

    `smc.particle @model <#smc.model<...>> { ... "smc.finish"(%r) : (f64) -> () }`
    """

    name = "smc.particle"
    sym_name = prop_def(SymbolNameConstraint())
    model = prop_def(ModelAttr)
    body = region_def("single_block")
    traits = traits_def(SymbolOpInterface())

    def __init__(self, name: str, model: ModelAttr, body: Region):
        super().__init__(properties={"sym_name": StringAttr(name), "model": model}, regions=[body])

    def verify_(self) -> None:
        if self.body.block.args:
            raise VerifyException("a particle program takes no arguments")
        last = self.body.block.last_op
        if not isinstance(last, FinishOp):
            raise VerifyException("a particle program ends with smc.finish")
        if [v.type for v in last.values] != scalars_of(self.model.result.data):
            raise VerifyException("smc.finish's values do not match the model's result type")


@irdl_op_definition
class FinishOp(IRDLOperation):
    """The particle has finished with this result (its scalars, in descriptor order).

    `"smc.finish"(%x, %l) : (f64, !smc.list<"f">) -> ()`
    """

    name = "smc.finish"
    values = var_operand_def()
    traits = traits_def(IsTerminator())

    def __init__(self, values: Sequence[SSAValue]):
        super().__init__(operands=[values])

    def verify_(self) -> None:
        if not isinstance(self.parent_op(), ParticleOp):
            raise VerifyException("smc.finish ends an smc.particle")


# -- distributions ---------------------------------------------------------------------


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


# -- symbolic values (-m ssi|ds|bp) --------------------------------------------------------

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


# -- suspension points -----------------------------------------------------------------


@irdl_op_definition
class ResampleOp(IRDLOperation):
    """A resampling barrier: the particle stops here until the population has resampled.

    `"smc.resample"() <{point = 1 : i32}> : () -> ()`; `point` numbers the suspension
    points (1, 2, ...), set by `spill-across-suspends`.
    """

    name = "smc.resample"
    point = opt_prop_def(IntegerAttr)
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())

    def __init__(self):
        super().__init__()


@irdl_op_definition
class NextRowOp(IRDLOperation):
    """Row `index` of the observation stream: waits until it has arrived or the stream has
    closed; `more` is false once the stream has ended (then `row` is the empty list).

    `%more, %row = "smc.next_row"(%i) <{point = 1 : i32}> : (i64) -> (i1, !smc.list<"f">)`
    Waiting is a suspension point; after it the op runs again with the same `index`.
    The op is located at the stream's `File.read`: a data file that cannot be read is
    reported there.
    """

    name = "smc.next_row"
    index = operand_def(IntegerType)
    point = opt_prop_def(IntegerAttr)
    more = result_def(IntegerType)
    row = result_def(ListHandleType)
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())

    def __init__(self, index: SSAValue):
        super().__init__(operands=[index], result_types=[i1, list_type("f")])

    def verify_(self) -> None:
        if self.index.type != i64 or self.more.type != i1 or self.row.type != list_type("f"):
            raise VerifyException("smc.next_row takes an i64 index and gives (i1, !smc.list<\"f\">)")


SUSPENSIONS = (ResampleOp, NextRowOp)


# -- the frame -------------------------------------------------------------------------


@irdl_op_definition
class FrameLoadOp(IRDLOperation):
    """Reads frame slot `slot`, which keeps a value alive across a suspension.

    `%x = "smc.frame_load"() <{slot = 0 : i64}> : () -> f64`
    """

    name = "smc.frame_load"
    slot = prop_def(IntegerAttr)
    result = result_def()
    traits = traits_def(MemoryReadEffect())

    def __init__(self, slot: int, result_type: Attribute):
        super().__init__(properties={"slot": IntegerAttr(slot, i64)}, result_types=[result_type])

    def verify_(self) -> None:
        _check_scalar(self.result, "a frame slot")
        if self.slot.value.data < 0:
            raise VerifyException("frame slots are numbered from 0")


@irdl_op_definition
class FrameStoreOp(IRDLOperation):
    """Writes a scalar to frame slot `slot`. `"smc.frame_store"(%x) <{slot = 0 : i64}> : (f64) -> ()`"""

    name = "smc.frame_store"
    value = operand_def()
    slot = prop_def(IntegerAttr)
    traits = traits_def(MemoryWriteEffect())

    def __init__(self, value: SSAValue, slot: int):
        super().__init__(operands=[value], properties={"slot": IntegerAttr(slot, i64)})

    def verify_(self) -> None:
        _check_scalar(self.value, "a frame slot")
        if self.slot.value.data < 0:
            raise VerifyException("frame slots are numbered from 0")


# -- lists and data --------------------------------------------------------------------


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
    kind = _kind(descriptor, t)
    if at < 0 or kind not in ("f", "b", "u", "P", "L"):   # a symbolic word is no constant
        return -1
    if kind in "fb":
        return at + 1 if at < len(words) and (kind == "f" or words[at] in (0, 1)) else -1
    if kind == "u":
        return at
    if kind == "P":
        at = nested_words_end(descriptor, words, at, t + 1)
        return nested_words_end(descriptor, words, at, _skip(descriptor, t + 1))
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


SMC = Dialect(
    "smc",
    [ParticleOp, FinishOp, SampleOp, ObserveOp, ResampleOp, NextRowOp, FrameLoadOp, FrameStoreOp,
     NilOp, IsNilOp, ConsOp, ConstListOp, HeadOp, TailOp, LengthOp, ReverseOp, RangeOp, ReadFileOp,
     *SYMBOLIC_OPS],
    [ListHandleType, SymType, ModelAttr],
)
