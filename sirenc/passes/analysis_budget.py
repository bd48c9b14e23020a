"""The plan analysis' work budget, in a module of its own so that the command line can name
the default without importing the analysis (and xDSL): a cached ``sirenc run`` never loads them."""

from sirenc.diagnostics import SirenUsageError

# Work (``Shared.spent``: the interpreter's and the algorithms' steps plus the
# making of expression nodes, ``domain.built``) before the analysis gives up.
# A count, not seconds, so a verdict never depends on the machine or its load.
# The benchmark models need at most 24,474 (slam plan 2 under ssi;
# benchmarks/plan_analysis.py); the slowest work measured runs at about
# 200,000 a second, so the default gives up within about five seconds.
DEFAULT_BUDGET = 1_000_000
BUDGET_OPTION = "--analysis-budget"   # how a user raises it, named in the diagnostic


def check_analysis_options(max_rvs: int, budget: int | None) -> None:
    """The analysis' widening threshold and budget (None: DEFAULT_BUDGET), named as the command
    line names them."""
    if max_rvs < 1:
        raise SirenUsageError("--max-rvs must be at least 1")
    if budget is not None and budget < 1:
        raise SirenUsageError(f"{BUDGET_OPTION} must be at least 1")
