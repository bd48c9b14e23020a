"""The span loop's standard normal draw: the runtime's ziggurat fast path, inline (sirenrt.h, "Streams").

A Gaussian model draws one standard normal per particle-step. Through ``sirenrt_std_normal`` that is
a call, a check for an MH trace and the registers of the loop saved around it: about 0.7 ns of the
walk's particle-step of about 21 at N = 10^4 (the walk compiled with and without this, interleaved
runs). Testing for a trace inline instead of calling cost as much as the call. The span loop never
runs an MH chain, so there the draw reads the context's stream itself, and calls the runtime only
for the draws the fast path does not finish (about 1 in 80) or when fewer than two words are
buffered. Both paths read the same words: the answers do not change.
"""

from __future__ import annotations

from llvmlite import ir

INLINE_STD_NORMAL = "siren_std_normal.inline"
LAYERS = 256

_I1 = ir.IntType(1)
_I32 = ir.IntType(32)
_I64 = ir.IntType(64)
_F64 = ir.DoubleType()


def _stream_offsets() -> tuple[int, int, int]:
    from sirenc.runtime.ffi import ffi  # the layout is the header's (a context begins with its stream)

    return tuple(ffi.offsetof("sirenrt_stream", f) for f in ("buf", "left", "normal"))


def _table(mod: ir.Module, name: str, n: int) -> ir.GlobalVariable:
    g = ir.GlobalVariable(mod, ir.ArrayType(_F64, n), name=name)
    g.linkage = "external"
    return g


def add_inline_std_normal(mod: ir.Module, runtime_draw: ir.Function) -> ir.Function:
    """``double @siren_std_normal.inline(ptr ctx)``, always inlined: the fast path, else
    ``runtime_draw`` (``@sirenrt_std_normal``) from the same words."""
    buf_at, left_at, normal_at = _stream_offsets()
    fn = ir.Function(mod, ir.FunctionType(_F64, [ir.PointerType()]), name=INLINE_STD_NORMAL)
    fn.linkage = "internal"
    fn.attributes.add("alwaysinline")
    (ctx,) = fn.args
    x_edge = _table(mod, "sirenrt_zig_x", LAYERS + 1)
    x_scaled = _table(mod, "sirenrt_zig_x_scaled", LAYERS)
    entry, ready, take, check, words, accept, runtime = (
        fn.append_basic_block(n) for n in ("entry", "ready", "take", "check", "words", "accept", "runtime"))

    # Both branches to the runtime are expected not to be taken: it finishes about 1 draw in 80, and
    # refills an empty buffer (a block's words serve two draws).  LLVM then lays that path out of the
    # span loop's way and keeps the loop's values in registers, as for the lowering's rare calls
    # (COLD_CALL in sirenc/passes/to_llvm/resume_abi.py).
    expect = ir.Function(mod, ir.FunctionType(_I1, [_I1, _I1]), name="llvm.expect.i1")

    b = ir.IRBuilder(entry)

    def likely(cond: ir.Value) -> ir.Value:
        return b.call(expect, [cond, ir.Constant(_I1, 1)])

    def at(offset: int) -> ir.Value:
        return b.gep(ctx, [ir.Constant(_I64, offset)], inbounds=True, source_etype=ir.IntType(8))

    # A freshly keyed stream (left == 4) holds the fast path's answer for its first two words, made
    # with SIMD when it was keyed, or NaN where the fast path rejects them.
    left_ptr = at(left_at)
    left = b.load(left_ptr, typ=_I32)
    b.cbranch(likely(b.icmp_unsigned("==", left, ir.Constant(_I32, 4))), ready, check)

    b.position_at_end(ready)
    z = b.load(at(normal_at), typ=_F64)
    b.cbranch(likely(b.fcmp_ordered("ord", z, z)), take, runtime)

    b.position_at_end(take)
    b.store(ir.Constant(_I32, 2), left_ptr)
    b.ret(z)

    b.position_at_end(check)
    b.cbranch(likely(b.icmp_unsigned(">=", left, ir.Constant(_I32, 2))), words, runtime)

    b.position_at_end(words)
    buf = at(buf_at)
    first = b.gep(buf, [b.zext(b.sub(ir.Constant(_I32, 4), left), _I64)], inbounds=True, source_etype=_I32)
    second = b.gep(first, [ir.Constant(_I64, 1)], inbounds=True, source_etype=_I32)
    hi, lo = (b.zext(b.load(p, typ=_I32), _I64) for p in (first, second))
    w = b.or_(b.shl(hi, ir.Constant(_I64, 32)), lo)
    layer = b.and_(w, ir.Constant(_I64, LAYERS - 1))
    scale = b.load(b.gep(x_scaled, [ir.Constant(_I64, 0), layer], inbounds=True, source_etype=x_scaled.value_type),
                   typ=_F64)
    x = b.fmul(b.uitofp(b.lshr(w, ir.Constant(_I64, 11)), _F64), scale)
    edge_at = b.gep(x_edge, [ir.Constant(_I64, 0), b.add(layer, ir.Constant(_I64, 1))], inbounds=True,
                    source_etype=x_edge.value_type)
    b.cbranch(likely(b.fcmp_ordered("<", x, b.load(edge_at, typ=_F64))), accept, runtime)

    b.position_at_end(accept)
    b.store(b.sub(left, ir.Constant(_I32, 2)), left_ptr)
    sign = b.shl(b.and_(w, ir.Constant(_I64, 1 << 8)), ir.Constant(_I64, 63 - 8))
    b.ret(b.bitcast(b.xor(b.bitcast(x, _I64), sign), _F64))

    b.position_at_end(runtime)
    b.ret(b.call(runtime_draw, [ctx]))
    return fn
