"""The `sirenc` command line.

    sirenc model.si -o model.so [-m pf] [--emit=STAGE]   compile
    sirenc run model.si [-m pf] [-p 1000] [--seed S] [-v] compile (JIT) and run
    sirenc run model.si --handler mh [--samples N] [-w W] [-t K]   ... with an MH chain
    sirenc run model.si [--resume CKPT] [--data rows.csv] --save CKPT   ... a stream, saved and resumed
    sirenc check model.si [-m pf|ssi|ds|bp]              check the inference plan
    sirenc --version
    sirenc --cflags                                      include flags for a C host (sirenrt.h)

Every command defaults to ``-m pf`` (driver.DEFAULT_METHOD), the plain particle filter.

`sirenc run` prints the original's report (ARCHITECTURE.md §18), which the original's
benchmark harness reads, plus a table of the posterior before the result, where
the harness does not look; `-v` adds the log evidence and the ESS (final, and
before each resampling) before the runtime plan (where the original's own `-v`
blocks go), `--json` has everything. With `--handler mh` an MH chain (ARCHITECTURE.md §15.2) replaces the
particle filter: the same report from its recorded states, with no log evidence; `-v` prints the
acceptance rate. Warnings go to standard error; `-W GROUP` chooses which
(WARNING_GROUPS: never-called functions only with `-W unused`).

Exit status: 0 on success, 1 when the program, its plan or its data is wrong
(a diagnostic with the source location is printed), 2 on bad usage, 3 on an
internal compiler error (a bug in sirenc).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from dataclasses import dataclass

from sirenc.diagnostics import SirenError, SirenUsageError, render_at

RESAMPLERS = ("systematic", "multinomial", "stratified", "residual")

# Warning groups for -W. A warning belongs to the first group whose pattern matches its message;
# every other warning is always shown (unless -W none). Shown by default: DEFAULT_WARNINGS.
WARNING_GROUPS = {"unused": re.compile(r"function '[^']*' is never called")}
DEFAULT_WARNINGS = frozenset()
WARNING_CHOICES = ("unused", "all", "none")


def _common(p: argparse.ArgumentParser) -> None:
    from sirenc.driver import DEFAULT_METHOD, METHODS
    from sirenc.passes.analysis_budget import DEFAULT_BUDGET

    p.add_argument("file", help="the Siren program (.si)")
    p.add_argument("-m", "--method", choices=METHODS, default=DEFAULT_METHOD,
                   help=f"inference algorithm (default {DEFAULT_METHOD}): pf = plain particle filter; ssi, ds, bp "
                   "keep what they can symbolic (semi-symbolic inference, delayed sampling, belief propagation)")
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


def add_warning_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("-W", dest="warnings", action="append", choices=WARNING_CHOICES, default=[],
                   metavar="GROUP",
                   help="also show a group of warnings: 'unused' (functions never called, which are "
                   "not type-checked); 'all' every warning, 'none' no warning (repeatable)")


def _compile_parser() -> argparse.ArgumentParser:
    from sirenc.driver import ORDER

    p = argparse.ArgumentParser(
        prog="sirenc",
        usage="sirenc [options] FILE\n       sirenc {run,check,help} ...",
        description="Compile a Siren program to a native particle filter.",
        epilog="commands:\n"
        "  sirenc run FILE     compile and run a program, print its posterior ('sirenc run --help')\n"
        "  sirenc check FILE   check a program's inference plan ('sirenc check --help')\n"
        "  sirenc help [CMD]   this help, or a command's",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _common(p)
    p.add_argument("--version", action="version", version=f"sirenc {version()}")
    p.add_argument("--cflags", action=CflagsAction,
                   help="print the C compiler flags for a host program that includes sirenrt.h "
                   "(cc $(sirenc --cflags) host.c -o host -ldl), and exit")
    p.add_argument("-o", "--output", metavar="FILE", help="write the compiled filter (model.so)")
    p.add_argument("--emit", choices=ORDER, metavar="STAGE",
                   help=f"stop after STAGE and print it: {', '.join(ORDER)}")
    p.add_argument("--no-check", action="store_true", help="skip the inference-plan analysis")
    return p


def _run_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="sirenc run", description="Compile (in-process JIT) and run a Siren program.")
    _common(p)
    p.add_argument("-p", "--particles", type=int, default=None, help="number of particles (default 1000)")
    p.add_argument("-s", "--seed", type=int, default=0, help="random seed (default 0)")
    add_handler_options(p)
    p.add_argument("--data", metavar="FILE", help="CSV rows (header line first) replacing the data the program reads")
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


def add_handler_options(p: argparse.ArgumentParser, short: bool = True) -> None:
    """--handler and the MH chain's options (ARCHITECTURE.md §18's names; -w/-t as in the original)."""
    p.add_argument("-l", "--handler", choices=("smc", "mh"), default="smc",
                   help="smc (default): a particle filter; mh: a single-site Metropolis-Hastings chain")
    p.add_argument("--samples", type=int, default=None, help="MH: states recorded (default 100)")
    p.add_argument(*(("-w",) if short else ()), "--warmup", type=int, default=None,
                   help="MH: iterations before the first recorded state (default 0)")
    p.add_argument(*(("-t",) if short else ()), "--thinning", type=int, default=None,
                   help="MH: iterations between recorded states (default 1)")


def handler_options(args) -> dict:
    """The MH chain's options of the command line (empty under smc); SMC options given to an MH run,
    or MH options to an SMC run, are usage errors."""
    mh = {"samples": args.samples, "warmup": args.warmup, "thinning": args.thinning}
    if args.handler != "mh":
        given = [f"--{k}" for k, v in mh.items() if v is not None]
        if given:
            raise SirenUsageError(f"{', '.join(given)} {'is an option' if len(given) == 1 else 'are options'} "
                                  "of the MH handler (--handler mh)")
        return {}
    from sirenc.mh import chain_options

    smc = [flag for flag, given in (("--particles", args.particles is not None),
                                    ("--resampler", getattr(args, "resampler", "systematic") != "systematic"),
                                    ("--ess-threshold", getattr(args, "ess_threshold", 0.0) != 0.0),
                                    ("--threads", getattr(args, "threads", 1) != 1),
                                    ("--plot", getattr(args, "plot", None) is not None)) if given]
    if smc:
        raise SirenUsageError(f"{', '.join(smc)}: {'an option' if len(smc) == 1 else 'options'} of the SMC "
                              "handler; an MH chain takes --samples, --warmup and --thinning")
    try:
        return chain_options(**mh)
    except SirenUsageError as e:
        raise SirenUsageError("--" + e.message) from None


def _check_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="sirenc check", description="Check a program's inference plan.")
    _common(p)
    p.add_argument("--json", action="store_true", help="print the inferred plan as JSON")
    return p


def version() -> str:
    from sirenc import __version__
    return __version__


BINARY_STAGES = ("obj",)     # products that are bytes, not text


def cflags() -> str:
    """``-I`` and the folder of the installed ``sirenrt.h``."""
    from sirenc.runtime import include_dir
    return f"-I{include_dir()}"


class CflagsAction(argparse.Action):
    """``sirenc --cflags``: like ``--version``, it needs no program file."""

    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        try:
            flags = cflags()
        except SirenUsageError as e:
            parser.exit(2, f"sirenc: error: {e.message}\n")
        print(flags)               # on standard output, for $(sirenc --cflags)
        parser.exit(0)


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


def _jsonable(value):
    if isinstance(value, tuple):
        return [_jsonable(v) for v in value]
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    return value


def shown_warnings(warnings, chosen=()) -> list:
    """The ``(message, span)`` warnings that -W ``chosen`` shows."""
    chosen = set(chosen)
    if "none" in chosen:
        return []
    enabled = set(WARNING_GROUPS) if "all" in chosen else (set(DEFAULT_WARNINGS) | chosen)
    shown = []
    for message, span in warnings:
        group = next((g for g, pattern in WARNING_GROUPS.items() if pattern.match(message)), None)
        if group is None or group in enabled:
            shown.append((message, span))
    return shown


def program_warnings(c) -> list:
    """The ``(message, span)`` warnings of compilation ``c``'s front end and of its plan analysis."""
    typed = c.products.get("ast")
    return list(getattr(getattr(typed, "program", None), "warnings", [])) + plan_warnings(c)


