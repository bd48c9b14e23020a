"""Where the built C runtime (``libsirenrt``) lives.

    >>> from sirenc import runtime
    >>> runtime.shared_library_path()      # doctest: +SKIP
    PosixPath('.../site-packages/sirenc/_rt/libsirenrt.so')
    >>> runtime.static_libraries()         # link order: exports, then the runtime
    [PosixPath('.../libsirenrt_export.a'), PosixPath('.../libsirenrt.a')]

``pip install`` builds the runtime with CMake (scikit-build-core) into the package
directory ``sirenc/_rt/``.  The package is found with ``importlib.resources`` and not
``__file__``: in an editable install ``__file__`` is in the source tree while the built
files are in site-packages (ARCHITECTURE.md, toolchain note P19).  A developer's CMake build under ``build/``
is the fallback, and ``SIRENRT_DIR`` (a folder holding ``libsirenrt.so``) overrides both.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from sirenc.diagnostics import SirenUsageError

__all__ = ["shared_library_path", "static_libraries", "include_dir", "runtime_dirs"]

_SHARED = "libsirenrt.so"
_STATIC = "libsirenrt.a"
_EXPORT = "libsirenrt_export.a"
_HEADER = "sirenrt.h"

_REPO = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class RuntimeDirs:
    """The folder with the libraries and the folder with ``sirenrt.h``."""

    lib: Path
    include: Path


def _packaged() -> RuntimeDirs | None:
    try:
        rt = Path(str(resources.files("sirenc") / "_rt"))
    except (ModuleNotFoundError, TypeError):
        return None
    if (rt / _SHARED).is_file():
        return RuntimeDirs(rt, rt / "include")
    return None


def _is_sanitized(build: Path) -> bool:
    """An ASan build cannot be loaded into an uninstrumented Python."""
    cache = build / "CMakeCache.txt"
    try:
        return "SIRENRT_ASAN:BOOL=ON" in cache.read_text(errors="replace")
    except OSError:
        return False


def _dev_build() -> RuntimeDirs | None:
    """The newest usable CMake build in the source tree's ``build/`` (or one level below)."""
    root = _REPO / "build"
    include = _REPO / "runtime_c" / "include"
    if not root.is_dir() or not (include / _HEADER).is_file():
        return None
    candidates = [root, *(p for p in root.iterdir() if p.is_dir())]
    usable = [d for d in candidates if (d / _SHARED).is_file() and not _is_sanitized(d)]
    if not usable:
        return None
    newest = max(usable, key=lambda d: (d / _SHARED).stat().st_mtime_ns)
    return RuntimeDirs(newest, include)


def runtime_dirs() -> RuntimeDirs:
    """The runtime to use, or a ``SirenUsageError`` saying how to build one."""
    override = os.environ.get("SIRENRT_DIR")
    if override:
        d = Path(override)
        if not (d / _SHARED).is_file():
            raise SirenUsageError(f"SIRENRT_DIR={override} does not contain {_SHARED}")
        include = d / "include" if (d / "include" / _HEADER).is_file() else _REPO / "runtime_c" / "include"
        return RuntimeDirs(d, include)
    found = _packaged() or _dev_build()
    if found is None:
        raise SirenUsageError(
            "the sirenc C runtime is not built: install the package (`pip install .` or "
            "`pip install -e .`), or build it with `cmake -S . -B build/release && "
            "cmake --build build/release`"
        )
    return found


def shared_library_path() -> Path:
    """``libsirenrt.so``: what the JIT and the cffi population API load."""
    return runtime_dirs().lib / _SHARED


def static_libraries() -> list[Path]:
    """``[libsirenrt_export.a, libsirenrt.a]``, in link order, for building a ``model.so``."""
    d = runtime_dirs().lib
    return [d / _EXPORT, d / _STATIC]


def include_dir() -> Path:
    """The folder containing ``sirenrt.h``: the runtime's, or without a built runtime the source
    tree's (the ABI is read from the header, and ``--emit=llvm`` needs no runtime)."""
    try:
        return runtime_dirs().include
    except SirenUsageError:
        source = _REPO / "runtime_c" / "include"
        if (source / _HEADER).is_file():
            return source
        raise
