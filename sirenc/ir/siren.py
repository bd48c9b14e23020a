"""The `siren` dialect: one op per Siren language construct.

User functions are ``func.func``/``func.call``/``func.return`` (the standard
dialect) so that ``inline-functions`` can use plain symbol lookup; the main
expression is ``func.func @main``. Everything else is here. Values are typed
statically: ``f64`` (every number), ``i1`` (bool), ``!siren.unit``,
``!siren.string``, ``!siren.pair<A, B>``, ``!siren.list<T>`` and
``!siren.dist<"family">``. Under ``-m ssi|ds|bp`` the ``symbolic-values`` pass retypes the
values that may be symbolic: a number or bool that may be a symbolic expression is
``!siren.sym``, a distribution with such a parameter ``!siren.symdist<"family">``, and
``siren.to_sym`` / ``siren.force`` convert between the two worlds. Each op carries its source location in
``op.location`` so later stages can report errors against the user's code.

Example (`let x <- gaussian(0., 1.) in observe(gaussian(x, 1.), 2.)`)::

    %0 = "siren.const"() <{value = 0.0 : f64}> : () -> f64
    %1 = "siren.const"() <{value = 1.0 : f64}> : () -> f64
    %2 = "siren.dist"(%0, %1) <{family = "gaussian"}> : (f64, f64) -> !siren.dist<"gaussian">
    %x = "siren.assume"(%2) <{var = "x"}> : (!siren.dist<"gaussian">) -> f64
"""

from __future__ import annotations

import operator
from collections.abc import Sequence