def plan_warnings(c) -> list:
    """The ``(message, span)`` warnings of compilation ``c``'s plan analysis, if it ran."""
    return list(c.plan.warnings) if c.plan is not None else []


def print_warnings(c, chosen=(), warnings=None) -> None:
    for message, span in shown_warnings(program_warnings(c) if warnings is None else warnings, chosen):
        print(render_at("warning", message, span), file=sys.stderr)


def _open(args, check: bool):
    from sirenc import driver

    # A command prints or writes one stage's product: no earlier one is kept (a copy and a
    # verification of each transformed module made a literal of 10^5 lists take four times as long).
    return driver.open_source(args.file, args.method, check=check, max_rvs=args.max_rvs,
                              analysis_budget=args.analysis_budget, tier=args.tier, snapshots=False)


def cmd_compile(args) -> int:
    from sirenc import driver
    from sirenc.backend.link import check_output, write_atomically

    if args.output == "":
        raise SirenUsageError("-o needs a file name (without -o, --emit prints to standard output)")
    stage = args.emit or ("so" if args.output else None)
    if stage is None:
        raise SirenUsageError("nothing to do: give -o FILE or --emit=STAGE")
    if args.output:
        check_output(args.output)     # before compiling: a directory or a device is refused
        if _same_file(args.output, args.file):
            raise SirenUsageError(f"-o {args.output} would overwrite the program {args.file}; "
                                  "give the output a file of its own")
    elif stage in BINARY_STAGES and sys.stdout.isatty():
        raise SirenUsageError(f"--emit={stage} writes binary data, and standard output is a terminal; "
                              f"give -o FILE (or redirect: > model.o)")
    c = _open(args, check=not args.no_check)
    if args.output:
        check_not_data(c, args.output)
    product = driver.run_until(c, stage)
    print_warnings(c, args.warnings)
    if stage == "ast":
        text = driver.ast_text(product)
        if args.output:
            write_atomically(args.output, (text + "\n").encode())
        else:
            print(text)
    elif stage == "jax":
        text = product.text()
        if args.output:
            write_atomically(args.output, (text + "\n").encode())
        else:
            print(text)
    elif stage in ("obj", "so"):
        data = product if isinstance(product, bytes) else open(product, "rb").read()
        if args.output:
            write_atomically(args.output, data, mode=0o777 if stage == "so" else 0o666)
        elif stage == "obj":
            sys.stdout.buffer.write(data)
        else:
            print(product)
    else:
        text = product if isinstance(product, str) else str(product)
        if args.output:
            write_atomically(args.output, (text + "\n").encode())
        else:
            print(text)
    return 0


