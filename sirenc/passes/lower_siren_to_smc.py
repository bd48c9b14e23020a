"""`lower-siren-to-smc`: the inlined `siren` program -> one particle's procedure.

Every Siren value becomes a tuple of machine scalars, chosen by its static
type (``flatten``): a float is one ``f64``, a pair the scalars of both
components, a list one ``i64`` handle into the runtime's arena, a distribution
its parameters, unit and strings nothing. So no value is ever boxed under the
plain particle filter. Folds and maps become ``scf.while`` loops over list
handles; `resample()` becomes ``smc.suspend``; draws and observations become
runtime calls. The result is stored in the frame and the procedure returns
FINISHED.

A program whose main expression folds over `File.read` data (possibly through
`List.map`) at its top level is *streamable*: that fold pulls rows from the
runtime one at a time (``sirenrt_stream_row``) and suspends with NEED_ROW when
the caller has not supplied the next row yet (DESIGN section 6).

The model's facts the runtime needs (frame layout, result type, data files,
error sites) are recorded as ``smc.*`` attributes on the function.
"""

from __future__ import annotations

import os
from math import pi
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import arith, func, math, scf
from xdsl.dialects.builtin import (
    ArrayAttr,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    StringAttr,
    f64,
    i1,
    i32,
    i64,
)
from xdsl.dialects.llvm import LLVMPointerType
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass

from sirenc.diagnostics import SirenError, Span
from sirenc.ir import siren, smc
from sirenc.ir.locations import loc_of, span_of

END, NEED = -2, -3  # sirenrt_stream_row's sentinels
WORD = 8
PC_BYTES = 8  # the pc is an i32 at offset 0, padded to one word


def flatten(t: Attribute) -> list[Attribute]:
    """The machine scalars that represent a value of siren type `t`."""
    if t == f64 or t == i1:
        return [t]
    if isinstance(t, siren.PairType):
        return flatten(t.first) + flatten(t.second)
    if isinstance(t, siren.ListType):
        return [handle(t)]
    if isinstance(t, siren.DistType):
        n = siren.FAMILIES[t.family.data][0]
        if t.family.data == "categorical":
            return [f64, f64, smc.list_type("f")]
        return [f64] * n  # delta of a bool is widened to f64 at the call
    return []  # unit, string


def handle(t: siren.ListType) -> smc.ListHandleType:
    return smc.list_type(descriptor(t.element))


def descriptor(t: Attribute) -> str:
    """The result type in the runtime's prefix notation (sirenrt.h)."""
    if t == f64:
        return "f"
    if t == i1:
        return "b"
    if isinstance(t, siren.PairType):
        return "P" + descriptor(t.first) + descriptor(t.second)
    if isinstance(t, siren.ListType):
        return "L" + descriptor(t.element)
    return "u"


def streamed_fold(main: func.FuncOp) -> tuple[siren.FoldOp | None, str]:
    """The top-level fold over `File.read` data, or why there is none."""
    candidates = []
    for op in main.body.block.ops:
        if not isinstance(op, siren.FoldOp):
            continue
        source = op.list.owner
        if isinstance(source, siren.MapOp):
            source = source.list.owner
        if isinstance(source, siren.FileReadOp):
            candidates.append(op)
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
    for other in main.walk():
        if isinstance(other, siren.FileReadOp) and other is not read and _same_path(other.path.owner, path):
            return None, "the streamed data file is also read elsewhere"
    return fold, ""


def _same_path(a: Operation, b: Operation) -> bool:
    return isinstance(a, siren.ConstOp) and isinstance(b, siren.ConstOp) and a.value == b.value


