"""The patterns of `lower-smc-to-llvm` for what a particle owns: its frame's slots, its result at
``smc.finish``, its draws and its weight.

The Gaussian's draw and score are inline, so that LLVM folds ``sqrt`` and ``log`` of a constant
variance; an invalid variance, and every other family, go to the runtime. A log weight that stays
above -inf is added in place.
"""

from __future__ import annotations

from math import pi

from xdsl.dialects import llvm
from xdsl.dialects.builtin import f64, i32
from xdsl.ir import SSAValue

from sirenc.ir import smc
from sirenc.passes.to_llvm.emitter import Emitter, Pattern
from sirenc.passes.to_llvm.resume_abi import FINISHED, PC_BYTES, WORD, machine


class _FrameLoad(Pattern):
    op_type = smc.FrameLoadOp

    def rewrite(self, op: smc.FrameLoadOp) -> None:
        e = Emitter(self.low, op)
        ptr = e.frame_word(self.low.slot_offset(op.slot.value.data))
        e.replace([e.add(llvm.LoadOp(ptr, machine(op.result.type))).dereferenced_value])


class _FrameStore(Pattern):
    op_type = smc.FrameStoreOp

    def rewrite(self, op: smc.FrameStoreOp) -> None:
        e = Emitter(self.low, op)
        ptr = e.frame_word(self.low.slot_offset(op.slot.value.data))
        e.add(llvm.StoreOp(op.value, ptr))
        e.replace([])


class _Finish(Pattern):
    """The result's words at byte 8, 16, ..., then FINISHED."""

    op_type = smc.FinishOp

    def rewrite(self, op: smc.FinishOp) -> None:
        e = Emitter(self.low, op)
        for i, value in enumerate(op.values):
            word = e.to_word(value)
            e.add(llvm.StoreOp(word, e.frame_word(PC_BYTES + WORD * i)))
        e.add(llvm.ReturnOp(e.const_i(FINISHED, i32)))
        e.replace([])


class _Sample(Pattern):
    op_type = smc.SampleOp

    def rewrite(self, op: smc.SampleOp) -> None:
        e = Emitter(self.low, op)
        family, params = op.family.data, list(op.params)
        site = e.site()
        if family == "gaussian":
            draw = self.gaussian(e, *params, site)
        else:
            draw = e.call("sample_" + family, *params, site)
        e.replace([draw])

    @staticmethod
    def gaussian(e: Emitter, mu: SSAValue, var: SSAValue, site: SSAValue) -> SSAValue:
        """mu + sqrt(var) * z inline; an invalid variance goes to the runtime, which reports it."""
        valid = e.add(llvm.FCmpOp(var, e.const_f(0.0), "ogt")).res

        def fast(b: Emitter) -> list[SSAValue]:
            z = b.call("std_normal")
            scale = b.add(llvm.FSqrtOp(var)).res
            return [b.add(llvm.FAddOp(mu, b.add(llvm.FMulOp(scale, z)).res)).res]

        def slow(b: Emitter) -> list[SSAValue]:
            return [b.call("sample_gaussian", mu, var, site, cold=True)]

        return e.if_else(valid, fast, slow, [f64])[0]


class _Observe(Pattern):
    op_type = smc.ObserveOp

    def rewrite(self, op: smc.ObserveOp) -> None:
        e = Emitter(self.low, op)
        family, params = op.family.data, list(op.params)
        site = e.site()
        if family == "gaussian":
            self.gaussian(e, *params, op.value, site)
        else:
            e.call("observe_" + family, *params, op.value, site)
        e.replace([])

    def gaussian(self, e: Emitter, mu: SSAValue, var: SSAValue, x: SSAValue, site: SSAValue) -> None:
        """Scores inline, -0.5 * log(var * 2pi) - (x - mu)^2 / (var * 2); the runtime
        call remains for an invalid variance, which it reports."""
        valid = e.add(llvm.FCmpOp(var, e.const_f(0.0), "ogt")).res

        def fast(b: Emitter) -> list[SSAValue]:
            d = b.add(llvm.FSubOp(x, mu)).res
            log_norm = b.add(llvm.FLogOp(b.add(llvm.FMulOp(var, b.const_f(2 * pi))).res)).res
            half_log_norm = b.add(llvm.FMulOp(log_norm, b.const_f(-0.5))).res
            squared = b.add(llvm.FMulOp(d, d)).res
            scaled = b.add(llvm.FDivOp(squared, b.add(llvm.FMulOp(var, b.const_f(2.0))).res)).res
            self.add_log_weight(b, b.add(llvm.FSubOp(half_log_norm, scaled)).res, site)
            return []

        def slow(b: Emitter) -> list[SSAValue]:
            b.call("observe_gaussian", mu, var, x, site, cold=True)
            return []

        e.if_else(valid, fast, slow, [])

    def add_log_weight(self, e: Emitter, lp: SSAValue, site: SSAValue) -> None:
        """A sum > -inf is stored in place; -inf and NaN go through the runtime, which
        remembers the site for the "all particles have zero weight" error."""
        old = e.add(llvm.LoadOp(self.low.log_weight, f64)).dereferenced_value
        new = e.add(llvm.FAddOp(old, lp)).res
        finite = e.add(llvm.FCmpOp(new, e.const_f(float("-inf")), "ogt")).res

        def store(b: Emitter) -> list[SSAValue]:
            b.add(llvm.StoreOp(new, self.low.log_weight))
            return []

        def slow(b: Emitter) -> list[SSAValue]:
            b.call("add_log_weight", lp, site, cold=True)
            return []

        e.if_else(finite, store, slow, [])

PATTERNS = [_FrameLoad, _FrameStore, _Finish, _Sample, _Observe]
