"""Language constructs end to end, on deterministic programs whose exact value is
known: every particle computes the same thing, so the estimate is that value."""

from __future__ import annotations

import numpy as np
import pytest

import sirenc
from markers import needs_runtime

pytestmark = needs_runtime


def value(source: str):
    f = sirenc.compile(source, method="pf").filter(particles=3, seed=0)
    f.run()
    return f.estimate()


def test_structural_equality_of_lists_and_pairs():
    source = """
    let a = [1., 2., 3.] in
    let c = [1., 2.] in
    let d = [(1., [true]), (2., [])] in
    let f = [(1., [true]), (2., [false])] in
    (a = cons(1., [2., 3.]), (a = c, (c = a, (d = [(1., [true]), (2., [])], (d = f, ([] = tl([1.]), (c = [], (1., 2.) = (1., 2.))))))))
    """.replace("tl(", "List.tl(")
    assert value(source) == (1.0, (0.0, (0.0, (1.0, (0.0, (1.0, (0.0, 1.0)))))))


def test_list_library():
    source = """
    val sq = fun x -> x * x in
    val add = fun (x, acc) -> acc + x in
    let l = List.range(1., 5.) in
    (List.map(sq, l), (List.rev(l), (List.len(l), (List.hd(List.tl(l)), fold(add, l, 0.)))))
    """
    squares, (rev, (n, (second, total))) = value(source)
    assert squares.tolist() == [1.0, 4.0, 9.0, 16.0]
    assert rev.tolist() == [4.0, 3.0, 2.0, 1.0]
    assert (n, second, total) == (4.0, 2.0, 10.0)


def test_patterns_unary_minus_and_conditionals():
    source = """
    val swap = fun ((a, b), c) -> (c, (b, a)) in
    let (x, (y, z)) = swap((1., 2.), 3.) in
    let w = if x < y then -x else - (y - z) in
    (x, y, z, w, -1. * -2., 2. - -1.)
    """
    assert value(source) == (3.0, (2.0, (1.0, (-1.0, (2.0, 3.0)))))


def test_lists_of_pairs_of_lists():
    source = """
    val grow = fun (k, acc) -> cons((k, List.range(0., k)), acc) in
    fold(grow, [1., 2., 3.], [])
    """
    result = value(source)
    assert [k for k, _ in result] == [3.0, 2.0, 1.0]
    assert [r.tolist() for _, r in result] == [[0.0, 1.0, 2.0], [0.0, 1.0], [0.0]]


def test_unit_and_bool_results():
    assert value("()") is None
    assert value("(1. < 2., ())") == (1.0, None)


def test_bool_estimates_are_probabilities():
    f = sirenc.compile("let b <- bernoulli(0.25) in b", method="pf").filter(particles=40_000, seed=2)
    f.run()
    assert abs(f.estimate() - 0.25) < 4 * np.sqrt(0.25 * 0.75 / 40_000)


def test_lists_of_different_lengths_are_estimated_per_index():
    # Half the particles return [1], half [1, 3]: index 1 averages only those that have it.
    source = "let b <- bernoulli(0.5) in if b then [1.] else [1., 3.]"
    f = sirenc.compile(source, method="pf").filter(particles=1000, seed=0)
    f.run()
    assert f.estimate().tolist() == [1.0, 3.0]


@pytest.mark.parametrize("source, message", [
    ("List.hd([])", "List.hd of an empty list"),
    ("let l = List.range(0., 3.) in List.hd(List.tl(List.tl(List.tl(l))))", "List.hd of an empty list"),
])
def test_list_errors_at_run_time(source, message):
    with pytest.raises(sirenc.SirenRuntimeError, match=message):
        value(source)


def test_infinite_results_are_the_ieee_answer():
    # The estimator averages offsets from one particle's value; with an infinite value that
    # offset would be inf - inf. The answer is what the arithmetic gives.
    assert value("1. / 0.") == np.inf
    assert value("-1. / 0.") == -np.inf
    assert value("(1. / 0., (2., -1. / 0.))") == (np.inf, (2.0, -np.inf))
    # Particles that disagree between +inf and -inf: their mean is NaN, as in IEEE arithmetic.
    f = sirenc.compile("let b <- bernoulli(0.5) in if b then 1. / 0. else -1. / 0.", method="pf")
    run = f.filter(particles=200, seed=1)
    run.run()
    assert np.isnan(run.estimate())


def test_range_past_two_to_the_53_ends():
    # Above 2^53 adding 1.0 is lost to rounding; the range is counted, not stepped.
    big = 2.0 ** 53
    values = value(f"List.range({big!r}, {big + 4!r})")
    assert values.tolist() == [big + float(i) for i in range(4)]  # rounded as the arithmetic rounds
