"""`lower-smc-to-llvm`: one particle's program -> ``llvm.func @siren_resume`` over the C runtime.

The ``smc.particle`` becomes the function the C runtime resumes a particle with,
``i32 @siren_resume(ptr ctx, ptr frame, ptr log_weight, ptr rows)`` (``sirenrt_resume_fn``
in sirenrt.h), and what the particle level leaves abstract gets its C runtime
form here, and only here:

* draws and observations call ``sirenrt_sample_<family>(ctx, params.., site)`` and
  ``sirenrt_observe_<family>(ctx, params.., x, site)``, except the gaussian's, which
  are inline so that LLVM folds ``sqrt``/``log`` of a constant variance:
  ``var > 0 ? mu + sqrt(var) * sirenrt_std_normal(ctx) : sirenrt_sample_gaussian(..)``,
  and the log density added to ``*log_weight`` in place while the sum is > -inf;
* lists are int64 handles (-1 is the empty list), list ops ``sirenrt_list_*`` calls,
  and list elements 64-bit words (floats bitcast, bools 0/1, lists their handle); an
  ``smc.const_list`` is its words in one private constant array of every literal's words
  (``@siren_resume.lists``: a global per literal would make every ``addressof`` look its symbol up
  among thousands) and one ``sirenrt_list_from_words(ctx, words, n, words_per_element, site)``
  call;
* the frame is bytes: the pc (an i32) in word 0, then frame slot s at byte 8 + 8 * s;
  a finished particle's result words from byte 8 share those words (no slot is live then);
* ``smc.resample`` stores its point in the pc and returns AT_RESAMPLE (1);
  ``smc.next_row`` reads a row the table holds in place, else asks ``sirenrt_stream_row``
  and, answered SIRENRT_NEED, stores its point and returns NEED_ROW (2); ``smc.finish`` stores the result's words and
  returns FINISHED (0);
* a run-time error names a site, an index into the model's table of locations;
* symbolic words (``!smc.sym``, ``-m ssi``) are int64 words; ``smc.sym_const`` is a
  bitcast of the double (a bool first 0.0 / 1.0), ``smc.sym_binop {kind}`` calls
  ``sirenrt_sym_<kind>(ctx, a, b)``, ``smc.sym_neg`` ``sirenrt_sym_neg(ctx, a)`` (add,
  sub, mul, eq, lt and neg of words that are non-NaN doubles, i.e. constants, are folded
  inline and call nothing),
  ``smc.sym_ite`` ``sirenrt_sym_ite(ctx, c, t, f)``, ``smc.sym_value``
  ``sirenrt_sym_value(ctx, w, site)``, ``smc.assume`` ``sirenrt_sym_assume(ctx, family,
  p0, p1, p2, var, annotation, site)`` (unused parameters 0; a sampled value's bits are
  bitcast back to a double) and ``smc.sym_observe`` ``sirenrt_sym_observe(ctx, family,
  p0, p1, p2, x, site)``.

It works in two steps, after a step 0 (sirenc/passes/row_elements.py) that turns an
``smc.next_row`` whose row only goes to ``List.hd``/``List.tl`` reads into an
``smc.next_row_reading``, which reads those elements in place along with the row.
(1) One rewrite pattern per op turns every smc, arith
and math op into `llvm` ops in place; a pattern that needs a branch builds an
``scf.if`` of `llvm` ops, and a runtime function is declared in the module the
first time a pattern calls it (``_Emitter.call``, ``_Lowering.declare``).
(2) A structural step (sirenc/passes/smc_control_flow.py) flattens
``scf.if``/``scf.while`` and the suspension points into blocks with arguments,
and puts the dispatch on the pc saved in the frame in the entry block: 0 starts
the program, k resumes after suspension point k; what a suspension point asks of
the runtime is here (``_ResumeGraph``). An op that neither step knows is a
``LoweringError`` (sirenc/passes/errors.py) naming it.

Re-entry at an ``smc.next_row`` repeats the row request, so its resume block
starts at the op that defines its index, which `spill-across-suspends`
guarantees is the op right before it: an ``smc.frame_load`` or an
``arith.constant`` (``_ResumeGraph.retry_start``). No other value crosses a suspension:
that pass has routed each through the frame.

What the runtime reads besides the code (frame size and result offset in bytes,
data files, error sites, roots by byte offset) is the ``#sirenrt.layout``
attribute ``sirenrt.layout`` of the function (sirenc/ir/sirenrt.py), next to the
particle's ``#smc.model`` as ``smc.model``.

    llvm.func @sirenrt_std_normal(!llvm.ptr) -> f64
    llvm.func @siren_resume(%ctx: !llvm.ptr, %frame: !llvm.ptr, %log_weight: !llvm.ptr, %rows: !llvm.ptr) -> i32
        attributes {smc.model = #smc.model<"f", ...>,
                    sirenrt.layout = #sirenrt.layout<24 : i64, 8 : i64, [], [loc("m.si":2:9)], []>} {
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cache
from math import pi
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects import arith, llvm, math, scf
from xdsl.dialects.builtin import (
    ArrayAttr, BytesAttr, DenseIntOrFPElementsAttr, FileLineColLoc, FloatAttr, IntegerAttr, IntegerType,
    ModuleOp, TensorType, UnitAttr, f64, i1, i8, i32, i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue, SSAValues
from xdsl.passes import ModulePass
from xdsl.traits import SymbolTable

from sirenc import distributions
from sirenc.diagnostics import SirenDataError, Span
from sirenc.ir import sirenrt, smc
from sirenc.ir.build import new_op
from sirenc.ir.locations import loc_of, span_of
from sirenc.model_info import RESUME_SYMBOL
from sirenc.passes.rewriting import insert_before, ops_of, replace
from sirenc.passes.errors import LoweringError, where
from sirenc.passes.row_elements import NextRowReadingOp, read_rows_in_place
from sirenc.passes.smc_control_flow import STRUCTURAL, ControlFlowGraph, point_of
from sirenc.runtime.abi import defines

# The runtime's table of data files holds this many (RT_MAX_FILES, runtime_c/src/internal.h).
MAX_FILES = 64

# sirenrt.h: what @siren_resume returns (a particle's state, RUNNABLE before its first resume), and
# the int64 list and stream sentinels.
FINISHED, AT_RESAMPLE, NEED_ROW, RUNNABLE = 0, 1, 2, 3
NIL, END, NEED = -1, -2, -3
# sirenrt.h: row r of file 0 as a list handle is FIRST_ROW | r << ROW_SHIFT (sirenrt_rows)
FIRST_ROW, ROW_SHIFT = defines()["SIRENRT_FIRST_ROW"], defines()["SIRENRT_ROW_SHIFT"]
# ICmp predicates (arith.cmpi's numbering)
EQ, SLT, SGE, ULT = 0, 2, 5, 6
WORD = 8
PC_BYTES = 8  # the pc is an i32 at byte 0, padded to a word
POOL = f"{RESUME_SYMBOL}.lists"   # the words of the program's constant lists
PTR = llvm.LLVMPointerType()


def machine(t: Attribute) -> Attribute:
    """List handles and symbolic words are int64 words in LLVM."""
    return i64 if isinstance(t, smc.ListHandleType | smc.SymType) else t


# -- the C runtime's functions ---------------------------------------------------------------

# sirenrt_<name>: its parameters after the context, and its result (None: void).
_RUNTIME: dict[str, tuple[tuple[Attribute, ...], Attribute | None]] = {
    "std_normal": ((), f64),
    "add_log_weight": ((f64, i32), None),
    "list_cons_at": ((i64, i32, i32), i64),
    "list_set": ((i64, i32, i64), None),
    "list_from_words": ((PTR, i64, i32, i32), i64),
    "list_from_nested_words": ((PTR, i64, i32), i64),
    "list_get": ((i64, i32, i32), i64),
    "list_head_word": ((i64, i32, i32), i64),
    "list_tl": ((i64, i32), i64),
    "list_len": ((i64,), f64),
    "list_rev_at": ((i64, i32, i32), i64),
    "list_range": ((f64, f64, i32), i64),
    "file": ((i32, i32), i64),
    "stream_row": ((i64, i32), i64),
    # symbolic values (-m ssi)
    "sym_add": ((i64, i64), i64),
    "sym_sub": ((i64, i64), i64),
    "sym_mul": ((i64, i64), i64),
    "sym_div": ((i64, i64), i64),
    "sym_eq": ((i64, i64), i64),
    "sym_lt": ((i64, i64), i64),
    "sym_neg": ((i64,), i64),
    "sym_ite": ((i64, i64, i64), i64),
    "sym_value": ((i64, i32), f64),
    "sym_assume": ((i32, i64, i64, i64, i32, i32, i32), i64),
    "sym_observe": ((i32, i64, i64, i64, f64, i32), None),
}
# The most parameters a family has: sirenrt_sym_assume/observe take p0, p1, p2.
MAX_PARAMS = 3
# Marks an llvm.call on a path that is rarely taken, where the runtime finishes what the inline code
# does not (an invalid variance, a zero weight, a row not in the table, the head of a float list that
# is not a row): the LLVM text gives the call the attribute `cold` (sirenc/backend/llvm_text.py), so
# LLVM lays the path out of line and keeps the common path's values in registers.  The walk's span
# loop went from 86.6 to 78.1 instructions a particle-step (callgrind) with these and the ziggurat's
# fallback cold.  A program that takes the head of its own float lists at every step takes the last
# path often; the call then costs far more than where LLVM put it.
COLD_CALL = "sirenc.cold"

# The runtime functions that never draw from the particle's stream (by name after ``sirenrt_``, or
# its prefix).  Every other one may: sample_*, std_normal, and tier 1's sym_* (a value or an
# assume can draw).
_NEVER_DRAW = ("add_log_weight", "list_", "file", "stream_row", "observe_")


def never_draws(called: Iterable[str]) -> bool:
    """Whether a resume that calls only the runtime functions ``called`` (``sirenrt_`` names)
    never draws: then the runtime need not key its streams (``sirenrt_model.never_draws``)."""
    return all(name.removeprefix("sirenrt_").startswith(_NEVER_DRAW) for name in called)


@cache
def runtime_signature(name: str) -> tuple[tuple[Attribute, ...], Attribute | None]:
    """The parameters after the context and the result of ``sirenrt_<name>``."""
    if name in _RUNTIME:
        return _RUNTIME[name]
    kind, _, family = name.partition("_")
    params = [machine(t) for t in smc.machine_params(family)]
    if kind == "sample":
        return (*params, i32), f64
    if kind == "observe":
        return (*params, f64, i32), None
    raise LoweringError(f"lower-smc-to-llvm: no runtime function sirenrt_{name}")


# -- what the patterns of one particle share ---------------------------------------------------


@dataclass
class _Lowering:
    """The function being built, the runtime functions declared so far, and the site and
    file tables, numbered in the order the patterns meet them."""

    module: ModuleOp
    fn: llvm.FuncOp
    model: smc.ModelAttr
    declared: dict[str, llvm.FuncOp] = field(default_factory=dict)
    sites: list[FileLineColLoc] = field(default_factory=list)
    site_ids: dict[tuple[str, int, int], int] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)
    vars: ArrayAttr | None = None   # a symbolic method's program variables (smc.vars)
    var_sites: dict[int, int] = field(default_factory=dict)   # var index -> its first assume's site
    pool: bytearray = field(default_factory=bytearray)   # every smc.const_list's words, in order

    def __post_init__(self) -> None:
        if self.model.streamable.value.data:
            self.files.append(self.model.data_file.data)  # run()/step() replace file 0

    @property
    def ctx(self) -> SSAValue:
        return self.fn.body.blocks[0].args[0]

    @property
    def frame(self) -> SSAValue:
        return self.fn.body.blocks[0].args[1]

    @property
    def log_weight(self) -> SSAValue:
        return self.fn.body.blocks[0].args[2]

    @property
    def stream_rows(self) -> SSAValue:
        """The ``sirenrt_rows`` of file 0 the runtime hands every resume (once a pass: the rows
        may have grown between passes)."""
        return self.fn.body.blocks[0].args[3]

    @property
    def result_words(self) -> int:
        return len(smc.scalars_of(self.model.result.data))

    def slot_offset(self, slot: int) -> int:
        # The slots share their words with the result: a finished particle has no slot live, and
        # a smaller frame is less to copy at every resampling (the walk's: 24 bytes, not 32).
        return PC_BYTES + WORD * slot

    def declare(self, name: str) -> None:
        """Declares ``sirenrt_<name>`` in the module the first time it is called."""
        if name in self.declared:
            return
        params, result = runtime_signature(name)
        ftype = llvm.LLVMFunctionType([PTR, *params], result if result is not None else llvm.LLVMVoidType())
        decl = SymbolTable.lookup_symbol(self.module, "sirenrt_" + name)
        if decl is None:
            decl = llvm.FuncOp("sirenrt_" + name, ftype, linkage=llvm.LinkageAttr("external"))
            self.module.body.block.insert_op_before(decl, self.fn)
        elif not isinstance(decl, llvm.FuncOp) or decl.function_type != ftype:
            raise LoweringError(f"lower-smc-to-llvm: @sirenrt_{name} is already defined as something else")
        self.declared[name] = decl

    def pooled(self, words: bytes) -> int:
        """The byte offset of `words` (little-endian i64s) in the pool (``POOL``)."""
        at = len(self.pool)
        self.pool += words
        return at

    def add_pool(self) -> None:
        if self.pool:
            n = len(self.pool) // WORD
            typ = llvm.LLVMArrayType(n, i64)
            value = DenseIntOrFPElementsAttr(TensorType(i64, [n]), BytesAttr(bytes(self.pool)))
            self.module.body.block.insert_op_before(llvm.GlobalOp(typ, POOL, "private", constant=True, value=value),
                                                    self.fn)

    def site(self, op: Operation) -> int:
        """The site id of `op`'s location: one per distinct file, line and column."""
        span = span_of(op) or Span("<unknown>", 0, 0)
        key = (span.file, span.line, span.col)
        if key not in self.site_ids:
            self.site_ids[key] = len(self.sites)
            self.sites.append(loc_of(span))
        return self.site_ids[key]

    def file_id(self, path: str, op: Operation) -> int:
        """The id of data file ``path``, read by ``op``: the runtime's table holds MAX_FILES."""
        if path in self.files:
            return self.files.index(path)
        if len(self.files) == MAX_FILES:
            raise SirenDataError(
                f"too many data files: a program can read at most {MAX_FILES} different files "
                f"(counting the streamed data file), and this File.read of '{path}' is one more",
                span_of(op))
        self.files.append(path)
        return len(self.files) - 1

    def layout(self) -> sirenrt.LayoutAttr:
        roots = [(point, self.slot_offset(slot), d) for point, slot, d in self.model.root_list()]
        frame_size = PC_BYTES + WORD * max(self.result_words, self.model.frame_slots.value.data)
        return sirenrt.LayoutAttr.build(frame_size, PC_BYTES, self.files, self.sites, roots)


