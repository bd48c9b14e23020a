"""The conjugate pairs (`sirenc.conjugate_pairs`) swapped on compile-time structure, for tier 2's engine.

A requirement becomes a test on staged expressions; a formula (a pair's `staged` form where it has
one) is evaluated with the engine's `Builder`, whose smart constructors emit the arithmetic of
operands known only at run time. A requirement that needs the value of such an operand cannot be
decided here: the program stays on tier 1, unless another requirement fails anyway.
"""

from __future__ import annotations

from sirenc import conjugate_pairs as P
from sirenc.passes.tier2.staged_symbolic import RV, K, Node, NotSpecialisable, R, name_of, occurs


class _Algebra:
    def __init__(self, b):
        self.add, self.sub, self.mul, self.div, self.ite = b.add, b.sub, b.mul, b.div, b.ite

    const = staticmethod(K)


def _meets(engine, req, v: dict, variables: dict[str, RV], undecided: list[str]) -> bool:
    t = type(req)
    if t is P.Free:
        return not occurs(v[req.expr], variables[req.on])
    if t is P.Mentions:
        return occurs(v[req.expr], variables[req.on])
    if t is P.Is:
        e = v[req.expr]
        return isinstance(e, R) and e.rv is variables[req.var]
    if t is P.Constant:
        e = v[req.expr]
        if not isinstance(e, K):
            return False
        if req.integral and not e.static:
            undecided.append(f"on whether its {req.expr} is an integer")
            return True
        return not req.integral or P.near_int(e.v)
    if t is P.Precision:
        e = v[req.expr]
        if not (isinstance(e, Node) and e.kind == "div"):
            return False
        one, tau = e.args
        if not (isinstance(one, K) and isinstance(tau, R) and tau.rv is variables[req.var]):
            return False
        if not one.static:
            undecided.append(f"on whether its child's {req.expr} is 1/{name_of(tau.rv)}")
            return True
        return one.v == 1.0
    if t is P.Affine:
        ab = engine.affine(v[req.expr], variables[req.var])
        if ab is not None:
            v["a"], v["b"] = ab
        return ab is not None
    raise AssertionError(f"tier 2 has no test for {req}")


def swap(engine, q: RV, c: RV, apply: bool) -> bool:
    """Swap parent q with child c by the first pair whose requirements hold; False if none does."""
    method = engine.method.name
    pairs = P.pairs_for("tier2", q.family, c.family, method)
    if not pairs:
        absent = P.absent_from("tier2", q.family, c.family, method)
        if absent is not None:
            raise NotSpecialisable(f"{absent.absent['tier2']} ({absent.name}: {name_of(c)} given {name_of(q)})")
        return False
    for pair in pairs:
        variables = {"parent": q, "child": c}
        v = dict(zip(pair.parent[1], q.params)) | dict(zip(pair.child[1], c.params))
        undecided: list[str] = []
        if not all(_meets(engine, req, v, variables, undecided) for req in pair.requires):
            continue
        if undecided:
            raise NotSpecialisable(f"whether {name_of(q)} and its {c.family} child are a {pair.name} pair depends "
                                   f"{undecided[0]}, a number known only at run time")
        if apply:
            engine.touch(q, c)
            v["x"] = R(c)
            update = (pair.staged or pair.update)(_Algebra(engine.b), P.Operands(v))
            assert not update.side, pair.name
            (c.family, c.params), (q.family, q.params) = ((f, list(ps)) for f, ps in (update.marginal, update.posterior))
        return True
    return False
