"""The byte layout of a native checkpoint (runtime_c/src/population/checkpoint.c, format 2), read far enough to
name every field, so that tests can damage one field on purpose and recompute the checksum (an
FNV-1a that detects accidents, not tampering: what the loader must survive is any bytes at all).

    fields = layout(data, n_files=1, frame_size=48)     # [(start, end, name), ...]
    forged = with_checksum(damaged_bytes)
"""

from __future__ import annotations

import struct

HEADER = 28                 # magic, format, ABI, byte order, model fingerprint
STREAM_BYTES = 44           # a particle's random stream: key, counter, buffer, words left
NODE_BYTES = 48             # rt_sym_node
STATE_HEADER = 48           # sym.c's saved_header: magic, top, free_head, live, live_after_sweep, n_rvs, n_vars, method


def fnv1a(data: bytes) -> int:
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def with_checksum(data: bytes | bytearray) -> bytes:
    """``data`` with its last 8 bytes made the checksum of the rest: a forged checkpoint."""
    body = bytes(data[:-8])
    return body + fnv1a(body).to_bytes(8, "little")


def layout(data: bytes, n_files: int, frame_size: int) -> list[tuple[int, int, str]]:
    """Every field of checkpoint ``data``, in order: (start, end, name); names such as ``n``,
    ``state0.node3``, ``p2.want_row``, ``p2.frame``."""
    out: list[tuple[int, int, str]] = []
    pos = 0

    def take(name: str, size: int) -> bytes:
        nonlocal pos
        out.append((pos, pos + size, name))
        pos += size
        return data[pos - size:pos]

    def i32(name: str) -> int:
        return struct.unpack("<i", take(name, 4))[0]

    def i64(name: str) -> int:
        return struct.unpack("<q", take(name, 8))[0]

    take("header", HEADER)
    n = i64("n")
    for name, size in (("seed", 8), ("resampler", 4), ("ess_threshold", 8), ("epoch", 4), ("mode", 4),
                       ("stream_open", 4), ("log_evidence_done", 8), ("last_zero_site", 4)):
        take(name, size)
    for k in range(n_files):
        if i32(f"file{k}.loaded"):
            rows = i64(f"file{k}.rows")
            starts = struct.unpack(f"<{rows + 1}q", take(f"file{k}.row_start", 8 * (rows + 1)))
            take(f"file{k}.values", 8 * starts[-1])
    for t in range(i32("n_types")):
        take(f"type{t}.text", i32(f"type{t}.len"))
    for c in range(i64("n_cells")):
        take(f"cell{c}.type", 4)
        payload = struct.unpack("<I", take(f"cell{c}.payload", 4))[0]
        take(f"cell{c}.len", 4)
        take(f"cell{c}.tail", 8)
        take(f"cell{c}.words", 8 * (payload - 1))
    for s in range(i64("n_states")):
        size = i64(f"state{s}.len")
        start = pos
        head = take(f"state{s}.header", STATE_HEADER)
        top, n_vars = struct.unpack("<I", head[8:12])[0], struct.unpack("<i", head[40:44])[0]
        for k in range(top):
            take(f"state{s}.node{k}", NODE_BYTES)
        take(f"state{s}.plan", n_vars)
        assert pos == start + size, "a symbolic state's length"
    for i in range(n):
        for name, size in (("logw", 8), ("state", 1), ("want_row", 8), ("zero_site", 4), ("stream", STREAM_BYTES),
                           ("state_id", 8), ("frame", frame_size)):
            take(f"p{i}.{name}", size)
    take("checksum", 8)
    assert pos == len(data), "the checkpoint's length"
    return out


def field(fields: list[tuple[int, int, str]], name: str) -> tuple[int, int]:
    return next((start, end) for start, end, n in fields if n == name)
