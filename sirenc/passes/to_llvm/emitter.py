"""What every pattern of `lower-smc-to-llvm` builds with.

`Lowering` is the one particle's function being built and what the runtime will read off it,
numbered in the order the patterns meet them: the runtime functions declared, the error sites,
the data files, the words of the constant lists (the pool), the frame's layout. `Emitter` collects
the `llvm` ops that replace one op, located at it, and knows the frame, the rows of file 0 and
the calls. `Pattern` is the rewrite of one kind of smc op; the families of patterns
(particle_state.py, lists.py, symbolic.py) build on these and on resume_abi.py only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar

from xdsl.dialects import llvm, scf
from xdsl.dialects.builtin import (
    ArrayAttr, BytesAttr, DenseIntOrFPElementsAttr, FileLineColLoc, FloatAttr, IntegerAttr, IntegerType,
    ModuleOp, TensorType, UnitAttr, f64, i8, i32, i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.traits import SymbolTable

from sirenc.diagnostics import SirenDataError, Span
from sirenc.ir import sirenrt, smc
from sirenc.ir.locations import loc_of, span_of
from sirenc.passes.errors import LoweringError
from sirenc.passes.rewriting import insert_before, replace
from sirenc.passes.to_llvm.resume_abi import (
    COLD_CALL, FIRST_ROW, MAX_FILES, NIL, PC_BYTES, POOL, PTR, ROW_SHIFT, SLT, WORD, runtime_signature,
)


@dataclass
class Lowering:
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
    texts: dict[str, int] = field(default_factory=dict)   # type descriptors in the pool -> their offsets

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

    def pooled_text(self, text: str) -> int:
        """The byte offset of `text`, NUL-terminated, in the pool: one copy of each."""
        if text not in self.texts:
            data = text.encode()
            self.texts[text] = self.pooled(data + bytes(WORD - len(data) % WORD))
        return self.texts[text]

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
class Emitter:
    """Collects the `llvm` ops that replace one op, located at it."""

    low: Lowering
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

    def pool_address(self, at: int) -> SSAValue:
        """A pointer to byte `at` of the pool."""
        pool = self.add(llvm.AddressOfOp(POOL, PTR)).result
        return self.add(llvm.GEPOp(pool, [at], i8, inbounds=True)).result if at else pool

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

    def if_else(self, cond: SSAValue, then: Callable[[Emitter], list[SSAValue]],
                otherwise: Callable[[Emitter], list[SSAValue]], types: list[Attribute]) -> list[SSAValue]:
        """An ``scf.if`` of `llvm` ops, flattened in step 2."""
        regions = []
        for build in (then, otherwise):
            inner = Emitter(self.low, self.at)
            inner.add(scf.YieldOp(*build(inner)))
            regions.append(Region(Block(inner.ops)))
        return list(self.add(scf.IfOp(cond, types, regions[0], regions[1])).results)


class Pattern:
    """The rewrite of one kind of smc op (`op_type`) in place, over the particle's `Lowering`."""

    op_type: ClassVar[type[Operation]]

    def __init__(self, low: Lowering):
        self.low = low

    def rewrite(self, op) -> None:
        raise NotImplementedError
