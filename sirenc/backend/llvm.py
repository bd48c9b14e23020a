"""The native backend: an ``llvm``-dialect module becomes machine code.

The lowering hands over a ``builtin.module`` of ``llvm.func`` ops (the
definition of ``@siren_resume`` plus declarations of ``sirenrt_*``) and a
``ModelInfo``. This stage

1. prints the module as LLVM IR text (``llvm_text.py``),
2. gives every function definition internal linkage (P5: the only symbol a
   compiled model exports is its descriptor),
3. adds the descriptor ``@sirenc_model`` (``sirenrt_model`` in
   ``runtime_c/include/sirenrt.h``; its LLVM type is read off the header
   through cffi) with its strings, files and sites, and the span loop,
   which runs a copy of a short resume whose standard normal draws are
   inline (``std_normal.py``),
4. parses and verifies the text with LLVM, runs the new-pass-manager O2
   pipeline (P9), and
5. either JIT-compiles it with MCJIT against the shared runtime library, or
   emits a position-independent object file (P10) for ``link.py`` (a huge
   function with LLVM's plainest instruction scheduling: ``schedulers.py``).

Example::

    jit = jit_compile(module, info)        # JitModel; jit.model_address
    obj = object_bytes(module, info)       # ELF relocatable object, PIC
    print(llvm_ir_text(module, info, optimize=True))
"""

from __future__ import annotations

import atexit
import functools
from typing import Any

import llvmlite.binding as llvm
import llvmlite.ir as ir
from xdsl.traits import SymbolTable

from sirenc.backend.schedulers import code_generation, codegen_level
from sirenc.backend.std_normal import INLINE_STD_NORMAL, add_inline_std_normal
from sirenc.diagnostics import source_line
from sirenc.model_info import MODEL_SYMBOL, RESUME_SYMBOL, ModelInfo
from sirenc.passes.to_llvm.resume_abi import AT_RESAMPLE, RUNNABLE
from sirenc.runtime.abi import abi_version, defines

_I8 = ir.IntType(8)
_I32 = ir.IntType(32)
_I64 = ir.IntType(64)
_PTR = ir.PointerType()

# ------------------------------------------------ descriptor types (sirenrt.h)

# C scalar types of the descriptor structs; pointers (also to functions) are `ptr`.
_SCALARS = {"int32_t": _I32, "uint32_t": _I32, "int64_t": _I64, "uint64_t": _I64,
            "double": ir.DoubleType()}


def _llvm_type(ctype: Any) -> ir.Type:
    if ctype.kind in ("pointer", "function"):
        return _PTR
    if ctype.kind == "primitive" and ctype.cname in _SCALARS:
        return _SCALARS[ctype.cname]
    raise TypeError(f"no LLVM type for the C type {ctype.cname}")


@functools.cache
def _struct_fields(name: str) -> tuple[tuple[str, ir.Type], ...]:
    from sirenc.runtime.ffi import ffi  # cffi parsed sirenrt.h; its fields are the header's

    return tuple((field, _llvm_type(f.type)) for field, f in ffi.typeof(name).fields)


def descriptor_type(name: str) -> ir.LiteralStructType:
    """The LLVM type of the C struct ``name`` (``"sirenrt_model"``), field for field as
    ``sirenrt.h`` declares it; natural C alignment gives the same layout."""
    return ir.LiteralStructType([ty for _, ty in _struct_fields(name)])


def _struct(c_name: str, /, **values: Any) -> ir.Constant:
    """A constant of the C struct ``c_name`` from its fields by name; ints become constants."""
    fields = _struct_fields(c_name)
    names = [field for field, _ in fields]
    if sorted(values) != sorted(names):
        raise ValueError(f"{c_name} has the fields {names}, given {list(values)}")
    items = [ir.Constant(ty, values[field]) if isinstance(values[field], int) else values[field]
             for field, ty in fields]
    return ir.Constant(descriptor_type(c_name), items)


# ---------------------------------------------------------------- LLVM setup

_initialized = False


def _initialize() -> None:
    """Native target and asm printer only: ``llvm.initialize()`` raises (P8)."""
    global _initialized
    if not _initialized:
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        _initialized = True