@dataclass
class _Emitter:
    """Collects the `llvm` ops that replace one op, located at it."""

    low: _Lowering
    at: Operation
    ops: list[Operation] = field(default_factory=list)

    def add(self, op: Operation) -> Operation:
        op.location = self.at.location
        self.ops.append(op)
        return op

    def const_i(self, value: int, typ: IntegerType) -> SSAValue:
        return self.add(llvm.ConstantOp(IntegerAttr(value, typ), typ)).result

    def const_f(self, value: float) -> SSAValue:
        return self.add(llvm.ConstantOp(FloatAttr(value, f64), f64)).result

    def site(self) -> SSAValue:
        return self.const_i(self.low.site(self.at), i32)

    def site_if_known(self) -> SSAValue:
        """The op's site, or -1 (no location) for an op the compiler made without one: a list
        operation's error (the memory limit) then has no line rather than ``<unknown>:0:0``."""
        return self.site() if span_of(self.at) else self.const_i(-1, i32)

    def call(self, name: str, *args: SSAValue, cold: bool = False) -> SSAValue | None:
        """Calls ``sirenrt_<name>(ctx, args..)``; a ``cold`` call (COLD_CALL) is one on a path that is
        rarely taken."""
        self.low.declare(name)
        _, result = runtime_signature(name)
        call = llvm.CallOp("sirenrt_" + name, self.low.ctx, *args, return_type=result)
        if cold:
            call.attributes[COLD_CALL] = UnitAttr()
        return self.add(call).returned

    def frame_word(self, offset: int) -> SSAValue:
        return self.add(llvm.GEPOp(self.low.frame, [offset], i8, inbounds=True)).result

    def icmp(self, predicate: int, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
        return self.add(llvm.ICmpOp(lhs, rhs, IntegerAttr(predicate, i64))).res

    def rows_field(self, field: str) -> SSAValue:
        """A field of file 0's ``sirenrt_rows``: vals, row_start (pointers) or n_rows."""
        index = ("vals", "row_start", "n_rows").index(field)
        at = self.add(llvm.GEPOp(self.low.stream_rows, [WORD * index], i8, inbounds=True)).result
        return self.add(llvm.LoadOp(at, i64 if field == "n_rows" else PTR)).dereferenced_value

    def word_at(self, base: SSAValue, index: SSAValue) -> SSAValue:
        """The 64-bit word ``base[index]``."""
        at = self.add(llvm.GEPOp(base, [llvm.GEP_USE_SSA_VAL], i64, ssa_indices=[index], inbounds=True)).result
        return self.add(llvm.LoadOp(at, i64)).dereferenced_value

    def plus(self, value: SSAValue, k: int) -> SSAValue:
        """value + k, the i64; value itself for k = 0."""
        return self.add(llvm.AddOp(value, self.const_i(k, i64))).res if k else value

    def row_bounds(self, r: SSAValue) -> tuple[SSAValue, SSAValue]:
        """Where row r < n_rows of file 0 starts and ends among the values."""
        row_start = self.rows_field("row_start")
        first = self.word_at(row_start, r)
        return first, self.word_at(row_start, self.plus(r, 1))

    def row_start(self, r: SSAValue) -> tuple[SSAValue, SSAValue]:
        """Where row r < n_rows of file 0 starts among the values, and whether it has one."""
        first, end = self.row_bounds(r)
        return first, self.icmp(SLT, first, end)

    def row_handle(self, r: SSAValue, nonempty: SSAValue) -> SSAValue:
        """Row r < n_rows of file 0 as a list: its handle, or the empty list for an empty row
        (what ``sirenrt_stream_row`` answers, read in place)."""
        shifted = self.add(llvm.ShlOp(r, self.const_i(ROW_SHIFT, i64))).res
        handle = self.add(llvm.OrOp(shifted, self.const_i(FIRST_ROW, i64))).res
        return self.add(llvm.SelectOp(nonempty, handle, self.const_i(NIL, i64))).res

    def to_word(self, value: SSAValue) -> SSAValue:
        if value.type == f64:
            return self.add(llvm.BitcastOp(value, i64)).results[0]
        if isinstance(value.type, IntegerType) and value.type.width.data == 1:
            return self.add(llvm.ZExtOp(value, i64)).results[0]
        return value  # a list handle

    def from_word(self, word: SSAValue, typ: Attribute) -> SSAValue:
        if typ == f64:
            return self.add(llvm.BitcastOp(word, f64)).results[0]
        if isinstance(typ, IntegerType) and typ.width.data == 1:
            return self.add(llvm.TruncOp(word, typ)).results[0]
        return word

    def replace(self, results: list[SSAValue]) -> None:
        """Puts the collected ops in place of the op; only its results' replacements inherit
        its results' names (`PatternRewriter.replace` would give the name to every new value)."""
        for op in self.ops:
            insert_before(op, self.at)
        replace(self.at, results)

    def if_else(self, cond: SSAValue, then: Callable[[_Emitter], list[SSAValue]],
                otherwise: Callable[[_Emitter], list[SSAValue]], types: list[Attribute]) -> list[SSAValue]:
        """An ``scf.if`` of `llvm` ops, flattened in step 2."""
        regions = []
        for build in (then, otherwise):
            inner = _Emitter(self.low, self.at)
            inner.add(scf.YieldOp(*build(inner)))
            regions.append(Region(Block(inner.ops)))
        return list(self.add(scf.IfOp(cond, types, regions[0], regions[1])).results)


# -- step 1: one pattern per op ---------------------------------------------------------------


class _Pattern:
    op_type: ClassVar[type[Operation]]

    def __init__(self, low: _Lowering):
        self.low = low

    def rewrite(self, op) -> None:
        raise NotImplementedError


class _FrameLoad(_Pattern):
    op_type = smc.FrameLoadOp

    def rewrite(self, op: smc.FrameLoadOp) -> None:
        e = _Emitter(self.low, op)
        ptr = e.frame_word(self.low.slot_offset(op.slot.value.data))
        e.replace([e.add(llvm.LoadOp(ptr, machine(op.result.type))).dereferenced_value])


class _FrameStore(_Pattern):
    op_type = smc.FrameStoreOp

    def rewrite(self, op: smc.FrameStoreOp) -> None:
        e = _Emitter(self.low, op)
        ptr = e.frame_word(self.low.slot_offset(op.slot.value.data))
        e.add(llvm.StoreOp(op.value, ptr))
        e.replace([])


class _Finish(_Pattern):
    """The result's words at byte 8, 16, ..., then FINISHED."""

    op_type = smc.FinishOp

    def rewrite(self, op: smc.FinishOp) -> None:
        e = _Emitter(self.low, op)
        for i, value in enumerate(op.values):
            word = e.to_word(value)
            e.add(llvm.StoreOp(word, e.frame_word(PC_BYTES + WORD * i)))
        e.add(llvm.ReturnOp(e.const_i(FINISHED, i32)))
        e.replace([])


class _Sample(_Pattern):
    op_type = smc.SampleOp

    def rewrite(self, op: smc.SampleOp) -> None:
        e = _Emitter(self.low, op)
        family, params = op.family.data, list(op.params)
        site = e.site()
        if family == "gaussian":
            draw = self.gaussian(e, *params, site)
        else:
            draw = e.call("sample_" + family, *params, site)
        e.replace([draw])

    @staticmethod
    def gaussian(e: _Emitter, mu: SSAValue, var: SSAValue, site: SSAValue) -> SSAValue:
        """mu + sqrt(var) * z inline; an invalid variance goes to the runtime, which reports it."""
        valid = e.add(llvm.FCmpOp(var, e.const_f(0.0), "ogt")).res

        def fast(b: _Emitter) -> list[SSAValue]:
            z = b.call("std_normal")
            scale = b.add(llvm.FSqrtOp(var)).res
            return [b.add(llvm.FAddOp(mu, b.add(llvm.FMulOp(scale, z)).res)).res]

        def slow(b: _Emitter) -> list[SSAValue]:
            return [b.call("sample_gaussian", mu, var, site, cold=True)]

        return e.if_else(valid, fast, slow, [f64])[0]


class _Observe(_Pattern):
    op_type = smc.ObserveOp

    def rewrite(self, op: smc.ObserveOp) -> None:
        e = _Emitter(self.low, op)
        family, params = op.family.data, list(op.params)
        site = e.site()
        if family == "gaussian":
            self.gaussian(e, *params, op.value, site)
        else:
            e.call("observe_" + family, *params, op.value, site)
        e.replace([])

    def gaussian(self, e: _Emitter, mu: SSAValue, var: SSAValue, x: SSAValue, site: SSAValue) -> None:
        """Scores inline, -0.5 * log(var * 2pi) - (x - mu)^2 / (var * 2); the runtime
        call remains for an invalid variance, which it reports."""
        valid = e.add(llvm.FCmpOp(var, e.const_f(0.0), "ogt")).res

        def fast(b: _Emitter) -> list[SSAValue]:
            d = b.add(llvm.FSubOp(x, mu)).res
            log_norm = b.add(llvm.FLogOp(b.add(llvm.FMulOp(var, b.const_f(2 * pi))).res)).res
            half_log_norm = b.add(llvm.FMulOp(log_norm, b.const_f(-0.5))).res
            squared = b.add(llvm.FMulOp(d, d)).res
            scaled = b.add(llvm.FDivOp(squared, b.add(llvm.FMulOp(var, b.const_f(2.0))).res)).res
            self.add_log_weight(b, b.add(llvm.FSubOp(half_log_norm, scaled)).res, site)
            return []

        def slow(b: _Emitter) -> list[SSAValue]:
            b.call("observe_gaussian", mu, var, x, site, cold=True)
            return []

        e.if_else(valid, fast, slow, [])

    def add_log_weight(self, e: _Emitter, lp: SSAValue, site: SSAValue) -> None:
        """A sum > -inf is stored in place; -inf and NaN go through the runtime, which
        remembers the site for the "all particles have zero weight" error."""
        old = e.add(llvm.LoadOp(self.low.log_weight, f64)).dereferenced_value
        new = e.add(llvm.FAddOp(old, lp)).res
        finite = e.add(llvm.FCmpOp(new, e.const_f(float("-inf")), "ogt")).res

        def store(b: _Emitter) -> list[SSAValue]:
            b.add(llvm.StoreOp(new, self.low.log_weight))
            return []

        def slow(b: _Emitter) -> list[SSAValue]:
            b.call("add_log_weight", lp, site, cold=True)
            return []

        e.if_else(finite, store, slow, [])


# -- symbolic values (-m ssi) --


class _SymConst(_Pattern):
    op_type = smc.SymConstOp

    def rewrite(self, op: smc.SymConstOp) -> None:
        e = _Emitter(self.low, op)
        value = op.value
        if value.type == i1:
            value = e.add(llvm.SelectOp.create(operands=[value, e.const_f(1.0), e.const_f(0.0)],
                                               result_types=[f64])).results[0]
        e.replace([e.add(llvm.BitcastOp(value, i64)).results[0]])


def _ordered(e: _Emitter, *words: SSAValue) -> tuple[SSAValue, list[SSAValue]]:
    """Whether every word is a plain double that is not NaN (a node reference is a NaN
    pattern), and the words as doubles."""
    doubles = [e.add(llvm.BitcastOp(w, f64)).results[0] for w in words]
    first = doubles[0]
    other = doubles[1] if len(doubles) > 1 else first
    return e.add(llvm.FCmpOp(first, other, "ord")).res, doubles


# Constant operands are folded inline, as the runtime would fold them (ARCHITECTURE.md §7.4 folds two
# constants at once): IEEE arithmetic and comparisons of two non-NaN doubles. Division
# (a constant division by zero is an error the runtime reports) and NaN operands (which
# include node references) go to the runtime.
_INLINE_BINOPS = {"add": llvm.FAddOp, "sub": llvm.FSubOp, "mul": llvm.FMulOp}
_INLINE_COMPARISONS = {"eq": "oeq", "lt": "olt"}


class _SymBinOp(_Pattern):
    op_type = smc.SymBinOp

    def rewrite(self, op: smc.SymBinOp) -> None:
        e = _Emitter(self.low, op)
        kind = op.kind.data
        if kind not in _INLINE_BINOPS and kind not in _INLINE_COMPARISONS:
            e.replace([e.call("sym_" + kind, op.lhs, op.rhs)])
            return
        both, (a, b) = _ordered(e, op.lhs, op.rhs)

        def fold(f: _Emitter) -> list[SSAValue]:
            if kind in _INLINE_BINOPS:
                value = f.add(_INLINE_BINOPS[kind](a, b)).res
            else:
                test = f.add(llvm.FCmpOp(a, b, _INLINE_COMPARISONS[kind])).res
                value = f.add(llvm.SelectOp.create(operands=[test, f.const_f(1.0), f.const_f(0.0)],
                                                   result_types=[f64])).results[0]
            return [f.add(llvm.BitcastOp(value, i64)).results[0]]

        def build(f: _Emitter) -> list[SSAValue]:
            return [f.call("sym_" + kind, op.lhs, op.rhs)]

        e.replace([e.if_else(both, fold, build, [i64])[0]])


class _SymNeg(_Pattern):
    op_type = smc.SymNegOp

    def rewrite(self, op: smc.SymNegOp) -> None:
        e = _Emitter(self.low, op)
        ordered, (a,) = _ordered(e, op.operand)

        def fold(f: _Emitter) -> list[SSAValue]:
            return [f.add(llvm.BitcastOp(f.add(llvm.FNegOp(a)).res, i64)).results[0]]

        def build(f: _Emitter) -> list[SSAValue]:
            return [f.call("sym_neg", op.operand)]

        e.replace([e.if_else(ordered, fold, build, [i64])[0]])


class _SymIte(_Pattern):
    op_type = smc.SymIteOp

    def rewrite(self, op: smc.SymIteOp) -> None:
        e = _Emitter(self.low, op)
        e.replace([e.call("sym_ite", op.cond, op.then_value, op.else_value)])


class _SymValue(_Pattern):
    op_type = smc.SymValueOp

    def rewrite(self, op: smc.SymValueOp) -> None:
        e = _Emitter(self.low, op)
        e.replace([e.call("sym_value", op.operand, e.site())])


def _family_and_params(e: _Emitter, family: str, params) -> list[SSAValue]:
    """The family id and p0, p1, p2 (unused ones 0) of sirenrt_sym_assume/observe."""
    words = list(params)
    words += [e.const_i(0, i64) for _ in range(MAX_PARAMS - len(words))]
    return [e.const_i(distributions.family(family).id, i32), *words]


class _Assume(_Pattern):
    op_type = smc.AssumeOp

    def rewrite(self, op: smc.AssumeOp) -> None:
        e = _Emitter(self.low, op)
        head = _family_and_params(e, op.family.data, op.params)
        var, annotation = e.const_i(op.var.value.data, i32), e.const_i(op.annotation.value.data, i32)
        site = self.low.site(op)
        self.low.var_sites.setdefault(op.var.value.data, site)
        word = e.call("sym_assume", *head, var, annotation, e.const_i(site, i32))
        if op.result.type == f64:   # `sample`: the drawn value's bits
            word = e.add(llvm.BitcastOp(word, f64)).results[0]
        e.replace([word])


class _SymObserve(_Pattern):
    op_type = smc.SymObserveOp

    def rewrite(self, op: smc.SymObserveOp) -> None:
        e = _Emitter(self.low, op)
        head = _family_and_params(e, op.family.data, op.params)
        e.call("sym_observe", *head, op.value, e.site())
        e.replace([])


class _Nil(_Pattern):
    op_type = smc.NilOp

    def rewrite(self, op: smc.NilOp) -> None:
        e = _Emitter(self.low, op)
        e.replace([e.const_i(NIL, i64)])


class _IsNil(_Pattern):
    op_type = smc.IsNilOp

    def rewrite(self, op: smc.IsNilOp) -> None:
        e = _Emitter(self.low, op)
        nil = e.const_i(NIL, i64)
        e.replace([e.add(llvm.ICmpOp(op.list, nil, IntegerAttr(0, i64))).res])  # eq


class _Cons(_Pattern):
    """A cell for the element's words in front of the tail, then each word set."""

    op_type = smc.ConsOp

    def rewrite(self, op: smc.ConsOp) -> None:
        e = _Emitter(self.low, op)
        cell = e.call("list_cons_at", op.tail, e.const_i(len(op.head), i32), e.site_if_known())
        for i, value in enumerate(op.head):
            e.call("list_set", cell, e.const_i(i, i32), e.to_word(value))
        e.replace([cell])


class _ConstList(_Pattern):
    """One runtime call builds the whole list from the words array, cell by cell as the
    conses it replaces would have."""

    op_type = smc.ConstListOp

    def rewrite(self, op: smc.ConstListOp) -> None:
        e = _Emitter(self.low, op)
        if op.nested:   # sirenrt_list_from_nested_words: the element type, then the encoding
            element = op.result.type.element.data
            data = struct.pack(f"<{1 + len(element)}q", len(element), *map(ord, element)) + op.words.data.data
        else:
            data = op.words.data.data
        at = self.low.pooled(data)
        pool = e.add(llvm.AddressOfOp(POOL, PTR)).result
        words = e.add(llvm.GEPOp(pool, [at], i8, inbounds=True)).result if at else pool
        if op.nested:
            n = e.const_i(len(data) // WORD, i64)
            e.replace([e.call("list_from_nested_words", words, n, e.site_if_known())])
            return
        n, width = e.const_i(op.length, i64), e.const_i(op.element_words, i32)
        e.replace([e.call("list_from_words", words, n, width, e.site_if_known())])


class _Head(_Pattern):
    op_type = smc.HeadOp

    def rewrite(self, op: smc.HeadOp) -> None:
        e = _Emitter(self.low, op)
        site = e.site()
        if [r.type for r in op.values] == [f64]:   # a list of floats: maybe a data row
            e.replace([e.from_word(self.row_head(e, op.list, site), f64)])
            return
        out = []
        for i, result in enumerate(op.values):
            word = e.call("list_head_word", op.list, e.const_i(i, i32), site)
            out.append(e.from_word(word, result.type))
        e.replace(out)

    @staticmethod
    def row_head(e: _Emitter, handle: SSAValue, site: SSAValue) -> SSAValue:
        """The head of a row of file 0 from its element 0 (``List.hd`` of a streamed row: once per
        particle-step), read in place; the runtime's call for any other list, and for a row
        that is empty or not readable here, whose error is then the call's."""
        # Handle = FIRST_ROW | r << ROW_SHIFT exactly when the bits other than r's are FIRST_ROW's.
        # (The handle is still typed !smc.list here: the integer ops say their result type.)
        other_bits = ~(0xFFFFFFFF << ROW_SHIFT)
        masked = e.add(llvm.AndOp.create(operands=[handle, e.const_i(other_bits, i64)], result_types=[i64]))
        is_row = e.icmp(EQ, masked.results[0], e.const_i(FIRST_ROW, i64))
        low = e.add(llvm.XOrOp.create(operands=[handle, e.const_i(FIRST_ROW, i64)], result_types=[i64])).results[0]
        r = e.add(llvm.LShrOp(low, e.const_i(ROW_SHIFT, i64))).res   # the row, when is_row
        readable = e.add(llvm.AndOp(is_row, e.icmp(ULT, r, e.rows_field("n_rows")))).res

        def position(b: _Emitter) -> list[SSAValue]:   # row r's element 0, if it has one, else -1
            first, nonempty = b.row_start(r)
            return [b.add(llvm.SelectOp(nonempty, first, b.const_i(-1, i64))).res]

        at, = e.if_else(readable, position, lambda b: [b.const_i(-1, i64)], [i64])
        word, = e.if_else(e.icmp(SGE, at, e.const_i(0, i64)),
                          lambda b: [b.word_at(b.rows_field("vals"), at)],
                          lambda b: [b.call("list_head_word", handle, b.const_i(0, i32), site, cold=True)], [i64])
        return word


class _Tail(_Pattern):
    op_type = smc.TailOp

    def rewrite(self, op: smc.TailOp) -> None:
        e = _Emitter(self.low, op)
        e.replace([e.call("list_tl", op.list, e.site())])


class _Length(_Pattern):
    op_type = smc.LengthOp

    def rewrite(self, op: smc.LengthOp) -> None:
        e = _Emitter(self.low, op)
        e.replace([e.call("list_len", op.list)])


class _Reverse(_Pattern):
    op_type = smc.ReverseOp

    def rewrite(self, op: smc.ReverseOp) -> None:
        e = _Emitter(self.low, op)
        words = len(smc.scalars_of(op.result.type.element.data))
        e.replace([e.call("list_rev_at", op.list, e.const_i(words, i32), e.site_if_known())])


class _Range(_Pattern):
    op_type = smc.RangeOp

    def rewrite(self, op: smc.RangeOp) -> None:
        e = _Emitter(self.low, op)
        e.replace([e.call("list_range", op.lo, op.hi, e.site())])


class _ReadFile(_Pattern):
    op_type = smc.ReadFileOp

    def rewrite(self, op: smc.ReadFileOp) -> None:
        e = _Emitter(self.low, op)
        file_id = e.const_i(self.low.file_id(op.path.data, op), i32)
        e.replace([e.call("file", file_id, e.site())])


@dataclass(frozen=True)
class _OneToOne:
    """An arith or math op that is one `llvm` op."""

    source: type[Operation]
    build: Callable[[Operation], Operation]

    def rewrite(self, op: Operation) -> None:
        new = self.build(op)
        new.location = op.location
        insert_before(new, op)
        replace(op, new.results)


# arith.cmpf's predicates by number; llvm.icmp numbers its predicates as arith.cmpi does.
_FCMP = ["false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord",
         "ueq", "ugt", "uge", "ult", "ule", "une", "uno", "true"]

@dataclass(frozen=True)
class _SameValues:
    """An arith op that is one `llvm` op of the same operands and result type. The new op takes over
    the old one's operand uses and result in place, instead of a use made per operand and each use of
    the result moved (a fifth of the pass' time on a program of 10^5 arithmetic ops)."""

    source: type[Operation]
    target: type[Operation]
    value: bool = False     # a constant: the target has the source's value

    def rewrite(self, op: Operation) -> None:
        new = new_op(self.target, (), (), {"value": op.properties["value"]}) if self.value else new_op(self.target, (), ())
        new.location = op.location
        new._operands, new._operand_uses, new.results = op._operands, op._operand_uses, op.results
        for use in new._operand_uses:
            use._operation = new
        for result in new.results:
            result.op = new
        op._operands, op._operand_uses, op.results = SSAValues(), (), SSAValues()
        insert_before(new, op)
        op.parent.detach_op(op)

_ONE_TO_ONE = [
    _SameValues(arith.ConstantOp, llvm.ConstantOp, value=True),
    _SameValues(arith.AddfOp, llvm.FAddOp),
    _SameValues(arith.SubfOp, llvm.FSubOp),
    _SameValues(arith.MulfOp, llvm.FMulOp),
    _SameValues(arith.DivfOp, llvm.FDivOp),
    _SameValues(arith.NegfOp, llvm.FNegOp),
    _OneToOne(arith.CmpfOp, lambda op: llvm.FCmpOp(op.lhs, op.rhs, _FCMP[op.predicate.value.data])),
    _OneToOne(arith.CmpiOp, lambda op: llvm.ICmpOp(op.lhs, op.rhs, IntegerAttr(op.predicate.value.data, i64))),
    _OneToOne(arith.SelectOp, lambda op: llvm.SelectOp.create(
        operands=[op.cond, op.lhs, op.rhs], result_types=[machine(op.result.type)])),
    _OneToOne(arith.BitcastOp, lambda op: llvm.BitcastOp(op.input, op.result.type)),
    _OneToOne(arith.ExtUIOp, lambda op: llvm.ZExtOp(op.input, op.result.type)),
    _OneToOne(arith.TruncIOp, lambda op: llvm.TruncOp(op.input, op.result.type)),
    _OneToOne(arith.AddiOp, lambda op: llvm.AddOp(op.lhs, op.rhs)),
    _OneToOne(arith.AndIOp, lambda op: llvm.AndOp(op.lhs, op.rhs)),
    _OneToOne(arith.OrIOp, lambda op: llvm.OrOp(op.lhs, op.rhs)),
    _OneToOne(arith.XOrIOp, lambda op: llvm.XOrOp(op.lhs, op.rhs)),
    _OneToOne(math.SqrtOp, lambda op: llvm.FSqrtOp(op.operand)),
    _OneToOne(math.LogOp, lambda op: llvm.FLogOp(op.operand)),
]

_SMC_PATTERNS = [_FrameLoad, _FrameStore, _Finish, _Sample, _Observe, _Nil, _IsNil, _Cons, _ConstList, _Head, _Tail,
                 _Length, _Reverse, _Range, _ReadFile,
                 _SymConst, _SymBinOp, _SymNeg, _SymIte, _SymValue, _Assume, _SymObserve]

# What step 1 leaves to step 2.
_STEP2 = (*STRUCTURAL, NextRowReadingOp)


def _check_step1(fn: llvm.FuncOp) -> None:
    for op in ops_of(fn):
        if not op.name.startswith("llvm.") and op is not fn and not isinstance(op, _STEP2):
            raise LoweringError(f"lower-smc-to-llvm: no lowering for {op.name}{where(op)}")


# -- step 2: the control-flow graph (smc_control_flow.py); the suspensions' runtime side ---------


class _ResumeGraph(ControlFlowGraph):
    """@siren_resume's graph: the pc is the frame's first word, a structured value's block
    argument is its machine type, and a suspension point returns its status to the runtime."""

    suspensions = (*ControlFlowGraph.suspensions, NextRowReadingOp)

    def __init__(self, low: _Lowering):
        super().__init__(low.fn.body, low.frame)
        self.low = low

    def block_type(self, t: Attribute) -> Attribute:
        return machine(t)

    def suspension(self, op: Operation) -> None:
        if isinstance(op, smc.ResampleOp):
            self.resample(op)
        elif isinstance(op, smc.NextRowOp | NextRowReadingOp):
            self.next_row(op)
        else:
            super().suspension(op)

    def resample(self, op: smc.ResampleOp) -> None:
        point = point_of(op)
        self.suspend(point, AT_RESAMPLE, op)
        self.block = self.new_block()
        self.resume_at(point, self.block)
        self.replace(op, [])

    def next_row(self, op: smc.NextRowOp | NextRowReadingOp) -> None:
        """Asks for the row; answered NEED, suspends, and re-entry asks again from the
        reload of the index on."""
        point = point_of(op)
        reload = self.retry_start(op)
        retry = self.new_block()
        for r in reload:
            r.detach()
        self.add(llvm.BrOp(retry), op)
        self.block = retry
        for r in reload:
            self.add(r)
        answer, *elements = self.row_or_call(op)
        e = _Emitter(self.low, op)
        need = e.add(llvm.ICmpOp(answer, e.const_i(NEED, i64), IntegerAttr(0, i64))).res  # eq
        self.take(e)
        wait, go = self.new_block(), self.new_block()
        self.add(llvm.CondBrOp(need, wait, [], go, []), op)
        self.block = wait
        self.suspend(point, NEED_ROW, op)
        self.block = go
        e = _Emitter(self.low, op)
        more = e.add(llvm.ICmpOp(answer, e.const_i(END, i64), IntegerAttr(1, i64))).res  # ne
        # Past the end the row is the empty list.
        row = e.add(llvm.SelectOp(more, answer, e.const_i(NIL, i64))).res
        self.take(e)
        self.resume_at(point, retry)
        self.replace(op, [more, row, *elements])

    def row_or_call(self, op: smc.NextRowOp | NextRowReadingOp) -> list[SSAValue]:
        """``sirenrt_stream_row(index)``'s answer: read in place for a row the table holds (every
        particle-step of a streamed program), else the call; then, for an
        `smc.next_row_reading`, whether it read the row's elements in place, and the elements."""
        e = _Emitter(self.low, op)
        held = e.icmp(ULT, op.index, e.rows_field("n_rows"))   # unsigned: a negative index is the call's
        self.take(e)
        reads = isinstance(op, NextRowReadingOp)
        inline, call = self.new_block(), self.new_block()
        join = self.new_block([i64, *([i1, *op.values.types] if reads else [])])
        self.add(llvm.CondBrOp(held, inline, [], call, []), op)
        self.block = inline
        self.add(llvm.BrOp(join, *self.row_in_place(op)), op)
        self.block = call
        e = _Emitter(self.low, op)
        answer = [e.call("stream_row", op.index, e.site(), cold=True)]
        if reads:
            answer += self.not_read(e, op)
        self.take(e)
        self.add(llvm.BrOp(join, *answer), op)
        self.block = join
        return list(join.args)

    def row_in_place(self, op: smc.NextRowOp | NextRowReadingOp) -> list[SSAValue]:
        """Row `index` < n_rows as a list, and for an `smc.next_row_reading` whether it is at
        least `length` long, and if so its elements `at` (loaded only then: the values end where
        the last row does)."""
        e = _Emitter(self.low, op)
        first, end = e.row_bounds(op.index)
        handle = e.row_handle(op.index, e.icmp(SLT, first, end))
        if not isinstance(op, NextRowReadingOp):
            self.take(e)
            return [handle]
        long_enough = e.icmp(SLT, e.plus(first, op.length.value.data - 1), end)
        short = self.not_read(e, op)
        self.take(e)
        load, done = self.new_block(), self.new_block([i1, *op.values.types])
        self.add(llvm.CondBrOp(long_enough, load, [], done, short), op)
        self.block = load
        e = _Emitter(self.low, op)
        vals = e.rows_field("vals")
        elements = [e.from_word(e.word_at(vals, e.plus(first, k)), f64) for k in op.at.get_values()]
        read = e.const_i(1, i1)
        self.take(e)
        self.add(llvm.BrOp(done, read, *elements), op)
        self.block = done
        return [handle, *done.args]

    @staticmethod
    def not_read(e: _Emitter, op: NextRowReadingOp) -> list[SSAValue]:
        """`read` false, and the elements 0.0 (unused then)."""
        return [e.const_i(0, i1), *(e.const_f(0.0) for _ in op.values)]

    def take(self, e: _Emitter) -> None:
        """Adds the ops `e` collected to the current block."""
        for new in e.ops:
            self.add(new)

    def retry_start(self, op: smc.NextRowOp) -> list[Operation]:
        """The lowered definition of `op`'s index, which must be the last ops moved (the
        contract with `spill-across-suspends`): a constant, or a frame slot's load."""
        index = op.index.owner
        last = self.block.last_op
        if isinstance(index, llvm.ConstantOp) and index is last:
            return [index]
        if isinstance(index, llvm.LoadOp) and index is last:
            gep = index.ptr.owner
            if isinstance(gep, llvm.GEPOp) and gep is index.prev_op and gep.ptr is self.low.frame:
                return [gep, index]
        raise LoweringError(
            "lower-smc-to-llvm: the index of smc.next_row is not reloaded right before it "
            f"(run spill-across-suspends first){where(op)}"
        )


# -- the pass -----------------------------------------------------------------------------------


def _resume_function(particle: smc.ParticleOp) -> llvm.FuncOp:
    """@siren_resume: an entry block for the dispatch, then the particle's body."""
    entry = Block(arg_types=[PTR, PTR, PTR, PTR])
    for arg, name in zip(entry.args, ("ctx", "frame", "log_weight", "rows")):
        arg.name_hint = name
    body = particle.body.detach_block(0)
    ftype = llvm.LLVMFunctionType([PTR, PTR, PTR, PTR], i32)
    return llvm.FuncOp(RESUME_SYMBOL, ftype, linkage=llvm.LinkageAttr("external"), body=Region([entry, body]))


def lower_particle(module: ModuleOp, particle: smc.ParticleOp) -> llvm.FuncOp:
    fn = _resume_function(particle)
    module.body.block.insert_op_before(fn, particle)
    low = _Lowering(module, fn, particle.model, vars=particle.attributes.get("smc.vars"))
    particle.detach()
    particle.erase()

    # (0) the elements of a streamed row that the step reads, read where the row is.
    read_rows_in_place(fn)
    # (1) every op in place, in program order (sites and files are numbered as met).
    patterns = {**{p.op_type: p(low) for p in _SMC_PATTERNS}, **{p.source: p for p in _ONE_TO_ONE}}
    for op in ops_of(fn):
        pattern = patterns.get(type(op))
        if pattern is not None:
            pattern.rewrite(op)
    _check_step1(fn)
    low.add_pool()

    # (2) the control-flow graph, then the dispatch on the saved pc.
    _ResumeGraph(low).build()

    fn.attributes["smc.model"] = low.model
    fn.attributes["sirenrt.layout"] = low.layout()
    if low.vars is not None:
        fn.attributes["sirenrt.vars"] = low.vars
        fn.attributes["sirenrt.var_sites"] = ArrayAttr([IntegerAttr(low.var_sites.get(v, -1), i32)
                                                       for v in range(len(low.vars.data))])
    return fn


def lower_module(module: ModuleOp) -> None:
    particles = [op for op in module.ops if isinstance(op, smc.ParticleOp)]
    if len(particles) > 1:
        raise LoweringError(f"lower-smc-to-llvm: one smc.particle per module (@{RESUME_SYMBOL}), got {len(particles)}")
    for particle in particles:
        lower_particle(module, particle)


@dataclass(frozen=True)
class LowerSMCToLLVM(ModulePass):
    name = "lower-smc-to-llvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        lower_module(op)
