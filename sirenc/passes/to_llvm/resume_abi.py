"""What ``@siren_resume`` and the C runtime agree on (sirenrt.h): the statuses it returns, the list
and stream sentinels, the frame's layout in bytes, the size of the table of data files, and every
``sirenrt_*`` function it may call, with its signature; beside them the few LLVM constants that
every pattern uses (the pointer type, the icmp predicates).

It stands apart from the lowering because it is the contract, not a rewrite: the patterns, the
resume graph and the back end (the statuses in ``backend/llvm.py``, the cold-call mark in
``backend/llvm_text.py``, ``never_draws`` in the driver) all read it.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache

from xdsl.dialects import llvm
from xdsl.dialects.builtin import f64, i32, i64
from xdsl.ir import Attribute

from sirenc.ir import smc
from sirenc.model_info import RESUME_SYMBOL
from sirenc.passes.errors import LoweringError
from sirenc.runtime.abi import defines

# The runtime's table of data files holds this many (RT_MAX_FILES, runtime_c/src/base/base.h).
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
    "list_cons_typed": ((i64, i32, PTR, i32), i64),
    "list_set": ((i64, i32, i64), None),
    "list_cons_word": ((i64, i64, PTR, i32), i64),
    "list_from_words": ((PTR, i64, i32, i32), i64),
    "list_from_nested_words": ((PTR, i64, i32), i64),
    "list_get": ((i64, i32, i32), i64),
    "list_head_word": ((i64, i32, i32), i64),
    "list_tl": ((i64, i32), i64),
    "list_len": ((i64,), f64),
    "list_rev_typed": ((i64, i32, PTR, i32), i64),
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
