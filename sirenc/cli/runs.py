"""The ways `sirenc run` runs a model: once, K times (--runs), recorded step by step (--plot,
--steps-csv), or fed its rows and kept in a checkpoint (--save, --resume)."""

from __future__ import annotations

import os
import sys
import time

from sirenc import methods
from sirenc.cli.files import same_file
from sirenc.cli.outcome import Outcome, finish
from sirenc.cli.run_checks import checkpoint_flags
from sirenc.diagnostics import SirenUsageError


def run_filter(model, particles: int | None, seed: int, rows=None, progress=None, summarise: bool = True,
               **options) -> Outcome:
    """A run of ``model.filter(particles, seed, **options)``; with ``handler="mh"`` in the options,
    of an MH chain (``particles`` None; ``progress`` is not reported for chains)."""
    f = model.filter(particles=particles, seed=seed, **options)
    start = time.perf_counter()
    f.run(rows, progress=None if options.get("handler") == "mh" else progress)
    result = f.estimate()
    return finish(f, result, time.perf_counter() - start, summarise)


def repeated_runs(model, args, options: dict) -> Outcome:
    """``sirenc run --runs K``: K independent runs (sirenc/repeated_runs.py), reported as one
    outcome whose result is their pooled estimate and whose log evidence is that of their pooled
    evidence (the mean of the K estimates of Z)."""
    from sirenc.repeated_runs import runs

    r = runs(model, args.runs, args.particles, args.seed, progress=progress_bar(args), **options)
    return Outcome(r.estimate(), float(r.seconds.sum()), r.pooled_log_evidence, float("nan"),
                   runtime_plan=r.runtime_plan if methods.keeps_symbolic_state(model.info["method"]) else None,
                   runs=r)


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


def checkpointed_run(model, args, options: dict) -> Outcome:
    """``sirenc run --save`` / ``--resume``: a filter fed its rows one by one (``Filter.step``: a
    checkpoint taken after ``run`` would start a fresh stream when resumed), from the start or
    from the checkpoint, saved afterwards with ``--save``. The report is of the whole stream."""
    from sirenc.native_filter import Filter
    from sirenc.streaming import feed, rows_to_feed

    if not model.info["streamable"]:
        why = model.info.get("not_streamable_reason")
        raise SirenUsageError(f"{checkpoint_flags(args)}: a checkpoint is of a stream, and {args.file} does not "
                              "stream (its data rows cannot be fed one at a time)" + (f": {why}" if why else ""))
    # check_checkpoint_options saw --data only: the files the program reads are known now.
    for path in model.info["files"] if args.save else ():
        if same_file(args.save, path):
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
    # Resuming without --data feeds nothing: the program's own file is the rows already saved.
    rows = rows_to_feed(model) if args.data or not args.resume else []
    start = time.perf_counter()
    feed(f, rows, progress_bar(args))
    outcome = finish(f, f.estimate(), time.perf_counter() - start)
    if args.save:
        f.save(args.save)
    return outcome


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