def _target_machine(*, jit: bool, native: bool, module: Any = None) -> llvm.TargetMachine:
    """A fresh target machine, to generate the code of ``module`` if given; never share one with a
    JIT engine (P11)."""
    _initialize()
    target = llvm.Target.from_default_triple()
    cpu = llvm.get_host_cpu_name() if native else ""
    features = llvm.get_host_cpu_features().flatten() if native else ""
    opt = 2 if module is None else codegen_level(module, target.triple, features)
    return target.create_target_machine(
        cpu=cpu, features=features, opt=opt,
        reloc="default" if jit else "pic",
        codemodel="jitdefault" if jit else "default",
        jit=jit,
    )


# ------------------------------------------------------ llvm dialect → LLVM IR text

def ir_text(module: Any, info: ModelInfo, data_layout: str = "") -> str:
    """The module's LLVM IR text, with the model descriptor and the span loop."""
    from sirenc.backend.llvm_text import module_text

    _initialize()
    # A short resume that draws normals gets a copy whose draws are inline, for the span loop.
    draws = SymbolTable.lookup_symbol(module, STD_NORMAL) is not None
    copy = {RESUME_SYMBOL: (SPAN_RESUME, {STD_NORMAL: INLINE_STD_NORMAL})} if draws else {}
    text = module_text(module, _definition_linkage, copy, copy_below=_INLINE_RESUME_BELOW)
    if RESUME_SYMBOL not in text.sizes:
        raise ValueError(f"the module defines no @{RESUME_SYMBOL}")
    # The descriptor and the span loop are small: llvmlite builds them, in a module of their own
    # that declares what they call of the program's text, which they follow.
    mod = ir.Module()
    resume_type = ir.FunctionType(_I32, [_PTR] * 4)
    resume = ir.Function(mod, resume_type, name=RESUME_SYMBOL)
    declared = [resume]
    size = text.sizes[RESUME_SYMBOL]
    span_body = resume
    if SPAN_RESUME in text.sizes:
        span_body = ir.Function(mod, resume_type, name=SPAN_RESUME)
        runtime_draw = ir.Function(mod, ir.FunctionType(ir.DoubleType(), [_PTR]), name=STD_NORMAL)
        add_inline_std_normal(mod, runtime_draw)
        declared += [span_body, runtime_draw]
    _add_descriptor(mod, info, resume, span_body, size)
    header = [f'target triple = "{llvm.get_process_triple()}"', f'target datalayout = "{data_layout}"', ""]
    return "\n".join(header + [text.body] + [str(g) for g in mod.global_values if g not in declared]
                     + [text.intrinsics])


def _definition_linkage(declared: str) -> str:
    # The lowering builds functions with llvm.FuncOp's default linkage
    # ("internal"), and text parsed without a keyword says "external": both
    # mean "ours, not exported". Anything more specific is honoured.
    return "internal" if declared in ("internal", "external") else declared


class _Strings:
    """Private, deduplicated, NUL-terminated string constants."""

    def __init__(self, mod: ir.Module) -> None:
        self._mod = mod
        self._by_text: dict[str, ir.GlobalVariable] = {}

    def __call__(self, text: str | None) -> ir.Constant:
        if text is None:
            return ir.Constant(_PTR, None)
        g = self._by_text.get(text)
        if g is None:
            raw = bytearray(text.encode("utf-8") + b"\0")
            ty = ir.ArrayType(_I8, len(raw))
            g = ir.GlobalVariable(self._mod, ty, name=f"{MODEL_SYMBOL}.str.{len(self._by_text)}")
            g.linkage = "private"
            g.global_constant = True
            g.unnamed_addr = True
            g.initializer = ir.Constant(ty, raw)
            self._by_text[text] = g
        return g


def _private_array(mod: ir.Module, name: str, elem: ir.Type, values: list) -> ir.Constant:
    if not values:
        return ir.Constant(_PTR, None)
    ty = ir.ArrayType(elem, len(values))
    g = ir.GlobalVariable(mod, ty, name=name)
    g.linkage = "private"
    g.global_constant = True
    g.initializer = ir.Constant(ty, values)
    return g


