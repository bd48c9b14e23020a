"""What a run of `sirenc run` or `siren` gives its report."""

from __future__ import annotations

from dataclasses import dataclass

from sirenc import methods


@dataclass
class Outcome:
    """A run's answers, as the report and --json give them."""

    result: object
    evaluation_time: float      # inference and the result computation (ARCHITECTURE.md §18), not compiling
    log_evidence: float
    ess: float
    summary: object = None      # Filter.summary(): the posterior of each number of the result
    history: dict | None = None  # Filter.history(): one entry per resample()
    runtime_plan: dict | None = None  # Filter.runtime_plan() under a symbolic method, else None
    acceptance_rate: float | None = None  # an MH chain's
    samples: int | None = None             # an MH chain's recorded states (ess: their effective number)
    filter: object = None                  # the filter or chain that ran (--draws-csv writes its particles)
    runs: object = None                    # --runs K: sirenc.repeated_runs.Runs (result: their pooled estimate)


def finish(f, result, elapsed: float, summarise: bool = True) -> Outcome:
    """The outcome of a run of filter ``f``, with its posterior summary and history unless
    ``summarise`` is false (the ``siren`` command prints neither)."""
    from sirenc.mh import Chain

    plan = f.runtime_plan() if methods.keeps_symbolic_state(f.model.info["method"]) else None
    if isinstance(f, Chain):      # no evidence, no resampling history
        return Outcome(result, elapsed, float("nan"), f.ess, f.summary() if summarise else None, None, plan,
                       f.acceptance_rate, f.samples, filter=f)
    if not summarise:
        return Outcome(result, elapsed, f.log_evidence, f.ess, runtime_plan=plan, filter=f)
    return Outcome(result, elapsed, f.log_evidence, f.ess, f.summary(), f.history(), plan, filter=f)