def check_not_data(c, output: str) -> None:
    """A usage error if ``output`` is a data file that compilation ``c``'s program names: every
    string of a Siren program is a file name (File.read's), resolved as the lowering resolves it."""
    from sirenc import driver
    from sirenc.frontend import ast

    driver.run_until(c, "ast")
    pending = [c.products["ast"].program]
    while pending:           # not recursive: a long chain of `let`s is a deep tree
        node = pending.pop()
        if isinstance(node, list):
            pending.extend(node)
        elif isinstance(node, ast.Const):
            if isinstance(node.value, str) and node.value and "\0" not in node.value \
                    and _same_file(output, os.path.join(c.base_dir, node.value)):
                raise SirenUsageError(f"-o {output} would overwrite {node.value}, a data file of the program; "
                                      "give the output a file of its own")
        elif isinstance(node, ast.Node):
            pending.extend(v for v in vars(node).values() if isinstance(v, ast.Node | list))


def cmd_check(args) -> int:
    from sirenc import driver

    c = _open(args, check=True)
    driver.run_until(c, "plan")
    print_warnings(c, args.warnings)
    if args.json:
        report = json.loads(c.plan.to_json())
        report["specialization"] = specialization_report(c)
        print(strict_json(report))
    else:
        print(c.plan.text())
    return 0


