"""`sirenc run`: compile a program and run it, then print the report."""

from __future__ import annotations

from sirenc import methods
from sirenc.cli.compilation import compiled_for_run, jax_for_run, open_program
from sirenc.cli.report import (
    block, format_value, plan_lines, posterior_block, runs_json, runtime_plan, strict_json, value_json, variables_json,
    verbose_blocks,
)
from sirenc.cli.run_checks import (
    check_checkpoint_options, check_filter_options, check_outputs, handler_options, memory_limit_option,
)
from sirenc.cli.runs import checkpointed_run, progress_bar, recorded_run, repeated_runs, run_filter
from sirenc.cli.streams import run_streams, stream_files
from sirenc.cli.warning_groups import print_warnings
from sirenc.diagnostics import SirenUsageError


def cmd_run(args) -> int:
    from sirenc.arguments import check_particles
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
    files = stream_files(args)
    if files is not None:
        return run_streams(args, files, memory_limit)
    data = check_readable(args.data) if args.data else None
    check_checkpoint_options(args)
    check_outputs(args)
    c = open_program(args, check=not args.no_check)
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
            "method": args.method, "tier": model.info.get("tier", 1) if methods.get(args.method).symbolic else None,
            "handler": args.handler, "particles": args.particles, "seed": args.seed,
            **({"mh": {**mh, "acceptance_rate": outcome.acceptance_rate}} if mh else {}),
            "result": value_json(outcome.result), "inferred_plan": plan, "runtime_plan": runtime_plan(outcome, plan),
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
