"""Writes ``runtime_c/src/engine/conjugacy_rules.h`` from the conjugate pairs (``sirenc.conjugate_pairs``).

    python -m sirenc.runtime.conjugacy_source > runtime_c/src/engine/conjugacy_rules.h

Each pair the runtime serves becomes one C function, its requirements as checks and its formulas as
calls of the engine's smart constructors (expr.c), in the order the formula builds them, and one
row of the engine's rule table. conjugacy.c includes it after the helpers it calls (`param`, `dep`,
`is_rv`, `is_recip`, `affine`, `set_dist`). The file is committed, so that building the runtime
needs no Python; a test checks that ``source_text()`` is exactly the committed file.
"""

from __future__ import annotations

from sirenc import conjugate_pairs as P

SOURCE_PATH = "runtime_c/src/engine/conjugacy_rules.h"

# The C names of the pair's two variables (entry indices) and of the state.
_VAR = {"parent": "q", "child": "c"}
_RESERVED = {"s", "q", "c", "x", "apply", "a", "b", "C", "D"}

_PREAMBLE = f"""\
/* conjugacy_rules.h — the conjugate pairs the runtime swaps (ARCHITECTURE.md §11).
 * GENERATED from sirenc/conjugate_pairs.py by `python -m sirenc.runtime.conjugacy_source`; do not edit.
 * Included by conjugacy.c alone: each rule checks its requirements (0: no swap), then with apply
 * gives the child c its marginal and the parent q its posterior given RV c (-1: out of memory). */
#ifndef RT_CONJUGACY_RULES_H
#define RT_CONJUGACY_RULES_H

static int near_int(double v) {{
  double k = round(v);
  return fabs(v - k) <= {P.NEAR_INT_ATOL!r} + {P.NEAR_INT_RTOL!r} * fabs(k);
}}
"""


class _CAlgebra:
    """A formula traced into C statements: every operation one `uint64_t tN = rt_sm_...;`."""

    def __init__(self):
        self.lines: list[str] = []

    def _let(self, rhs: str) -> str:
        name = f"t{len(self.lines)}"
        self.lines.append(f"  uint64_t {name} = {rhs};")
        return name

    @staticmethod
    def const(v: float) -> str:
        return f"C({float(v)!r})"

    def add(self, a, b):
        return self._let(f"rt_sm_add(s, {a}, {b})")

    def sub(self, a, b):
        return self._let(f"rt_sm_sub(s, {a}, {b})")

    def mul(self, a, b):
        return self._let(f"rt_sm_mul(s, {a}, {b})")

    def div(self, a, b):
        return self._let(f"rt_sm_div(s, {a}, {b})")

    def ite(self, c, t, f):
        return self._let(f"rt_sm_ite(s, {c}, {t}, {f})")

    def subst(self, e, var: str, truth: bool):
        return self._let(f"rt_sym_subst(s, {e}, {_VAR[var]}, {1.0 if truth else 0.0!r})")


def _check(req) -> list[str]:
    if isinstance(req, P.Free):
        return [f"  if (dep(s, {req.expr}, {_VAR[req.on]})) return 0;"]
    if isinstance(req, P.Mentions):
        return [f"  if (!dep(s, {req.expr}, {_VAR[req.on]})) return 0;"]
    if isinstance(req, P.Is):
        return [f"  if (!is_rv({req.expr}, {_VAR[req.var]})) return 0;"]
    if isinstance(req, P.Constant):
        test = f"!rt_sym_is_const({req.expr})" + (f" || !near_int(D({req.expr}))" if req.integral else "")
        return [f"  if ({test}) return 0;"]
    if isinstance(req, P.Precision):
        return [f"  if (!is_recip(s, {req.expr}, {_VAR[req.var]})) return 0;"]
    if isinstance(req, P.Affine):
        return [f"  if (!affine(s, {req.expr}, {_VAR[req.var]}, &a, &b)) return 0;"]
    raise AssertionError(f"the runtime has no check for {req}")


def _ident(pair: P.Pair) -> str:
    return f"{pair.parent_family}_{pair.child_family}"


def _set(var: str, dist: tuple[str, tuple]) -> str:
    family, params = dist
    words = list(params) + ["0"] * (3 - len(params))
    return f"  set_dist(s, {var}, SIRENRT_FAM_{family.upper()}, {', '.join(words)});"


def _function(pair: P.Pair) -> list[str]:
    names = [(n, "q", k) for k, n in enumerate(pair.parent[1])] + [(n, "c", k) for k, n in enumerate(pair.child[1])]
    assert not {n for n, _, _ in names} & _RESERVED, pair.name
    binds = any(isinstance(r, P.Affine) for r in pair.requires)
    out = [f"/* {pair.name} */",
           f"static int {_ident(pair)}(rt_sym_state *s, uint32_t q, uint32_t c, int apply) {{",
           "  uint64_t " + ", ".join(f"{n} = param(s, {v}, {k})" for n, v, k in names) + (", a, b;" if binds else ";")]
    for req in pair.requires:
        out += _check(req)
    out.append("  if (!apply) return 1;")
    A = _CAlgebra()
    operands = {n: n for n, _, _ in names} | {"x": "x", "a": "a", "b": "b"}
    update = pair.update(A, P.Operands(operands))
    assert not update.side, f"the runtime has no side effects ({pair.name})"
    out.append("  uint64_t x = rt_sym_ref(c);")
    out += A.lines
    out += ["  if (s->oom) return -1;", _set("c", update.marginal), _set("q", update.posterior), "  return 1;", "}", ""]
    return out


def source_text() -> str:
    served = [p for p in P.PAIRS if "runtime" not in p.absent]
    lines = [_PREAMBLE]
    for pair in served:
        lines += _function(pair)
    lines.append("/* ARCHITECTURE.md §11.8: the methods that swap each pair, bit RT_METHOD_*. */")
    lines.append("static const rt_sym_rule rules[] = {")
    for pair in served:
        bits = " | ".join(f"1 << RT_METHOD_{m.upper()}" for m in pair.methods)
        lines.append(f"    {{SIRENRT_FAM_{pair.parent_family.upper()}, SIRENRT_FAM_{pair.child_family.upper()}, "
                     f"{bits}, {_ident(pair)}}}, /* {pair.name} */")
    lines.append("};")
    lines.append("")
    lines.append("#endif /* RT_CONJUGACY_RULES_H */")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(source_text(), end="")