def specialization_report(c) -> dict:
    """Whether the compiled program runs on tier 2 (specialize-conjugacy) and, if not, why."""
    from sirenc import driver

    if c.method == "pf":
        return {"tier": None, "reason": "pf keeps no symbolic state"}
    if c.tier == 1:
        return {"tier": 1, "reason": "--tier 1 asks for the general symbolic runtime"}
    driver.run_until(c, "specialized")
    s = c.specialization
    if not s.applied:
        return {"tier": 1, "reason": s.reason, "location": s.location}
    return {"tier": 2, "runtime_plan": s.runtime_plan, "loop_shapes": s.shapes}


# ---- the original's report (ARCHITECTURE.md §18), shared with the `siren` command ----------------------------

def memory_limit_option(text: str | None) -> int | None:
    """``--memory-limit SIZE`` in bytes (None: the runtime's default)."""
    from sirenc.api import memory_size

    try:
        return memory_size(text) or None
    except SirenUsageError as e:
        raise SirenUsageError(e.message.replace("memory_limit", "--memory-limit", 1)) from None


def block(name: str, lines: list[str]) -> list[str]:
    """One block of the original's report: its header line, then its lines."""
    return [f"===== {name} =====", *lines]


def plan_lines(plan: dict) -> list[str]:
    """`name: encoding` per variable; an empty plan is one empty line, as in the original."""
    return [f"{name}: {encoding}" for name, encoding in plan.items()] or [""]


def runtime_plan(outcome: "Outcome", plan: dict) -> dict:
    """How the variables were represented in the run (ARCHITECTURE.md §16.4): what the particles recorded
    under a symbolic method; under pf every random variable of the checked ``plan`` is drawn where
    it is bound."""
    if outcome.runtime_plan is not None:
        return outcome.runtime_plan
    return {name: "sample" for name in plan}


def jit_model(c, data: str | None = None):
    """The compilation's filter, JIT-compiled into this process. ``data`` (``--data``) replaces
    the program's data file (file 0): the runtime reads it as it reads ``File.read``'s files."""
    from sirenc import api, driver

    c.snapshots = False   # nothing prints the intermediate stages of a run
    module = driver.run_until(c, "llvm-dialect")
    info = driver.model_info(c, module)
    if data is not None:
        info.replace_data(data)
    return api.from_llvm_dialect(module, info)


@dataclass
class Outcome:
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

    plan = f.runtime_plan() if f.model.info["method"] != "pf" else None
    if isinstance(f, Chain):      # no evidence, no resampling history
        return Outcome(result, elapsed, float("nan"), f.ess, f.summary() if summarise else None, None, plan,
                       f.acceptance_rate, f.samples, filter=f)
    if not summarise:
        return Outcome(result, elapsed, f.log_evidence, f.ess, runtime_plan=plan, filter=f)
    return Outcome(result, elapsed, f.log_evidence, f.ess, f.summary(), f.history(), plan, filter=f)


def repeated_runs(model, args, options: dict) -> Outcome:
    """``sirenc run --runs K``: K independent runs (sirenc/repeated_runs.py), reported as one
    outcome whose result is their pooled estimate and whose log evidence is that of their pooled
    evidence (the mean of the K estimates of Z)."""
    from sirenc.repeated_runs import runs

    r = runs(model, args.runs, args.particles, args.seed, progress=progress_bar(args), **options)
    return Outcome(r.estimate(), float(r.seconds.sum()), r.pooled_log_evidence, float("nan"),
                   runtime_plan=r.runtime_plan if model.info["method"] != "pf" else None, runs=r)


def run_filter(model, particles: int | None, seed: int, rows=None, progress=None, summarise: bool = True,
               **options) -> Outcome:
    """A run of ``model.filter(particles, seed, **options)``; with ``handler="mh"`` in the options,
    of an MH chain (``particles`` None; ``progress`` is not reported for chains)."""
    f = model.filter(particles=particles, seed=seed, **options)
    start = time.perf_counter()
    f.run(rows, progress=None if options.get("handler") == "mh" else progress)
    result = f.estimate()
    return finish(f, result, time.perf_counter() - start, summarise)


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


