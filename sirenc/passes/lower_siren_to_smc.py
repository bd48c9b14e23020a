"""`lower-siren-to-smc`: the inlined `siren` program -> one particle's `smc.particle`.

Every Siren value becomes a tuple of machine scalars chosen by its static type
(``flatten``): a float is one ``f64``, a pair the scalars of both components, a
list one ``!smc.list`` handle, a distribution its parameters, unit and strings
nothing. So no value is boxed under the plain particle filter. Folds and maps
become ``scf.while`` loops over list handles, `resample()` becomes
``smc.resample``, draws and observations ``smc.sample``/``smc.observe``.

The lowering is one rewrite pattern per `siren` op, applied once in post-order
(an op's regions before the op, so a region's body is already lowered when its
owner moves it into a loop or a branch). A pattern replaces its op's result by
``builtin.unrealized_conversion_cast`` of the scalars, which later patterns
unpack; only the body arguments of folds and maps are unpacked before their
owner is lowered. When the walk is done no `siren` op and no cast may be left:
anything else is an internal error naming the op.

Under ``-m ssi`` (after `symbolic-values`) a ``!siren.sym`` value is one ``!smc.sym``
word and a ``!siren.symdist`` its parameters as symbolic words; arithmetic on them
becomes ``smc.sym_binop``/``smc.sym_neg``, an ``if`` on a symbolic condition runs both
(pure) branches and combines each scalar of their results with ``smc.sym_ite``,
``siren.force`` becomes ``smc.sym_value`` and ``siren.to_sym`` ``smc.sym_const``. Every
``let x <- d`` becomes ``smc.assume`` (its parameters as symbolic words; `var` numbers
the program variables in order of first appearance, the particle's ``smc.vars``), and
an observation of a distribution with symbolic parameters ``smc.sym_observe`` (one with
concrete parameters keeps ``smc.observe``).

A program whose main expression folds over `File.read` data (possibly through
`List.map`) at its top level is *streamable*: that fold pulls rows with
``smc.next_row``, which waits for the caller's next row (ARCHITECTURE.md, Streaming and the C ABI).
"""

from __future__ import annotations

