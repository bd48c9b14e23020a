"""The specializer's handlers of the symbolic ops that are not lists or loops: arithmetic and
comparisons, distributions, draws, observations, forcing, pairs, and ``if`` (an ite on a symbolic
condition; on a concrete one a plain ``siren.if``, or a fork of the loop body, ARCHITECTURE.md §7.5).

Each runs the op on the staged engine (staged_inference.py), which emits the numbers' arithmetic.
A part of the specializer (`specialize_conjugacy._Specializer`).
"""

from __future__ import annotations

from xdsl.dialects.builtin import f64, i1
from xdsl.ir import Block, SSAValue

from sirenc.ir import siren
from sirenc.ir.siren import is_sym
from sirenc.passes.tier2.staged_symbolic import K, Expr, Fork, NotSpecialisable, truth_of
from sirenc.passes.tier2.staged_values import SPair, SymDist, discard


class SymbolicOps:
    """The specializer's handlers of symbolic arithmetic, distributions, draws, pairs and ifs."""

    def arith(self, op) -> None:
        b = self.engine.b
        if isinstance(op, siren.NegOp):
            self.staged[op.result] = b.mul(K(-1.0), self.as_expr(op.operands[0]))
            return
        if isinstance(op, siren.BoolToFloatOp | siren.FloatToBoolOp):
            self.staged[op.result] = self.as_expr(op.operands[0])
            return
        lhs, rhs = self.as_expr(op.lhs), self.as_expr(op.rhs)
        if isinstance(op, siren.MulOp):
            for k, other in ((lhs, rhs), (rhs, lhs)):
                if isinstance(k, K) and not k.static and not isinstance(other, K):
                    # The runtime drops a product with a constant 0 (ARCHITECTURE.md §6.3): with a factor known
                    # only at run time, which variables depend on which would depend on it.
                    raise NotSpecialisable("a symbolic value is multiplied by a number known only at run "
                                           "time (a 0 there would change the dependencies)", op)
        fn = {siren.AddOp: b.add, siren.SubOp: b.sub, siren.MulOp: b.mul, siren.DivOp: b.div,
              siren.LtOp: b.lt, siren.EqOp: b.eq}[type(op)]
        self.staged[op.result] = fn(lhs, rhs)

    def to_sym(self, op: siren.ToSymOp) -> None:
        src = op.operand
        if isinstance(src.type, siren.DistType):
            self.staged[op.result] = self._dist_params(src.owner, op)
            return
        self.staged[op.result] = K(self.known(self.vmap[src]))

    def _dist_params(self, dist, op) -> SymDist:
        if not isinstance(dist, siren.DistOp):
            raise NotSpecialisable("internal: a distribution that is not a siren.dist", op)
        if any(not (is_sym(p.type) or p.type in (f64, i1)) for p in dist.params):
            raise NotSpecialisable("tier 2 keeps no symbolic variable with a list parameter", op)
        return SymDist(dist.family.data, [self.as_expr(p) for p in dist.params])

    def dist(self, op: siren.DistOp) -> None:
        self.staged[op.result] = self._dist_params(op, op)

    def assume(self, op: siren.AssumeOp) -> None:
        ann = op.annotation.data if op.annotation is not None else None
        d = self.get(op.dist) if op.dist in self.staged else self._dist_params(op.dist.owner, op)
        value = self._guard(op, lambda: self.engine.assume(d.family, d.params, op.var.data, ann))
        if is_sym(op.result.type):
            self.staged[op.result] = value
            return
        assert isinstance(value, K)
        num = self.emit.num(value.v)
        if op.result.type == i1:
            num = self.emit.add(siren.FloatToBoolOp(num)).result
        self.vmap[op.result] = num

    def observe(self, op: siren.ObserveOp) -> None:
        d = self.get(op.dist)
        self._guard(op, lambda: self.engine.observe(d.family, d.params, self.vmap[op.value]))
        self.vmap[op.result] = self.emit.add(siren.ConstOp(None)).result

    def force(self, op: siren.ForceOp) -> None:
        num = self.emit.num(self._guard(op, lambda: self.engine.force(self.expr(op.operand))))
        if op.result.type == i1:
            num = self.emit.add(siren.FloatToBoolOp(num)).result
        self.vmap[op.result] = num

    @staticmethod
    def _guard(op, fn):
        try:
            return fn()
        except NotSpecialisable as e:
            if e.op is None:
                e.op = op
            raise

    def pair(self, op: siren.PairOp) -> None:
        self.staged[op.result] = SPair(self.get(op.first), self.get(op.second))

    def project(self, op) -> None:
        p = self.get(op.pair)
        assert isinstance(p, SPair)
        self._bind(op.result, p.first if isinstance(op, siren.FstOp) else p.second)

    def ite(self, op: siren.IfOp) -> None:
        if not is_sym(op.cond.type):
            self._branch(op)
            return
        cond = self.expr(op.cond)
        then_value = self.run_block(op.then_region.block)
        else_value = self.run_block(op.else_region.block)
        self.emit.location = op.location
        self._bind(op.result, self._ite(cond, then_value, else_value))

    def _branch(self, op: siren.IfOp) -> None:
        """An if on a concrete condition with symbolic operations inside: a plain `siren.if` when
        neither branch changes a variable that exists before it (it may score, or draw, fresh
        ones: an observation whose parameters are numbers) and both yield numbers. Otherwise, in
        a loop body, the body forks on the condition (`_explore`) and each path runs only the
        branch it selects, as the runtime does (ARCHITECTURE.md §7.5, 3)."""
        cond = self.vmap[op.cond]
        if self.emit.is_decided(cond):
            region = op.then_region if self.emit.decide(cond, "") else op.else_region
            self._bind(op.result, self.run_block(region.block))
            return
        try:
            self._plain_if(op, cond)
        except NotSpecialisable:
            if not self.emit.can_fork():
                raise
            raise Fork(truth_of(cond)) from None

    def _plain_if(self, op: siren.IfOp, cond: SSAValue) -> None:
        blocks, before = [], self.engine.touched
        saved_epoch, self.engine.epoch = self.engine.epoch, self.engine.born
        for region in (op.then_region, op.else_region):
            block = Block()
            saved, self.emit.block = self.emit.block, block
            value = self.run_block(region.block)
            if self.engine.touched != before or isinstance(value, SPair | SymDist) or \
                    (isinstance(value, Expr) and not isinstance(self.engine.b.eval(value), K)):
                self.emit.block = saved
                self.engine.epoch = saved_epoch
                discard(block)
                for b in blocks:
                    discard(b)
                raise NotSpecialisable("an if on a run-time condition changes symbolic variables or yields "
                                       "them (tier 2 needs one structure on every path)", op)
            if isinstance(value, Expr):
                value = self.emit.num(self.engine.b.eval(value).v)
            self.emit.add(siren.YieldOp(value))
            self.emit.block = saved
            blocks.append(block)
        self.engine.epoch = saved_epoch
        self.emit.location = op.location
        result_type = f64 if is_sym(op.result.type) else op.result.type
        result = self.emit.add(siren.IfOp(cond, result_type, blocks[0], blocks[1])).result
        self._bind(op.result, K(result) if is_sym(op.result.type) else result)

    def _ite(self, cond: Expr, t, f):
        if isinstance(t, SPair) and isinstance(f, SPair):
            return SPair(self._ite(cond, t.first, f.first), self._ite(cond, t.second, f.second))
        if isinstance(t, SSAValue) and t.type == siren.unit:
            return t
        to_expr = (lambda v: K(self.known(v)) if isinstance(v, SSAValue) else v)
        return self.engine.b.ite(cond, to_expr(t), to_expr(f))