def cmd_run(args) -> int:
    from sirenc.api import check_particles
    from sirenc.data import check_readable

    mh = handler_options(args)
    if args.handler == "smc" and args.particles is None:
        args.particles = 1000
    if args.particles is not None:
        check_particles(args.particles, "--particles")
    if not 0 <= args.seed < 2**64:
        raise SirenUsageError(f"--seed must be an integer in [0, 2**64), not {args.seed}")
    check_filter_options(args)
    memory_limit = memory_limit_option(args.memory_limit)
    data = check_readable(args.data) if args.data else None
    check_checkpoint_options(args)
    check_outputs(args)
    c = _open(args, check=not args.no_check)
    if args.backend == "jax":
        model, facts = jax_for_run(c, args, data, memory_limit, mh)
    else:
        if args.float32:
            raise SirenUsageError("--float32 is an option of the JAX back end (--backend jax)")
        model, facts = compiled_for_run(c, data, use_cache=not args.no_cache)
    analysis_time = facts.analysis_time
    print_warnings(c, args.warnings, facts.warnings)
    options = dict(resampler=args.resampler, ess_threshold=args.ess_threshold)
    if args.backend == "native":
        options.update(threads=args.threads, memory_limit=memory_limit)
    if mh:
        options = dict(handler="mh", memory_limit=memory_limit, **mh)
    if args.runs != 1:
        outcome = repeated_runs(model, args, options)
    elif args.plot or args.steps_csv:
        outcome = recorded_run(model, args, options)
    elif args.save or args.resume:
        outcome = checkpointed_run(model, args, options)
    else:
        outcome = run_filter(model, args.particles, args.seed, None, progress=progress_bar(args), **options)
    if args.draws_csv:
        from sirenc.export import to_csv
        to_csv(outcome.filter, args.draws_csv)
    plan = dict(facts.plan or {})
    if args.json:
        from sirenc.summary import jsonable

        print(strict_json({
            "method": args.method, "tier": None if args.method == "pf" else model.info.get("tier", 1),
            "handler": args.handler, "particles": args.particles, "seed": args.seed,
            **({"mh": {**mh, "acceptance_rate": outcome.acceptance_rate}} if mh else {}),
            "result": _jsonable(outcome.result), "inferred_plan": plan, "runtime_plan": runtime_plan(outcome, plan),
            "log_evidence": None if mh else outcome.log_evidence, "ess": outcome.ess,
            "time_s": outcome.evaluation_time,
            "analysis_time_s": analysis_time, "summary": jsonable(outcome.summary),
            "variables": variables_json(outcome),
            "history": {k: v.tolist() for k, v in (outcome.history or {}).items()},
            **({"runs": runs_json(outcome.runs)} if outcome.runs is not None else {}),
        }))
        return 0
    out = block("Handler", [args.handler.upper()]) + block("Inference Algorithm", [args.method.upper()])
    if analysis_time is not None:
        out += block("Inferred Inference Plan", plan_lines(plan))
        out += block("Analysis Time", [repr(analysis_time)])
    out += block("Evaluation Time", [repr(outcome.evaluation_time)])
    out += posterior_block(outcome)
    out += block("Result", [format_value(outcome.result)])
    if args.verbose and outcome.runs is None:      # the Runs block gives the runs' log evidence
        out += verbose_blocks(outcome)
    out += block("Runtime Inference Plan", plan_lines(runtime_plan(outcome, plan)))
    print("\n".join(out))
    return 0


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

    return {**repeated_runs.jsonable(r), "estimates": [_jsonable(e) for e in r.estimates]}


