"""The options of `sirenc`, `sirenc run` and `sirenc check`, each declared once."""

from __future__ import annotations

import argparse

from sirenc import methods
from sirenc.cli.warning_groups import WARNING_CHOICES
from sirenc.diagnostics import SirenUsageError

RESAMPLERS = ("systematic", "multinomial", "stratified", "residual")


class Options:
    """A command's options, declared as on an ``argparse.ArgumentParser`` (``add_argument``), for
    two parsers: ``parser``, which gives each option its default, and one that gives none, so that
    what it returns is what the command line typed."""

    def __init__(self, **parser_options):
        self.parser = argparse.ArgumentParser(**parser_options)
        self._typed = argparse.ArgumentParser(**parser_options)

    def add_argument(self, *flags, **options) -> argparse.Action:
        self._typed.add_argument(*flags, **{**options, "default": argparse.SUPPRESS})
        return self.parser.add_argument(*flags, **options)

    def parse(self, argv: list[str]) -> argparse.Namespace:
        """The options ``argv`` gives, with ``typed``: the ``dest`` of every one it names, also with
        its default value (``--resume`` refuses ``--seed 0``: the checkpoint has a seed of its own)."""
        args = self.parser.parse_args(argv)
        args.typed = set(vars(self._typed.parse_args(argv)))
        return args


def method_help(default: str) -> str:
    """-m's help, from the method table."""
    plain = [f"{m.name} = {m.summary}" for m in methods.METHODS.values() if not m.symbolic]
    symbolic = [m for m in methods.METHODS.values() if m.symbolic]
    return (f"inference algorithm (default {default}): {'; '.join(plain)}; {', '.join(m.name for m in symbolic)} "
            f"keep what they can symbolic ({', '.join(m.summary for m in symbolic)})")


def common_options(p: Options) -> None:
    """The options of every command: the program, the method and the plan analysis's."""
    from sirenc.passes.analysis_budget import DEFAULT_BUDGET

    p.add_argument("file", help="the Siren program (.si)")
    p.add_argument("-m", "--method", choices=list(methods.METHODS), default=methods.DEFAULT,
                   help=method_help(methods.DEFAULT))
    p.add_argument("--tier", type=int, choices=(1, 2), default=2,
                   help="symbolic methods: 2 (default) resolves the symbolic state into numbers when "
                   "compiling where every particle's has one structure ('sirenc check --json' says where "
                   "and, where not, why); 1 always uses the general symbolic runtime")
    p.add_argument("--max-rvs", type=int, default=4, metavar="K",
                   help="plan analysis widening threshold (default 4)")
    p.add_argument("--analysis-budget", type=int, metavar="N",
                   help=f"work the plan analysis may do before it gives up (default {DEFAULT_BUDGET}); "
                   "a count, not seconds: the same verdict on any machine")
    add_warning_option(p)


def add_warning_option(p: Options | argparse.ArgumentParser) -> None:
    p.add_argument("-W", dest="warnings", action="append", choices=WARNING_CHOICES, default=[],
                   metavar="GROUP",
                   help="also show a group of warnings: 'unused' (functions never called, which are "
                   "not type-checked); 'all' every warning, 'none' no warning (repeatable)")