def _add_descriptor(mod: ir.Module, info: ModelInfo, resume: ir.Function, span_body: ir.Function,
                    resume_size: int) -> None:
    string = _Strings(mod)
    sites = [
        _struct("sirenrt_site", file=string(s.file), line=s.line, col=s.col,
                end_col=s.end_col if s.end_line in (0, s.line) else 0, text=string(source_line(s)))
        for s in info.sites
    ]
    files = [string(f) for f in info.files]
    roots = [_struct("sirenrt_root", pc=pc, offset=offset, type=string(typ)) for pc, offset, typ in info.roots]
    sym_roots = [_struct("sirenrt_root", pc=pc, offset=offset, type=string(typ))
                 for pc, offset, typ in info.sym_roots]
    variables = [string(v) for v in info.vars]
    span = _add_span(mod, span_body, resume_size, info.frame_size)
    model = _struct(
        "sirenrt_model",
        abi_version=abi_version(),
        name=string(info.name), method=string(info.method), plan=string(info.plan),
        result_type=string(info.result_type),
        frame_size=info.frame_size, result_offset=info.result_offset,
        resume=resume,
        streamable=int(info.streamable), not_streamable_reason=string(info.not_streamable_reason),
        n_files=len(files), files=_private_array(mod, f"{MODEL_SYMBOL}.files", _PTR, files),
        n_sites=len(sites),
        sites=_private_array(mod, f"{MODEL_SYMBOL}.sites", descriptor_type("sirenrt_site"), sites),
        n_roots=len(roots),
        roots=_private_array(mod, f"{MODEL_SYMBOL}.roots", descriptor_type("sirenrt_root"), roots),
        n_vars=len(variables), vars=_private_array(mod, f"{MODEL_SYMBOL}.vars", _PTR, variables),
        n_sym_roots=len(sym_roots),
        sym_roots=_private_array(mod, f"{MODEL_SYMBOL}.sym_roots", descriptor_type("sirenrt_root"), sym_roots),
        tier=info.tier,
        static_runtime_plan=string(info.static_runtime_plan if info.tier == 2 else None),
        never_draws=int(info.never_draws),
        resume_span=span,
        frame_result_type=string(info.frame_result_type or None),
        result_names=string("".join(f"{n}\n" for n in info.result_names) if any(info.result_names) else None),
        var_sites=_private_array(mod, f"{MODEL_SYMBOL}.var_sites", ir.IntType(32),
                                 [ir.Constant(ir.IntType(32), s) for s in info.var_sites]),
    )
    g = ir.GlobalVariable(mod, model.type, name=MODEL_SYMBOL)
    g.global_constant = True
    g.initializer = model
    # external linkage, default visibility: export.c and dlsym/JIT lookups find it


# The resume functions LLVM inlines into the span loop: past this many instructions a call costs
# little beside the body, and a second copy of a long program would double its code generation.
_INLINE_RESUME_BELOW = 2000
STD_NORMAL = "sirenrt_std_normal"
SPAN_RESUME = f"{RESUME_SYMBOL}.inline_draws"   # the copy the span loop inlines


