"""What the lowering knows about a compiled model that the runtime needs too.

The lowering fills one ``ModelInfo`` next to the ``llvm`` dialect module; the
backend turns it into the ``sirenc_model`` descriptor global of the C ABI
(``runtime_c/include/sirenrt.h``: ``sirenrt_model``), whose ABI version is the
header's (``sirenc.runtime.abi.abi_version()``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from sirenc.diagnostics import Span, SirenUsageError

RESUME_SYMBOL = "siren_resume"     # i32 (ptr ctx, ptr frame)
MODEL_SYMBOL = "sirenc_model"      # the descriptor global


@dataclass
class ModelInfo:
    name: str
    method: str
    plan: str                       # "x: sample\ny: sample"
    result_type: str                # prefix descriptor: f b u P<a><b> L<a>
    frame_size: int                 # bytes, multiple of 8; bytes 0..3 hold the pc
    result_offset: int              # byte offset of the result words
    streamable: bool = False
    not_streamable_reason: str = ""
    files: list[str] = field(default_factory=list)     # absolute paths; file 0 is the data run()/step() replace
    sites: list[Span] = field(default_factory=list)    # run-time error sites; index = site id
    # (pc, frame offset, list type): the frame slots holding list handles at each
    # resume point, where the runtime's collector starts tracing.
    roots: list[tuple[int, int, str]] = field(default_factory=list)
    # Symbolic methods only (empty under pf): the program variables by the `var` index of
    # sirenrt_sym_assume, and (pc, frame offset, "S"): the frame slots holding a symbolic word
    # at each resume point.
    vars: list[str] = field(default_factory=list)
    var_sites: list[int] = field(default_factory=list)   # vars' first bindings' site ids (-1: none)
    sym_roots: list[tuple[int, int, str]] = field(default_factory=list)
    # Tier 2 (specialize-conjugacy resolved the symbolic state): 2 and the runtime plan as text
    # ("x: symbolic\ny: sample"), fixed when compiling; else 1 and "".
    tier: int = 1
    static_runtime_plan: str = ""
    # No call in the resume can draw from the particle's stream (the runtime then leaves the
    # streams as first keyed).  False is always safe.
    never_draws: bool = False
    # Tier 2 with a result that may be symbolic: the frame's result words are "P" result_type A,
    # A the leaves' posterior atoms (sirenrt_model.frame_result_type); else "".
    frame_result_type: str = ""
    # The random variable each scalar of result_type is, "" where none (sirenc/frontend/result_names.py).
    result_names: list[str] = field(default_factory=list)

    def replace_data(self, data: str) -> None:
        """Read ``data`` (``sirenc run --data``) instead of the program's data file (file 0)."""
        if not self.files:
            raise SirenUsageError("--data replaces the file the program reads with File.read, "
                                  "and this program reads no file")
        self.files = [os.path.abspath(data), *self.files[1:]]
