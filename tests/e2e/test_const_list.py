"""List literals of constants (issue 11: a literal of 10^5 constants compiles in seconds).

A literal whose elements are all constants is built by one runtime call from a constant array
(``smc.const_list``, ``sirenrt_list_from_words``) instead of a cons per element. Its answers are
those of the cons path: each literal here is compared with the same list written with computed
elements (``if true then x else 0.``, ``a < b``), which still conses cell by cell, and with the
values themselves.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

import sirenc

SUM = "val plus = fun (x, acc) -> x + acc in\n"
FIRSTS = "val first = fun (p, acc) -> let (x, b) = p in if b then x :: acc else acc in\n"


def run(src: str):
    return sirenc.compile(src, method="pf").filter(particles=3, seed=0).run().estimate()


def computed(x: float) -> str:
    """`x` as an expression that is not a constant, so its list conses cell by cell (irgen folds
    arithmetic on constants, `-(-x)` too)."""
    return f"(if true then {x!r} else 0.)"


@pytest.mark.parametrize("xs", [[1.0], [1.0, 2.0, 3.5], [-0.0, 1e300, -2.5e-300, 7.0], [float(i) for i in range(1000)]])
def test_a_float_literal_reads_as_its_conses(xs):
    for show in (repr, computed):
        items = ", ".join(show(x) for x in xs)
        src = SUM + f"let l = [{items}] in (List.len(l), (fold(plus, l, 0.), (List.hd(l), List.rev(l))))"
        n, (total, (head, rev)) = run(src)
        assert (n, total, head, list(rev)) == (len(xs), sum(xs), xs[0], xs[::-1]), show


def test_a_literal_of_pairs_keeps_both_words_in_order():
    pairs = [(1.5, True), (2.0, False), (-3.25, True), (4.0, True)]
    for show_x, show_b in ((repr, lambda b: str(b).lower()), (computed, lambda b: "0. < 1." if b else "1. < 0.")):
        items = ", ".join(f"({show_x(x)}, {show_b(b)})" for x, b in pairs)
        src = FIRSTS + f"let l = [{items}] in (List.len(l), (fold(first, l, []), List.hd(List.tl(l))))"
        n, (firsts, second) = run(src)
        assert n == 4 and list(firsts) == [4.0, -3.25, 1.5]
        assert second == (2.0, 0.0)   # a bool result reads as 0. / 1.


def test_a_bool_literal_and_the_empty_list():
    src = "let l = [true, false, true] in (List.len(l), (List.hd(List.tl(l)), List.len([])))"
    assert run(src) == (3.0, (0.0, 0.0))


def test_constant_rests_under_a_computed_head_and_a_cons():
    src = SUM + ("let x <- gaussian(0., 1.) in\n"
                 "let l = 5. :: [x, 1., 2.] in (List.len(l), fold(plus, List.tl(List.tl(l)), 0.))")
    assert run(src) == (4.0, 3.0)


def test_a_literal_past_the_memory_limit_is_located(tmp_path):
    prog = tmp_path / "big.si"
    items = ", ".join(f"{i}." for i in range(20000))
    prog.write_text(SUM + f"fold(plus, [{items}], 0.)\n")
    r = subprocess.run([sys.executable, "-m", "sirenc.cli", "run", str(prog), "-p", "10", "--memory-limit", "1M"],
                       capture_output=True, text=True)
    assert r.returncode == 1, r.stderr[:500]
    assert r.stderr.startswith(f"{prog}:2:12: error: this particle's lists would grow to "), r.stderr[:500]
    assert "more than a particle's share of the filter's memory limit (" in r.stderr
    r = subprocess.run([sys.executable, "-m", "sirenc.cli", "run", str(prog), "-p", "10", "-q"],
                       capture_output=True, text=True)
    assert r.returncode == 0 and f"{sum(range(20000))}." in r.stdout, r.stderr[:500]


def test_a_literal_mixing_bools_and_numbers_reads_as_its_conses():
    # The bools stand for 1. and 0. (a warning says so); the constant path stores those numbers.
    for items in ("1.5, true, false, -2.", f"{computed(1.5)}, true, false, -2."):
        src = SUM + f"let l = [{items}] in (List.len(l), (fold(plus, l, 0.), List.rev(l)))"
        n, (total, rev) = run(src)
        assert (n, total, list(rev)) == (4.0, 0.5, [-2.0, 0.0, 1.0, 1.5]), items


def test_a_literal_of_pairs_with_units_reads_as_its_conses():
    for show in (repr, computed):
        items = ", ".join(f"(({show(x)}, ()), ())" for x in (1.0, -2.5, 4.0))
        src = ("val firsts = fun (p, acc) -> let ((x, u), v) = p in x :: acc in\n"
               f"let l = [{items}] in (List.len(l), fold(firsts, l, []))")
        n, firsts = run(src)
        assert n == 3 and list(firsts) == [4.0, -2.5, 1.0], show


def test_which_literals_take_the_constant_path():
    from sirenc import driver

    def const_lists(src):
        c = driver.open_source(src, "pf", snapshots=False)
        return sum(op.name == "smc.const_list" for op in driver.run_until(c, "smc").walk())

    assert const_lists("List.len([1., true])") == 1
    assert const_lists("List.len([(1., ()), (2., ())])") == 1
    assert const_lists("List.len([(), ()])") == 0   # units only: no words to count them by
    assert const_lists(f"List.len([true, {computed(1.)}])") == 0   # the computed last element: no constant rest
    # a literal of literals is one op, its inner literals read with it
    assert const_lists("List.len([[1., 2.], [], [(3.)]])") == 1
    assert const_lists("List.len([(1., [[true], []]), (2., [])])") == 1
    assert const_lists("List.len([[(), ()], []])") == 1   # the nested form counts the units
    assert const_lists(f"List.len([[1.], [{computed(2.)}]])") == 1   # only the first inner literal folds


# Lists of lists, as literals and the same elements computed (consed cell by cell): the answers agree.
NESTED = [
    "[[1., 2.], [], [3.]]",
    "[(1., [true, false]), (2., []), (-0., [true])]",
    "[[[1.], []], [[2., 3.], [4.]], []]",
    "[([(), ()], 1.), ([], 2.)]",
]


def _computing(literal: str) -> str:
    """`literal` with every float computed and every bool compared, so that nothing folds."""
    import re

    bools = literal.replace("true", "(0. < 1.)").replace("false", "(1. < 0.)")
    return re.sub(r"(?<![\w.])(-?\d+\.\d*)", lambda m: computed(float(m.group(1))), bools)


@pytest.mark.parametrize("literal", NESTED)
def test_a_literal_of_lists_reads_as_its_conses(literal):
    shapes = {
        NESTED[0]: ("List.len(List.hd(List.tl(List.tl(l))))", "List.hd(List.tl(List.hd(l)))"),
        NESTED[1]: ("let (x, b) = List.hd(List.tl(List.tl(l))) in x", "List.len(let (x, b) = List.hd(l) in b)"),
        NESTED[2]: ("List.len(List.hd(List.hd(List.tl(l))))", "List.hd(List.hd(List.tl(List.hd(List.tl(l)))))"),
        NESTED[3]: ("List.len(let (u, x) = List.hd(l) in u)", "let (u, x) = List.hd(List.tl(l)) in x"),
    }
    first, second = shapes[literal]
    answers = []
    for text in (literal, _computing(literal)):
        answers.append(run(f"let l = {text} in (List.len(l), ({first}, {second}))"))
    assert answers[0] == answers[1]
    assert answers[0][0] == len(eval(literal.replace("true", "True").replace("false", "False").replace("()", "None")))


def test_a_literal_of_10000_lists_compiles_and_reads():
    items = ", ".join(f"[{i}., {i + 1}.]" for i in range(10000))
    sums = "val plus = fun (x, acc) -> x + acc in val add = fun (l, acc) -> fold(plus, l, acc) in\n"
    assert run(sums + f"let l = [{items}] in (List.len(l), fold(add, l, 0.))") == (10000.0, float(sum(2 * i + 1 for i in range(10000))))
