"""@main's result on tier 2: every symbolic part replaced by its per-particle posterior mean
(ARCHITECTURE.md §10.4), and where the result may be symbolic its posterior atoms beside it, which
summaries read as they read tier 1's (sirenrt_filter_posterior).

A part of the specializer (`specialize_conjugacy._Specializer`), kept apart because it runs once,
at the end, and reads the staged state rather than the program.
"""

from __future__ import annotations

from xdsl.dialects.builtin import f64, i1
from xdsl.ir import Attribute, Block, SSAValue

from sirenc.distributions import family
from sirenc.ir import siren
from sirenc.ir.siren import is_sym
from sirenc.passes.tier2.staged_symbolic import K, Expr, NotSpecialisable, Num, is_static, rvs_of
from sirenc.passes.tier2.staged_values import SList, SPair, SymDist


# Posterior atom kinds beside the family ids (sirenrt.h's SIRENRT_ATOM_POINT and SIRENRT_ATOM_MEAN).
ATOM_POINT, ATOM_MEAN = -1.0, -2.0

ATOM = siren.PairType(f64, siren.PairType(f64, siren.PairType(f64, siren.PairType(f64, siren.PairType(
    f64, siren.PairType(f64, f64))))))


def atoms_type(t: Attribute) -> Attribute:
    """The type of a value's posterior atoms: each number (or bool) an ATOM."""
    if t == f64 or t == i1 or is_sym(t):
        return ATOM
    if isinstance(t, siren.PairType):
        return siren.PairType(atoms_type(t.first), atoms_type(t.second))
    if isinstance(t, siren.ListType):
        return siren.ListType(atoms_type(t.element))
    return t   # unit


class Posterior:
    """The specializer's result and its atoms."""

    def result(self, value) -> SSAValue:
        """@main's result: every symbolic part replaced by its mean (ARCHITECTURE.md §10.4); where the result
        may be symbolic, paired with its posterior atoms, which summaries read: an `ATOM` for each
        number, a list of variances for a trajectory (`trajectory`)."""
        if not self.posterior:
            return self._with_atoms(value, atoms=False)[0]
        user, atoms = self._with_atoms(value, atoms=True)
        return self.emit.add(siren.PairOp(user, atoms)).result

    def _with_atoms(self, value, atoms: bool) -> tuple[SSAValue, SSAValue | None]:
        if isinstance(value, SSAValue):
            return value, self._points(value) if atoms else None
        if isinstance(value, SPair):
            (u1, a1), (u2, a2) = self._with_atoms(value.first, atoms), self._with_atoms(value.second, atoms)
            pair = self.emit.add(siren.PairOp(u1, u2)).result
            return pair, self.emit.add(siren.PairOp(a1, a2)).result if atoms else None
        if isinstance(value, SymDist):
            raise NotSpecialisable("the result is a distribution")
        if isinstance(value, SList):
            return self.trajectory(value, atoms)
        mean = self.engine.mean(value)
        return self.emit.num(mean), self._atom(value, mean) if atoms else None

    def _atom_of(self, mean, kind: float, params=(0.0, 0.0, 0.0), scale=0.0, shift=None) -> SSAValue:
        """A posterior atom: (mean, kind, p0, p1, p2, scale, shift), right-nested pairs of numbers."""
        nums = [mean, kind, *params, scale, mean if shift is None else shift]
        out = self.emit.num(nums[-1])
        for x in reversed(nums[:-1]):
            out = self.emit.add(siren.PairOp(self.emit.num(x), out)).result
        return out

    def _atom(self, e: Expr, mean: Num) -> SSAValue:
        """The atom of symbolic leaf `e` whose mean is `mean` (sirenrt_filter_posterior): exact where
        e is an affine function of one variable, its mean alone otherwise (tier 1's rt_sym_atom)."""
        e = self.engine.b.eval(e)
        if isinstance(e, K):
            return self._points(self.emit.num(mean))
        rvs = list({id(r): r for r in rvs_of(e)}.values())
        ab = self.engine.affine(e, rvs[0]) if len(rvs) == 1 else None
        if ab is None or not all(isinstance(x, K) for x in ab):
            return self._atom_of(mean, ATOM_MEAN)
        rv = rvs[0]
        if rv.family in ("delta", "categorical"):
            return self._atom_of(mean, ATOM_MEAN)
        self.engine.marginalize(rv)
        if rv.realized or is_static(ab[0], 0.0):
            return self._atom_of(mean, ATOM_POINT)
        params = [p.v for p in rv.params] + [0.0] * (3 - len(rv.params))
        return self._atom_of(mean, float(family(rv.family).id), params, ab[0].v, ab[1].v)

    def _points(self, v: SSAValue) -> SSAValue:
        """The atoms of a concrete value: each number a point; but a value computed from a
        trajectory's means (a list operation took them) is known by its mean alone."""
        if v in self.shadow:
            return self.shadow[v]
        t, emit = v.type, self.emit
        kind = ATOM_MEAN if self.collapsed else ATOM_POINT
        if t == f64:
            return self._atom_of(v, kind)
        if t == i1:
            return self._atom_of(emit.add(siren.BoolToFloatOp(v)).result, kind)
        if isinstance(t, siren.PairType):
            first = self._points(emit.add(siren.FstOp(v)).result)
            return emit.add(siren.PairOp(first, self._points(emit.add(siren.SndOp(v)).result))).result
        if isinstance(t, siren.ListType):
            return self._map_atoms(v, self._points)
        return v   # unit

    def _map_atoms(self, lst: SSAValue, atom_of) -> SSAValue:
        """[atom_of(x) for x in lst], by a fold and a reversal."""
        emit = self.emit
        out_type = siren.ListType(atoms_type(lst.type.element))
        body = Block(arg_types=[lst.type.element, out_type])
        saved, emit.block = emit.block, body
        emit.add(siren.YieldOp(emit.add(siren.ConsOp(atom_of(body.args[0]), body.args[1])).result))
        emit.block = saved
        init = emit.add(siren.NilOp(out_type)).result
        folded = emit.add(siren.FoldOp(lst, init, body)).result
        return emit.add(siren.RevOp(folded)).result
