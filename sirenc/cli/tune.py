"""`sirenc tune`: the fastest inference plan of a program that reaches a target error
(sirenc.tune; docs/tune.md), printed as a table; ``-o`` writes the program with it."""

from __future__ import annotations

import sys

from sirenc import methods
from sirenc.cli.files import same_file
from sirenc.cli.options import Options, add_warning_option
from sirenc.cli.warning_groups import print_warnings
from sirenc.diagnostics import SirenUsageError

ALL = "all"


def tune_options() -> Options:
    from sirenc.passes.analysis_budget import DEFAULT_BUDGET
    from sirenc.tuning import SCHEDULE

    p = Options(prog="sirenc tune",
                description="Find the fastest inference plan (symbolic/sample annotations and method) that "
                "reaches a target error, by pilot runs of the plans the analysis accepts.")
    p.add_argument("file", help="the Siren program (.si)")
    p.add_argument("-m", "--method", action="append", choices=[*methods.METHODS, ALL], metavar="METHOD",
                   help=f"a method to try: {', '.join(methods.METHODS)}, or {ALL} (the default); repeatable")
    p.add_argument("--target-error", type=_target_errors, metavar="E[,E...]",
                   help="the mean squared error that one run must reach on each part of the result "
                   "(each element of a tuple), or one error per part, separated by commas")
    p.add_argument("--time-budget", type=float, metavar="S",
                   help="seconds tune may take in all; without --target-error it spends them and targets "
                   "the smallest error its runs reach")
    p.add_argument("-s", "--seed", type=int, default=0, help="seed of the pilot runs and the bootstrap (default 0)")
    p.add_argument("--data", metavar="FILE", help="CSV rows (header line first) replacing the data the program reads")
    p.add_argument("--runs", type=int, default=8, metavar="K",
                   help="pilot runs per plan and particle count (default 8)")
    p.add_argument("--max-particles", type=int, default=SCHEDULE[-1], metavar="N",
                   help=f"the most particles a run may use: a plan that needs more for the target cannot "
                   f"reach it (default {SCHEDULE[-1]})")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="make the pilot runs on the Dask cluster of the scheduler at ADDRESS, such as "
                   "tcp://host:8786 (pip install 'sirenc[distributed]'); the same seeds, so the same estimates")
    p.add_argument("-o", "--output", metavar="FILE", help="write the program with the chosen plan's annotations")
    p.add_argument("--json", action="store_true", help="print the outcome as JSON")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress line (shown only on a terminal)")
    p.add_argument("--max-rvs", type=int, default=4, metavar="K", help="plan analysis widening threshold (default 4)")
    p.add_argument("--analysis-budget", type=int, metavar="N",
                   help=f"work the plan analysis may do before it gives up (default {DEFAULT_BUDGET})")
    add_warning_option(p)
    return p


def cmd_tune(args) -> int:
    import sirenc
    from sirenc import driver
    from sirenc.cli.report import strict_json
    from sirenc.tuning import METHODS, schedule_to

    program = driver.open_source(args.file, snapshots=False)
    driver.run_until(program, "ast")
    if args.output is not None:
        check_output_file(args, program)
    print_warnings(program, args.warnings)     # the front end's: the same for every plan
    chosen = args.method or [ALL]
    names = list(METHODS) if ALL in chosen else list(dict.fromkeys(chosen))
    if args.max_particles < 1:
        raise SirenUsageError(f"--max-particles must be at least 1, not {args.max_particles}")
    schedule = schedule_to(args.max_particles)
    line = ProgressLine() if sys.stderr.isatty() and not args.quiet else None
    try:
        result = sirenc.tune(args.file, data=args.data, methods=names, target_error=args.target_error,
                             time_budget=args.time_budget, seed=args.seed, particles=schedule, runs=args.runs,
                             max_rvs=args.max_rvs, analysis_budget=args.analysis_budget, progress=line,
                             client=args.scheduler)
    finally:
        if line is not None:
            line.close()
    if args.output is not None:
        from sirenc.backend.link import write_atomically
        write_atomically(args.output, result.source.encode("utf-8"))
    print(strict_json(result.to_json()) if args.json else result.table())
    return 0


def check_output_file(args, program) -> None:
    """Before any work: ``-o`` may name neither the program nor a data file (the ``--data`` one
    or one ``program``, its compilation, reads), as for ``sirenc -o``."""
    from sirenc.backend.link import check_output
    from sirenc.cli.emit import check_not_data

    if args.output == "":
        raise SirenUsageError("-o needs a file name")
    check_output(args.output)
    if same_file(args.output, args.file):
        raise SirenUsageError(f"-o {args.output} would overwrite the program {args.file}; "
                              "give the tuned program a file of its own")
    if args.data is not None and same_file(args.output, args.data):
        raise SirenUsageError(f"-o {args.output} would overwrite the data file {args.data}; "
                              "give the tuned program a file of its own")
    check_not_data(program, args.output)


class ProgressLine:
    """What tune is doing, one line on standard error redrawn in place, erased at the end."""

    def __init__(self):
        self.drawn = False

    def __call__(self, what: str) -> None:
        import shutil

        width = max(shutil.get_terminal_size((80, 24)).columns - 1, 20)
        self.drawn = True
        sys.stderr.write("\r" + f"sirenc tune: {what}"[:width] + "\x1b[K")
        sys.stderr.flush()

    def close(self) -> None:
        if self.drawn:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()
            self.drawn = False


def _target_errors(text: str) -> float | tuple[float, ...]:
    """--target-error's value: a number, or numbers separated by commas (one per part)."""
    import argparse

    try:
        numbers = tuple(float(x) for x in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"a number, or numbers separated by commas, not {text!r}") from None
    return numbers[0] if len(numbers) == 1 else numbers
