"""What `sirenc run` prints: the original's report (ARCHITECTURE.md §18), block by block, which
the `siren` command prints too, and ``--json``'s."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sirenc.cli.outcome import Outcome


def block(name: str, lines: list[str]) -> list[str]:
    """One block of the original's report: its header line, then its lines."""
    return [f"===== {name} =====", *lines]


def plan_lines(plan: dict) -> list[str]:
    """`name: encoding` per variable; an empty plan is one empty line, as in the original."""
    return [f"{name}: {encoding}" for name, encoding in plan.items()] or [""]


def format_value(value, top: bool = True) -> str:
    """The original's textual result (ARCHITECTURE.md §16.2): Python literals, nested pairs."""
    if value is None:
        return "()"
    if isinstance(value, tuple):
        return f"({format_value(value[0], False)}, {format_value(value[1], False)})"
    if isinstance(value, list) or hasattr(value, "tolist"):
        items = value.tolist() if hasattr(value, "tolist") else value
        return "[" + ", ".join(format_value(v, False) for v in items) + "]"
    if isinstance(value, bool):
        return ("true" if value else "false") if top else repr(value)
    return repr(float(value))


def runtime_plan(outcome: Outcome, plan: dict) -> dict:
    """How the variables were represented in the run (ARCHITECTURE.md §16.4): what the particles recorded
    under a symbolic method; under pf every random variable of the checked ``plan`` is drawn where
    it is bound."""
    if outcome.runtime_plan is not None:
        return outcome.runtime_plan
    return {name: "sample" for name in plan}


def verbose_blocks(outcome: Outcome, resampling: bool = True) -> list[str]:
    """What -v adds, between the result and the runtime plan (where the original's -v blocks go):
    the log evidence, the final ESS and (``resampling``), since with resampling at every step the
    final ESS is always the particle count, the ESS before each resampling.  For an MH chain: the
    number of samples, their effective number (by autocorrelation) and the acceptance rate."""
    import numpy as np

    if outcome.acceptance_rate is not None:
        return block("Samples", [repr(outcome.samples)]) + block("ESS", [repr(outcome.ess)]) + \
            block("Acceptance Rate", [repr(outcome.acceptance_rate)])
    out = block("Log Evidence", [repr(outcome.log_evidence)]) + block("ESS", [repr(outcome.ess)])
    ess = outcome.history["ess"] if outcome.history is not None else []
    if resampling and len(ess):
        # The history keeps the latest 2**20 barriers; the counts take in the ones it dropped.
        f = outcome.filter
        dropped = getattr(f, "history_dropped", 0)
        resampled = int(outcome.history["resampled"].sum()) + (f.history_dropped_resampled if dropped else 0)
        kept = f" (the latest {len(ess)})" if dropped else ""
        out += block("Resampling", [f"{len(ess) + dropped} resample() steps, {resampled} resampled; ESS before "
                                    f"resampling{kept}: min {ess.min():.6g}, median {float(np.median(ess)):.6g}, "
                                    f"last {ess[-1]:.6g}"])
    return out


def posterior_block(outcome: Outcome) -> list[str]:
    """The readable table of the posterior (sirenc/summary.py), printed before the result, where
    the original's harness does not read; nothing for a result that holds no number."""
    from sirenc.summary import leaves, table

    if outcome.runs is not None:
        from sirenc import repeated_runs
        return block("Runs", repeated_runs.table(outcome.runs))
    return block("Posterior", table(outcome.summary, names=summary_names(outcome))) if leaves(outcome.summary) else []


def summary_names(outcome: Outcome) -> list[str]:
    """The random variable each number of the summary is, where the program returns one as it is."""
    from sirenc.summary import leaf_names

    info = outcome.filter.model.info
    return leaf_names(outcome.summary, info["result_type"], info.get("result_names", []))


def strict_json(value) -> str:
    """``value`` as JSON, which has no infinity or NaN: every non-finite number is null (a log
    evidence of -inf, an infinite mean), and ``allow_nan=False`` makes one that slips through an
    error rather than a file that JSON parsers refuse."""
    import math

    def finite(v):
        if isinstance(v, float):
            return v if math.isfinite(v) else None
        if isinstance(v, dict):
            return {k: finite(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [finite(x) for x in v]
        return v

    return json.dumps(finite(value), allow_nan=False)


def value_json(value):
    """A result (tuples, arrays) as the lists and numbers of JSON."""
    if isinstance(value, tuple):
        return [value_json(v) for v in value]
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, list):
        return [value_json(v) for v in value]
    return value


def variables_json(outcome: Outcome) -> dict:
    """``--json``'s ``variables``: the summaries of the returned random variables, by name."""
    from sirenc.summary import by_variable, jsonable

    if outcome.summary is None:
        return {}
    info = outcome.filter.model.info
    return {name: jsonable(s) for name, s in
            by_variable(outcome.summary, info["result_type"], info.get("result_names", [])).items()}


def runs_json(r) -> dict:
    from sirenc import repeated_runs

    return {**repeated_runs.jsonable(r), "estimates": [value_json(e) for e in r.estimates]}