from xdsl.dialects.builtin import (
    Float64Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    UnitAttr,
    f64,
    i1,
)
from xdsl.ir import Attribute, Block, Dialect, ParametrizedAttribute, Region, SSAValue, TypeAttribute
from xdsl.irdl import (
    IRDLOperation,
    VarIRConstruct,
    base,
    irdl_attr_definition,
    irdl_op_definition,
    lazy_traits_def,
    operand_def,
    opt_prop_def,
    param_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.irdl.operations import BeforeVariadicSingleAccessor
from xdsl.traits import HasParent, IsTerminator, MemoryReadEffect, MemoryWriteEffect, Pure
from xdsl.utils.exceptions import VerifyException

from sirenc import distributions
from sirenc.ir.build import init_op

# ---- types ------------------------------------------------------------------


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


_NUMBER = base(Float64Type) | base(SymType)
_BOOL = base(IntegerType) | base(SymType)
_DIST = base(DistType) | base(SymDistType)


def is_sym(t: Attribute) -> bool:
    return type(t) is SymType


def pack(add, values: Sequence[SSAValue]) -> SSAValue:
    """One value for several (at least one): right-nested pairs, built with `add(op)`, which
    inserts the op where the caller builds and returns its result."""
    value = values[-1]
    for first in reversed(values[:-1]):
        value = add(PairOp(first, value))
    return value


def unpack(add, value: SSAValue, n: int) -> list[SSAValue]:
    """The `n` components of a value `pack` made, projected with `add(op)` as in `pack`."""
    out = []
    for _ in range(n - 1):
        out.append(add(FstOp(value)))
        value = add(SndOp(value))
    out.append(value)
    return out


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


def _expect(value: SSAValue, want: Attribute, what: str) -> None:
    if value.type != want:
        raise VerifyException(f"{what} must be {want}, got {value.type}")


# ---- constants and operators ------------------------------------------------


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

    lhs = operand_def(_NUMBER)
    rhs = operand_def(_NUMBER)
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
            _expect(self.result, sym, f"result of {self.name}")
            return
        _expect(self.result, self.result_type(), f"result of {self.name}")


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
    operand = operand_def(_NUMBER)
    result = result_def(_NUMBER)
    traits = traits_def(Pure())

    def __init__(self, operand: SSAValue):
        init_op(self, [operand], [operand.type])

    def verify_(self) -> None:
        _expect(self.result, self.operand.type, "result of siren.neg")


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
    operand = operand_def(_BOOL)
    result = result_def(_NUMBER)
    traits = traits_def(Pure())

    def __init__(self, operand: SSAValue):
        init_op(self, [operand], [sym if is_sym(operand.type) else f64])

    def verify_(self) -> None:
        if is_sym(self.operand.type):
            _expect(self.result, sym, "result of siren.bool_to_float of a symbolic bool")
            return
        _expect(self.operand, i1, "operand of siren.bool_to_float")
        _expect(self.result, f64, "result of siren.bool_to_float")


@irdl_op_definition
class FloatToBoolOp(IRDLOperation):
    """A number standing for a bool, as the original Siren allows: true unless it is 0.
    (Python's truthiness, so NaN is true); `if x = 0. then false else true`.

    The type checker inserts it, with a warning, where a program relies on it.
    `%r = "siren.float_to_bool"(%x) : (f64) -> i1`
    """

    name = "siren.float_to_bool"
    operand = operand_def(_NUMBER)
    result = result_def(_BOOL)
    traits = traits_def(Pure())

    def __init__(self, operand: SSAValue):
        init_op(self, [operand], [sym if is_sym(operand.type) else i1])

    def verify_(self) -> None:
        _expect(self.result, sym if is_sym(self.operand.type) else i1, "result of siren.float_to_bool")


@irdl_op_definition
class EqOp(IRDLOperation):
    """`a = b`, structural equality. `%r = "siren.eq"(%a, %b) : (f64, f64) -> i1`"""

    name = "siren.eq"
    lhs = operand_def()
    rhs = operand_def()
    result = result_def(_BOOL)
    traits = traits_def(Pure())

    def __init__(self, lhs: SSAValue, rhs: SSAValue):
        init_op(self, [lhs, rhs], [sym if is_sym(lhs.type) else i1])

    def verify_(self) -> None:
        if self.lhs.type != self.rhs.type:
            raise VerifyException("siren.eq compares values of one type")
        # Two symbolic words build an Eq expression; compound values compare concretely.
        _expect(self.result, sym if is_sym(self.lhs.type) else i1, "result of siren.eq")


# ---- pairs ------------------------------------------------------------------


@irdl_op_definition
class PairOp(IRDLOperation):
    """`(a, b)`. `%p = "siren.pair"(%a, %b) : (f64, i1) -> !siren.pair<f64, i1>`"""

    name = "siren.pair"
    first = operand_def()
    second = operand_def()
    result = result_def(PairType)
    traits = traits_def(Pure())

    def __init__(self, first: SSAValue, second: SSAValue):
        init_op(self, [first, second], [PairType(first.type, second.type)])

    def verify_(self) -> None:
        t = self.result.type
        assert isinstance(t, PairType)
        if (t.first, t.second) != (self.first.type, self.second.type):
            raise VerifyException("siren.pair result type must match its operands")


class ProjectionOp(IRDLOperation):
    pair = operand_def(PairType)
    result = result_def()
    traits = traits_def(Pure())

    def __init__(self, pair: SSAValue):
        t = pair.type
        assert isinstance(t, PairType)
        init_op(self, [pair], [self.component(t)])

    @staticmethod
    def component(t: PairType) -> Attribute:
        raise NotImplementedError

    def verify_(self) -> None:
        t = self.pair.type
        assert isinstance(t, PairType)
        if self.result.type != self.component(t):
            raise VerifyException(f"{self.name} result type does not match {t}")


@irdl_op_definition
class FstOp(ProjectionOp):
    """First component of a pair (from pattern matching). `%a = "siren.fst"(%p)`"""

    name = "siren.fst"

    @staticmethod
    def component(t: PairType) -> Attribute:
        return t.first


@irdl_op_definition
class SndOp(ProjectionOp):
    """Second component of a pair. `%b = "siren.snd"(%p)`"""

    name = "siren.snd"

    @staticmethod
    def component(t: PairType) -> Attribute:
        return t.second


# ---- lists ------------------------------------------------------------------


def _list_of(value: SSAValue, what: str) -> ListType:
    # Every caller's operand is declared ListType, which IRDL checks before verify_.
    assert isinstance(value.type, ListType), f"{what} must be a list, got {value.type}"
    return value.type


@irdl_op_definition
class NilOp(IRDLOperation):
    """`[]`. `%l = "siren.nil"() : () -> !siren.list<f64>`"""

    name = "siren.nil"
    result = result_def(ListType)
    traits = traits_def(Pure())

    def __init__(self, list_type: ListType):
        init_op(self, (), [list_type])


@irdl_op_definition
class ConsOp(IRDLOperation):
    """`x :: l`. `%l2 = "siren.cons"(%x, %l) : (f64, !siren.list<f64>) -> !siren.list<f64>`"""

    name = "siren.cons"
    head = operand_def()
    tail = operand_def(ListType)
    result = result_def(ListType)
    traits = traits_def(Pure())

    def __init__(self, head: SSAValue, tail: SSAValue):
        init_op(self, [head, tail], [tail.type])

    def verify_(self) -> None:
        t = _list_of(self.tail, "cons tail")
        if t.element != self.head.type or self.result.type != t:
            raise VerifyException("siren.cons: head, tail and result types disagree")


class ListUnaryOp(IRDLOperation):
    """Shared shape of the `List.*` ops; errors (empty list) are reported at run time."""

    operand = operand_def(ListType)
    result = result_def()
    site = opt_prop_def(IntegerAttr)

    def __init__(self, operand: SSAValue):
        t = operand.type
        assert isinstance(t, ListType)
        init_op(self, [operand], [self.result_of(t)])

    @staticmethod
    def result_of(t: ListType) -> Attribute:
        return t

    def verify_(self) -> None:
        t = _list_of(self.operand, f"{self.name} operand")
        if self.result.type != self.result_of(t):
            raise VerifyException(f"{self.name} result type must be {self.result_of(t)}")


@irdl_op_definition
class HdOp(ListUnaryOp):
    """`List.hd(l)`; an empty list is a run-time error. `%x = "siren.hd"(%l)`"""

    name = "siren.hd"
    # Not Pure: it can fail, so it must not be hoisted or removed.

    @staticmethod
    def result_of(t: ListType) -> Attribute:
        return t.element


@irdl_op_definition
class TlOp(ListUnaryOp):
    """`List.tl(l)`; an empty list is a run-time error. `%t = "siren.tl"(%l)`"""

    name = "siren.tl"


@irdl_op_definition
class LenOp(ListUnaryOp):
    """`List.len(l)` as a float. `%n = "siren.len"(%l) : (!siren.list<f64>) -> f64`"""

    name = "siren.len"
    traits = traits_def(Pure())

    @staticmethod
    def result_of(t: ListType) -> Attribute:
        return f64


@irdl_op_definition
class RevOp(ListUnaryOp):
    """`List.rev(l)`. `%r = "siren.rev"(%l)`"""

    name = "siren.rev"
    traits = traits_def(Pure())


@irdl_op_definition
class RangeOp(IRDLOperation):
    """`List.range(a, b)`: floats int(a) .. int(b)-1; a > b is a run-time error.

    `%l = "siren.range"(%a, %b) : (f64, f64) -> !siren.list<f64>`
    """

    name = "siren.range"
    lo = operand_def(Float64Type)
    hi = operand_def(Float64Type)
    result = result_def(ListType)

    def __init__(self, lo: SSAValue, hi: SSAValue):
        init_op(self, [lo, hi], [ListType(f64)])


@irdl_op_definition
class FileReadOp(IRDLOperation):
    """`File.read(path)`: rows of floats, read once per run (or supplied by the caller).

    `%d = "siren.file_read"(%path) : (!siren.string) -> !siren.list<!siren.list<f64>>`
    """

    name = "siren.file_read"
    path = operand_def(StringType)
    result = result_def(ListType)
    traits = traits_def(Pure())

    def __init__(self, path: SSAValue):
        init_op(self, [path], [ListType(ListType(f64))])


# ---- structured control -----------------------------------------------------


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Ends a region of `siren.if`, `siren.fold` or `siren.map` with its value."""

    name = "siren.yield"
    value = operand_def()
    traits = lazy_traits_def(lambda: (IsTerminator(), HasParent(IfOp, FoldOp, MapOp)))

    def __init__(self, value: SSAValue):
        init_op(self, [value], ())


def _yielded(region: Region) -> SSAValue:
    term = region.block.last_op
    if not isinstance(term, YieldOp):
        raise VerifyException("region must end with siren.yield")
    return term.value


@irdl_op_definition
class IfOp(IRDLOperation):
    """`if c then a else b`; both regions yield a value of the result type.

    `%r = "siren.if"(%c) ({ ... "siren.yield"(%a) }, { ... "siren.yield"(%b) }) : (i1) -> f64`
    """

    name = "siren.if"
    cond = operand_def(_BOOL)
    result = result_def()
    then_region = region_def("single_block")
    else_region = region_def("single_block")

    def __init__(self, cond: SSAValue, result_type: Attribute, then_block: Block, else_block: Block):
        super().__init__(
            operands=[cond], result_types=[result_type],
            regions=[Region(then_block), Region(else_block)],
        )

    def verify_(self) -> None:
        # A symbolic condition (a symbolic method): both branches are pure and run, and the result
        # is their ite (the `symbolic-values` pass made sure it can be, else it forced it).
        if not is_sym(self.cond.type):
            _expect(self.cond, i1, "condition of siren.if")
        for region in (self.then_region, self.else_region):
            if _yielded(region).type != self.result.type:
                raise VerifyException("siren.if branches must yield the result type")


@irdl_op_definition
class FoldOp(IRDLOperation):
    """`fold(f, l, init)`: a left fold; the body takes (element, accumulator).

    After `inline-functions` the body holds the inlined step function.
    `%r = "siren.fold"(%l, %init) ({ ^bb0(%x: f64, %acc: f64): ... "siren.yield"(%acc2) })`
    """

    name = "siren.fold"
    list = operand_def(ListType)
    init = operand_def()
    result = result_def()
    body = region_def("single_block")

    def __init__(self, lst: SSAValue, init: SSAValue, body: Block):
        super().__init__(operands=[lst, init], result_types=[init.type], regions=[Region(body)])

    def verify_(self) -> None:
        t = _list_of(self.list, "fold list")
        args = self.body.block.arg_types
        if args != (t.element, self.init.type):
            takes = ", ".join(str(a) for a in args)
            raise VerifyException(f"siren.fold body must take ({t.element}, {self.init.type}), takes ({takes})")
        if _yielded(self.body).type != self.init.type or self.result.type != self.init.type:
            raise VerifyException("siren.fold body must yield the accumulator type")


@irdl_op_definition
class MapOp(IRDLOperation):
    """`List.map(f, l)`; the body maps one element, left to right.

    `%r = "siren.map"(%l) ({ ^bb0(%x: f64): ... "siren.yield"(%y) }) : (...) -> !siren.list<f64>`
    """

    name = "siren.map"
    list = operand_def(ListType)
    result = result_def(ListType)
    body = region_def("single_block")

    def __init__(self, lst: SSAValue, result_type: ListType, body: Block):
        super().__init__(operands=[lst], result_types=[result_type], regions=[Region(body)])

    def verify_(self) -> None:
        t = _list_of(self.list, "map list")
        if self.body.block.arg_types != (t.element,):
            raise VerifyException("siren.map body must take one list element")
        out = self.result.type
        assert isinstance(out, ListType)
        if _yielded(self.body).type != out.element:
            raise VerifyException("siren.map body must yield the result element type")


# ---- probabilistic constructs -----------------------------------------------


@irdl_op_definition
class DistOp(IRDLOperation):
    """A distribution value: `gaussian(m, v)` etc. (ARCHITECTURE.md §9 parameterisations).

    `%d = "siren.dist"(%m, %v) <{family = "gaussian"}> : (f64, f64) -> !siren.dist<"gaussian">`
    """

    name = "siren.dist"
    family = prop_def(StringAttr)
    params = var_operand_def()
    result = result_def(_DIST)
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
    dist = operand_def(_DIST)
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
    dist = operand_def(_DIST)
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


# ---- symbolic values (-m ssi|ds|bp) -------------------------------------------


@irdl_op_definition
class ToSymOp(IRDLOperation):
    """A concrete value where a symbolic one is expected: a number's or a bool's constant
    symbolic word (bools 0.0 / 1.0), or a distribution's parameters as symbolic words.

    `%s = "siren.to_sym"(%x) : (f64) -> !siren.sym`
    """

    name = "siren.to_sym"
    operand = operand_def(base(Float64Type) | base(IntegerType) | base(DistType))
    result = result_def(base(SymType) | base(SymDistType))
    traits = traits_def(Pure())

    def __init__(self, operand: SSAValue):
        t = operand.type
        result = symdist_type(t.family.data) if isinstance(t, DistType) else sym
        init_op(self, [operand], [result])

    def verify_(self) -> None:
        t = self.operand.type
        if isinstance(t, DistType):
            _expect(self.result, symdist_type(t.family.data), "result of siren.to_sym of a distribution")
            return
        if t not in (f64, i1):
            raise VerifyException(f"siren.to_sym takes f64, i1 or a distribution, got {t}")
        _expect(self.result, sym, "result of siren.to_sym")


@irdl_op_definition
class ForceOp(IRDLOperation):
    """`value_expr` (ARCHITECTURE.md §6.4): the concrete value of a symbolic word, sampling the random
    variables it depends on; a bool is true unless the value is 0. Its location is the
    construct that needs the value (an observation, a condition, a bound).

    `%x = "siren.force"(%s) : (!siren.sym) -> f64`
    """

    name = "siren.force"
    operand = operand_def(SymType)
    result = result_def(base(Float64Type) | base(IntegerType))
    # Forcing samples: never merged, moved or removed.
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())

    def __init__(self, operand: SSAValue, result_type: Attribute):
        init_op(self, [operand], [result_type])

    def verify_(self) -> None:
        if self.result.type not in (f64, i1):
            raise VerifyException("siren.force gives f64 or i1")


_item = tuple.__getitem__


def _direct_accessors(cls: type[IRDLOperation]) -> None:
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


_OPS = [
    ConstOp, AddOp, SubOp, MulOp, DivOp, NegOp, EqOp, LtOp, BoolToFloatOp, FloatToBoolOp,
    PairOp, FstOp, SndOp,
    NilOp, ConsOp, HdOp, TlOp, LenOp, RevOp, RangeOp, FileReadOp,
    YieldOp, IfOp, FoldOp, MapOp,
    DistOp, AssumeOp, ObserveOp, ResampleOp,
    ToSymOp, ForceOp,
]
for _op in _OPS:
    _direct_accessors(_op)

Siren = Dialect("siren", _OPS, [UnitType, StringType, PairType, ListType, DistType, SymType, SymDistType])
