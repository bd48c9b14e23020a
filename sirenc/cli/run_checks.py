"""`sirenc run`'s options checked before any work: each wrong one is a usage error at once, named as
the user typed it, not one after a long run."""

from __future__ import annotations

from sirenc.cli.files import same_file
from sirenc.diagnostics import SirenUsageError


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


def memory_limit_option(text: str | None) -> int | None:
    """``--memory-limit SIZE`` in bytes (None: the runtime's default)."""
    from sirenc.arguments import memory_size

    try:
        return memory_size(text) or None
    except SirenUsageError as e:
        raise SirenUsageError(e.message.replace("memory_limit", "--memory-limit", 1)) from None


def check_filter_options(args) -> None:
    """The filter's options that the API checks only once the program is compiled: now, and named
    as the user typed them."""
    from sirenc.arguments import check_resampling, check_threads

    check_resampling(args.resampler, args.ess_threshold, "--ess-threshold")
    check_threads(args.threads, "--threads")


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
            if path is not None and same_file(args.save, path):
                raise SirenUsageError(f"--save {args.save} would overwrite {what}; give the checkpoint "
                                      "a file of its own")


def checkpoint_flags(args) -> str:
    """``--save``, ``--resume`` or both, as typed: what a message about them names."""
    return " and ".join(flag for flag, given in (("--save", args.save), ("--resume", args.resume)) if given)
