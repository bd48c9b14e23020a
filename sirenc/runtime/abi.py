"""The runtime's C ABI as ``sirenrt.h`` states it, read off the header text.

    >>> from sirenc.runtime import abi
    >>> abi.abi_version() == abi.defines()["SIRENRT_ABI_VERSION"]
    True
    >>> "double sirenrt_std_normal(sirenrt_ctx *ctx);" in abi.cdef()
    True

The header is the only place the ABI is written: the cffi declarations (``ffi.py``) and
the LLVM types of the descriptor structs (``backend/llvm.py``) are derived from it.  cffi
cannot read preprocessor input, so ``cdef`` runs a small preprocessor made for this
header: it inlines ``#include "..."`` of headers next to it, drops system includes,
skips ``#ifdef __cplusplus`` blocks (everything not ``#define``d above counts as
undefined), keeps integer ``#define``s, drops the other macros (``SIRENRT_API``, the
family X-macro) and comments.  A directive it does not know is an error, so the header
cannot grow something this reader would silently misread.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

__all__ = ["abi_version", "cdef", "defines", "header_path", "max_particles"]

HEADER = "sirenrt.h"

_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
_INT_DEFINE = re.compile(r"#define\s+(\w+)\s+(-?\d+)\s*$")
_DEFINE = re.compile(r"#define\s+(\w+)")
_INCLUDE_LOCAL = re.compile(r'#include\s+"([^"]+)"\s*$')
_API = re.compile(r"\bSIRENRT_API\s+")
_CONDITION = re.compile(r"#(?:ifdef\s+(\w+)|ifndef\s+(\w+)|if\s+defined\s*\(\s*(\w+)\s*\))\s*$")


def header_path() -> Path:
    from sirenc.runtime import include_dir

    return include_dir() / HEADER


def _logical_lines(path: Path) -> list[str]:
    text = _COMMENT.sub(" ", path.read_text(encoding="utf-8"))
    return text.replace("\\\n", " ").split("\n")


def _preprocess(path: Path, defined: set[str], ints: dict[str, int], out: list[str]) -> None:
    active = [True]  # one entry per open #if: whether its current branch is taken
    for raw in _logical_lines(path):
        line = raw.strip()
        if not line.startswith("#"):
            if all(active) and line:
                out.append(_API.sub("", line))
            continue
        cond = _CONDITION.match(line)
        if cond:
            ifdef, ifndef, if_defined = cond.groups()
            name = ifdef or ifndef or if_defined
            active.append((name in defined) != bool(ifndef))
        elif line == "#else":
            active[-1] = not active[-1]
        elif line == "#endif":
            active.pop()
        elif not all(active):
            continue
        elif line.startswith("#include"):
            local = _INCLUDE_LOCAL.match(line)
            if local:
                _preprocess(path.parent / local.group(1), defined, ints, out)
            elif not line.startswith("#include <"):
                raise ValueError(f"{path.name}: unexpected directive {line!r}")
        elif line.startswith("#define"):
            defined.add(_DEFINE.match(line).group(1))
            number = _INT_DEFINE.match(line)
            if number:
                ints[number.group(1)] = int(number.group(2))
                out.append(line)
        else:
            raise ValueError(f"{path.name}: unexpected directive {line!r}")
    if active != [True]:
        raise ValueError(f"{path.name}: unbalanced #if/#endif")


@functools.cache
def _read(path: Path) -> tuple[str, dict[str, int]]:
    out: list[str] = []
    ints: dict[str, int] = {}
    _preprocess(path, set(), ints, out)
    return "\n".join(out) + "\n", ints


def cdef(path: Path | None = None) -> str:
    """The declarations of ``sirenrt.h`` (and what it includes) as ``FFI.cdef`` takes them."""
    return _read(path or header_path())[0]


def defines(path: Path | None = None) -> dict[str, int]:
    """The header's integer ``#define``s: ``{"SIRENRT_ABI_VERSION": 14, ...}``."""
    return dict(_read(path or header_path())[1])


def max_particles() -> int:
    """``SIRENRT_MAX_PARTICLES``: the largest population a native filter takes (2**31 - 1)."""
    return defines()["SIRENRT_MAX_PARTICLES"]


def abi_version() -> int:
    """``SIRENRT_ABI_VERSION``: what a model's descriptor says and the runtime accepts."""
    return defines()["SIRENRT_ABI_VERSION"]
