"""Writes ``runtime_c/src/engine/methods.h`` from the method table (``sirenc.methods``).

    python -m sirenc.runtime.methods_header > runtime_c/src/engine/methods.h

The runtime's symbolic engines are numbered, and a model's descriptor names its method: the
header gives each symbolic method's id and name, so that the runtime knows the methods by the
names the compiler writes. It is private to the runtime (the ABI names a method by its string)
and committed, so that building the runtime needs no Python; a test checks that ``header_text()``
is exactly the committed file.
"""

from __future__ import annotations

from sirenc.methods import METHODS

HEADER_PATH = "runtime_c/src/engine/methods.h"

_PREAMBLE = """\
/* methods.h — the symbolic inference methods' engine ids and names.
 * GENERATED from sirenc/methods.py by `python -m sirenc.runtime.methods_header`; do not edit.
 * Private to the runtime.  A checkpoint of a symbolic state holds its method's id. */
#ifndef RT_METHODS_H
#define RT_METHODS_H
"""


def header_text() -> str:
    engines = sorted((m for m in METHODS.values() if m.engine is not None), key=lambda m: m.engine)
    # The ids index the runtime's tables of methods (sym.c): 0, 1, ... with no gap.
    assert [m.engine for m in engines] == list(range(len(engines))), "engine ids must be 0..n-1"
    lines = [_PREAMBLE]
    lines.append("/* The inference method a state serves: which operations assume, observe, value and mean run. */")
    lines.append("enum {")
    lines += [f"  RT_METHOD_{m.name.upper()} = {m.engine}, /* {m.summary} */" for m in engines]
    lines.append(f"  RT_N_METHODS = {len(engines)}")
    lines.append("};")
    lines.append("")
    lines.append("/* X(ID, name) for every method with an engine, in id order: RT_METHOD_##ID, and the name a")
    lines.append(" * model's descriptor gives it. */")
    lines.append("#define RT_METHODS(X) \\")
    lines.append(" \\\n".join(f"  X({m.name.upper()}, \"{m.name}\")" for m in engines))
    lines.append("")
    lines.append("#endif /* RT_METHODS_H */")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(header_text(), end="")
