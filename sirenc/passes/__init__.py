"""sirenc's passes, one sub-package per stage of the pipeline, in the order the driver runs them
(sirenc/driver.py; sirenc/registry.py registers each pass by name):

    simplify/       inline-functions, fold-constants: one @main, its constant arithmetic folded
    plan_analysis/  plan-analysis: may a `symbolic` variable be sampled under the method (§17)?
    symbolic/       symbolic-values: what may be symbolic retyped `!siren.sym` (both tiers)
    tier2/          specialize-conjugacy: symbolic state of one structure staged into arithmetic
    to_smc/         lower-siren-to-smc: one particle's program, cut at resample() and data rows
    suspensions/    hoist-above-resample, spill-across-suspends: what crosses a suspension point
    to_llvm/        lower-smc-to-llvm: ``@siren_resume`` over the C runtime

The modules beside them serve several stages, so they sit lowest: `rewriting` (the cheap rewrite
helpers of the lowerings, which the front end's IR generation uses too), `errors` (the internal
error of the lowerings) and `analysis_budget` (the plan analysis' budget, which the command lines
name without loading the analysis).
"""