@dataclass
class _Lowering:
    ctx_ptr: SSAValue
    frame: SSAValue
    base_dir: str
    block: Block = None  # where ops are appended
    values: dict[SSAValue, list[SSAValue]] = field(default_factory=dict)
    strings: dict[SSAValue, str] = field(default_factory=dict)
    sites: list[Span] = field(default_factory=list)
    site_ids: dict[tuple, int] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)
    streamed: siren.FoldOp | None = None
    skipped: set = field(default_factory=set)  # the streamed fold's data source

    # -- emission helpers --------------------------------------------------------

    def add(self, op: Operation, at: Operation | None = None) -> Operation:
        if at is not None:
            op.location = at.location
        self.block.add_op(op)
        return op

    def const_f(self, v: float) -> SSAValue:
        return self.add(arith.ConstantOp(FloatAttr(v, f64))).result

    def const_i(self, v: int, t: IntegerType = i64) -> SSAValue:
        return self.add(arith.ConstantOp(IntegerAttr(v, t))).result

    def site(self, op: Operation) -> SSAValue:
        span = span_of(op)
        key = (span.file, span.line, span.col) if span else ("", 0, 0)
        if key not in self.site_ids:
            self.site_ids[key] = len(self.sites)
            self.sites.append(span or Span("<unknown>", 0, 0))
        return self.const_i(self.site_ids[key], i32)

    def rt(self, callee: str, args: list[SSAValue], result: Attribute | None, at: Operation) -> SSAValue | None:
        op = self.add(smc.RuntimeCallOp("sirenrt_" + callee, [self.ctx_ptr, *args], result), at)
        return op.result

    def to_word(self, v: SSAValue) -> SSAValue:
        if v.type == f64:
            return self.add(arith.BitcastOp(v, i64)).result
        if v.type == i1:
            return self.add(arith.ExtUIOp(v, i64)).result
        if isinstance(v.type, smc.ListHandleType):
            return self.add(smc.HandleCastOp(v, i64)).result
        return v

    def from_word(self, w: SSAValue, t: Attribute) -> SSAValue:
        if t == f64:
            return self.add(arith.BitcastOp(w, f64)).result
        if t == i1:
            return self.add(arith.TruncIOp(w, i1)).result
        if isinstance(t, smc.ListHandleType):
            return self.add(smc.HandleCastOp(w, t)).result
        return w

    def bool_to_float(self, b: SSAValue) -> SSAValue:
        return self.add(arith.SelectOp(b, self.const_f(1.0), self.const_f(0.0))).result

    def get(self, v: SSAValue) -> list[SSAValue]:
        return self.values[v]

    # -- regions -----------------------------------------------------------------

    def lower_block(self, block: Block, args: list[list[SSAValue]]) -> list[SSAValue]:
        """Lower the ops of a siren block; returns the flattened yielded value."""
        for arg, flat in zip(block.args, args, strict=True):
            self.values[arg] = flat
        for op in block.ops:
            if isinstance(op, siren.YieldOp | func.ReturnOp):
                return self.get(op.operands[0])
            self.lower_op(op)
        raise AssertionError("block without terminator")

    def lower_op(self, op: Operation) -> None:
        if op in self.skipped:
            return
        handler = getattr(self, "_" + type(op).__name__, None)
        if handler is None:
            raise SirenError(f"internal: no lowering for {op.name}", span_of(op))
        out = handler(op)
        if op.results:
            self.values[op.results[0]] = out

    # -- constants and arithmetic -------------------------------------------------

    def _ConstOp(self, op: siren.ConstOp):
        attr = op.value
        if isinstance(attr, FloatAttr):
            return [self.add(arith.ConstantOp(attr), op).result]
        if isinstance(attr, IntegerAttr):
            return [self.const_i(attr.value.data, i1)]
        if isinstance(attr, StringAttr):
            self.strings[op.result] = attr.data
        return []

    def _float_binop(self, op, cls):
        (a,), (b,) = self.get(op.lhs), self.get(op.rhs)
        return [self.add(cls(a, b), op).result]

    def _AddOp(self, op):
        return self._float_binop(op, arith.AddfOp)

    def _SubOp(self, op):
        return self._float_binop(op, arith.SubfOp)

    def _MulOp(self, op):
        return self._float_binop(op, arith.MulfOp)

    def _DivOp(self, op):
        return self._float_binop(op, arith.DivfOp)

    def _NegOp(self, op):
        (a,) = self.get(op.operand)
        return [self.add(arith.NegfOp(a), op).result]

    def _LtOp(self, op):
        (a,), (b,) = self.get(op.lhs), self.get(op.rhs)
        return [self.add(arith.CmpfOp(a, b, "olt"), op).result]

    def _EqOp(self, op: siren.EqOp):
        return [self.equal(self.get(op.lhs), self.get(op.rhs), op.lhs.type, op)]

    def equal(self, a: list[SSAValue], b: list[SSAValue], typ: Attribute, at: Operation) -> SSAValue:
        """Structural equality of two values of siren type `typ` (Python's `==`)."""
        if isinstance(typ, siren.PairType):
            n = len(flatten(typ.first))
            first = self.equal(a[:n], b[:n], typ.first, at)
            return self.add(arith.AndIOp(first, self.equal(a[n:], b[n:], typ.second, at))).result
        if isinstance(typ, siren.ListType):
            return self.lists_equal(a[0], b[0], typ.element, at)
        if typ == f64:
            return self.add(arith.CmpfOp(a[0], b[0], "oeq"), at).result
        if typ == i1:
            return self.add(arith.CmpiOp(a[0], b[0], "eq"), at).result
        return self.const_i(1, i1)  # unit

    def lists_equal(self, a: SSAValue, b: SSAValue, elem: Attribute, at: Operation) -> SSAValue:
        """Walk both lists while their heads are equal; equal if both end together."""

        def before(args):
            x, y, same = args
            both = self.add(arith.AndIOp(self.not_nil(x), self.not_nil(y))).result
            return self.add(arith.AndIOp(same, both)).result, args

        def after(args):
            x, y, _ = args
            same = self.equal(self.head(x, elem, at), self.head(y, elem, at), elem, at)
            site = self.site(at)
            return [self.rt("list_tl", [x, site], x.type, at), self.rt("list_tl", [y, site], y.type, at), same]

        x, y, same = self.loop([a, b, self.const_i(1, i1)], before, after, at)
        ended = self.add(arith.AndIOp(self.add(smc.IsNilOp(x)).result, self.add(smc.IsNilOp(y)).result)).result
        return self.add(arith.AndIOp(same, ended)).result

    # -- pairs and lists ----------------------------------------------------------

    def _PairOp(self, op):
        return self.get(op.first) + self.get(op.second)

    def _FstOp(self, op):
        return self.get(op.pair)[: len(flatten(op.pair.type.first))]

    def _SndOp(self, op):
        return self.get(op.pair)[len(flatten(op.pair.type.first)):]

    def _NilOp(self, op):
        return [self.add(smc.NilOp(handle(op.result.type)), op).result]

    def cons(self, head: list[SSAValue], tail: SSAValue, at: Operation) -> SSAValue:
        cell = self.rt("list_cons", [tail, self.const_i(len(head), i32)], tail.type, at)
        for i, value in enumerate(head):
            self.rt("list_set", [cell, self.const_i(i, i32), self.to_word(value)], None, at)
        return cell

    def head(self, lst: SSAValue, elem_type: Attribute, at: Operation) -> list[SSAValue]:
        site = self.site(at)
        out = []
        for i, t in enumerate(flatten(elem_type)):
            word = self.rt("list_get", [lst, self.const_i(i, i32), site], i64, at)
            out.append(self.from_word(word, t))
        return out

    def _ConsOp(self, op):
        return [self.cons(self.get(op.head), self.get(op.tail)[0], op)]

    def _HdOp(self, op):
        return self.head(self.get(op.operand)[0], op.operand.type.element, op)

    def _TlOp(self, op):
        (lst,) = self.get(op.operand)
        return [self.rt("list_tl", [lst, self.site(op)], lst.type, op)]

    def _LenOp(self, op):
        return [self.rt("list_len", [self.get(op.operand)[0]], f64, op)]

    def _RevOp(self, op):
        nwords = len(flatten(op.operand.type.element))
        (lst,) = self.get(op.operand)
        return [self.rt("list_rev", [lst, self.const_i(nwords, i32)], lst.type, op)]

    def _RangeOp(self, op):
        (lo,), (hi,) = self.get(op.lo), self.get(op.hi)
        return [self.rt("list_range", [lo, hi, self.site(op)], smc.list_type("f"), op)]

    def file_id(self, op: siren.FileReadOp) -> int:
        if op.path not in self.strings:
            raise SirenError("File.read needs a path known at compile time (a string literal)", span_of(op))
        path = os.path.abspath(os.path.join(self.base_dir, self.strings[op.path]))
        if path not in self.files:
            self.files.append(path)
        return self.files.index(path)

    def _FileReadOp(self, op):
        args = [self.const_i(self.file_id(op), i32), self.site(op)]
        return [self.rt("file", args, smc.list_type("Lf"), op)]

    # -- control ------------------------------------------------------------------

    def in_block(self, block: Block, build) -> list[SSAValue]:
        saved, self.block = self.block, block
        try:
            return build()
        finally:
            self.block = saved

    def _IfOp(self, op: siren.IfOp):
        (cond,) = self.get(op.cond)
        return self.if_else(
            cond,
            lambda: self.lower_block(op.then_region.block, []),
            lambda: self.lower_block(op.else_region.block, []),
            op,
        )

    def loop(self, init: list[SSAValue], before, after, at: Operation) -> list[SSAValue]:
        """scf.while over `init`; `before(args) -> (cond, passed)`, `after(args) -> next`."""
        types = [v.type for v in init]
        before_block = Block(arg_types=types)

        def build_before():
            cond, passed = before(list(before_block.args))
            before_block.add_op(scf.ConditionOp(cond, *passed))
            return [v.type for v in passed]

        passed_types = self.in_block(before_block, build_before)
        after_block = Block(arg_types=passed_types)

        def build_after():
            after_block.add_op(scf.YieldOp(*after(list(after_block.args))))

        self.in_block(after_block, build_after)
        return list(self.add(scf.WhileOp(init, passed_types, [before_block], [after_block]), at).results)

    def not_nil(self, lst: SSAValue) -> SSAValue:
        is_nil = self.add(smc.IsNilOp(lst)).result
        return self.add(arith.XOrIOp(is_nil, self.const_i(1, i1))).result

    def _FoldOp(self, op: siren.FoldOp):
        if op is self.streamed:
            return self.streamed_fold(op)
        elem_type = op.list.type.element
        init = self.get(op.list) + self.get(op.init)

        def before(args):
            return self.not_nil(args[0]), args

        def after(args):
            cur, acc = args[0], args[1:]
            elem = self.head(cur, elem_type, op)
            new_acc = self.lower_block(op.body.block, [elem, acc])
            return [self.rt("list_tl", [cur, self.site(op)], cur.type, op), *new_acc]

        return self.loop(init, before, after, op)[1:]

    def streamed_fold(self, op: siren.FoldOp) -> list[SSAValue]:
        mapped = op.list.owner if isinstance(op.list.owner, siren.MapOp) else None
        init = [self.const_i(0), *self.get(op.init)]

        def before(args):
            index, acc = args[0], args[1:]
            first = self.rt("stream_row", [index], i64, op)

            def wait_before(w):
                return self.add(arith.CmpiOp(w[0], self.const_i(NEED), "eq")).result, w

            def wait_after(w):
                self.add(smc.SuspendOp(smc.NEED_ROW), op)
                return [self.rt("stream_row", [index], i64, op)]

            (row,) = self.loop([first], wait_before, wait_after, op)
            more = self.add(arith.CmpiOp(row, self.const_i(END), "ne")).result
            # Past the END check it is a row (a list of floats).
            return more, [index, self.add(smc.HandleCastOp(row, smc.list_type("f"))).result, *acc]

        def after(args):
            index, row, acc = args[0], args[1], args[2:]
            elem = [row]
            if mapped is not None:
                elem = self.lower_block(mapped.body.block, [[row]])
            new_acc = self.lower_block(op.body.block, [elem, acc])
            return [self.add(arith.AddiOp(index, self.const_i(1))).result, *new_acc]

        return self.loop(init, before, after, op)[2:]

    def _MapOp(self, op: siren.MapOp):
        elem_type = op.list.type.element
        nwords = len(flatten(op.result.type.element))
        init = [*self.get(op.list), self.add(smc.NilOp(handle(op.result.type)), op).result]

        def before(args):
            return self.not_nil(args[0]), args

        def after(args):
            cur, out = args
            mapped = self.lower_block(op.body.block, [self.head(cur, elem_type, op)])
            return [self.rt("list_tl", [cur, self.site(op)], cur.type, op), self.cons(mapped, out, op)]

        reversed_out = self.loop(init, before, after, op)[1]
        return [self.rt("list_rev", [reversed_out, self.const_i(nwords, i32)], reversed_out.type, op)]

    # -- probabilistic constructs ---------------------------------------------------

    def _DistOp(self, op: siren.DistOp):
        out = []
        for p in op.params:
            for v in self.get(p):
                out.append(self.bool_to_float(v) if v.type == i1 else v)
        return out

    def _AssumeOp(self, op: siren.AssumeOp):
        family = op.dist.type.family.data
        # An invalid parameter is reported at the distribution call itself.
        where = op.dist.owner if isinstance(op.dist.owner, siren.DistOp) else op
        params = self.get(op.dist)
        if family == "gaussian":
            return [self.sample_gaussian(*params, self.site(where), op)]
        draw = self.rt("sample_" + family, [*params, self.site(where)], f64, op)
        if op.result.type == i1:
            return [self.add(arith.CmpfOp(draw, self.const_f(0.0), "une")).result]
        return [draw]

    def _ObserveOp(self, op: siren.ObserveOp):
        family = op.dist.type.family.data
        (value,) = self.get(op.value)
        if value.type == i1:
            value = self.bool_to_float(value)
        params = self.get(op.dist)
        if family == "gaussian":
            self.observe_gaussian(*params, value, op)
        else:
            self.rt("observe_" + family, [*params, value, self.site(op)], None, op)
        return []

    def sample_gaussian(self, mu: SSAValue, var: SSAValue, site: SSAValue, op: Operation) -> SSAValue:
        """mu + sqrt(var) * z inline, so LLVM folds sqrt of a constant variance;
        an invalid variance goes to the runtime, which reports it."""
        valid = self.add(arith.CmpfOp(var, self.const_f(0.0), "ogt")).result

        def fast():
            z = self.rt("std_normal", [], f64, op)
            scale = self.add(math.SqrtOp(var)).result
            return [self.add(arith.AddfOp(mu, self.add(arith.MulfOp(scale, z)).result)).result]

        return self.if_else(valid, fast, lambda: [self.rt("sample_gaussian", [mu, var, site], f64, op)], op)[0]

    def observe_gaussian(self, mu: SSAValue, var: SSAValue, x: SSAValue, op: Operation) -> None:
        """Score inline so LLVM folds log(2*pi*var) for a constant variance; the
        runtime call remains for an invalid variance, which it reports."""
        site = self.site(op)
        valid = self.add(arith.CmpfOp(var, self.const_f(0.0), "ogt")).result

        def fast():
            d = self.add(arith.SubfOp(x, mu)).result
            log_norm = self.add(math.LogOp(self.add(arith.MulfOp(var, self.const_f(2 * pi))).result)).result
            half_log_norm = self.add(arith.MulfOp(log_norm, self.const_f(-0.5))).result
            squared = self.add(arith.MulfOp(d, d)).result
            scaled = self.add(arith.DivfOp(squared, self.add(arith.MulfOp(var, self.const_f(2.0))).result)).result
            lp = self.add(arith.SubfOp(half_log_norm, scaled)).result
            self.add(smc.AddLogWeightOp(lp, site), op)
            return []

        def slow():
            self.rt("observe_gaussian", [mu, var, x, site], None, op)
            return []

        self.if_else(valid, fast, slow, op)

    def if_else(self, cond: SSAValue, then, otherwise, at: Operation) -> list[SSAValue]:
        blocks = []
        for build in (then, otherwise):
            block = Block()
            out = self.in_block(block, build)
            block.add_op(scf.YieldOp(*out))
            blocks.append(block)
        types = [v.type for v in blocks[0].last_op.operands]
        return list(self.add(scf.IfOp(cond, types, [blocks[0]], [blocks[1]]), at).results)

    def _ResampleOp(self, op):
        self.add(smc.SuspendOp(smc.AT_RESAMPLE), op)
        return []


