"""`siren`: the original's command line (ARCHITECTURE.md §18) on top of sirenc, for scripts written for it.

    siren FILE [-v] [-p N] [--samples N] [-w N] [-t N] [-a] [-ao]
               [-l {smc,mh}] [-m {pf,ssi,ds,bp}] [-s SEED] [--max-rvs K] [--analysis-budget N] [--profile]
               [-W GROUP]

It prints the original's report (Handler, Inference Algorithm, with -a/-ao the Inferred
Inference Plan and the Analysis Time, the Evaluation Time, the Result, the Runtime Inference
Plan), so the original's benchmark harness runs with `siren` in its place.

The SMC handler (-l smc, the default) and the MH handler (-l mh, with --samples, -w/--warmup and
-t/--thinning; -p is ignored there, as in the original) run with every method: semi-symbolic
inference, `-m ssi` (the original's default), delayed sampling `-m ds`, belief propagation `-m bp`,
or the plain particle filter, `-m pf` (every random variable drawn where it is bound), a method
name the original does not have. MH is the correct single-site kernel (ARCHITECTURE.md §0.3), not the original's ratio, and records exactly
--samples states (the original counted thinning from iteration 0, warm-up included).

Where the original differs: without -s every run draws a fresh seed (the original seeds from
the operating system too) and names it on standard error, so that -s can repeat the run; with -s the particles still get streams of their own (ARCHITECTURE.md §0.3).
`-v` prints the log evidence and the ESS where the original prints its mixture and particle
states (ARCHITECTURE.md §16.3 leaves that debugging output open). A plan the analysis rejects ends with
`AnalysisViolatedAnnotationError: ...` (with -a/-ao). Without -a, a `symbolic` variable that the
run has to sample ends it with `RuntimeViolatedAnnotationError: ...`, as in the original: under
ssi when a particle would sample it, under pf (which samples every variable) before running. The
harness looks for those names (ARCHITECTURE.md §18). Exit status as for sirenc: 0, 1 (program, plan, data),
2 (usage), 3 (bug).
"""

from __future__ import annotations

import argparse
import re
import secrets
import sys

from sirenc import methods
from sirenc.cli.compilation import jit_model
from sirenc.cli.exit_status import guarded
from sirenc.cli.options import add_warning_option, method_help
from sirenc.cli.report import block, format_value, plan_lines, runtime_plan, verbose_blocks
from sirenc.cli.run_checks import memory_limit_option
from sirenc.cli.runs import run_filter
from sirenc.cli.warning_groups import plan_warnings, print_warnings
from sirenc.diagnostics import SirenPlanError, SirenRuntimeError, SirenUsageError
from sirenc.passes.analysis_budget import DEFAULT_BUDGET, check_analysis_options

# The original's method without -m (sirenc's commands default to methods.DEFAULT).
ORIGINAL_DEFAULT = "ssi"


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="siren",
        description="Run a Siren program with the original siren's command line and report "
        "(compiled by sirenc).")
    p.add_argument("file", help="the Siren program (.si)")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="also print the log evidence and the ESS (before the runtime plan)")
    p.add_argument("-p", "--particles", type=int, default=100, help="number of SMC particles (default 100)")
    p.add_argument("--samples", type=int, default=100, help="MH samples (default 100)")
    p.add_argument("-w", "--warmup", type=int, default=0, help="MH warm-up iterations (default 0)")
    p.add_argument("-t", "--thinning", type=int, default=1, help="MH thinning (default 1)")
    p.add_argument("-a", "--analyze", action="store_true",
                   help="run the plan analysis first; stop if it rejects the plan")
    p.add_argument("-ao", "--analyze-only", action="store_true", help="run only the plan analysis")
    p.add_argument("-l", "--handler", choices=("smc", "mh"), default="smc",
                   help="smc (default) or mh")
    p.add_argument("-m", "--method", choices=list(methods.METHODS), default=ORIGINAL_DEFAULT,
                   help=method_help(ORIGINAL_DEFAULT))
    p.add_argument("-s", "--seed", type=int, default=None,
                   help="random seed (default: a fresh one each run)")
    p.add_argument("--max-rvs", type=int, default=4, metavar="K",
                   help="plan analysis widening threshold (default 4)")
    p.add_argument("--analysis-budget", type=int, metavar="N",
                   help=f"work the plan analysis (-a, -ao) may do before it gives up (default {DEFAULT_BUDGET}; "
                   "not an option of the original)")
    p.add_argument("--profile", action="store_true",
                   help="run under the Python profiler and print the profile instead of the report")
    p.add_argument("--memory-limit", metavar="SIZE",
                   help="memory the particles may use, e.g. 4G or 512M (default: half the machine's memory; "
                   "not an option of the original)")
    add_warning_option(p)
    return p


