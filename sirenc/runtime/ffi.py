"""The process-wide cffi interface (ABI mode) to the C runtime and to compiled models.

    >>> from sirenc.runtime.ffi import ffi, runtime_lib
    >>> lib = runtime_lib()
    >>> out = ffi.new("double[]", 3)
    >>> params = ffi.new("double[]", [0.0, 1.0])        # gaussian(mean 0, variance 1)
    >>> lib.sirenrt_sample_many(lib.SIRENRT_FAM_GAUSSIAN, params, 3, 42, out)
    0

There is exactly one ``FFI`` per process (ARCHITECTURE.md, toolchain note P15: parsing the declarations costs
about 20 ms, and cdata from different FFIs do not mix).  Its declarations are read off
``sirenrt.h`` (``sirenc.runtime.abi``), so they cannot drift from the header.  A compiled
``model.so`` is opened with the same ``ffi`` (``ffi.dlopen(path)``) and exposes the
``sirenc_*`` functions.
"""

from __future__ import annotations

import threading

import cffi

from sirenc.runtime import abi

__all__ = ["ffi", "runtime_lib", "last_error"]

ffi = cffi.FFI()
ffi.cdef(abi.cdef())

_lock = threading.Lock()
_lib = None


def runtime_lib():
    """``libsirenrt.so``, opened once per process (also re-entrant from several threads)."""
    global _lib
    if _lib is None:
        with _lock:
            if _lib is None:
                from sirenc.runtime import shared_library_path

                _lib = ffi.dlopen(str(shared_library_path()))
    return _lib


def last_error() -> str:
    """The runtime's thread-local last error (why a call that returns no filter failed)."""
    return ffi.string(runtime_lib().sirenrt_last_error()).decode("utf-8", "replace")
