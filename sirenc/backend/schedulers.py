"""LLVM's instruction schedulers made plain while a huge function becomes machine code (issue 11).

LLVM's code generator orders the instructions of each basic block twice: in the SelectionDAG (the
target's list scheduler, by Sethi-Ullman numbers) and after instruction selection (the machine
scheduler). On a long chain of dependent instructions in one block the machine scheduler takes
time quadratic in the block's size, and the list scheduler most of what is left: MCJIT spent
27.6 s on the one block of a chain of 10^5 `let`s, 2.6 s with the machine scheduler off, 0.74 s
with the SelectionDAG's nodes also kept in their order (``-enable-misched=false
-pre-RA-sched=linearize``). The code is as correct, just scheduled less.

No ordinary model comes near: the largest function among the benchmark and test models, under
every method, has 5 000 operations (its largest optimised block 37 instructions). So only a
function of more than ``HUGE_FUNCTION`` operations (a program of thousands of lines) is compiled
so; every other model exactly as before.

LLVM's options belong to the whole process, and several threads may compile at once. So code
generation goes through one shared lock: a huge module holds it alone, sets the options and puts
them back before it lets go; every other holds it together with the others, and never sees the
options changed.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import llvmlite.binding as llvm

# Operations of one function in the `llvm` dialect (constants count): at this size (10^4 `let`s in
# a chain) the default schedulers take about 0.3 s of code generation, quadratic beyond.
HUGE_FUNCTION = 20_000

# What a huge function is compiled with, and what puts LLVM's defaults back. (`-enable-misched=true`
# forces the machine scheduler on where a target would leave it off; x86-64 and AArch64, the
# runtime's targets, have it on.)
_PLAIN = ("-enable-misched=false", "-pre-RA-sched=linearize")
_DEFAULT = ("-enable-misched=true", "-pre-RA-sched=default")


class _SharedLock:
    """Held by any number of holders together, or by one alone; one waiting to hold it alone
    keeps newcomers out, so that it is not starved."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._shared = 0
        self._alone = False
        self._waiting_alone = 0

    @contextmanager
    def shared(self) -> Iterator[None]:
        with self._cond:
            self._cond.wait_for(lambda: not self._alone and not self._waiting_alone)
            self._shared += 1
        try:
            yield
        finally:
            with self._cond:
                self._shared -= 1
                self._cond.notify_all()

    @contextmanager
    def alone(self) -> Iterator[None]:
        with self._cond:
            self._waiting_alone += 1
            self._cond.wait_for(lambda: not self._alone and not self._shared)
            self._waiting_alone -= 1
            self._alone = True
        try:
            yield
        finally:
            with self._cond:
                self._alone = False
                self._cond.notify_all()


_lock = _SharedLock()


def _block_sizes(module: Any) -> list[list[int]]:
    """The number of operations of each block of an ``llvm``-dialect module, function by function."""
    from xdsl.dialects import llvm as llvm_dialect

    return [[len(block.ops) for block in op.body.blocks] for op in module.ops
            if isinstance(op, llvm_dialect.FuncOp)]


def largest_function(module: Any) -> int:
    """The number of operations of the largest function of an ``llvm``-dialect module."""
    return max((sum(sizes) for sizes in _block_sizes(module)), default=0)


# Operations of one block in the `llvm` dialect past which x86 code without AVX is generated at
# level 0 (`codegen_level`): a chain of 2 000 arithmetic ops costs level 2 about 0.1 s there. The
# benchmark and test models' largest block has 63.
LONG_BLOCK = 4_000


def largest_block(module: Any) -> int:
    """The number of operations of the largest block of an ``llvm``-dialect module."""
    return max((size for sizes in _block_sizes(module) for size in sizes), default=0)


def codegen_level(module: Any, triple: str, features: str) -> int:
    """LLVM's code-generation optimisation level for ``module`` on a target: 2, but 0 for a long
    block on x86 without AVX. There an arithmetic instruction overwrites one of its operands, and
    LLVM's two-address pass walks a chain of such instructions once per copy it meets in the chain:
    3.2 s of code generation for a chain of 10^4 additions, 12 s for one of 2x10^4 `let`s
    (quadratic: 5 minutes at 10^5), against 0.08 s at level 0, whose code is 9 times larger. With
    AVX's three-operand forms there is no such chain (0.2 s at level 2), and the JIT's native
    target has them wherever AVX exists."""
    x86 = triple.startswith(("x86_64", "i386", "i486", "i586", "i686"))
    if x86 and "+avx" not in features.split(",") and largest_block(module) > LONG_BLOCK:
        return 0
    return 2


@contextmanager
def code_generation(module: Any) -> Iterator[None]:
    """Around the code generation of (the optimised form of) the ``llvm``-dialect ``module``."""
    if largest_function(module) <= HUGE_FUNCTION:
        with _lock.shared():
            yield
        return
    with _lock.alone():
        _set(_PLAIN)
        try:
            yield
        finally:
            _set(_DEFAULT)


def _set(options: tuple[str, ...]) -> None:
    for option in options:
        llvm.set_option("sirenc", option)