def compile_options() -> Options:
    from sirenc.driver import ORDER

    p = Options(
        prog="sirenc",
        usage="sirenc [options] FILE\n       sirenc {run,check,tune,help} ...",
        description="Compile a Siren program to a native particle filter.",
        epilog="commands:\n"
        "  sirenc run FILE     compile and run a program, print its posterior ('sirenc run --help')\n"
        "  sirenc check FILE   check a program's inference plan ('sirenc check --help')\n"
        "  sirenc tune FILE    find the fastest plan that reaches a target error ('sirenc tune --help')\n"
        "  sirenc help [CMD]   this help, or a command's",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    common_options(p)
    p.add_argument("--version", action="version", version=f"sirenc {version()}")
    p.add_argument("--cflags", action=CflagsAction,
                   help="print the C compiler flags for a host program that includes sirenrt.h "
                   "(cc $(sirenc --cflags) host.c -o host -ldl), and exit")
    p.add_argument("-o", "--output", metavar="FILE", help="write the compiled filter (model.so)")
    p.add_argument("--emit", choices=ORDER, metavar="STAGE",
                   help=f"stop after STAGE and print it: {', '.join(ORDER)}")
    p.add_argument("--no-check", action="store_true", help="skip the inference-plan analysis")
    return p


def run_options() -> Options:
    p = Options(prog="sirenc run", description="Compile (in-process JIT) and run a Siren program.")
    common_options(p)
    p.add_argument("-p", "--particles", type=int, default=None, help="number of particles (default 1000)")
    p.add_argument("-s", "--seed", type=int, default=0, help="random seed (default 0)")
    add_handler_options(p)
    p.add_argument("--data", metavar="FILE", help="CSV rows (header line first) replacing the data the program reads; "
                   "a pattern such as 'streams/*.csv' (quoted) runs one filter per file it matches, on Dask, "
                   "and reports one row per file (pip install 'sirenc[distributed]')")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="run one filter per --data file (the program's own without --data) on the Dask cluster "
                   "of the scheduler at ADDRESS, such as tcp://host:8786")
    p.add_argument("--save", metavar="FILE",
                   help="feed the data row by row (a streamable program) and write the filter's checkpoint "
                   "to FILE after the last row")
    p.add_argument("--resume", metavar="FILE",
                   help="continue the stream saved in FILE with the rows of --data (none without it) and "
                   "report the whole stream; particles, seed, resampler and threshold are the checkpoint's")
    p.add_argument("--resampler", choices=RESAMPLERS, default="systematic", help="resampling scheme")
    p.add_argument("--ess-threshold", type=float, default=0.0, metavar="T",
                   help="resample only when ESS < T*N (default 0: at every resample())")
    p.add_argument("--threads", type=int, default=1, metavar="T",
                   help="threads resuming particles (default 1; the answer does not depend on it)")
    p.add_argument("--memory-limit", metavar="SIZE",
                   help="memory the particles may use, e.g. 4G or 512M (default: half the machine's memory)")
    p.add_argument("--json", action="store_true",
                   help="print the report as JSON (with the log evidence, the ESS and the times)")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="also print the log evidence and the ESS (before the runtime plan)")
    p.add_argument("--no-check", action="store_true",
                   help="skip the inference-plan analysis (no Inferred Inference Plan block)")
    p.add_argument("--plot", metavar="PNG",
                   help="also draw the estimate after each data row, the ESS before each resampling "
                   "and the log evidence into the image PNG (needs matplotlib: pip install 'sirenc[plot]')")
    p.add_argument("--runs", type=int, default=1, metavar="K",
                   help="K independent runs, seeds SEED..SEED+K-1: the report gives the mean of their "
                   "estimates and the spread of the estimates and of the log evidence (default 1)")
    p.add_argument("--draws-csv", metavar="FILE",
                   help="write every particle's (or MH state's) weight and result numbers to FILE")
    p.add_argument("--steps-csv", metavar="FILE",
                   help="write the estimate after each data row (mean, sd, q5, q95; the ESS and the log "
                   "evidence) to FILE; the program must be streamable")
    p.add_argument("-q", "--quiet", action="store_true",
                   help="no progress bar (it is shown on standard error only when that is a terminal, "
                   "for runs longer than half a second)")
    p.add_argument("--no-cache", action="store_true",
                   help="compile afresh (JIT) instead of loading the compiled program from the "
                   "compile cache ($SIRENC_CACHE_DIR, else $XDG_CACHE_HOME/sirenc or ~/.cache/sirenc)")
    p.add_argument("--backend", choices=("native", "jax"), default="native",
                   help="native (default): the compiled C filter; jax: the same program vectorised over "
                   "particles by JAX (on a GPU when JAX has one; pip install 'sirenc[jax]')")
    p.add_argument("--float32", action="store_true", help="jax: compute in single precision")
    return p


def add_handler_options(p: Options) -> None:
    """--handler and the MH chain's options (ARCHITECTURE.md §18's names; -w/-t as in the original)."""
    p.add_argument("-l", "--handler", choices=("smc", "mh"), default="smc",
                   help="smc (default): a particle filter; mh: a single-site Metropolis-Hastings chain")
    p.add_argument("--samples", type=int, default=None, help="MH: states recorded (default 100)")
    p.add_argument("-w", "--warmup", type=int, default=None,
                   help="MH: iterations before the first recorded state (default 0)")
    p.add_argument("-t", "--thinning", type=int, default=None,
                   help="MH: iterations between recorded states (default 1)")


def check_options() -> Options:
    p = Options(prog="sirenc check", description="Check a program's inference plan.")
    common_options(p)
    p.add_argument("--json", action="store_true", help="print the inferred plan as JSON")
    return p


def version() -> str:
    from sirenc import __version__
    return __version__


def cflags() -> str:
    """``-I`` and the folder of the installed ``sirenrt.h``."""
    from sirenc.runtime import include_dir
    return f"-I{include_dir()}"


class CflagsAction(argparse.Action):
    """``sirenc --cflags``: like ``--version``, it needs no program file."""

    def __init__(self, option_strings, dest, default=argparse.SUPPRESS, **kwargs):
        super().__init__(option_strings, dest, nargs=0, default=default, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        try:
            flags = cflags()
        except SirenUsageError as e:
            parser.exit(2, f"sirenc: error: {e.message}\n")
        print(flags)               # on standard output, for $(sirenc --cflags)
        parser.exit(0)
