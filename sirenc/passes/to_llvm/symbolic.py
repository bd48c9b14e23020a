"""The patterns of `lower-smc-to-llvm` for symbolic words (tier 1 of ``-m ssi``, ``ds``, ``bp``):
``!smc.sym`` values are int64 words and their operations calls into the runtime's engine
(``sirenrt_sym_*``), except arithmetic and comparisons of two constants (plain doubles, not NaN),
which are folded inline as the runtime would fold them.
"""

from __future__ import annotations

from xdsl.dialects import llvm
from xdsl.dialects.builtin import f64, i1, i32, i64
from xdsl.ir import SSAValue

from sirenc import distributions
from sirenc.ir import smc
from sirenc.passes.to_llvm.emitter import Emitter, Pattern
from sirenc.passes.to_llvm.resume_abi import MAX_PARAMS


class _SymConst(Pattern):
    op_type = smc.SymConstOp

    def rewrite(self, op: smc.SymConstOp) -> None:
        e = Emitter(self.low, op)
        value = op.value
        if value.type == i1:
            value = e.add(llvm.SelectOp.create(operands=[value, e.const_f(1.0), e.const_f(0.0)],
                                               result_types=[f64])).results[0]
        e.replace([e.add(llvm.BitcastOp(value, i64)).results[0]])


def _ordered(e: Emitter, *words: SSAValue) -> tuple[SSAValue, list[SSAValue]]:
    """Whether every word is a plain double that is not NaN (a node reference is a NaN
    pattern), and the words as doubles."""
    doubles = [e.add(llvm.BitcastOp(w, f64)).results[0] for w in words]
    first = doubles[0]
    other = doubles[1] if len(doubles) > 1 else first
    return e.add(llvm.FCmpOp(first, other, "ord")).res, doubles


# Constant operands are folded inline, as the runtime would fold them (ARCHITECTURE.md §7.4 folds two
# constants at once): IEEE arithmetic and comparisons of two non-NaN doubles. Division
# (a constant division by zero is an error the runtime reports) and NaN operands (which
# include node references) go to the runtime.
_INLINE_BINOPS = {"add": llvm.FAddOp, "sub": llvm.FSubOp, "mul": llvm.FMulOp}
_INLINE_COMPARISONS = {"eq": "oeq", "lt": "olt"}


class _SymBinOp(Pattern):
    op_type = smc.SymBinOp

    def rewrite(self, op: smc.SymBinOp) -> None:
        e = Emitter(self.low, op)
        kind = op.kind.data
        if kind not in _INLINE_BINOPS and kind not in _INLINE_COMPARISONS:
            e.replace([e.call("sym_" + kind, op.lhs, op.rhs)])
            return
        both, (a, b) = _ordered(e, op.lhs, op.rhs)

        def fold(f: Emitter) -> list[SSAValue]:
            if kind in _INLINE_BINOPS:
                value = f.add(_INLINE_BINOPS[kind](a, b)).res
            else:
                test = f.add(llvm.FCmpOp(a, b, _INLINE_COMPARISONS[kind])).res
                value = f.add(llvm.SelectOp.create(operands=[test, f.const_f(1.0), f.const_f(0.0)],
                                                   result_types=[f64])).results[0]
            return [f.add(llvm.BitcastOp(value, i64)).results[0]]

        def build(f: Emitter) -> list[SSAValue]:
            return [f.call("sym_" + kind, op.lhs, op.rhs)]

        e.replace([e.if_else(both, fold, build, [i64])[0]])


class _SymNeg(Pattern):
    op_type = smc.SymNegOp

    def rewrite(self, op: smc.SymNegOp) -> None:
        e = Emitter(self.low, op)
        ordered, (a,) = _ordered(e, op.operand)

        def fold(f: Emitter) -> list[SSAValue]:
            return [f.add(llvm.BitcastOp(f.add(llvm.FNegOp(a)).res, i64)).results[0]]

        def build(f: Emitter) -> list[SSAValue]:
            return [f.call("sym_neg", op.operand)]

        e.replace([e.if_else(ordered, fold, build, [i64])[0]])


class _SymIte(Pattern):
    op_type = smc.SymIteOp

    def rewrite(self, op: smc.SymIteOp) -> None:
        e = Emitter(self.low, op)
        e.replace([e.call("sym_ite", op.cond, op.then_value, op.else_value)])


class _SymValue(Pattern):
    op_type = smc.SymValueOp

    def rewrite(self, op: smc.SymValueOp) -> None:
        e = Emitter(self.low, op)
        e.replace([e.call("sym_value", op.operand, e.site())])


def _family_and_params(e: Emitter, family: str, params) -> list[SSAValue]:
    """The family id and p0, p1, p2 (unused ones 0) of sirenrt_sym_assume/observe."""
    words = list(params)
    words += [e.const_i(0, i64) for _ in range(MAX_PARAMS - len(words))]
    return [e.const_i(distributions.family(family).id, i32), *words]


class _Assume(Pattern):
    op_type = smc.AssumeOp

    def rewrite(self, op: smc.AssumeOp) -> None:
        e = Emitter(self.low, op)
        head = _family_and_params(e, op.family.data, op.params)
        var, annotation = e.const_i(op.var.value.data, i32), e.const_i(op.annotation.value.data, i32)
        site = self.low.site(op)
        self.low.var_sites.setdefault(op.var.value.data, site)
        word = e.call("sym_assume", *head, var, annotation, e.const_i(site, i32))
        if op.result.type == f64:   # `sample`: the drawn value's bits
            word = e.add(llvm.BitcastOp(word, f64)).results[0]
        e.replace([word])


class _SymObserve(Pattern):
    op_type = smc.SymObserveOp

    def rewrite(self, op: smc.SymObserveOp) -> None:
        e = Emitter(self.low, op)
        head = _family_and_params(e, op.family.data, op.params)
        e.call("sym_observe", *head, op.value, e.site())
        e.replace([])


PATTERNS = [_SymConst, _SymBinOp, _SymNeg, _SymIte, _SymValue, _Assume, _SymObserve]
