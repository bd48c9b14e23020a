"""Type descriptors: the runtime's prefix notation for the type of a frame slot, a list element or
the program's result (runtime_c/include/sirenrt.h)::

    T := 'f' | 'b' | 'S' | 'u' | 'P' T T | 'L' T

The Python API reads the estimate and the particles' values by them (``unflatten`` below,
sirenc/summary.py). The smc dialect has its own parser (``scalars_of`` in sirenc/ir/smc/types.py),
whose errors are verification errors naming the innermost bad element.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from sirenc.diagnostics import SirenUsageError

# One word each, and one number of the flattened estimate: a float, a bool, a symbolic value.
SCALARS = "fbS"


def skip(descriptor: str, pos: int) -> int:
    """The index just past the type that starts at ``descriptor[pos]``; ValueError when there is
    no well-formed type there."""
    if pos >= len(descriptor):
        raise ValueError(f"bad type descriptor {descriptor!r}")
    tag = descriptor[pos]
    if tag in SCALARS or tag == "u":
        return pos + 1
    if tag == "L":
        return skip(descriptor, pos + 1)
    if tag == "P":
        return skip(descriptor, skip(descriptor, pos + 1))
    raise ValueError(f"bad type descriptor {descriptor!r}")


def logical_of_views(frame: str) -> str:
    """The result type of a frame result type whose lists may be views (``V k a``, sirenrt.h): each
    view is the list ``L a`` it stands for."""
    return re.sub(r"V[0-9]", "L", frame)


def unflatten(result_type: str, values: np.ndarray) -> Any:
    """Rebuild the estimate's structure from ``result_type`` (``f b S u P<a><b> L<a>``)
    and the preorder-flattened values the runtime returns."""
    try:
        value, pos, used = _read(result_type, 0, values, 0)
    except ValueError:
        raise SirenUsageError(f"bad result type descriptor {result_type!r}") from None
    if pos != len(result_type) or used != len(values):
        raise SirenUsageError(
            f"estimate of {len(values)} values does not match result type {result_type!r}")
    return value


def _read(desc: str, pos: int, values: np.ndarray, at: int) -> tuple[Any, int, int]:
    tag = desc[pos]
    if tag in SCALARS:   # S: a symbolic value, estimated by its expected value
        return float(values[at]), pos + 1, at + 1
    if tag == "u":
        return None, pos + 1, at
    if tag == "P":
        first, pos, at = _read(desc, pos + 1, values, at)
        second, pos, at = _read(desc, pos, values, at)
        return (first, second), pos, at
    if tag == "L":
        n = int(values[at])
        at += 1
        if desc[pos + 1] in SCALARS:
            return values[at: at + n].copy(), pos + 2, at + n
        end = skip(desc, pos + 1)
        items = []
        for _ in range(n):
            item, _, at = _read(desc, pos + 1, values, at)
            items.append(item)
        return items, end, at
    raise ValueError(f"bad result type descriptor {desc!r}")