def lower_module(module: ModuleOp, base_dir: str) -> None:
    main = next(op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == "main")
    result_type = main.function_type.outputs.data[0]
    ptr = LLVMPointerType()
    block = Block(arg_types=(ptr, ptr, ptr))  # ctx, frame, log weight
    low = _Lowering(block.args[0], block.args[1], base_dir, block)
    low.streamed, reason = streamed_fold(main)
    if low.streamed is not None:
        # run()/step() replace file 0, so the streamed file must be file 0.
        source = low.streamed.list.owner
        read = source.list.owner if isinstance(source, siren.MapOp) else source
        low.strings[read.path] = read.path.owner.value.data
        low.file_id(read)
        low.skipped = {source, read}
    result = low.lower_block(main.body.block, [])
    offset = PC_BYTES
    for value in result:
        block.add_op(smc.FrameStoreOp(low.frame, low.to_word(value), offset))
        offset += WORD
    block.add_op(func.ReturnOp(low.const_i(smc.FINISHED, i32)))

    resume = func.FuncOp("siren_resume", ([ptr, ptr, ptr], [i32]), Region(block))
    attrs = resume.attributes
    attrs["smc.result_type"] = StringAttr(descriptor(result_type))
    attrs["smc.result_offset"] = IntegerAttr(PC_BYTES, i64)
    attrs["smc.frame_size"] = IntegerAttr(offset, i64)
    attrs["smc.streamable"] = IntegerAttr(int(low.streamed is not None), i1)
    if reason:
        attrs["smc.not_streamable_reason"] = StringAttr(reason)
    attrs["smc.files"] = ArrayAttr([StringAttr(f) for f in low.files])
    attrs["smc.sites"] = ArrayAttr([loc_of(s) for s in low.sites])
    for op in list(module.ops):
        op.detach()
        op.erase()
    module.body.block.add_op(resume)


@dataclass(frozen=True)
class LowerSirenToSMC(ModulePass):
    name = "lower-siren-to-smc"
    base_dir: str = "."

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        lower_module(op, self.base_dir)
