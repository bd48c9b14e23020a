"""The original's programs run unchanged: a bool standing for a number, and the reverse.

The original Siren computes with Python values (``True + 1 == 2``, ``True == 1.0``,
``if 0.5 then ...`` takes the 'then' branch) and its programs rely on it. sirenc
accepts them, inserts the conversion (``siren.bool_to_float``/``siren.float_to_bool``)
and warns at the spot with the explicit form (docs/original-programs.md).
The slam program written the original's way is tests/data/original_form/slam.si.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from markers import needs_runtime
from sirenc.diagnostics import SirenTypeError
from sirenc.driver import lower_to_siren
from sirenc.frontend import load, load_source

ROOT = Path(__file__).resolve().parents[2]
ORIGINAL_FORM = ROOT / "tests" / "data" / "original_form"
SLAM_DATA = ROOT / "benchmarks" / "models" / "slam" / "data.csv"

# (program, where the warning points (line, col), what it says, the type of the result)
CONVERSIONS = [
    ("let b = true in b + 1", (1, 17), "sirenc reads it as `if b then 1. else 0.`", "float"),
    ("1 < true", (1, 5), "'<' works on numbers: as in the original Siren, a bool stands for a number", "bool"),
    ("-false", (1, 2), "sirenc reads it as `0.`, which you can write instead", "float"),
    ("let c <- bernoulli(0.5) in if c then 1 else false", (1, 45),
     "the branches of this 'if' have types float and bool", "float"),
    ("let x = 2 in x = true", (1, 18), "'=' compares a float with a bool", "bool"),
    ("[1, true]", (1, 5), "this list mixes bools and numbers", "list(float)"),
    ("true :: [2]", (1, 1), "'::' puts a bool in front of a list(float)", "list(float)"),
    ("let p <- beta(1, 1) in let () = observe(bernoulli(p), 1) in p", (1, 55),
     "sirenc reads it as `if 1 = 0. then false else true`", "float"),
    ("let () = observe(gaussian(0, 1), true) in 1", (1, 34), "gaussian produces floats", "float"),
    ("let x <- gaussian(0, true) in x", (1, 22), "the variance of gaussian", "float"),
    ("let x = 0.5 in if x then 1 else 2", (1, 19),
     "sirenc reads this 'if' as `if x = 0. then 2 else 1`", "float"),
    ("if true then (1, false) else (true, 2)", (1, 14),
     "sirenc converts the bools in this float * bool to numbers", "float * float"),
]


@pytest.mark.parametrize("src,where,message,result", CONVERSIONS)
def test_conversion_is_accepted_with_a_warning_at_the_spot(src, where, message, result):
    typed = load_source(src, "t.si")
    assert str(typed.main.result) == result
    found = [(m, s) for m, s in typed.program.warnings if message in m]
    assert found, typed.program.warnings
    assert (found[0][1].line, found[0][1].col) == where
    assert "as in the original Siren" in found[0][0]


FOLDS = """
val count = fun (x, acc) -> if x < 2 then acc + 1 else acc in
val last = fun (x, acc) -> x < 2 in
val both = fun (x, (n, b)) -> (n + b, x < 2) in
(fold(count, [1, 2, 3], false), (fold(last, [1, 2, 3], -1), fold(both, [1, 2, 3], (0, 1))))
"""


def test_a_fold_accumulator_that_mixes_bools_and_numbers():
    typed = load_source(FOLDS, "t.si")
    assert str(typed.main.result) == "float * float * float * float"
    warnings = [(m, (s.line, s.col)) for m, s in typed.program.warnings]
    # One warning per fold: the bool that starts `count`'s accumulator, and the bools that `last`
    # and `both` return; none from checking `count` with a bool accumulator first.
    assert [w[1] for w in warnings] == [(5, 25), (5, 39), (5, 66)], warnings
    assert "'count' returns float for an accumulator that starts as bool" in warnings[0][0]
    assert "sirenc reads it as `0.`" in warnings[0][0]
    assert "'last' returns bool for an accumulator that starts as float" in warnings[1][0]
    assert "'both' returns float * bool" in warnings[2][0]


def test_a_function_checked_at_several_call_sites_warns_once():
    typed = load_source("val f = fun b -> b + 1 in (f(true), f(false))", "t.si")
    assert len([m for m, _ in typed.program.warnings if "stands for a number" in m]) == 1


def test_conversions_are_ops_in_the_siren_dialect():
    text = str(lower_to_siren("let c <- bernoulli(0.5) in if c + 1 then 1 else 2"))
    assert '"siren.bool_to_float"' in text and '"siren.float_to_bool"' in text


@pytest.mark.parametrize("src,message", [
    ("1 + [true]", "expected float, found list(bool)"),
    ("if true then 1 else (1, 2)", "the branches of this 'if' have different types: float and float * float"),
    ('if "a" then 1 else 2', "expected bool, found string"),
])
def test_other_mismatches_stay_type_errors(src, message):
    with pytest.raises(SirenTypeError) as info:
        load_source(src, "t.si")
    assert message in info.value.message


def test_slam_in_the_original_form_checks_with_two_warnings():
    """Refused before: `the branches of this 'if' have different types: bool and float`."""
    typed = load(str(ORIGINAL_FORM / "slam.si"))
    warnings = [(m, (s.line, s.col)) for m, s in typed.program.warnings]
    assert len(warnings) == 2, warnings
    (widen, at_widen), (truth, at_truth) = warnings
    assert at_widen == (31, 28)  # `curr` in `if n = i then curr else res`
    assert "sirenc reads it as `if curr then 1. else 0.`" in widen
    assert at_truth == (44, 33)  # `o` in `if o then 0.9 else 0.1`
    assert "sirenc reads this 'if' as `if o = 0. then 0.1 else 0.9`" in truth


# ---- running them ---------------------------------------------------------------

SEMANTICS = """
val find = fun (curr, (n, i, res)) -> (n, i + 1, if n = i then curr else res) in
let (_, _, found) = fold(find, [true, false], (1, 0, -1)) in
let (_, _, missing) = fold(find, [true, false], (5, 0, -1)) in
let nan = 0 / 0 in
((true + 1, (if 0.5 then 1 else 2, (if 0 then 1 else 2, if nan then 1 else 2))),
 (true = 1, ([1, true, false], (found, (missing, if missing then 1 else 2)))))
