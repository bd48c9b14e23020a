"""Arithmetic on float constants is folded by irgen (issue 11: `- - - 1.` and `1. + 1. + ...` are
one constant, not an op per operator through every stage), and by fold-constants where a variable
bound to a constant or a function's result is an operand. Its answers are bit for bit those of
the same arithmetic computed at run time: each expression is compared with its twin whose
constants are read back from a list (`List.hd([c])`, a runtime call that neither irgen nor LLVM
sees through), with rounding, overflow, signed zeros, subnormals and NaN.
"""

from __future__ import annotations

import math
import re
import struct

import pytest

import sirenc

EXPRESSIONS = [
    "- - - 1.",
    "- - 1.5",
    "0.1 + 0.2",
    "1. - 2. * 3. + 4.",
    "0.1 * 3. - 0.3",
    "1e308 * 10.",
    "- 1e308 * 10.",
    "1e308 * 10. - 1e308 * 10.",
    "-0. + -0.",
    "0. - 0.",
    "- (1. - 1.)",
    "-0. * 5.",
    "5e-324 * 0.5",
    "2.2250738585072014e-308 - 2.225073858507201e-308",
    "1. + 1e-16 + 1e-16",
    "(1. + 2.) * (3. - 4.5) - - 0.25",
    # Through variables and calls (fold-constants).
    "let x = 0.1 in let y = x + 0.2 in y - 0.3",
    "let x = 1e308 in let y = x * 10. in - y",
    "let x = 1e308 * 10. in x - x",
    "let z = -0. in z + z",
    "let x = 0.1 in let y = x + 0.2 in (y, x * 3.)",
    "let (a, b) = (5e-324, 0.5) in a * b",
    "val f = fun x -> x * 3. in f(0.1) - 0.3",
    "val f = fun x -> x + 1e-16 in val g = fun x -> f(f(x)) in g(1.)",
    "let x = 2. in if x < 3. then x * 0.1 else - x",
]


def _literals_behind_lists(expr: str) -> str:
    return re.sub(r"(?<![\w.])(\d+\.\d*(?:e-?\d+)?)", r"List.hd([\1])", expr)


def _bits(value) -> list[bytes]:
    values = value if isinstance(value, tuple) else (value,)
    out = []
    for v in values:
        out += _bits(v) if isinstance(v, tuple) else [struct.pack("<d", v)]
    return out


def _run(expr: str):
    return sirenc.compile(expr, method="pf").filter(particles=1, seed=0).run().estimate()


@pytest.mark.parametrize("expr", EXPRESSIONS)
def test_folded_constants_compute_what_runs(expr):
    folded, computed = _run(expr), _run(_literals_behind_lists(expr))
    assert _bits(folded) == _bits(computed) or (math.isnan(folded) and math.isnan(computed)), \
        (expr, folded, computed)


def test_the_twin_is_computed():
    # The twin really computes: its module keeps the arithmetic, the folded one does not.
    from sirenc import driver

    twin, _ = driver.compile_to_llvm_dialect(_literals_behind_lists("1. + 2."))
    folded, _ = driver.compile_to_llvm_dialect("1. + 2.")
    assert any(op.name == "llvm.fadd" for op in twin.walk())
    assert not any(op.name == "llvm.fadd" for op in folded.walk())


def _arithmetic(program: str) -> list[str]:
    from sirenc import driver

    module, _ = driver.compile_to_llvm_dialect(program)
    return [op.name for op in module.walk() if op.name in ("llvm.fneg", "llvm.fadd", "llvm.fmul")]


def test_a_variable_bound_to_a_constant_is_folded():
    assert _arithmetic("let x = 1. in - - x + (2. + 3.)") == []
    assert _arithmetic("val f = fun x -> x * 2. in let y = f(1.) in y + f(y)") == []


def _siren_ops(program: str) -> list[str]:
    from sirenc import driver

    module = driver.run_until(driver.open_source(program), "siren")
    return [op.name for op in module.walk() if op.name.startswith("siren.")]


def test_irgen_folds_a_let_chain_and_keeps_only_constants_still_named():
    # Each binding's constant goes once its uses are folded: one constant is left, not one per let.
    assert _siren_ops("let x0 = 1. in let x1 = x0 + 1. in let x2 = x1 * x0 in - x2") == ["siren.const"]
    assert _siren_ops("let x = 1. in let y = x + 1. in (y, x)") == ["siren.const", "siren.const", "siren.pair"]
    assert _siren_ops("let x = 1. in let y = x + 1. in x") == ["siren.const"]


def test_a_value_known_only_at_run_time_is_not_folded():
    assert sorted(_arithmetic("let x = List.hd([1.]) in - - x + (2. + 3.)")) == \
        ["llvm.fadd", "llvm.fneg", "llvm.fneg"]
    # Only the part on constants: `x * 2.` stays, `1. + 2.` inside f does not.
    assert _arithmetic("val f = fun x -> x * (1. + 2.) in f(List.hd([1.]))") == ["llvm.fmul"]
