"""`sirenc-opt`: xdsl-opt with sirenc's dialects and passes, for pass-level tests.

    sirenc-opt -p inline-functions,lower-siren-to-smc model.mlir
"""

from __future__ import annotations

import sys

from xdsl.xdsl_opt_main import xDSLOptMain


def _passes() -> dict:
    def inline():
        from sirenc.passes.inline_functions import InlineFunctions

        return InlineFunctions

    def plan():
        from sirenc.passes.plan_analysis import PlanAnalysis

        return PlanAnalysis

    def to_smc():
        from sirenc.passes.lower_siren_to_smc import LowerSirenToSMC

        return LowerSirenToSMC

    def spill():
        from sirenc.passes.spill_across_suspends import SpillAcrossSuspends

        return SpillAcrossSuspends

    def to_llvm():
        from sirenc.passes.lower_smc_to_llvm import LowerSMCToLLVM

        return LowerSMCToLLVM

    return {
        "inline-functions": inline,
        "plan-analysis": plan,
        "lower-siren-to-smc": to_smc,
        "spill-across-suspends": spill,
        "lower-smc-to-llvm": to_llvm,
    }


class SirencOptMain(xDSLOptMain):
    def register_all_dialects(self):
        super().register_all_dialects()
        from sirenc.ir.siren import Siren
        from sirenc.ir.smc import SMC

        self.ctx.register_dialect("siren", lambda: Siren)
        self.ctx.register_dialect("smc", lambda: SMC)

    def register_all_passes(self):
        super().register_all_passes()
        for name, factory in _passes().items():
            self.register_pass(name, factory)


def main() -> int:
    SirencOptMain(description="sirenc modular optimizer").run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
