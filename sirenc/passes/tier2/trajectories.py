"""Lists of symbolic values (trajectories, ``x :: xs``) on tier 2.

An element that is no longer the head is kept as a record of numbers in a concrete list (its mean
as an affine function of the next element's, with its variance given it where the result carries
atoms), and the means are computed at the end by one backward pass over the records: the
smoothing that tier 1's final marginalisation performs swap by swap.

Where every element is drawn or constant by the time it is recorded (noise's `x :: xs` with `x`
sampled), the record is the element's value alone (a point record): the list is then the list
of numbers the particle filter keeps, a step costs one one-word cell instead of a three-word
record, and the means need no backward pass. The specializer tries point records first and
starts again with affine ones at the first element that needs them (`PointRecordsRefused`).
Against affine records of drawn elements, ns per particle-step at N = 10^4, alternated: noise
under ssi 172-209 -> 121-127, under ds 184-188 -> 121, outlier under ssi 156-170 -> 98-103.

A part of the specializer (`specialize_conjugacy._Specializer`): its list op handlers and the
records they keep.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.dialects.builtin import f64
from xdsl.ir import Attribute, Block, SSAValue

from sirenc.distributions import family
from sirenc.ir import siren
from sirenc.ir.siren import is_sym
from sirenc.passes.tier2.posterior import ATOM_POINT
from sirenc.passes.tier2.staged_symbolic import R, Emitter, Expr, K, NotSpecialisable, Num, rvs_of
from sirenc.passes.tier2.staged_values import CHAINED, SList, SPair


RECORD = siren.PairType(f64, f64)
POINT_RECORD = f64
POSTERIOR_RECORD = siren.PairType(f64, RECORD)
_GROWS = "a list of symbolic values whose older elements depend on more than the next one (the state would grow)"


class PointRecordsRefused(Exception):
    """A trajectory element is not drawn or constant: the specializer needs affine records."""


@dataclass(frozen=True)
class _Arith:
    """A number being emitted, with + and * (the backward pass's steps read as formulas)."""

    emit: Emitter
    value: SSAValue

    def __add__(self, other: "_Arith") -> "_Arith":
        return _Arith(self.emit, self.emit.arith(siren.AddOp, self.value, other.value))

    def __mul__(self, other: "_Arith") -> "_Arith":
        return _Arith(self.emit, self.emit.arith(siren.MulOp, self.value, other.value))


class Trajectories:
    """The specializer's handlers of lists of symbolic values, and their records."""

    def nil(self, op: siren.NilOp) -> None:
        self.staged[op.result] = SList([], None)

    def cons(self, op: siren.ConsOp) -> None:
        tail = self.get(op.tail)
        if not isinstance(tail, SList):
            raise NotSpecialisable("internal: a symbolic list that is not a trajectory", op)
        self.staged[op.result] = SList([self.get(op.head), *tail.items], tail.records, tail.anchor)

    def list_op(self, op) -> None:
        value = self.get(op.operand)
        if isinstance(value, SList) and isinstance(op, siren.HdOp | siren.TlOp) and \
                len(value.items) > (0 if isinstance(op, siren.HdOp) else 1):
            self._bind(op.result, value.items[0] if isinstance(op, siren.HdOp) else
                       SList(value.items[1:], value.records, value.anchor))
            return
        atoms = self.shadow.get(value) if isinstance(value, SSAValue) else None
        if isinstance(value, SList):
            reverse = isinstance(op, siren.RevOp)
            value, atoms = self.trajectory(value, self.posterior and not isinstance(op, siren.LenOp), reverse)
            self.collapsed = True
            if reverse:   # the means and their atoms built reversed: the reversal is theirs
                if atoms is not None:
                    self.shadow[value] = atoms
                self._bind(op.result, K(value) if is_sym(op.result.type) else value)
                return
        new = type(op)(value)
        if op.site is not None:
            new.site = op.site
        result = self.emit.add(new).result
        if isinstance(op, siren.LenOp) and self.posterior:   # a length is a point, whatever its elements
            self.shadow[result] = self._atom_of(result, ATOM_POINT)
        elif atoms is not None:
            shadow = self.emit.add(type(op)(atoms)).result
            # A trajectory's atoms are its elements' variances: an element alone gets a whole atom.
            self.shadow[result] = self._atom_of(result, float(family("gaussian").id), (result, shadow, 0.0), 1.0, 0.0) \
                if isinstance(op, siren.HdOp) else shadow
        self._bind(op.result, K(result) if is_sym(op.result.type) else result)

    def normalize(self, value):
        """`value` with every trajectory in its loop form: one element, then the records."""
        if isinstance(value, SPair):
            return SPair(self.normalize(value.first), self.normalize(value.second))
        if not isinstance(value, SList):
            return value
        records = value.records
        if records is None:
            records = self.emit.add(siren.NilOp(siren.ListType(self._record_type()))).result
        if not value.items:
            return SList([], records, value.anchor)
        anchor = value.anchor
        for k in reversed(range(1, len(value.items))):
            (a, b, c), anchor = self._record(value.items[k], value.items[k - 1], anchor)
            a, b, c = (self.emit.num(x) for x in (a, b, c))
            if self.point_records:
                record = b
            else:
                record = self.emit.add(siren.PairOp(a, self.emit.add(siren.PairOp(b, c)).result
                                                    if self._records_carry_variance() else b)).result
            records = self.emit.add(siren.ConsOp(record, records)).result
        return SList(value.items[:1], records, anchor)

    def _records_carry_variance(self) -> bool:
        # DS's final expectation draws each element given the one after it (`_ds_backward`).
        return self.trajectory_atoms or self.engine.method.grafts

    def _record_type(self) -> Attribute:
        if self.point_records:
            return POINT_RECORD
        return POSTERIOR_RECORD if self._records_carry_variance() else RECORD

    def _record(self, item: Expr, after: Expr, anchor) -> tuple[tuple[Num, Num, Num], object]:
        """(a, b, c) and the list's anchor (staged_values.SList): the mean of `item` is a * (the mean
        of `after`) + b, for good, and its variance given `after` is c; or, where `item` is instead
        a Gaussian conditional of one variable the loop keeps (the list's anchor, one for all its
        records: gtree's leaves of their root), of that variable."""
        b = self.engine.b
        item, after = b.eval(item), b.eval(after)
        if isinstance(item, K):
            # Under DS, a drawn element after a symbolic one splits DS's chain of marginals in two.
            self.ds_chain_broken |= self.engine.method.grafts and anchor is CHAINED
            return (0.0, item.v, 0.0), anchor
        if self.point_records:
            raise PointRecordsRefused()
        if not isinstance(item, R) or item.rv.family != "gaussian":
            raise NotSpecialisable("a list of symbolic values whose older elements are not Gaussian "
                                   "conditionals of the next one")
        rv = item.rv
        if self.engine.method.grafts and any(c.ds_state == "I" for c in rv.children):
            # The loop keeps the child, not the element: it would lose the parent its graft needs.
            raise NotSpecialisable(f"a list of symbolic values under {self.engine.method.name} whose element is kept "
                                   "while a variable that depends on it is not yet marginalized")
        self.engine.eval_params(rv)
        ab = None
        if anchor in (None, CHAINED):
            if isinstance(after, R):
                self._reverse_edge(rv, after.rv)
            ab = self.engine.affine(rv.params[0], after.rv) if isinstance(after, R) else (K(0.0), rv.params[0])
        mu = rv.params[0]
        if self.engine.method.grafts:
            # DS's final expectation prunes the chain of marginal children: each element must be its
            # next one's parent there.
            self.ds_chain_broken |= not (isinstance(after, R) and after.rv.ds_state == "M" and
                                         any(c is after.rv for c in rv.children))
        if ab is not None and all(isinstance(x, K) for x in ab):
            anchor = CHAINED
        elif anchor is CHAINED:
            raise NotSpecialisable(_GROWS)
        else:
            ab, anchor = self._anchored(mu, anchor)
        if not isinstance(rv.params[1], K):
            raise NotSpecialisable("a list of symbolic values whose older elements have a symbolic variance")
        self.engine.retired[rv] = True
        return (ab[0].v, ab[1].v, rv.params[1].v), anchor

    def _reverse_edge(self, rv, after) -> None:
        """Where the element after `rv` is still its child (a draw that needed `rv` as a root hoisted it
        back after the newer element was observed: runner's position, forced by the altitude's
        observation after the velocity's), the swap the next step's hoist would make, made now: the
        newer element a root and `rv` its conditional, which a record keeps."""
        engine = self.engine
        engine.eval_params(after)
        if not any(r is rv for r in engine.parents(after)) or not engine.const_params(rv):
            return
        if engine.would_cycle(rv, after) or not engine.swap(rv, after):
            return
        engine.eval_params(rv)

    def _anchored(self, mu: Expr, anchor) -> tuple[tuple[K, K], R]:
        """mu as a * x + b with constant a and b, x the list's anchor (or, while it has none, the one
        variable mu mentions), and the anchor."""
        rvs = list({id(r): r for r in rvs_of(mu)}.values())
        x = anchor.rv if isinstance(anchor, R) else rvs[0] if len(rvs) == 1 else None
        ab = self.engine.affine(mu, x) if x is not None and len(rvs) == 1 and rvs[0] is x else None
        if ab is None or not all(isinstance(v, K) for v in ab) or x.realized or x in self.engine.retired:
            raise NotSpecialisable(_GROWS)
        return ab, R(x)

    def trajectory(self, value: SList, atoms: bool, reverse: bool = False) -> tuple[SSAValue, SSAValue | None]:
        """The per-particle means of a trajectory's elements, as a list of numbers (ARCHITECTURE.md §10.4), and
        with `atoms` their posterior atoms: the elements' variances alone, a list of numbers beside
        the means (sirenrt_model.frame_result_type's compact atom), which the backward pass over the
        records gives as it gives the means (the smoother's); NaN for an element that is not
        Gaussian (known by its mean alone), and for every one older than it.  With `reverse`, both
        lists reversed (`List.rev` of the trajectory, as results return it): the backward pass conses
        them in that order, so neither is reversed, which for the walk's `List.tl(List.rev(xs))`
        made three lists of T cells per list where one is kept."""
        if self.engine.method.grafts and not self.point_records and value.records is not None:
            return self._ds_trajectory(value, atoms, reverse)
        self.engine.finished = True
        anchor_mean = anchor_variance = None
        if isinstance(value.anchor, R):   # first: taking an element's mean makes the anchor its conditional again
            anchor_mean = self.emit.num(self.engine.mean(value.anchor))
            v = self._variance(value.anchor)
            anchor_variance = self.emit.num(math.nan if v is None else v)
        means = [self.engine.mean(item) for item in value.items]
        explicit = [self.emit.num(m) for m in means]
        if self.point_records and not reverse:   # a point record is its element's mean
            out = self._prepend(value.records, explicit)
        else:
            step = (lambda a, b, c, prev: b) if self.point_records else (lambda a, b, c, prev: (a * prev) + b)
            out = self._backward(value.records, explicit, step, reverse, anchor_mean)
        if not atoms:
            return out, None
        variances = [self._variance(item) for item in value.items]
        known = [self.emit.num(math.nan if v is None else v) for v in variances]
        return out, self._backward(value.records, known, lambda a, b, c, prev: (a * a * prev) + c, reverse,
                                   anchor_variance)

    def _ds_trajectory(self, value: SList, atoms: bool, reverse: bool) -> tuple[SSAValue, SSAValue | None]:
        """DS's final expectation of a chain (ARCHITECTURE.md §13.3-13.4): taking the oldest element's mean
        prunes its chain of marginal children, which draws the newest element from its marginal,
        then each older one given the one after it, down to the second; the oldest is the mean
        given the second. The same draws as tier 1's, in its order: the result visits the reversed
        list oldest first."""
        head = self.engine.b.eval(value.items[0]) if len(value.items) == 1 else None
        if not reverse or value.anchor not in (None, CHAINED) or self.ds_chain_broken or head is None or \
                not (isinstance(head, K) or (isinstance(head, R) and head.rv.ds_state == "M")):
            raise NotSpecialisable(f"the older elements of a list of symbolic values under {self.engine.method.name}, "
                                   "whose final expectation draws them (grafting each one prunes the next), other "
                                   "than as the reversed chain of marginals it draws from the newest")
        var = head.rv.var if isinstance(head, R) else ""
        # The newest element is drawn only if an older one is symbolic (else it is the oldest, and its
        # mean is taken): it starts the fold pending, with its marginal.
        mean, variance = self.engine.mean(head), self._variance(head)
        if variance is None:
            raise NotSpecialisable(f"a list of symbolic values under {self.engine.method.name} whose newest element "
                                   "is not a Gaussian")
        self.engine.finished = True
        means, variances = self._ds_backward(value.records, mean, variance, var)
        return means, (variances if atoms else None)

    def _ds_backward(self, records: SSAValue, mean: Num, variance: Num, var: str) -> tuple[SSAValue, SSAValue]:
        """The means and variances, oldest first, of the newest element (its marginal `mean` and
        `variance`; variance 0 for a number) and then each record's, newest first: an element that
        is not the oldest symbolic one is drawn (given the one after it), which is known only at the
        next record (a constant's, or none, makes it the oldest): the fold carries it as pending,
        (mean, variance), variance 0 for none."""
        emit = self.emit
        lists = siren.ListType(f64)

        def op(cls, *args):
            return emit.add(cls(*args)).result

        def branch(cond: SSAValue, result_type, then, other):
            blocks = []
            for make in (then, other):
                block = Block()
                saved, emit.block = emit.block, block
                emit.add(siren.YieldOp(make()))
                emit.block = saved
                blocks.append(block)
            return op(siren.IfOp, cond, result_type, *blocks)

        def unpack(v: SSAValue) -> list[SSAValue]:
            """(prev, pending mean, pending variance, means, variances) of the fold's state."""
            parts = []
            for _ in range(4):
                parts.append(op(siren.FstOp, v))
                v = op(siren.SndOp, v)
            return [*parts, v]

        zero = emit.const(0.0)

        def state(prev, pm, pc, ms, vs) -> SSAValue:
            return op(siren.PairOp, prev, op(siren.PairOp, pm, op(siren.PairOp, pc, op(siren.PairOp, ms, vs))))

        ms, vs = op(siren.NilOp, lists), op(siren.NilOp, lists)
        if isinstance(variance, float) and variance == 0.0:    # a number: not pending, in the lists now
            ms, vs = op(siren.ConsOp, emit.num(mean), ms), op(siren.ConsOp, zero, vs)
        init = state(emit.num(mean), emit.num(mean), emit.num(variance), ms, vs)
        body = Block(arg_types=[POSTERIOR_RECORD, init.type])
        saved, emit.block = emit.block, body
        record, acc = body.args
        a, rest = op(siren.FstOp, record), op(siren.SndOp, record)
        b, c = op(siren.FstOp, rest), op(siren.SndOp, rest)
        prev, pm, pc, ms, vs = unpack(acc)
        symbolic = op(siren.LtOp, zero, c)     # a constant's record has no variance
        pending = op(siren.LtOp, zero, pc)

        def draw():
            dist = emit.result(siren.DistOp("gaussian", [pm, pc]))
            return op(siren.AssumeOp, dist, var, "sample", f64)

        x = branch(pending, f64, lambda: branch(symbolic, f64, draw, lambda: pm), lambda: pm)
        x_var = branch(symbolic, f64, lambda: zero, lambda: pc)
        ms = branch(pending, lists, lambda: op(siren.ConsOp, x, ms), lambda: ms)
        vs = branch(pending, lists, lambda: op(siren.ConsOp, x_var, vs), lambda: vs)
        ms = branch(symbolic, lists, lambda: ms, lambda: op(siren.ConsOp, b, ms))
        vs = branch(symbolic, lists, lambda: vs, lambda: op(siren.ConsOp, zero, vs))
        given = branch(pending, f64, lambda: x, lambda: prev)
        emit.add(siren.YieldOp(state(branch(symbolic, f64, lambda: given, lambda: b),
                                     branch(symbolic, f64, lambda: emit.arith(siren.AddOp, emit.arith(siren.MulOp, a, given), b),
                                            lambda: zero),
                                     branch(symbolic, f64, lambda: c, lambda: zero), ms, vs)))
        emit.block = saved
        if var:
            self.engine.sampled_vars.add(var)
        folded = op(siren.FoldOp, records, init, body)
        _, pm, pc, ms, vs = unpack(folded)
        pending = op(siren.LtOp, zero, pc)
        ms = branch(pending, lists, lambda: op(siren.ConsOp, pm, ms), lambda: ms)
        vs = branch(pending, lists, lambda: op(siren.ConsOp, pc, vs), lambda: vs)
        return ms, vs

    def _variance(self, e: Expr) -> Num | None:
        """The variance of a Gaussian (or drawn) element whose mean was taken; None for another."""
        e = self.engine.b.eval(e)
        if isinstance(e, K) or (isinstance(e, R) and e.rv.realized):
            return 0.0
        if isinstance(e, R) and e.rv.family == "gaussian" and isinstance(e.rv.params[1], K):
            return e.rv.params[1].v
        return None

    def _backward(self, records: SSAValue | None, explicit: list[SSAValue], step, reverse: bool = False,
                  anchor: SSAValue | None = None) -> SSAValue:
        """The explicit numbers, then one per record, each `step(a, b, c, the one before)` on the
        record's (a, b, c) (c is 0 in a record without one), from the last explicit number, or each
        `step(a, b, c, anchor)` for records of an anchor; with `reverse`, that list reversed (the
        pass conses onto the explicit numbers reversed)."""
        emit = self.emit
        out = emit.add(siren.NilOp(siren.ListType(f64))).result
        if reverse:
            for m in explicit:
                out = emit.add(siren.ConsOp(m, out)).result
        # Records follow a first element: a list without one (still empty) has none.
        if records is not None and explicit:
            record_type = records.type.element
            acc_type = siren.PairType(f64, siren.ListType(f64))
            body = Block(arg_types=[record_type, acc_type])
            saved, emit.block = emit.block, body
            record, acc = body.args
            if record_type == POINT_RECORD:
                a, b, c = emit.const(0.0), record, emit.const(0.0)
            else:
                a, rest = emit.add(siren.FstOp(record)).result, emit.add(siren.SndOp(record)).result
                if record_type == RECORD:
                    b, c = rest, emit.const(0.0)
                else:
                    b, c = emit.add(siren.FstOp(rest)).result, emit.add(siren.SndOp(rest)).result
            prev, done = emit.add(siren.FstOp(acc)).result, emit.add(siren.SndOp(acc)).result
            m = step(_Arith(emit, a), _Arith(emit, b), _Arith(emit, c), _Arith(emit, prev)).value
            kept = prev if anchor is not None else m
            emit.add(siren.YieldOp(emit.add(siren.PairOp(kept, emit.add(siren.ConsOp(m, done)).result)).result))
            emit.block = saved
            init = emit.add(siren.PairOp(explicit[-1] if anchor is None else anchor, out)).result
            folded = emit.add(siren.FoldOp(records, init, body)).result
            if reverse:
                return emit.add(siren.SndOp(folded)).result
            out = emit.add(siren.RevOp(emit.add(siren.SndOp(folded)).result)).result
        return out if reverse else self._prepend(out, explicit)

    def _prepend(self, out: SSAValue | None, explicit: list[SSAValue]) -> SSAValue:
        """The explicit numbers in front of the list `out` (records follow a first element: without
        one, or without `out`, the list is the explicit numbers alone)."""
        if out is None or not explicit:
            out = self.emit.add(siren.NilOp(siren.ListType(f64))).result
        for m in reversed(explicit):
            out = self.emit.add(siren.ConsOp(m, out)).result
        return out
