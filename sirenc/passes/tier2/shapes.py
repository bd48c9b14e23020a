"""A staged value's shape: its structure (which variables, families, dependencies, DS's edges) with
its numbers set apart, so that `specialize-conjugacy` can tell when a loop's accumulator takes a
shape it has seen (`Variant.accepts`), merge shapes that differ only in constants (`widen`), and
rebuild a value of a shape from run-time numbers (`instantiate`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.ir import SSAValue

from sirenc.passes.tier2.staged_inference import Engine
from sirenc.passes.tier2.staged_symbolic import RV, Expr, IdMemo, K, Node, NotSpecialisable, Num, R
from sirenc.passes.tier2.staged_values import CHAINED, SList, SPair, SymDist


@dataclass
class Shape:
    """The structure of a staged value (`key`), its numbers (`nums`, one per constant of the
    structure, in order) and its concrete leaves (`concretes`). `statics[i]` is nums[i] when
    the compiler knows it, else None."""

    key: tuple
    nums: list[Num]
    concretes: list[SSAValue]

    @property
    def statics(self) -> list[float | None]:
        return [n if isinstance(n, float) else None for n in self.nums]


def _same_float(a: float, b: float) -> bool:
    return a == b and math.copysign(1.0, a) == math.copysign(1.0, b) or (math.isnan(a) and math.isnan(b))


class Canon:
    """Walks a staged value; every random variable it reaches, through parameters, is numbered."""

    def __init__(self, engine: Engine):
        self.engine = engine
        self.nums: list[Num] = []
        self.concretes: list[SSAValue] = []
        self.rvs: dict[int, int] = {}
        self.rv_list: list[RV] = []
        self.nodes = IdMemo()

    def value(self, v) -> tuple:
        if isinstance(v, SSAValue):
            self.concretes.append(v)
            return ("C",)
        if isinstance(v, SPair):
            return ("P", self.value(v.first), self.value(v.second))
        if isinstance(v, SymDist):
            return ("D", v.family, tuple(self.expr(self.engine.b.eval(p)) for p in v.params))
        if isinstance(v, SList):
            if len(v.items) > 1 or v.records is None:
                raise NotSpecialisable("internal: a trajectory that is not normalised")
            head = self.value(v.items[0]) if v.items else None
            self.concretes.append(v.records)
            return ("L", head, v.anchor if v.anchor in (None, CHAINED) else self.expr(v.anchor))
        return ("E", self.expr(self.engine.b.eval(v)))

    def expr(self, e: Expr) -> tuple:
        if isinstance(e, K):
            self.nums.append(e.v)
            return ("K",)
        if isinstance(e, R):
            return ("R", self.rv(e.rv))
        seen = self.nodes.get(e)
        if seen is not None:
            return ("S", seen)
        key = (e.kind, *(self.expr(a) for a in e.args))
        self.nodes[e] = len(self.nodes)
        return key

    def rv(self, rv: RV) -> int:
        if rv.realized:
            raise NotSpecialisable("internal: a realized variable reached a shape")
        if rv in self.engine.retired:
            raise NotSpecialisable("a variable kept in a list of symbolic values is still used by another "
                                   "(the state would grow)")
        index = self.rvs.get(id(rv))
        if index is None:
            index = self.rvs[id(rv)] = len(self.rv_list)
            self.rv_list.append(rv)
        return index

    def rv_keys(self) -> tuple:
        """The variables' own structure; walking their parameters may number more of them."""
        keys, i = [], 0
        while i < len(self.rv_list):
            rv = self.rv_list[i]
            self.engine.eval_params(rv)
            params = tuple(self.expr(p) for p in rv.params)
            keys.append((rv.family, rv.var, rv.ann, rv.ds_state, params))
            i += 1
        # DS's edges, once every reachable variable has its number: an edge to a variable nothing
        # reaches is never followed again, but a forgotten marginal child would still be pruned.
        ds = tuple(
            (self.rvs.get(id(rv.ds_parent)) if rv.ds_parent is not None else None,
             tuple(self.rvs[id(c)] for c in rv.children if id(c) in self.rvs),
             sum(1 for c in rv.children if id(c) not in self.rvs and c.ds_state == "M"))
            for rv in self.rv_list)
        return tuple(keys), ds


def shape_of(engine: Engine, value) -> Shape:
    canon = Canon(engine)
    key = canon.value(value)
    rv_keys = canon.rv_keys()
    return Shape((key, rv_keys), canon.nums, canon.concretes)


def instantiate(key: tuple, nums: list[Num], concretes: list[SSAValue]):
    """A staged value of structure `key` holding `nums` and `concretes` (fresh variables)."""
    (value_key, (rv_keys, ds)) = key
    nums_it, conc_it = iter(nums), iter(concretes)
    rvs = [RV(family, [], var, ann, ds_state=state) for (family, var, ann, state, _) in rv_keys]
    nodes: list[Expr] = []

    def expr(k: tuple) -> Expr:
        tag = k[0]
        if tag == "K":
            return K(next(nums_it))
        if tag == "R":
            return R(rvs[k[1]])
        if tag == "S":
            return nodes[k[1]]
        node = Node(tag, *(expr(a) for a in k[1:]))
        nodes.append(node)
        return node

    def value(k: tuple):
        if k[0] == "C":
            return next(conc_it)
        if k[0] == "P":
            first = value(k[1])
            return SPair(first, value(k[2]))
        if k[0] == "D":
            return SymDist(k[1], [expr(p) for p in k[2]])
        if k[0] == "L":
            head = [value(k[1])] if k[1] is not None else []
            return SList(head, next(conc_it), k[2] if k[2] in (None, CHAINED) else expr(k[2]))
        return expr(k[1])

    out = value(value_key)
    for rv, (_, _, _, _, params) in zip(rvs, rv_keys):
        rv.params = [expr(p) for p in params]
    dead_marginal = RV("gaussian", [], "", None, ds_state="M")
    for rv, (parent, children, n_dead) in zip(rvs, ds):
        rv.ds_parent = rvs[parent] if parent is not None else None
        rv.children = [rvs[c] for c in children] + [dead_marginal] * (1 if n_dead else 0)
    return out


_APART = object()


def join_keys(a, b):
    """The shape key above both a and b, which may differ only in their trajectories' anchors
    (None, a list of constants' records so far, is below both CHAINED and a variable); None when
    there is none."""
    out = _join(a, b)
    return None if out is _APART else out


def _join(a, b):
    if a == b:
        return a
    if not (isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b)):
        return _APART
    if len(a) == 3 and a[0] == "L" and b[0] == "L":
        head = _join(a[1], b[1])
        anchor = b[2] if a[2] is None else a[2] if b[2] is None or a[2] == b[2] else _APART
        return _APART if _APART in (head, anchor) else ("L", head, anchor)
    parts = tuple(_join(x, y) for x, y in zip(a, b))
    return _APART if _APART in parts else parts


@dataclass
class Variant:
    key: tuple
    statics: list[float | None]

    def accepts(self, s: Shape) -> bool:
        return join_keys(s.key, self.key) == self.key and \
            all(w is None or (isinstance(n, float) and _same_float(w, n)) for w, n in zip(self.statics, s.nums))

    def widen(self, s: Shape) -> None:
        self.statics = [w if w is not None and isinstance(n, float) and _same_float(w, n) else None
                        for w, n in zip(self.statics, s.nums)]

    @property
    def slots(self) -> list[int]:
        return [i for i, w in enumerate(self.statics) if w is None]