def check_outputs(args) -> None:
    """Before the work: an output that cannot be written, or options that do not go together, are
    usage errors now, not after a long run."""
    from sirenc.backend.link import check_output

    if isinstance(args.runs, bool) or args.runs < 1:
        raise SirenUsageError(f"--runs must be a positive integer, not {args.runs}")
    if args.runs != 1 and (args.plot or args.steps_csv or args.draws_csv):
        raise SirenUsageError("--plot, --steps-csv and --draws-csv are of one run; give them without --runs")
    if args.steps_csv and args.handler == "mh":
        raise SirenUsageError("--steps-csv needs the SMC handler: an MH chain is not run row by row")
    if args.plot:
        from sirenc.plot import require_matplotlib
        require_matplotlib()
    for name in ("plot", "steps_csv", "draws_csv"):
        if getattr(args, name):
            check_output(getattr(args, name))


def recorded_run(model, args, options: dict) -> Outcome:
    """``sirenc run --plot`` and ``--steps-csv``: the run, recorded step by step (sirenc/plot.py),
    drawn into a PNG and written as CSV. A streamable program is fed row by row, with the same
    answers as a whole run."""
    from sirenc import plot

    if args.steps_csv and not model.info["streamable"]:
        why = model.info.get("not_streamable_reason")
        raise SirenUsageError(f"--steps-csv needs a streamable program, one whose data rows can be fed one at "
                              f"a time; {args.file} is not" + (f": {why}" if why else ""))
    f = model.filter(particles=args.particles, seed=args.seed, **options)
    history = plot.record(f, None, progress=progress_bar(args))
    if args.plot:
        plot.save(history, args.plot, title=f"{os.path.basename(args.file)}: {args.particles} particles, "
                  f"seed {args.seed}")
    if args.steps_csv:
        from sirenc.export import steps_to_csv
        steps_to_csv(history, args.steps_csv)
    return finish(f, history.final, history.seconds)


def check_filter_options(args) -> None:
    """The filter's options that the API checks only once the program is compiled: now, and named
    as the user typed them."""
    from sirenc.api import check_resampling, check_threads

    check_resampling(args.resampler, args.ess_threshold, "--ess-threshold")
    check_threads(args.threads, "--threads")


# What the checkpoint fixes: a resumed filter keeps the saved one's, so typing one is an error.
CHECKPOINT_FIXES = (("particles", "--particles"), ("seed", "--seed"), ("resampler", "--resampler"),
                    ("ess_threshold", "--ess-threshold"), ("memory_limit", "--memory-limit"))


def check_checkpoint_options(args) -> None:
    """``--save`` and ``--resume`` (docs/api.md, sirenc run): the options they do not go with are
    usage errors before any work, and the checkpoint is never written over an input."""
    if not (args.save or args.resume):
        return
    flags = checkpoint_flags(args)
    if args.handler == "mh":
        raise SirenUsageError(f"{flags}: an MH chain cannot be saved; checkpoints are of the particle filter")
    if args.backend == "jax":
        raise SirenUsageError(f"{flags}: an option of the native back end (in Python, JaxFilter.save "
                              "and JaxFilter.load keep a JAX filter)")
    others = [flag for flag, given in (("--runs", args.runs != 1), ("--plot", args.plot),
                                       ("--steps-csv", args.steps_csv)) if given]
    if others:
        raise SirenUsageError(f"{', '.join(others)} cannot be combined with {flags}: "
                              f"{'it makes runs' if len(others) == 1 else 'they make runs'} from the first data "
                              f"row, and {flags} a stream kept in a checkpoint")
    if args.resume:
        typed = [flag for dest, flag in CHECKPOINT_FIXES if dest in args.typed]
        if typed:
            raise SirenUsageError(f"--resume continues the saved filter with its own particles, seed, "
                                  f"resampler, ESS threshold and the default memory limit; leave out "
                                  f"{', '.join(typed)}")
        try:
            with open(args.resume, "rb"):
                pass
        except OSError as e:
            raise SirenUsageError(f"cannot read checkpoint '{args.resume}': {e.strerror}") from None
    if args.save:
        from sirenc.backend.link import check_output

        check_output(args.save)
        for what, path in (("the program", args.file), ("the --data file", args.data),
                           ("the --draws-csv file", args.draws_csv)):
            if path is not None and _same_file(args.save, path):
                raise SirenUsageError(f"--save {args.save} would overwrite {what}; give the checkpoint "
                                      "a file of its own")