def _emit(lines: list[str]) -> None:
    print("\n".join(lines), flush=True)


def run(args) -> int:
    from sirenc import driver
    from sirenc.arguments import check_particles, check_seed

    check_particles(args.particles, "--particles")
    if args.seed is not None:
        check_seed(args.seed, "--seed")
    check_analysis_options(args.max_rvs, args.analysis_budget)
    if args.handler == "mh":
        from sirenc.mh import chain_options
        try:
            options = dict(handler="mh", **chain_options(args.samples, args.warmup, args.thinning))
        except SirenUsageError as e:
            raise SirenUsageError("--" + e.message) from None
        particles = None
    else:
        options, particles = {}, args.particles
    memory_limit = memory_limit_option(args.memory_limit)
    analyze = args.analyze or args.analyze_only
    c = driver.open_source(args.file, args.method, check=analyze, max_rvs=args.max_rvs,
                           analysis_budget=args.analysis_budget, snapshots=False)
    driver.run_until(c, "siren")          # syntax, name and type errors: before any output
    print_warnings(c, args.warnings)
    _emit(block("Handler", [args.handler.upper()])
          + block("Inference Algorithm", [args.method.upper()]))
    if analyze:
        _emit(["===== Inferred Inference Plan ====="])
        try:
            driver.run_until(c, "plan")
        except SirenPlanError as e:
            print(f"{e.render()}\nAnalysisViolatedAnnotationError: {e.message}", file=sys.stderr)
            return 1
        print_warnings(c, args.warnings, plan_warnings(c))
        _emit(plan_lines(dict(c.plan.plan)) + block("Analysis Time", [repr(c.plan.seconds)]))
        if args.analyze_only:
            return 0
    try:
        model = jit_model(c)
    except SirenPlanError as e:
        print(f"{e.render()}\nRuntimeViolatedAnnotationError: {e.message}", file=sys.stderr)
        return 1
    if args.seed is None:
        seed = secrets.randbits(63)
        # On standard error: the report on standard output stays the original's, and the run
        # can still be repeated.
        print(f"siren: seed {seed} (rerun with -s {seed} to repeat this run)", file=sys.stderr, flush=True)
    else:
        seed = args.seed
    try:
        outcome = run_filter(model, particles, seed, summarise=False, memory_limit=memory_limit, **options)
    except SirenRuntimeError as e:
        violation = re.search(r"\S+ is annotated as symbolic but will be sampled", e.message)
        if violation is None:
            raise
        print(f"{e.render()}\nRuntimeViolatedAnnotationError: {violation.group(0)}", file=sys.stderr)
        return 1
    out = block("Evaluation Time", [repr(outcome.evaluation_time)])
    out += block("Result", [format_value(outcome.result)])
    if args.verbose:
        out += verbose_blocks(outcome, resampling=False)   # what the siren command always printed
    plan = dict(c.plan.plan) if c.plan is not None else {}
    _emit(out + block("Runtime Inference Plan", plan_lines(runtime_plan(outcome, plan))))
    return 0


def _profiled(args) -> int:
    import contextlib
    import cProfile
    import io
    import pstats

    profile = cProfile.Profile()
    with contextlib.redirect_stdout(io.StringIO()):
        status = profile.runcall(run, args)
    pstats.Stats(profile, stream=sys.stdout).sort_stats("cumulative").print_stats(30)
    return status


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(sys.argv[1:] if argv is None else argv)
    return guarded(_profiled if args.profile else run, args, prog="siren")


if __name__ == "__main__":
    sys.exit(main())
