"""`sirenc run --data 'streams/*.csv'` and `sirenc run --scheduler ADDRESS`: one filter per data file,
on Dask (sirenc/distributed.py), reported as one row per file (a stream)."""

from __future__ import annotations

import glob
import os
import sys
import time

from sirenc.cli.report import block, format_value, plan_lines, strict_json, value_json
from sirenc.cli.warning_groups import print_warnings
from sirenc.diagnostics import SirenUsageError


def stream_files(args) -> list[str] | None:
    """The data files of a run of one filter per file, or None for a run of one filter: ``--data``
    is a pattern (it has ``*``, ``?`` or ``[`` and names no file), or ``--scheduler`` is given. An
    empty list is the program's own data file. A pattern gives a report by file even where it
    matches one, so that a script reads the same report however many files there are."""
    if args.data and glob.has_magic(args.data) and not os.path.exists(args.data):
        files = sorted(glob.glob(args.data, recursive=True))
        if not files:
            raise SirenUsageError(f"--data {args.data}: no file matches this pattern")
        return files
    if args.scheduler is None:
        return None
    return [args.data] if args.data else []


def check_stream_options(args) -> None:
    """The options of one run that a run per data file does not take: usage errors before any work."""
    how = "--scheduler" if args.scheduler is not None else f"--data {args.data}"
    others = [flag for flag, given in (("--save", args.save), ("--resume", args.resume), ("--plot", args.plot),
                                       ("--steps-csv", args.steps_csv), ("--draws-csv", args.draws_csv),
                                       ("--runs", args.runs != 1), ("--handler mh", args.handler == "mh"),
                                       ("--backend jax", args.backend == "jax")) if given]
    if others:
        raise SirenUsageError(f"{', '.join(others)} cannot be combined with {how}, which runs one particle filter "
                              "per data file")


def run_streams(args, files: list[str], memory_limit: int | None) -> int:
    """Runs the program once per file of ``files`` (``stream_files``) and prints a row per file, or
    with ``--json`` an object keyed by file. Exit status 1 when some stream failed: its row gives
    the first line of its error, standard error the whole of it."""
    from sirenc.api import from_compilation
    from sirenc.cli.compilation import open_program
    from sirenc.distributed import run_many

    check_stream_options(args)
    c = open_program(args, check=not args.no_check)
    model = from_compilation(c)     # compiled here for its errors and plan; a worker compiles it again
    print_warnings(c, args.warnings)
    files = files or model.info["files"][:1]
    if not files:
        raise SirenUsageError("--scheduler runs the program once per data file, and it reads no file: give --data")
    start = time.perf_counter()
    results = run_many(model, files, particles=args.particles, seed=args.seed, client=args.scheduler,
                       resampler=args.resampler, ess_threshold=args.ess_threshold, threads=args.threads,
                       memory_limit=memory_limit)
    elapsed = time.perf_counter() - start
    plan = dict(c.plan.plan) if c.plan is not None else {}
    analysis_time = c.plan.seconds if c.check else None
    for r in results.values():
        if not r.ok:
            print(r.error.render(), file=sys.stderr)
    status = 0 if all(r.ok for r in results.values()) else 1
    if args.json:
        from sirenc.summary import jsonable

        print(strict_json({
            "method": args.method, "handler": args.handler, "particles": args.particles, "seed": args.seed,
            "inferred_plan": plan, "analysis_time_s": analysis_time, "time_s": elapsed,
            "streams": {name: {"seed": r.seed, "result": value_json(r.estimate), "log_evidence": r.log_evidence,
                               "ess": r.ess, "time_s": r.seconds, "summary": jsonable(r.summary),
                               "error": None if r.ok else r.error.render()}
                        for name, r in results.items()},
        }))
        return status
    out = block("Handler", [args.handler.upper()]) + block("Inference Algorithm", [args.method.upper()])
    if analysis_time is not None:
        out += block("Inferred Inference Plan", plan_lines(plan))
        out += block("Analysis Time", [repr(analysis_time)])
    out += block("Evaluation Time", [repr(elapsed)])
    out += block("Streams", stream_table(results))
    print("\n".join(out))
    return status


def stream_table(results: dict) -> list[str]:
    """A row per stream: its name, estimate and log evidence, or the first line of its error."""
    head = ["stream", "estimate", "log evidence", "error"]
    rows = [[name, format_value(r.estimate), repr(r.log_evidence), ""] if r.ok else
            [name, "", "", r.error.render().split("\n", 1)[0]] for name, r in results.items()]
    widths = [max(len(row[i]) for row in [head, *rows]) for i in range(len(head))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in [head, *rows]]