def checkpoint_flags(args) -> str:
    """``--save``, ``--resume`` or both, as typed: what a message about them names."""
    return " and ".join(flag for flag, given in (("--save", args.save), ("--resume", args.resume)) if given)


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)     # also through links
    except OSError:                       # one does not exist (yet)
        return os.path.realpath(a) == os.path.realpath(b)


def checkpointed_run(model, args, options: dict) -> Outcome:
    """``sirenc run --save`` / ``--resume``: a filter fed its rows one by one (``Filter.step``: a
    checkpoint taken after ``run`` would start a fresh stream when resumed), from the start or
    from the checkpoint, saved afterwards with ``--save``. The report is of the whole stream."""
    from sirenc.api import Filter
    from sirenc.data import read_rows

    if not model.info["streamable"]:
        why = model.info.get("not_streamable_reason")
        raise SirenUsageError(f"{checkpoint_flags(args)}: a checkpoint is of a stream, and {args.file} does not "
                              "stream (its data rows cannot be fed one at a time)" + (f": {why}" if why else ""))
    # check_checkpoint_options saw --data only: the files the program reads are known now.
    for path in model.info["files"] if args.save else ():
        if _same_file(args.save, path):
            raise SirenUsageError(f"--save {args.save} would overwrite {path}, a data file of the program; "
                                  "give the checkpoint a file of its own")
    if args.resume:
        try:
            f = Filter.load(model, args.resume, threads=options["threads"])
        except SirenUsageError as e:
            reason = e.message.removeprefix("cannot load the filter: ")
            if reason.endswith("of another model"):
                reason += (" (another program, or this one compiled with another -m, --tier, --max-rvs, "
                           "--analysis-budget or --no-check)")
            raise SirenUsageError(f"cannot resume from '{args.resume}': {reason}") from None
        # The particles are the checkpoint's; its seed is inside it, not readable from here.
        args.particles, args.seed = f.n_particles, None
    else:
        f = model.filter(particles=args.particles, seed=args.seed, **options)
    files = model.info["files"]
    # Resuming without --data feeds nothing: the program's own file is the rows already saved.
    rows = read_rows(files[0]) if files and (args.data or not args.resume) else []
    start = time.perf_counter()
    stream(f, rows, progress_bar(args))
    outcome = finish(f, f.estimate(), time.perf_counter() - start)
    if args.save:
        f.save(args.save)
    return outcome


def stream(f, rows, progress) -> None:
    """Feed ``rows`` to filter ``f`` one by one, reporting to ``progress`` (``progress_bar``) as a
    run reports, about ten times a second."""
    from sirenc.progress import DEFAULT_INTERVAL, Progress

    start = last = time.perf_counter()
    for i, row in enumerate(rows, 1):
        f.step(row)
        now = time.perf_counter()
        if now - last >= DEFAULT_INTERVAL:
            progress(Progress(i, len(rows), f.n_particles, now - start, False, f.ess, f.log_evidence))
            last = now
    progress(Progress(len(rows), len(rows), f.n_particles, time.perf_counter() - start, True, f.ess,
                      f.log_evidence))


def progress_bar(args):
    """The progress bar of ``sirenc run``: on a terminal, unless ``--quiet``. Otherwise a hook that
    does nothing: Python runs a pending Ctrl-C's handler only when some Python code runs, and
    the hook's ten calls a second are what lets a long run be interrupted at once."""
    if args.quiet or not sys.stderr.isatty():
        return _interruptible
    from sirenc.progress import ProgressBar
    return ProgressBar(sys.stderr, label="sirenc run")


def _interruptible(progress) -> None:
    pass