import os
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import (
    ArrayAttr, FloatAttr, IntegerAttr, IntegerType, ModuleOp, StringAttr, UnrealizedConversionCastOp, f64, i1, i64,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.passes import ModulePass

from sirenc.diagnostics import SirenError
from sirenc.ir import siren, smc
from sirenc.ir.build import new_op
from sirenc.ir.locations import span_of
from sirenc.passes.rewriting import append, drop, insert_before, ops_of, replace, replace_uses
from sirenc.passes.errors import LoweringError, where


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


def streamed_fold(main: func.FuncOp) -> tuple[siren.FoldOp | None, str]:
    """The top-level fold over `File.read` data, or why there is none."""
    candidates = []
    # The block's list of ops walked directly: BlockOps' iterator costs a call per op.
    op = main.body.block.first_op
    while op is not None:
        if type(op) is siren.FoldOp:
            source = op.list.owner
            if isinstance(source, siren.MapOp):
                source = source.list.owner
            if isinstance(source, siren.FileReadOp):
                candidates.append(op)
        op = op._next_op
    if not candidates:
        return None, "the main expression does not fold over File.read data at its top level"
    if len(candidates) > 1:
        return None, "the main expression folds over File.read data more than once"
    fold = candidates[0]
    mapped = fold.list.owner if isinstance(fold.list.owner, siren.MapOp) else None
    read = (mapped.list if mapped else fold.list).owner
    if len(list(read.result.uses)) != 1 or (mapped and len(list(mapped.result.uses)) != 1):
        return None, "the data read by File.read is used outside the fold over it"
    path = read.path.owner
    for other in ops_of(main):
        if type(other) is siren.FileReadOp and other is not read and _same_path(other.path.owner, path):
            return None, "the streamed data file is also read elsewhere"
    return fold, ""


def _same_path(a: Operation, b: Operation) -> bool:
    return isinstance(a, siren.ConstOp) and isinstance(b, siren.ConstOp) and a.value == b.value


# -- list literals of constants ---------------------------------------------------------------


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


@dataclass
class _Facts:
    """What the patterns of one lowering share."""

    base_dir: str
    method: str = "pf"
    streamed: siren.FoldOp | None = None
    skipped: set[Operation] = field(default_factory=set)   # the streamed fold's data source
    strings: dict[SSAValue, str] = field(default_factory=dict)
    # Where each distribution value was written: a draw's invalid parameter is reported there.
    dist_locations: dict[SSAValue, Attribute] = field(default_factory=dict)
    # Symbolic methods: the program variables, in order of first appearance among the assumes.
    vars: dict[str, int] = field(default_factory=dict)

    @property
    def symbolic(self) -> bool:
        return self.method != "pf"

    def abs_path(self, relative: str) -> str:
        return os.path.abspath(os.path.join(self.base_dir, relative))


# -- building inside a pattern ------------------------------------------------------------


class _Builder:
    """Inserts new ops before the matched op (or at the end of a block being built),
    located at the matched op, so run-time errors point at the user's source."""

    # (slots: one is made for each op lowered)
    __slots__ = ("at", "facts", "block")

    def __init__(self, at: Operation, facts: _Facts, block: Block | None = None):
        self.at = at
        self.facts = facts
        self.block = block

    def add(self, op: Operation) -> Operation:
        op.location = self.at.location
        if self.block is not None:
            append(op, self.block)
        else:
            insert_before(op, self.at)
        return op

    def const_f(self, v: float) -> SSAValue:
        return self.add(new_op(arith.ConstantOp, (), [f64], {"value": FloatAttr(v, f64)})).result

    def const_i(self, v: int, t: IntegerType = i64) -> SSAValue:
        return self.add(arith.ConstantOp(IntegerAttr(v, t))).result

    def in_block(self, block: Block, build: Callable[[], list[SSAValue]]) -> list[SSAValue]:
        saved, self.block = self.block, block
        try:
            return build()
        finally:
            self.block = saved

    def get(self, value: SSAValue) -> list[SSAValue]:
        return unpack(value)

    def bool_to_float(self, b: SSAValue) -> SSAValue:
        return self.add(arith.SelectOp(b, self.const_f(1.0), self.const_f(0.0))).result

    def sym_const(self, v: float) -> SSAValue:
        return self.add(smc.SymConstOp(self.const_f(v))).result

    def to_sym(self, v: SSAValue) -> SSAValue:
        """A scalar as a symbolic word: numbers and bools become constants; list handles
        (categorical's probabilities) and symbolic words stay."""
        if v.type == f64 or v.type == i1:
            return self.add(smc.SymConstOp(v)).result
        return v

    def not_nil(self, lst: SSAValue) -> SSAValue:
        is_nil = self.add(smc.IsNilOp(lst)).result
        return self.add(arith.XOrIOp(is_nil, self.const_i(1, i1))).result

    def loop(self, init: list[SSAValue], before, after) -> list[SSAValue]:
        """scf.while over `init`; `before(args) -> (cond, passed)`, `after(args) -> next`."""
        before_block = Block(arg_types=[v.type for v in init])

        def build_before():
            cond, passed = before(list(before_block.args))
            self.add(scf.ConditionOp(cond, *passed))
            return [v.type for v in passed]

        passed_types = self.in_block(before_block, build_before)
        after_block = Block(arg_types=passed_types)
        self.in_block(after_block, lambda: [self.add(scf.YieldOp(*after(list(after_block.args))))])
        return list(self.add(scf.WhileOp(init, passed_types, [before_block], [after_block])).results)

    def if_else(self, cond: SSAValue, then, otherwise) -> list[SSAValue]:
        blocks = []
        for build in (then, otherwise):
            block = Block()
            out = self.in_block(block, build)
            self.in_block(block, lambda: [self.add(scf.YieldOp(*out))])
            blocks.append(block)
        types = [v.type for v in blocks[0].last_op.operands]
        return list(self.add(scf.IfOp(cond, types, [blocks[0]], [blocks[1]])).results)

    def inline_region(self, region_block: Block, args: Sequence[Sequence[SSAValue]]) -> list[SSAValue]:
        """Move a lowered region body to the end of the current block, its arguments
        replaced by `args` (scalars each); returns the scalars it yields."""
        for arg, flat in zip(region_block.args, args, strict=True):
            _replace_argument(arg, list(flat), self)
        terminator = region_block.last_op
        for op in list(region_block.ops):
            if op is terminator:
                break
            op.detach()
            self.block.add_op(op)
        return unpack(terminator.operands[0])

    # -- lists --------------------------------------------------------------------------

    def cons(self, head: list[SSAValue], tail: SSAValue) -> SSAValue:
        return self.add(smc.ConsOp(head, tail)).result

    def head(self, lst: SSAValue) -> list[SSAValue]:
        return list(self.add(smc.HeadOp(lst)).results)

    def tail(self, lst: SSAValue) -> SSAValue:
        return self.add(smc.TailOp(lst)).result

    def equal(self, a: list[SSAValue], b: list[SSAValue], typ: Attribute) -> SSAValue:
        """Structural equality of two values of siren type `typ` (Python's `==`)."""
        if isinstance(typ, siren.PairType):
            n = len(flatten(typ.first))
            first = self.equal(a[:n], b[:n], typ.first)
            return self.add(arith.AndIOp(first, self.equal(a[n:], b[n:], typ.second))).result
        if isinstance(typ, siren.ListType):
            return self.lists_equal(a[0], b[0], typ.element)
        if typ == f64:
            return self.add(arith.CmpfOp(a[0], b[0], "oeq")).result
        if typ == i1:
            return self.add(arith.CmpiOp(a[0], b[0], "eq")).result
        return self.const_i(1, i1)  # unit

    def lists_equal(self, a: SSAValue, b: SSAValue, elem: Attribute) -> SSAValue:
        """Walk both lists while their heads are equal; equal if both end together."""

        def before(args):
            x, y, same = args
            both = self.add(arith.AndIOp(self.not_nil(x), self.not_nil(y))).result
            return self.add(arith.AndIOp(same, both)).result, args

        def after(args):
            x, y, _ = args
            same = self.equal(self.head(x), self.head(y), elem)
            return [self.tail(x), self.tail(y), same]

        x, y, same = self.loop([a, b, self.const_i(1, i1)], before, after)
        ended = self.add(arith.AndIOp(self.add(smc.IsNilOp(x)).result, self.add(smc.IsNilOp(y)).result)).result
        return self.add(arith.AndIOp(same, ended)).result


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


def _replace_argument(arg: BlockArgument, flat: list[SSAValue], b: _Builder) -> None:
    if flatten(arg.type) == [arg.type]:
        arg.replace_all_uses_with(flat[0])
        return
    for use in list(arg.uses):
        user = use.operation
        if isinstance(user, UnrealizedConversionCastOp) and len(user.inputs) == 1:
            for old, new in zip(user.outputs, flat, strict=True):
                old.replace_all_uses_with(new)
            drop(user)
        else:
            user.operands[use.index] = b.add(UnrealizedConversionCastOp.get(flat, [arg.type])).results[0]


# -- patterns -------------------------------------------------------------------------------


class _Lowering:
    """Lowers one kind of `siren` op: `lower` returns the scalars of its result."""

    op_type: ClassVar[type[Operation]]

    def __init__(self, facts: _Facts):
        self.facts = facts

    def rewrite(self, op: Operation) -> None:
        if self.facts.skipped and op in self.facts.skipped:
            return
        out = self.lower(op, _Builder(op, self.facts))
        value = None
        results = op.results
        if results:
            (result,) = results   # (a siren op has one result at most)
            result_type = result.type
            if len(out) == 1 and (out[0].type is result_type or out[0].type == result_type):
                (value,) = out
            else:
                cast = UnrealizedConversionCastOp.get(out, [result_type])
                insert_before(cast, op)
                value = cast.outputs[0]
            replace_uses(result, value)
        drop(op)
        self.after_replace(op, value)

    def lower(self, op, b: _Builder) -> list[SSAValue]:
        raise NotImplementedError

    def after_replace(self, op: Operation, value: SSAValue | None) -> None:
        """Runs once `op` has been replaced by `value`."""


_PATTERNS: list[type[_Lowering]] = []


def lowers(op_type: type[Operation]):
    """Class decorator: registers a `_Lowering` subclass for `op_type`."""

    def register(cls: type[_Lowering]) -> type[_Lowering]:
        cls.op_type = op_type
        _PATTERNS.append(cls)
        return cls

    return register


@lowers(siren.ConstOp)
class _Const(_Lowering):
    def lower(self, op: siren.ConstOp, b):
        attr = op.properties["value"]
        if type(attr) is FloatAttr:
            return list(b.add(new_op(arith.ConstantOp, (), [attr.type], {"value": attr})).results)
        if isinstance(attr, IntegerAttr):
            return [b.const_i(attr.value.data, i1)]
        return []  # unit, or a string (remembered for File.read)

    def after_replace(self, op, value):
        attr = op.properties["value"]
        if type(attr) is StringAttr:
            self.facts.strings[value] = attr.data


def _float_binop(op_type, arith_op, kind: str):
    @lowers(op_type)
    class _Binop(_Lowering):
        def lower(self, op, b):
            lhs, rhs = op._operands
            (x,), (y,) = unpack(lhs), unpack(rhs)
            if type(op.result.type) is siren.SymType:
                return [b.add(smc.SymBinOp(kind, x, y)).result]
            return list(b.add(new_op(arith_op, [x, y], [x.type])).results)

    _Binop.__name__ = f"_{op_type.__name__}"
    return _Binop


for _siren_op, _arith_op, _kind in ((siren.AddOp, arith.AddfOp, "add"), (siren.SubOp, arith.SubfOp, "sub"),
                                    (siren.MulOp, arith.MulfOp, "mul"), (siren.DivOp, arith.DivfOp, "div")):
    _float_binop(_siren_op, _arith_op, _kind)


@lowers(siren.NegOp)
class _Neg(_Lowering):
    def lower(self, op, b):
        (x,) = unpack(op._operands[0])
        if type(op.result.type) is siren.SymType:
            return [b.add(smc.SymNegOp(x)).result]
        return list(b.add(new_op(arith.NegfOp, [x], [x.type])).results)


@lowers(siren.BoolToFloatOp)
class _BoolToFloat(_Lowering):
    def lower(self, op, b):
        (x,) = b.get(op.operand)
        if isinstance(op.result.type, siren.SymType):
            return [x]   # a symbolic bool is already 0.0 / 1.0
        one = b.add(arith.ConstantOp(FloatAttr(1.0, f64))).result
        zero = b.add(arith.ConstantOp(FloatAttr(0.0, f64))).result
        return [b.add(arith.SelectOp(x, one, zero)).result]


@lowers(siren.FloatToBoolOp)
class _FloatToBool(_Lowering):
    def lower(self, op, b):
        (x,) = b.get(op.operand)
        if isinstance(op.result.type, siren.SymType):
            # ite(x = 0, false, true): Python's truth, NaN is true
            is_zero = b.add(smc.SymBinOp("eq", x, b.sym_const(0.0))).result
            return [b.add(smc.SymIteOp(is_zero, b.sym_const(0.0), b.sym_const(1.0))).result]
        zero = b.add(arith.ConstantOp(FloatAttr(0.0, f64))).result
        return [b.add(arith.CmpfOp(x, zero, "une")).result]  # Python's truth: NaN is true


@lowers(siren.LtOp)
class _Lt(_Lowering):
    def lower(self, op, b):
        (x,), (y,) = b.get(op.lhs), b.get(op.rhs)
        if isinstance(op.result.type, siren.SymType):
            return [b.add(smc.SymBinOp("lt", x, y)).result]
        return [b.add(arith.CmpfOp(x, y, "olt")).result]


@lowers(siren.EqOp)
class _Eq(_Lowering):
    def lower(self, op, b):
        if isinstance(op.result.type, siren.SymType):
            (x,), (y,) = b.get(op.lhs), b.get(op.rhs)
            return [b.add(smc.SymBinOp("eq", x, y)).result]
        return [b.equal(b.get(op.lhs), b.get(op.rhs), op.lhs.type)]


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


def _split(pair: SSAValue) -> tuple[list[SSAValue], list[SSAValue]]:
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


@lowers(siren.PairOp)
class _Pair(_Lowering):
    def lower(self, op, b):
        return parts(op.first) + parts(op.second)


class _Projection(_Lowering):
    index: ClassVar[int]

    def rewrite(self, op) -> None:
        part = self.lower(op, None)
        if len(part) == 1 and isinstance(part[0].type, siren.PairType):
            # A part the pair's cast holds whole stands for the result as it is: it has the
            # result's type by construction, and comparing the two types would walk them (the
            # tail of an n-tuple is n pairs deep, and a function's parameter types are other
            # objects than its arguments').
            replace_uses(op.result, part[0])
            drop(op)
        else:
            super().rewrite(op)

    def lower(self, op, b):
        return _split(op.pair)[self.index]


@lowers(siren.FstOp)
class _Fst(_Projection):
    index = 0


@lowers(siren.SndOp)
class _Snd(_Projection):
    index = 1


@lowers(siren.NilOp)
class _Nil(_Lowering):
    def lower(self, op, b):
        return [b.add(smc.NilOp(handle(op.result.type))).result]


@lowers(siren.ConsOp)
class _Cons(_Lowering):
    def lower(self, op, b):
        return [b.cons(b.get(op.head), b.get(op.tail)[0])]


@lowers(siren.HdOp)
class _Hd(_Lowering):
    def lower(self, op, b):
        return b.head(b.get(op.operand)[0])


@lowers(siren.TlOp)
class _Tl(_Lowering):
    def lower(self, op, b):
        return [b.tail(b.get(op.operand)[0])]


@lowers(siren.LenOp)
class _Len(_Lowering):
    def lower(self, op, b):
        return [b.add(smc.LengthOp(b.get(op.operand)[0])).result]


@lowers(siren.RevOp)
class _Rev(_Lowering):
    def lower(self, op, b):
        return [b.add(smc.ReverseOp(b.get(op.operand)[0])).result]


@lowers(siren.RangeOp)
class _Range(_Lowering):
    def lower(self, op, b):
        (lo,), (hi,) = b.get(op.lo), b.get(op.hi)
        return [b.add(smc.RangeOp(lo, hi)).result]


@lowers(siren.FileReadOp)
class _FileRead(_Lowering):
    def lower(self, op, b):
        if op.path not in self.facts.strings:
            raise SirenError("File.read needs a path known at compile time (a string literal)", span_of(op))
        return [b.add(smc.ReadFileOp(self.facts.abs_path(self.facts.strings[op.path]))).result]


@lowers(siren.IfOp)
class _If(_Lowering):
    def lower(self, op: siren.IfOp, b):
        (cond,) = b.get(op.cond)
        if isinstance(cond.type, smc.SymType):
            return self.ite(op, cond, b)
        return b.if_else(
            cond,
            lambda: b.inline_region(op.then_region.block, []),
            lambda: b.inline_region(op.else_region.block, []),
        )


    @staticmethod
    def ite(op: siren.IfOp, cond: SSAValue, b: _Builder) -> list[SSAValue]:
        """A symbolic condition with pure branches (ARCHITECTURE.md §7.5): both branches run, then, else,
        and each scalar of the result is the ite of the two."""
        results = []
        for region in (op.then_region, op.else_region):
            block = region.block
            terminator = block.last_op
            for inner in list(block.ops):
                if inner is terminator:
                    break
                inner.detach()
                insert_before(inner, op)
            results.append(unpack(terminator.operands[0]))
        out = []
        for t, f in zip(*results, strict=True):
            if not (isinstance(t.type, smc.SymType) and isinstance(f.type, smc.SymType)):
                raise LoweringError(f"lower-siren-to-smc: an ite of {t.type} and {f.type}{where(op)}")
            out.append(b.add(smc.SymIteOp(cond, t, f)).result)
        return out


@lowers(siren.ToSymOp)
class _ToSym(_Lowering):
    def lower(self, op: siren.ToSymOp, b):
        return [b.to_sym(v) for v in b.get(op.operand)]


@lowers(siren.ForceOp)
class _Force(_Lowering):
    def lower(self, op: siren.ForceOp, b):
        (w,) = b.get(op.operand)
        value = b.add(smc.SymValueOp(w)).result
        if op.result.type == i1:
            return [b.add(arith.CmpfOp(value, b.const_f(0.0), "une")).result]  # NaN is true
        return [value]


@lowers(siren.FoldOp)
class _Fold(_Lowering):
    def lower(self, op: siren.FoldOp, b):
        if op is self.facts.streamed:
            return self.streamed(op, b)
        init = b.get(op.list) + b.get(op.init)

        def before(args):
            return b.not_nil(args[0]), args

        def after(args):
            cur, acc = args[0], args[1:]
            new_acc = b.inline_region(op.body.block, [b.head(cur), acc])
            return [b.tail(cur), *new_acc]

        return b.loop(init, before, after)[1:]

    def streamed(self, op: siren.FoldOp, b):
        mapped = op.list.owner if isinstance(op.list.owner, siren.MapOp) else None
        read = (mapped.list if mapped is not None else op.list).owner
        init = [b.const_i(0), *b.get(op.init)]

        def before(args):
            index, acc = args[0], args[1:]
            row = b.add(smc.NextRowOp(index))
            row.location = read.location   # a data file that cannot be read is reported at its File.read
            return row.more, [index, row.row, *acc]

        def after(args):
            index, row, acc = args[0], args[1], args[2:]
            elem = b.inline_region(mapped.body.block, [[row]]) if mapped is not None else [row]
            new_acc = b.inline_region(op.body.block, [elem, acc])
            return [b.add(arith.AddiOp(index, b.const_i(1))).result, *new_acc]

        return b.loop(init, before, after)[2:]

    def after_replace(self, op, value):
        _erase_stream_source(op, self.facts)


def _erase_stream_source(fold: siren.FoldOp, facts: _Facts) -> None:
    """The streamed fold's data source was replaced by next_row: remove it."""
    if fold is not facts.streamed:
        return
    for source in sorted(facts.skipped, key=lambda o: isinstance(o, siren.FileReadOp)):
        drop(source)


@lowers(siren.MapOp)
class _Map(_Lowering):
    def lower(self, op: siren.MapOp, b):
        init = [*b.get(op.list), b.add(smc.NilOp(handle(op.result.type))).result]

        def before(args):
            return b.not_nil(args[0]), args

        def after(args):
            cur, out = args
            mapped = b.inline_region(op.body.block, [b.head(cur)])
            return [b.tail(cur), b.cons(mapped, out)]

        reversed_out = b.loop(init, before, after)[1]
        return [b.add(smc.ReverseOp(reversed_out)).result]


@lowers(siren.DistOp)
class _Dist(_Lowering):
    def lower(self, op: siren.DistOp, b):
        out = []
        for p in op.params:
            for v in b.get(p):
                out.append(b.bool_to_float(v) if v.type == i1 else v)
        return out

    def after_replace(self, op, value):
        self.facts.dist_locations[value] = op.location


@lowers(siren.AssumeOp)
class _Assume(_Lowering):
    def lower(self, op: siren.AssumeOp, b):
        if self.facts.symbolic:
            return self.assume(op, b)
        sample = smc.SampleOp(op.dist.type.family.data, b.get(op.dist))
        draw = b.add(sample).result
        # An invalid parameter is reported at the distribution call itself.
        if op.dist in self.facts.dist_locations:
            sample.location = self.facts.dist_locations[op.dist]
        if op.result.type == i1:
            return [b.add(arith.CmpfOp(draw, b.const_f(0.0), "une")).result]
        return [draw]

    def assume(self, op: siren.AssumeOp, b):
        """Every variable of a symbolic method is created by the runtime, also one with
        constant parameters: it records its entry (and the runtime plan)."""
        family = op.dist.type.family.data
        params = [b.to_sym(v) for v in b.get(op.dist)]
        name = op.var.data
        var = self.facts.vars[name] if name else -1
        annotation = smc.ANNOTATIONS[op.annotation.data if op.annotation is not None else None]
        assume = smc.AssumeOp(family, params, var, annotation)
        value = b.add(assume).result
        if op.dist in self.facts.dist_locations:
            assume.location = self.facts.dist_locations[op.dist]
        if op.result.type == i1:   # a sampled bool
            return [b.add(arith.CmpfOp(value, b.const_f(0.0), "une")).result]
        return [value]


@lowers(siren.ObserveOp)
class _Observe(_Lowering):
    def lower(self, op: siren.ObserveOp, b):
        (value,) = b.get(op.value)
        if value.type == i1:
            value = b.bool_to_float(value)
        if isinstance(op.dist.type, siren.SymDistType):
            b.add(smc.SymObserveOp(op.dist.type.family.data, b.get(op.dist), value))
        else:
            b.add(smc.ObserveOp(op.dist.type.family.data, b.get(op.dist), value))
        return []


@lowers(siren.ResampleOp)
class _Resample(_Lowering):
    def lower(self, op, b):
        b.add(smc.ResampleOp())
        return []


@lowers(siren.YieldOp)
class _Yield(_Lowering):
    """A region's yield stays until the region's owner reads it and drops the region."""

    def rewrite(self, op):
        return


@lowers(func.ReturnOp)
class _Return(_Lowering):
    def rewrite(self, op: func.ReturnOp):
        insert_before(smc.FinishOp(unpack(op.operands[0])), op)
        drop(op)


# -- the pass -------------------------------------------------------------------------------


def lower_module(module: ModuleOp, base_dir: str, method: str = "pf") -> None:
    main = next(op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == "main")
    if main.body.block.args:
        raise LoweringError("lower-siren-to-smc: @main takes no arguments (the program reads its data with File.read)")
    result_type = main.function_type.outputs.data[0]
    facts = _Facts(base_dir, method)
    # One walk for the variables, the literals and the lowering: the first two read leaves
    # only, which it lists in program order as well; what folding the literals drops the
    # lowering skips, and what it adds (constant lists and their casts) has nothing to lower.
    ops = ops_of(module, region_first=True)
    if facts.symbolic:
        for op in ops:
            if isinstance(op, siren.AssumeOp) and op.var.data:
                facts.vars.setdefault(op.var.data, len(facts.vars))
    facts.streamed, reason = streamed_fold(main)
    data_file = ""
    if facts.streamed is not None:
        source = facts.streamed.list.owner
        read = source.list.owner if isinstance(source, siren.MapOp) else source
        data_file = facts.abs_path(read.path.owner.value.data)
        facts.skipped = {source, read}
    fold_constant_lists(ops)
    # Every op once, a region's ops before its owner's (which moves them into a loop or a branch).
    patterns = {p.op_type: p(facts) for p in _PATTERNS}
    for op in ops:
        pattern = patterns.get(type(op))
        if pattern is not None and op.parent is not None:
            pattern.rewrite(op)
    _check_lowered(main)
    model = smc.ModelAttr.build(descriptor(result_type), facts.streamed is not None, reason, data_file)
    body = Region()
    main.body.move_blocks(body)
    particle = smc.ParticleOp("main", model, body)
    if facts.symbolic:
        particle.attributes["smc.vars"] = ArrayAttr([StringAttr(v) for v in facts.vars])
    for op in list(module.ops):
        drop(op)
    module.body.block.add_op(particle)


# What the particle level is made of; anything else left after the walk was not lowered.
_LOWERED_DIALECTS = ("smc.", "arith.", "math.", "scf.")


def _check_lowered(main: func.FuncOp) -> None:
    """Drop casts nothing reads; any other leftover is an op no pattern lowered."""
    ops = ops_of(main)
    for op in reversed(ops):
        if type(op) is UnrealizedConversionCastOp and all(r.first_use is None for r in op.results):
            drop(op)
    for op in ops:
        if op is not main and op.parent is not None and not op.name.startswith(_LOWERED_DIALECTS):
            raise LoweringError(f"lower-siren-to-smc: no lowering for {op.name}{where(op)}")


@dataclass(frozen=True)
class LowerSirenToSMC(ModulePass):
    name = "lower-siren-to-smc"
    base_dir: str = "."
    method: str = "pf"   # "ssi": assumes become smc.assume (after symbolic-values)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        lower_module(op, self.base_dir, self.method)