def _add_span(mod: ir.Module, resume: ir.Function, resume_size: int, frame_size: int) -> ir.Function:
    """``sirenrt_span_fn`` (sirenrt.h): the runtime's per-particle loop for its common case, with
    @siren_resume inlined: a particle then costs no indirect call, and its frame's address is a
    multiple of a constant.  Three copies of the loop: one checks each stream's epoch (``keyed``),
    two do not (the pass keyed every stream before it calls the loop), of which one reads no state
    either (``may_resume``: every particle stopped at the barrier before), so none asks at each
    particle which it is."""
    fields = [name for name, _ in _struct_fields("sirenrt_span")]
    span_t = descriptor_type("sirenrt_span")
    fn = ir.Function(mod, ir.FunctionType(_I64, [_PTR, _I64, _I64]), name=f"{RESUME_SYMBOL}.span")
    fn.linkage = "internal"
    span, lo, hi = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))

    def field(name: str) -> ir.Value:
        k = fields.index(name)
        at = b.gep(span, [ir.Constant(_I32, 0), ir.Constant(_I32, k)], inbounds=True, source_etype=span_t)
        return b.load(at, name=name, typ=span_t.elements[k])

    ctx0, ctx_first, ctx_size, flagged_at, epoch_at, epoch, keyed, may_resume, frames, log_weights, state, rows = (
        field(n) for n in ("ctx", "ctx_first", "ctx_size", "flagged_offset", "epoch_offset", "epoch", "keyed",
                           "may_resume", "frames", "log_weights", "state", "rows"))
    # The rows' view is the same for the whole pass: a copy of it on the stack, which no store of the
    # loop can reach, lets LLVM keep its fields in registers instead of loading them every particle.
    rows_t = descriptor_type("sirenrt_rows")
    local_rows = b.alloca(rows_t, name="rows.local")
    b.store(b.load(rows, typ=rows_t), local_rows)
    rows = local_rows
    entry = b.block
    small = resume_size < _INLINE_RESUME_BELOW

    def loop(check_epoch: bool, check_state: bool, pred: ir.Block) -> ir.Block:
        tag = ("keyed" if check_epoch else "unkeyed") + ("" if check_state else ".resumable")
        blocks = {n: fn.append_basic_block(f"{n}.{tag}") for n in (
            "loop", "body", "check", "run", "next", "handed_back", "resumed_back", "done")}
        b.position_at_end(blocks["loop"])
        i = b.phi(_I64, name="i")
        i.add_incoming(lo, pred)
        b.cbranch(b.icmp_signed("<", i, hi), blocks["body"], blocks["done"])

        b.position_at_end(blocks["body"])
        state_at = b.gep(state, [i], inbounds=True, source_etype=_I8)
        ctx = b.gep(ctx0, [b.mul(b.sub(i, ctx_first), ctx_size)], inbounds=True, source_etype=_I8)
        if check_state:
            s = b.load(state_at, typ=_I8)
            may = b.or_(b.icmp_signed("==", s, ir.Constant(_I8, RUNNABLE)),
                        b.icmp_signed("==", s, ir.Constant(_I8, AT_RESAMPLE)))
            b.cbranch(may, blocks["check"], blocks["handed_back"])
        else:
            b.branch(blocks["check"])

        b.position_at_end(blocks["check"])
        if check_epoch:
            key = b.load(b.gep(ctx, [epoch_at], inbounds=True, source_etype=_I8), typ=_I32)
            b.cbranch(b.icmp_unsigned("!=", key, epoch), blocks["handed_back"], blocks["run"])
        else:
            b.branch(blocks["run"])

        b.position_at_end(blocks["run"])
        frame = b.gep(frames, [b.mul(i, ir.Constant(_I64, frame_size))], inbounds=True, source_etype=_I8)
        weight = b.gep(log_weights, [i], inbounds=True, source_etype=ir.DoubleType())
        r = b.call(resume, [ctx, frame, weight, rows], attrs=("alwaysinline",) if small else ())
        b.store(b.trunc(r, _I8), state_at)
        flagged = b.load(b.gep(ctx, [flagged_at], inbounds=True, source_etype=_I8), typ=_I32)
        plain = b.and_(b.icmp_signed("==", r, ir.Constant(_I32, AT_RESAMPLE)),
                       b.icmp_signed("==", flagged, ir.Constant(_I32, 0)))
        b.cbranch(plain, blocks["next"], blocks["resumed_back"])

        b.position_at_end(blocks["next"])
        i.add_incoming(b.add(i, ir.Constant(_I64, 1)), blocks["next"])
        b.branch(blocks["loop"])

        b.position_at_end(blocks["handed_back"])
        b.ret(i)
        b.position_at_end(blocks["resumed_back"])
        b.ret(b.or_(i, ir.Constant(_I64, defines()["SIRENRT_SPAN_RESUMED"])))
        b.position_at_end(blocks["done"])
        b.ret(hi)
        return blocks["loop"]

    unkeyed = fn.append_basic_block("unkeyed")
    keyed_loop, unkeyed_loop = loop(True, True, entry), loop(False, True, unkeyed)
    resumable_loop = loop(False, False, unkeyed)
    b.position_at_end(entry)
    b.cbranch(b.icmp_signed("!=", keyed, ir.Constant(_I32, 0)), keyed_loop, unkeyed)
    b.position_at_end(unkeyed)
    b.cbranch(b.icmp_signed("!=", may_resume, ir.Constant(_I32, 0)), resumable_loop, unkeyed_loop)
    return fn


# ------------------------------------------------------------ LLVM pipeline

def _parse(text: str, context: Any = None) -> llvm.ModuleRef:
    ref = llvm.parse_assembly(text, context=context)
    ref.verify()
    return ref


def _optimize(ref: llvm.ModuleRef, tm: llvm.TargetMachine) -> None:
    pto = llvm.create_pipeline_tuning_options(speed_level=2)
    pb = llvm.create_pass_builder(tm, pto)
    mpm = pb.getModulePassManager()
    try:
        mpm.run(ref, pb)
    finally:
        _dispose_pass_manager(mpm)


