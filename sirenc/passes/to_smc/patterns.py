"""The rewrite patterns of `lower-siren-to-smc`, one per `siren` op (`lowers` registers each in
`PATTERNS`): a pattern returns its op's result as scalars, which `Pattern.rewrite` casts back to the
op's type for the patterns of its users to unpack.

Numbers, bools and their arithmetic become `arith` ops, or on symbolic words (``!siren.sym``)
``smc.sym_*``; pairs are their parts' scalars; lists are handles and their operations `smc` ops;
folds and maps become ``scf.while`` over list handles, the streamed fold one over
``smc.next_row``; an ``if`` becomes ``scf.if``, or on a symbolic condition the ite of both
branches; draws and observations become ``smc.sample``/``smc.observe``, or under a symbolic
method ``smc.assume``/``smc.sym_observe``.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects import arith, func
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, StringAttr, UnrealizedConversionCastOp, f64, i1
from xdsl.ir import Operation, SSAValue

from sirenc.diagnostics import SirenError
from sirenc.ir import siren, smc
from sirenc.ir.build import new_op
from sirenc.ir.locations import span_of
from sirenc.passes.errors import LoweringError, where
from sirenc.passes.rewriting import drop, insert_before, replace_uses
from sirenc.passes.to_smc.builder import Builder, Facts
from sirenc.passes.to_smc.scalars import handle, parts, split_pair, unpack


class Pattern:
    """Lowers one kind of `siren` op: `lower` returns the scalars of its result."""

    op_type: ClassVar[type[Operation]]

    def __init__(self, facts: Facts):
        self.facts = facts

    def rewrite(self, op: Operation) -> None:
        if self.facts.skipped and op in self.facts.skipped:
            return
        out = self.lower(op, Builder(op, self.facts))
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

    def lower(self, op, b: Builder) -> list[SSAValue]:
        raise NotImplementedError

    def after_replace(self, op: Operation, value: SSAValue | None) -> None:
        """Runs once `op` has been replaced by `value`."""


PATTERNS: list[type[Pattern]] = []


def lowers(op_type: type[Operation]):
    """Class decorator: registers a `Pattern` subclass for `op_type`."""

    def register(cls: type[Pattern]) -> type[Pattern]:
        cls.op_type = op_type
        PATTERNS.append(cls)
        return cls

    return register


@lowers(siren.ConstOp)
class _Const(Pattern):
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
    class _Binop(Pattern):
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
class _Neg(Pattern):
    def lower(self, op, b):
        (x,) = unpack(op._operands[0])
        if type(op.result.type) is siren.SymType:
            return [b.add(smc.SymNegOp(x)).result]
        return list(b.add(new_op(arith.NegfOp, [x], [x.type])).results)


@lowers(siren.BoolToFloatOp)
class _BoolToFloat(Pattern):
    def lower(self, op, b):
        (x,) = b.get(op.operand)
        if isinstance(op.result.type, siren.SymType):
            return [x]   # a symbolic bool is already 0.0 / 1.0
        one = b.add(arith.ConstantOp(FloatAttr(1.0, f64))).result
        zero = b.add(arith.ConstantOp(FloatAttr(0.0, f64))).result
        return [b.add(arith.SelectOp(x, one, zero)).result]


@lowers(siren.FloatToBoolOp)
class _FloatToBool(Pattern):
    def lower(self, op, b):
        (x,) = b.get(op.operand)
        if isinstance(op.result.type, siren.SymType):
            # ite(x = 0, false, true): Python's truth, NaN is true
            is_zero = b.add(smc.SymBinOp("eq", x, b.sym_const(0.0))).result
            return [b.add(smc.SymIteOp(is_zero, b.sym_const(0.0), b.sym_const(1.0))).result]
        zero = b.add(arith.ConstantOp(FloatAttr(0.0, f64))).result
        return [b.add(arith.CmpfOp(x, zero, "une")).result]  # Python's truth: NaN is true


@lowers(siren.LtOp)
class _Lt(Pattern):
    def lower(self, op, b):
        (x,), (y,) = b.get(op.lhs), b.get(op.rhs)
        if isinstance(op.result.type, siren.SymType):
            return [b.add(smc.SymBinOp("lt", x, y)).result]
        return [b.add(arith.CmpfOp(x, y, "olt")).result]


@lowers(siren.EqOp)
class _Eq(Pattern):
    def lower(self, op, b):
        if isinstance(op.result.type, siren.SymType):
            (x,), (y,) = b.get(op.lhs), b.get(op.rhs)
            return [b.add(smc.SymBinOp("eq", x, y)).result]
        return [b.equal(b.get(op.lhs), b.get(op.rhs), op.lhs.type)]


@lowers(siren.PairOp)
class _Pair(Pattern):
    def lower(self, op, b):
        return parts(op.first) + parts(op.second)


class _Projection(Pattern):
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
        return split_pair(op.pair)[self.index]


@lowers(siren.FstOp)
class _Fst(_Projection):
    index = 0


@lowers(siren.SndOp)
class _Snd(_Projection):
    index = 1


@lowers(siren.NilOp)
class _Nil(Pattern):
    def lower(self, op, b):
        return [b.add(smc.NilOp(handle(op.result.type))).result]


@lowers(siren.ConsOp)
class _Cons(Pattern):
    def lower(self, op, b):
        return [b.cons(b.get(op.head), b.get(op.tail)[0])]


@lowers(siren.HdOp)
class _Hd(Pattern):
    def lower(self, op, b):
        return b.head(b.get(op.operand)[0])


@lowers(siren.TlOp)
class _Tl(Pattern):
    def lower(self, op, b):
        return [b.tail(b.get(op.operand)[0])]


@lowers(siren.LenOp)
class _Len(Pattern):
    def lower(self, op, b):
        return [b.add(smc.LengthOp(b.get(op.operand)[0])).result]


@lowers(siren.RevOp)
class _Rev(Pattern):
    def lower(self, op, b):
        return [b.add(smc.ReverseOp(b.get(op.operand)[0])).result]


@lowers(siren.RangeOp)
class _Range(Pattern):
    def lower(self, op, b):
        (lo,), (hi,) = b.get(op.lo), b.get(op.hi)
        return [b.add(smc.RangeOp(lo, hi)).result]


@lowers(siren.FileReadOp)
class _FileRead(Pattern):
    def lower(self, op, b):
        if op.path not in self.facts.strings:
            raise SirenError("File.read needs a path known at compile time (a string literal)", span_of(op))
        return [b.add(smc.ReadFileOp(self.facts.abs_path(self.facts.strings[op.path]))).result]


@lowers(siren.IfOp)
class _If(Pattern):
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
    def ite(op: siren.IfOp, cond: SSAValue, b: Builder) -> list[SSAValue]:
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
class _ToSym(Pattern):
    def lower(self, op: siren.ToSymOp, b):
        return [b.to_sym(v) for v in b.get(op.operand)]


@lowers(siren.ForceOp)
class _Force(Pattern):
    def lower(self, op: siren.ForceOp, b):
        (w,) = b.get(op.operand)
        value = b.add(smc.SymValueOp(w)).result
        if op.result.type == i1:
            return [b.add(arith.CmpfOp(value, b.const_f(0.0), "une")).result]  # NaN is true
        return [value]


@lowers(siren.FoldOp)
class _Fold(Pattern):
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


def _erase_stream_source(fold: siren.FoldOp, facts: Facts) -> None:
    """The streamed fold's data source was replaced by next_row: remove it."""
    if fold is not facts.streamed:
        return
    for source in sorted(facts.skipped, key=lambda o: isinstance(o, siren.FileReadOp)):
        drop(source)


@lowers(siren.MapOp)
class _Map(Pattern):
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
class _Dist(Pattern):
    def lower(self, op: siren.DistOp, b):
        out = []
        for p in op.params:
            for v in b.get(p):
                out.append(b.bool_to_float(v) if v.type == i1 else v)
        return out

    def after_replace(self, op, value):
        self.facts.dist_locations[value] = op.location


@lowers(siren.AssumeOp)
class _Assume(Pattern):
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
class _Observe(Pattern):
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
class _Resample(Pattern):
    def lower(self, op, b):
        b.add(smc.ResampleOp())
        return []


@lowers(siren.YieldOp)
class _Yield(Pattern):
    """A region's yield stays until the region's owner reads it and drops the region."""

    def rewrite(self, op):
        return


@lowers(func.ReturnOp)
class _Return(Pattern):
    def rewrite(self, op: func.ReturnOp):
        insert_before(smc.FinishOp(unpack(op.operands[0])), op)
        drop(op)
