"""Running a compilation on a thread with room for deep recursion.

Every stage walks the program recursively (the front end, each pass, the dump of ``--emit=ast``),
so a long chain of `let`s is a deep recursion: the caller's work runs on a worker thread with a
large stack and a high recursion limit, and its result or its exception comes back to the caller.
Whatever recurses over a program calls ``run_on_deep_stack`` unless ``on_deep_stack()``.
"""

from __future__ import annotations

import gc
import sys
import threading
from collections.abc import Callable
from typing import Any

from sirenc import diagnostics
from sirenc.diagnostics import SirenUsageError

_STACK_BYTES = 512 * 1024 * 1024
_RECURSION_LIMIT = 2_000_000
_WORKER_NAME = "sirenc-compile"

# The recursion limit and the stack size of new threads belong to the whole process,
# and several threads may compile at once. So they change only under `_deep_lock`: the
# stack size just while a worker starts, the limit from the first active compilation
# until the last one ends (`_deep_active` counts them), then it is put back.
# So do the cyclic garbage collector's thresholds: a big program is hundreds of
# thousands of long-lived objects (AST, IR), which the default thresholds make the
# collector traverse again and again (a quarter of the CPU time of compiling 10^5
# `let`s). Garbage cycles the passes leave wait for the next, rarer collection.
_GC_THRESHOLDS = (50_000, 50, 1000)
_deep_lock = threading.Lock()
_deep_active = 0
_saved_limit = 0
_saved_gc: tuple[int, ...] = ()


def on_deep_stack() -> bool:
    """Whether the caller already runs on a compilation worker (with its deep stack)."""
    return threading.current_thread().name == _WORKER_NAME and _deep_active > 0


def _enter_deep() -> None:
    global _deep_active, _saved_limit, _saved_gc
    with _deep_lock:
        if _deep_active == 0:
            _saved_limit = sys.getrecursionlimit()
            sys.setrecursionlimit(max(_saved_limit, _RECURSION_LIMIT))
            _saved_gc = gc.get_threshold()
            if _saved_gc[0] > 0:   # 0: the host turned automatic collection off; leave it so
                gc.set_threshold(*(max(a, b) for a, b in zip(_saved_gc, _GC_THRESHOLDS)))
        _deep_active += 1


def _leave_deep() -> None:
    global _deep_active
    with _deep_lock:
        _deep_active -= 1
        if _deep_active == 0:
            sys.setrecursionlimit(_saved_limit)
            gc.set_threshold(*_saved_gc)


def run_on_deep_stack(fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)`` on a worker thread with a deep stack; its result or its exception."""
    if on_deep_stack():
        return fn(*args)
    outcome: dict[str, object] = {}
    sources = diagnostics.thread_sources()  # the worker registers and quotes the caller's programs

    def work():
        diagnostics.share_sources(sources)
        try:
            outcome["value"] = fn(*args)
        except BaseException as e:  # noqa: BLE001 - re-raised on the caller's thread
            outcome["error"] = e

    worker = threading.Thread(target=work, name=_WORKER_NAME, daemon=True)
    _enter_deep()
    try:
        with _deep_lock:
            old_stack = threading.stack_size(_STACK_BYTES)
            try:
                worker.start()
            finally:
                threading.stack_size(old_stack)
        worker.join()
    finally:
        _leave_deep()
    if "error" in outcome:
        error = outcome["error"]
        if isinstance(error, RecursionError):
            raise SirenUsageError("the program is nested too deeply to compile") from None
        raise error
    return outcome["value"]
