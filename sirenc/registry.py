"""sirenc's dialects and passes, each under the name the command line uses.

This table is the only place where they are listed. ``sirenc-opt`` (sirenc/opt.py),
the ``xdsl.universe`` entry point that makes plain ``xdsl-opt`` see them
(sirenc/universe.py) and the driver all read it, so adding a pass or a dialect
is one line here::

    PASSES["my-pass"] = "sirenc.passes.simplify.my_pass:MyPass"   # its stage's package, as below

An entry names ``module:attribute``. Nothing is imported until the dialect or
pass is first used: loading the table (which ``xdsl-opt`` does on every start)
costs nothing, and a dialect module that is being rewritten only has to keep
exporting the named attribute.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from xdsl.context import Context
    from xdsl.ir import Dialect
    from xdsl.passes import ModulePass, PassPipeline

# dialect name -> "module:Dialect instance"
DIALECTS: dict[str, str] = {
    "siren": "sirenc.ir.siren:Siren",
    "smc": "sirenc.ir.smc:SMC",
    "sirenrt": "sirenc.ir.sirenrt:SirenRT",
}

# pass name (its ModulePass.name) -> "module:ModulePass subclass"
PASSES: dict[str, str] = {
    "inline-functions": "sirenc.passes.simplify.inline_functions:InlineFunctions",
    "fold-constants": "sirenc.passes.simplify.fold_constants:FoldConstants",
    "plan-analysis": "sirenc.passes.plan_analysis:PlanAnalysis",
    "symbolic-values": "sirenc.passes.symbolic.symbolic_values:SymbolicValues",
    "specialize-conjugacy": "sirenc.passes.tier2.specialize_conjugacy:SpecializeConjugacy",
    "lower-siren-to-smc": "sirenc.passes.to_smc.lower_siren_to_smc:LowerSirenToSMC",
    "hoist-above-resample": "sirenc.passes.suspensions.hoist_above_resample:HoistAboveResample",
    "spill-across-suspends": "sirenc.passes.suspensions.spill_across_suspends:SpillAcrossSuspends",
    "store-result-views": "sirenc.passes.to_llvm.result_views:StoreResultViews",
    "lower-smc-to-llvm": "sirenc.passes.to_llvm.lower_smc_to_llvm:LowerSMCToLLVM",
}


def _load(target: str):
    module, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module), attribute)


def _factory(target: str) -> Callable:
    return lambda: _load(target)


def dialect_factories() -> dict[str, Callable[[], Dialect]]:
    """Lazy factories in the form `Context.register_dialect` and `Universe` take."""
    return {name: _factory(target) for name, target in DIALECTS.items()}


def pass_factories() -> dict[str, Callable[[], type[ModulePass]]]:
    """Lazy factories in the form `xDSLOptMain.register_pass` and `Universe` take."""
    return {name: _factory(target) for name, target in PASSES.items()}


def get_dialect(name: str) -> Dialect:
    return _load(DIALECTS[name])


def get_pass(name: str) -> type[ModulePass]:
    return _load(PASSES[name])


def register_dialects(ctx: Context) -> Context:
    """Registers (without loading) every dialect of the table that `ctx` lacks."""
    have = set(ctx.registered_dialect_names)
    for name, factory in dialect_factories().items():
        if name not in have:
            ctx.register_dialect(name, factory)
    return ctx


def pipeline(spec: str) -> PassPipeline:
    """A pipeline of sirenc passes in xdsl-opt's `-p` syntax, e.g.
    ``pipeline("inline-functions,plan-analysis{method=pf}")``."""
    from xdsl.passes import PassPipeline

    return PassPipeline.parse_spec(pass_factories(), spec)