def _dispose_pass_manager(mpm: Any) -> None:
    """Free a module pass manager. llvmlite 0.50's ``ModulePassManager`` never does: its
    ``_dispose`` resolves to ``ObjectRef``'s no-op before ``NewPassManager``'s, which leaked
    about 75 KB of LLVM memory per compiled model (issue 11)."""
    from llvmlite.binding import ffi as llvm_ffi

    if not mpm.closed:
        llvm_ffi.lib.LLVMPY_DisposeNewModulePassManger(mpm)
        mpm.detach()


def _module_ref(module: Any, info: ModelInfo, tm: llvm.TargetMachine,
                optimize: bool, context: Any = None) -> llvm.ModuleRef:
    ref = _parse(ir_text(module, info, data_layout=str(tm.target_data)), context)
    if optimize:
        _optimize(ref, tm)
    return ref


def llvm_ir_text(module: Any, info: ModelInfo, *, optimize: bool = False) -> str:
    """Textual LLVM IR (``--emit=llvm``), as LLVM prints it, before or after O2."""
    tm = _target_machine(jit=False, native=False)
    return str(_module_ref(module, info, tm, optimize))


def object_bytes(module: Any, info: ModelInfo, *, native: bool = False) -> bytes:
    """An optimised PIC ELF object defining ``sirenc_model`` (``--emit=obj``).

    ``native=True`` tunes for this machine's CPU; the default object runs on
    any CPU of the target architecture, like the runtime it is linked with.
    """
    tm = _target_machine(jit=False, native=native, module=module)
    ref = _module_ref(module, info, tm, optimize=True)
    with code_generation(module):
        return tm.emit_object(ref)


class JitModel:
    """A model compiled in this process. Keep it alive while ``model_address`` is used.

    It owns its MCJIT engine and the LLVM context its module was parsed in (a fresh one per
    model: types and constants uniqued in the global context would never be freed).  Both are
    disposed when the model is closed or garbage collected, the engine first.
    """

    def __init__(self, engine: llvm.ExecutionEngine, model_address: int, context: Any = None):
        self.engine = engine
        self.model_address = model_address   # address of the sirenrt_model descriptor
        self._context = context

    def close(self) -> None:
        engine, self.engine = getattr(self, "engine", None), None
        if engine is not None:
            engine.close()
        context, self._context = getattr(self, "_context", None), None
        if context is not None:
            context.close()

    def __del__(self) -> None:
        # At interpreter exit, objects die in no particular order: a filter of this model may
        # still be freed after it (its destructor reads the descriptor in the JIT's memory), so
        # the engine is left to the process's end. (None: this module's globals already cleared.)
        if _exiting is False:
            self.close()


_exiting = False


@atexit.register
def _note_exit() -> None:
    global _exiting
    _exiting = True


_runtime_loaded: str | None = None


def _load_runtime() -> None:
    """Make the shared runtime's ``sirenrt_*`` symbols visible to the JIT."""
    global _runtime_loaded
    if _runtime_loaded is None:
        from sirenc.runtime import shared_library_path
        path = str(shared_library_path())
        llvm.load_library_permanently(path)
        _runtime_loaded = path


def _check_external_symbols(ref: llvm.ModuleRef) -> None:
    # MCJIT aborts the whole process on a symbol it cannot resolve; fail politely first.
    missing = [fn.name for fn in ref.functions
               if fn.is_declaration and not fn.name.startswith("llvm.")
               and not llvm.address_of_symbol(fn.name)]
    if missing:
        raise RuntimeError("JIT: the runtime library does not define " + ", ".join(sorted(missing)))


def jit_compile(module: Any, info: ModelInfo) -> JitModel:
    """Optimise and JIT-compile with MCJIT, linking against ``libsirenrt.so``."""
    _load_runtime()
    tm = _target_machine(jit=True, native=True, module=module)
    context = llvm.create_context()
    ref = _module_ref(module, info, tm, optimize=True, context=context)   # ref keeps context alive
    _check_external_symbols(ref)
    with code_generation(module):
        engine = llvm.create_mcjit_compiler(ref, tm)   # takes ownership of ref and tm
        jit = JitModel(engine, 0, context)
        engine.finalize_object()
    jit.model_address = engine.get_global_value_address(MODEL_SYMBOL)
    if not jit.model_address:
        raise RuntimeError(f"JIT: no address for @{MODEL_SYMBOL}")
    return jit
