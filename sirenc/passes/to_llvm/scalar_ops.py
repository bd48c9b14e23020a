"""The arith and math ops of the particle level in `lower-smc-to-llvm`: each is one `llvm` op.

They stand apart from the smc patterns because they need none of their state (no runtime call,
site or frame): a rule per op type, applied in the same walk.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.dialects import arith, llvm, math
from xdsl.dialects.builtin import IntegerAttr, i64
from xdsl.ir import Operation, SSAValues

from sirenc.ir.build import new_op
from sirenc.passes.rewriting import insert_before, replace
from sirenc.passes.to_llvm.resume_abi import machine


@dataclass(frozen=True)
class _OneToOne:
    """An arith or math op that is one `llvm` op."""

    source: type[Operation]
    build: Callable[[Operation], Operation]

    def rewrite(self, op: Operation) -> None:
        new = self.build(op)
        new.location = op.location
        insert_before(new, op)
        replace(op, new.results)


# arith.cmpf's predicates by number; llvm.icmp numbers its predicates as arith.cmpi does.
_FCMP = ["false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord",
         "ueq", "ugt", "uge", "ult", "ule", "une", "uno", "true"]


@dataclass(frozen=True)
class _SameValues:
    """An arith op that is one `llvm` op of the same operands and result type. The new op takes over
    the old one's operand uses and result in place, instead of a use made per operand and each use of
    the result moved (a fifth of the pass' time on a program of 10^5 arithmetic ops)."""

    source: type[Operation]
    target: type[Operation]
    value: bool = False     # a constant: the target has the source's value

    def rewrite(self, op: Operation) -> None:
        new = new_op(self.target, (), (), {"value": op.properties["value"]}) if self.value else new_op(self.target, (), ())
        new.location = op.location
        new._operands, new._operand_uses, new.results = op._operands, op._operand_uses, op.results
        for use in new._operand_uses:
            use._operation = new
        for result in new.results:
            result.op = new
        op._operands, op._operand_uses, op.results = SSAValues(), (), SSAValues()
        insert_before(new, op)
        op.parent.detach_op(op)


PATTERNS = [
    _SameValues(arith.ConstantOp, llvm.ConstantOp, value=True),
    _SameValues(arith.AddfOp, llvm.FAddOp),
    _SameValues(arith.SubfOp, llvm.FSubOp),
    _SameValues(arith.MulfOp, llvm.FMulOp),
    _SameValues(arith.DivfOp, llvm.FDivOp),
    _SameValues(arith.NegfOp, llvm.FNegOp),
    _OneToOne(arith.CmpfOp, lambda op: llvm.FCmpOp(op.lhs, op.rhs, _FCMP[op.predicate.value.data])),
    _OneToOne(arith.CmpiOp, lambda op: llvm.ICmpOp(op.lhs, op.rhs, IntegerAttr(op.predicate.value.data, i64))),
    _OneToOne(arith.SelectOp, lambda op: llvm.SelectOp.create(
        operands=[op.cond, op.lhs, op.rhs], result_types=[machine(op.result.type)])),
    _OneToOne(arith.BitcastOp, lambda op: llvm.BitcastOp(op.input, op.result.type)),
    _OneToOne(arith.ExtUIOp, lambda op: llvm.ZExtOp(op.input, op.result.type)),
    _OneToOne(arith.TruncIOp, lambda op: llvm.TruncOp(op.input, op.result.type)),
    _OneToOne(arith.AddiOp, lambda op: llvm.AddOp(op.lhs, op.rhs)),
    _OneToOne(arith.AndIOp, lambda op: llvm.AndOp(op.lhs, op.rhs)),
    _OneToOne(arith.OrIOp, lambda op: llvm.OrOp(op.lhs, op.rhs)),
    _OneToOne(arith.XOrIOp, lambda op: llvm.XOrOp(op.lhs, op.rhs)),
    _OneToOne(math.SqrtOp, lambda op: llvm.FSqrtOp(op.operand)),
    _OneToOne(math.LogOp, lambda op: llvm.FLogOp(op.operand)),
]
