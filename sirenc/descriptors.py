"""Type descriptors: the runtime's prefix notation for the type of a frame slot, a list element or
the program's result (runtime_c/include/sirenrt.h)::

    T := 'f' | 'b' | 'S' | 'u' | 'P' T T | 'L' T

The Python API reads the estimate and the particles' values by them (sirenc/api.py,
sirenc/summary.py). The smc dialect has its own parser (sirenc/ir/smc.py), whose errors are
verification errors naming the innermost bad element.
"""

from __future__ import annotations

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
