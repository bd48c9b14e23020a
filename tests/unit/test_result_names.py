"""Which random variable each number of the result is (sirenc/frontend/result_names.py), and the
names' way through the compiled model to summaries (``Filter.variables``, the CLI's table)."""

from __future__ import annotations

import pytest

import sirenc
from sirenc.frontend import load_source
from sirenc.frontend.result_names import names, returned
from markers import needs_runtime


def named(src: str) -> list[str]:
    return sirenc.compile(src).info["result_names"]


STEP = """
val step = fun (y, (xs, p)) ->
  let x <- gaussian(0., 1.) in
  let () = observe(gaussian(x, 1.), y) in
  (x :: xs, p)
in
"""


@needs_runtime
@pytest.mark.parametrize("src,expected", [
    ("let p <- beta(1., 1.) in p", ["p"]),
    ("let p <- beta(1., 1.) in let q = p in (q, p + 0.)", ["p", ""]),
    ("let a <- gaussian(0., 1.) in let b <- gaussian(a, 1.) in (b, (a, 1.))", ["b", "a", ""]),
    # A user function's parameter is its argument; an if that may return something else is no name.
    ("val id = fun v -> v in let a <- gaussian(0., 1.) in (id(a), if a < 0. then a else 0.)", ["a", ""]),
    ("let a <- gaussian(0., 1.) in if true then a else a", ["a"]),
    # A trajectory: each step's x consed; its seed [0.] dropped after the reversal keeps the name,
    # the seed kept does not.
    (STEP + "let p <- beta(1., 1.) in let (xs, p) = fold(step, [1., 2.], ([0.], p)) in (List.tl(List.rev(xs)), p)",
     ["x", "p"]),
    (STEP + "let p <- beta(1., 1.) in let (xs, p) = fold(step, [1., 2.], ([0.], p)) in (List.rev(xs), p)",
     ["", "p"]),
    (STEP + "let p <- beta(1., 1.) in let (xs, _) = fold(step, [1., 2.], ([], p)) in (List.hd(xs), xs)",
     ["x", "x"]),
    ("val f = fun v -> v in let a <- gaussian(0., 1.) in List.map(f, [a, a])", ["a"]),
    # Two variables in one list: no name (and a model with no name at all says nothing).
    ("let a <- gaussian(0., 1.) in let b <- gaussian(0., 1.) in [a, b]", []),
    ("let a <- bernoulli(0.5) in (a, 2. * 3.)", ["a", ""]),
    ("()", []),
])
def test_result_names(src, expected):
    assert named(src) == expected


def test_a_fold_is_named_by_its_step():
    src = "val step = fun (y, x) -> let x1 <- gaussian(x, 1.) in x1 in fold(step, [1., 2.], 0.)"
    program = load_source(src).program
    assert names(returned(program), "f") == ["x1"]


@needs_runtime
def test_names_reach_summaries_through_a_compiled_library(tmp_path):
    src = STEP + ("let p <- beta(1., 1.) in let (xs, p) = fold(step, [1., 2., 3.], ([0.], p)) in "
                  "(List.tl(List.rev(xs)), (p, 2.))")
    path = tmp_path / "model.so"
    sirenc.compile(src, output=path)
    model = sirenc.load(path)
    assert model.info["result_names"] == ["x", "p", ""]
    f = model.filter(particles=300, seed=1).run()
    v = f.variables()
    assert set(v) == {"x", "p"} and len(v["x"]) == 3
    s = f.summary()
    assert v["p"] == s[1][0] and v["x"] == s[0]
