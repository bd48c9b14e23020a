"""Abstract expressions, simplification (ARCHITECTURE.md §6.3) and joins/widening (ARCHITECTURE.md §17.4)."""

from __future__ import annotations

import pytest

from sirenc.passes.plan_analysis import domain as D
from sirenc.passes.plan_analysis.base import Shared, Violation
from sirenc.passes.plan_analysis.domain import RV, TOP, UNK, UNKC, Const, Dist, Lst, Pair, UnkE
from sirenc.passes.plan_analysis.ssi import SSIState

x, y, z = RV("rv1"), RV("rv2"), RV("rv3")
c = Const


def test_add_rules_in_order():
    assert D.add(c(1.0), c(2.0)) == c(3.0)
    assert D.add(c(1.0), D.Add(c(2.0), x)) == D.Add(c(3.0), x)          # rule 2
    assert D.add(c(1.0), D.Add(x, c(2.0))) == D.Add(c(3.0), x)          # rule 3
    assert D.add(D.Add(c(1.0), x), y) == D.Add(c(1.0), D.Add(x, y))     # rule 4
    assert D.add(c(0.0), x) == x and D.add(x, c(0.0)) == x              # rules 5, 6
    assert D.add(x, c(1.0)) == D.Add(x, c(1.0))                         # no reordering


def test_mul_rules_in_order():
    assert D.mul(c(2.0), D.Mul(c(3.0), x)) == D.Mul(c(6.0), x)
    assert D.mul(c(2.0), D.Add(c(1.0), x)) == D.Add(c(2.0), D.Mul(c(2.0), x))
    assert D.mul(x, c(0.0)) == c(0.0)
    assert D.mul(x, c(2.0)) == D.Mul(x, c(2.0))  # no rule moves a constant left
    assert D.div(x, c(1.0)) == x


def test_unknown_constant_absorbs_arithmetic():
    assert D.add(UNKC, c(1.0)) == UNKC
    assert D.mul(c(2.0), D.Mul(UNKC, x)) == D.Mul(UNKC, x)
    assert D.lt(UNKC, c(1.0)) == UNKC
    assert D.div(c(1.0), c(0.0)).v == float("inf")  # IEEE, never an exception


def test_nodes_are_shared_and_rvs_ordered():
    e = D.Add(D.Mul(x, y), D.Mul(x, z))
    assert D.Add(D.Mul(x, y), D.Mul(x, z)) is e
    assert e.rvs() == (x, y, z)
    assert D.subst(e, x, c(2.0)) == D.Add(D.Mul(c(2.0), y), D.Mul(c(2.0), z))
    assert D.rename(UnkE([x, y]), x, z) == UnkE([z, y])


def test_bounded_keeps_dependencies():
    e = x
    for _ in range(14):
        e = D.Add(e, e)  # a DAG whose tree doubles every step
    assert D.bounded(e) == UnkE([x])
    assert D.bounded(D.Add(x, y)) == D.Add(x, y)


def _state(max_rvs: int = 4) -> SSIState:
    s = SSIState(Shared(max_rvs=max_rvs))
    for rv in (x, y, z):
        s.counter += 1
        s.add_entry(rv, Dist("gaussian", (c(0.0), c(1.0))), None, None)
    return s


def test_join_of_values():
    s = _state()
    other = s.copy()
    assert s.join_expr(c(1.0), c(1.0), other) == c(1.0)
    assert s.join_expr(c(1.0), c(2.0), other) == UNKC
    assert s.join_expr(c(1.0), x, other) == x
    assert s.join_expr(x, y, other) == UnkE([x, y])
    assert s.join_expr(D.Add(x, c(1.0)), D.Add(y, c(1.0)), other) == D.Add(UnkE([x, y]), c(1.0))
    assert s.join_expr(Pair(x, c(1.0)), UNKC, other) == Pair(x, UNKC)
    # lists: common prefix elementwise, the longer tail summarised
    assert s.join_expr(Lst(c(0.0)), Lst(x, c(0.0)), other) == Lst(x, UnkE())
    assert s.join_expr(Lst(), Lst(x), other) == Lst(x)


def test_widening_makes_parents_dynamic():
    s = _state(max_rvs=2)
    other = s.copy()
    assert s.join_expr(UnkE([x, y]), z, other) == TOP
    s2 = SSIState(Shared(max_rvs=1))
    s2.add_entry(x, Dist("gaussian", (c(0.0), c(1.0))), "a", "symbolic")
    s2.add_entry(y, Dist("gaussian", (c(0.0), c(1.0))), "b", None)
    with pytest.raises(Violation) as err:
        s2.join_expr(x, y, s2.copy())
    assert err.value.kind == "dynamic" and err.value.names == ["a"]


def test_unify_renames_the_second_side():
    s = _state()
    other = s.copy()
    other.entries[y].distr = Dist("gaussian", (c(5.0), c(1.0)))
    e1, e2 = s.unify(D.Add(x, c(1.0)), D.Add(y, c(1.0)), other)
    assert e1 == e2 == D.Add(x, c(1.0))
    # y's entry of the second state now lives under x's name
    assert other.distr(x) == Dist("gaussian", (c(5.0), c(1.0)))


def test_sampling_a_symbolic_variable_is_a_violation():
    s = SSIState(Shared())
    rv = s.assume("theta", "symbolic", Dist("beta", (c(1.0), c(1.0))))
    with pytest.raises(Violation) as err:
        s.value(rv)
    assert err.value.kind == "sampled" and err.value.names == ["theta"]


def test_eval_substitutes_point_masses():
    s = SSIState(Shared())
    a = s.assume("a", None, Dist("gaussian", (c(0.0), c(1.0))))
    s.value(a)
    assert s.eval(D.Add(a, c(1.0))) == UNKC
    assert UNKC.v is UNK