def compiled_for_run(c, data: str | None, use_cache: bool = True):
    """``(Model, CachedFacts)`` for ``sirenc run``: from the compile cache (sirenc/compile_cache.py)
    when it can be used, else JIT-compiled into this process."""
    from sirenc import compile_cache
    from sirenc.diagnostics import register_source

    if use_cache and compile_cache.available():
        key = compile_cache.entry_key(c, data)
        hit = compile_cache.lookup(key, c, data)
        if hit is not None:
            register_source(c.path, c.text)      # the warnings quote the program's lines
            return hit
        try:
            return compile_cache.store(key, c, data, program_warnings)
        except compile_cache.CacheUnusable as e:
            print(f"sirenc: warning: the compile cache is not usable, compiling without it: {e.message} "
                  "(set SIRENC_CACHE_DIR, or give --no-cache)", file=sys.stderr)
    model = jit_model(c, data)
    return model, compile_cache.CachedFacts(dict(c.plan.plan) if c.plan is not None else None,
                                            c.plan.seconds if c.check else None, program_warnings(c))


def jax_for_run(c, args, data: str | None, memory_limit, mh):
    """``(JaxModel, CachedFacts)`` for ``sirenc run --backend jax``."""
    from sirenc import compile_cache, driver

    if mh or args.threads != 1 or memory_limit is not None or args.plot:
        raise SirenUsageError("--handler mh, --threads, --memory-limit and --plot are options of the native "
                              "back end, not of --backend jax")
    c.float32, c.snapshots = args.float32, False
    model = driver.run_until(c, "jax")
    if data is not None:
        if not model.info["data_file"]:
            raise SirenUsageError("--data replaces the file the program reads with File.read, "
                                  "and this program reads no file")
        model.info["data_file"] = os.path.abspath(data)
    return model, compile_cache.CachedFacts(dict(c.plan.plan) if c.plan is not None else None,
                                            c.plan.seconds if c.check else None, program_warnings(c))


COMMANDS = {"run": (_run_parser, cmd_run), "check": (_check_parser, cmd_check)}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "help":   # as `git help`: the help of sirenc, or of one command
        if len(argv) > 2 or (len(argv) == 2 and argv[1] not in COMMANDS):
            print(f"sirenc: error: no command {' '.join(argv[1:])!r}; the commands are "
                  f"{', '.join(COMMANDS)} and help", file=sys.stderr)
            return 2
        (COMMANDS[argv[1]][0] if len(argv) == 2 else _compile_parser)().print_help()
        return 0
    if argv and argv[0] in COMMANDS:
        make_parser, command = COMMANDS[argv[0]]
        argv = argv[1:]
    else:
        make_parser, command = _compile_parser, cmd_compile
    args = make_parser().parse_args(argv)
    args.typed = typed_options(make_parser(), argv)
    return guarded(command, args)


def typed_options(parser: argparse.ArgumentParser, argv: list[str]) -> set[str]:
    """The ``dest`` of every option ``argv`` gives: an option typed with its default value is
    still typed (``--resume`` refuses ``--seed 0`` too, the checkpoint has a seed of its own)."""
    for action in parser._actions:
        action.default = argparse.SUPPRESS
    return set(vars(parser.parse_args(argv)))


def guarded(command, args, prog: str = "sirenc") -> int:
    """Run ``command(args)``; turn every error into a message and the exit status (module docstring)."""
    try:
        return command(args)
    except SirenUsageError as e:
        print(f"{prog}: error: {e.message}", file=sys.stderr)
        return 2
    except SirenError as e:
        print(e.render(), file=sys.stderr)
        return 1
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130
    except MemoryError:
        # The runtime keeps to its memory limit; this is Python's own memory, spent on the
        # particles' results once the run is over (summaries, tables of 10^7 particles).
        print(f"{prog}: error: out of memory: this machine could not hold what the run's results "
              "need in Python; use fewer particles (-p), or run where more memory is free", file=sys.stderr)
        return 1
    except Exception as e:  # a bug in sirenc, not in the user's program
        if os.environ.get("SIRENC_TRACEBACK"):
            raise
        print(f"{prog}: internal compiler error: {type(e).__name__}: {e}\n"
              "This is a bug in sirenc; SIRENC_TRACEBACK=1 shows where it happened.", file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main())
