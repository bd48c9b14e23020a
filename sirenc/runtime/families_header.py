"""Writes ``runtime_c/include/sirenrt_families.h`` from the family table (``sirenc.distributions``).

    python -m sirenc.runtime.families_header > runtime_c/include/sirenrt_families.h

The header is committed, so that building the runtime needs no Python; a test checks that
``header_text()`` is exactly the committed file.  It holds the family ids, the X-macro the runtime
expands into its per-family wrappers and dispatch, and the per-family prototypes, written out so
that the cffi declarations (``sirenc.runtime.abi``) can be read off the header without a C
preprocessor.
"""

from __future__ import annotations

from sirenc.distributions import FAMILIES, LIST, Family, Param

HEADER_NAME = "sirenrt_families.h"

_PREAMBLE = """\
/* sirenrt_families.h — the distribution families' ids and per-family functions.
 * GENERATED from sirenc/distributions.py by `python -m sirenc.runtime.families_header`; do not edit.
 * Included by sirenrt.h (which defines sirenrt_ctx and SIRENRT_API), not on its own. */
#ifndef SIRENRT_FAMILIES_H
#define SIRENRT_FAMILIES_H
"""


def _c_params(params: tuple[Param, ...], *, pure: bool) -> list[str]:
    # With a particle (sample/observe) a list parameter is a list handle; the pure helpers take
    # the elements themselves.
    out = []
    for p in params:
        if p.shape != LIST:
            out.append(f"double {p.c_name}")
        elif pure:
            out += [f"const double *{p.c_name}", f"int64_t n_{p.c_name}"]
        else:
            out.append(f"int64_t {p.c_name}")
    return out


def _shape(f: Family) -> str:
    shapes = [p.shape == LIST for p in f.params]
    if not any(shapes):
        return "SCALAR"
    # The runtime's LIST wrappers are written out by hand for this layout.
    assert shapes == [False] * (len(shapes) - 1) + [True], f"{f.name}: only the last parameter may be a list"
    return "LIST"


def _prototypes(f: Family) -> dict[str, str]:
    ctx = ", ".join(["sirenrt_ctx *ctx", *_c_params(f.params, pure=False)])
    pure = ", ".join(_c_params(f.params, pure=True))
    return {
        "sample": f"SIRENRT_API double sirenrt_sample_{f.name}({ctx}, int32_t site);",
        "observe": f"SIRENRT_API void sirenrt_observe_{f.name}({ctx}, double x, int32_t site);",
        "logpdf": f"SIRENRT_API double sirenrt_logpdf_{f.name}({pure}, double x);",
        "mean": f"SIRENRT_API double sirenrt_mean_{f.name}({pure});",
    }


def header_text() -> str:
    lines = [_PREAMBLE]
    lines.append("/* Family ids: sirenrt_sample_many's `family` and sirenrt_family_info's index. */")
    lines.append("enum {")
    for f in FAMILIES:
        call = f"{f.name}({', '.join(p.c_name for p in f.params)})"
        lines.append(f"  SIRENRT_FAM_{f.name.upper()} = {f.id}, /* {call} */")
    lines.append(f"  SIRENRT_N_FAMILIES = {len(FAMILIES)}")
    lines.append("};")
    lines.append("")
    lines.append("/* X(ID, name, N, SHAPE, PARAMS, ARGS) for every family in id order: N parameters, SHAPE SCALAR")
    lines.append(" * (all doubles) or LIST (the last one is a list handle), PARAMS the parameters of")
    lines.append(" * sirenrt_sample_<name> between ctx and site, ARGS their names. */")
    lines.append("#define SIRENRT_FAMILIES(X) \\")
    rows = []
    for f in FAMILIES:
        params = ", ".join(_c_params(f.params, pure=False))
        args = ", ".join(p.c_name for p in f.params)
        rows.append(f"  X({f.name.upper()}, {f.name}, {f.arity}, {_shape(f)}, ({params}), ({args}))")
    lines.append(" \\\n".join(rows))
    titles = {
        "sample": "Sampling: the draw.",
        "observe": "Observation: adds log p(x | params) to the particle's log weight.",
        "logpdf": "Log density / mass of x.",
        "mean": "The analytic mean.",
    }
    protos = [_prototypes(f) for f in FAMILIES]
    for kind, title in titles.items():
        lines.append("")
        lines.append(f"/* {title} */")
        lines += [p[kind] for p in protos]
    lines.append("")
    lines.append("#endif /* SIRENRT_FAMILIES_H */")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(header_text(), end="")