"""


@needs_runtime
def test_conversions_compute_what_the_original_computes():
    import sirenc

    estimate = sirenc.compile(SEMANTICS).filter(particles=4, seed=0).run().estimate()
    (a, (b, (c, d))), (e, (f, (g, (h, i)))) = estimate
    # Python: True + 1 = 2; 0.5 and NaN are true, 0 is false; True == 1; -1 is "not found".
    assert (a, b, c, d, e) == (2.0, 1.0, 2.0, 1.0, 1.0)
    assert list(f) == [1.0, 1.0, 0.0]
    assert (g, h, i) == (0.0, -1.0, 1.0)
    # Python: fold starting at False counts to 1; the last `x < 2` is False; (0, 1) -> (2, False).
    assert sirenc.compile(FOLDS).filter(particles=4, seed=0).run().estimate() == (1.0, (0.0, (2.0, 0.0)))


def _replayed_final_position(max_pos: int = 10) -> float:
    """The robot's last position when the wheels never slip: the commands, clamped to the line."""
    x = 0.0
    for cmd in np.loadtxt(SLAM_DATA, delimiter=",", skiprows=1)[:, 2]:
        if 0 <= x + cmd <= max_pos:
            x += cmd
    return x


@needs_runtime
def test_slam_in_the_original_form_runs_under_pf(tmp_path):
    import sirenc

    original = sirenc.compile(ORIGINAL_FORM / "slam.si").filter(particles=500, seed=0).run().estimate()
    ours = sirenc.compile(ROOT / "benchmarks" / "models" / "slam" / "model.si").filter(
        particles=500, seed=0).run().estimate()
    cells, x = original
    assert cells.shape == (11,) and np.all((0 <= cells) & (cells <= 1)) and 0 <= x <= 10
    # The same answer as sirenc's own typed version of the model (same draws, same seed).
    np.testing.assert_array_equal(cells, ours[0])
    assert x == ours[1]

    # Without wheel slip the position is known: every particle must end where the commands lead.
    text = (ORIGINAL_FORM / "slam.si").read_text()
    text = text.replace("let wheel_slip <- bernoulli(0.1) in", "let wheel_slip <- delta(false) in")
    text = text.replace("../../../benchmarks/models/slam/data.csv", str(SLAM_DATA))
    program = tmp_path / "slam_no_slip.si"
    program.write_text(text)
    cells, x = sirenc.compile(program).filter(particles=200, seed=1).run().estimate()
    assert x == _replayed_final_position()
    assert np.all(np.isfinite(cells))
