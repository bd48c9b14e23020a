"""The `sirenc` command line.

    sirenc model.si -o model.so [-m pf] [--emit=STAGE]   compile
    sirenc run model.si [-m pf] [-p 1000] [--seed S]     compile (JIT) and run
    sirenc check model.si [-m ssi|ds|bp]                 check the inference plan

Exit status: 0 on success, 1 when the program, its plan or its data is wrong
(a diagnostic with the source location is printed), 2 on bad usage, 3 on an
internal compiler error (a bug in sirenc).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from sirenc.diagnostics import SirenError, SirenUsageError, render_at

RESAMPLERS = ("systematic", "multinomial", "stratified", "residual")


def _common(p: argparse.ArgumentParser, default_method: str) -> None:
    from sirenc.driver import METHODS
    from sirenc.passes.plan_analysis import DEFAULT_BUDGET

    p.add_argument("file", help="the Siren program (.si)")
    p.add_argument("-m", "--method", choices=METHODS, default=default_method,
                   help=f"inference algorithm (default {default_method}); pf = plain particle filter")
    p.add_argument("--max-rvs", type=int, default=4, metavar="K",
                   help="plan analysis widening threshold (default 4)")
    p.add_argument("--analysis-budget", type=int, metavar="N",
                   help=f"work the plan analysis may do before it gives up (default {DEFAULT_BUDGET}); "
                   "a count, not seconds: the same verdict on any machine")


def _compile_parser() -> argparse.ArgumentParser:
    from sirenc.driver import ORDER

    p = argparse.ArgumentParser(
        prog="sirenc",
        description="Compile a Siren program to a native particle filter. "
        "Other commands: 'sirenc run --help', 'sirenc check --help'.",
    )
    _common(p, "pf")
    p.add_argument("-o", "--output", metavar="FILE", help="write the compiled filter (model.so)")
    p.add_argument("--emit", choices=ORDER, metavar="STAGE",
                   help=f"stop after STAGE and print it: {', '.join(ORDER)}")
    p.add_argument("--no-check", action="store_true", help="skip the inference-plan analysis")
    return p


def _run_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="sirenc run", description="Compile (in-process JIT) and run a Siren program.")
    _common(p, "pf")
    p.add_argument("-p", "--particles", type=int, default=1000, help="number of particles (default 1000)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--data", metavar="FILE", help="CSV rows (header line first) replacing the data the program reads")
    p.add_argument("--resampler", choices=RESAMPLERS, default="systematic", help="resampling scheme")
    p.add_argument("--ess-threshold", type=float, default=0.0, metavar="T",
                   help="resample only when ESS < T*N (default 0: at every resample())")
    p.add_argument("--threads", type=int, default=1, metavar="T",
                   help="threads resuming particles (default 1; the answer does not depend on it)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--no-check", action="store_true", help="skip the inference-plan analysis")
    return p


def _check_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="sirenc check", description="Check a program's inference plan.")
    _common(p, "ssi")
    p.add_argument("--json", action="store_true", help="print the inferred plan as JSON")
    return p


def format_value(value, top: bool = True) -> str:
    """The original's textual result (SPEC 16.2): Python literals, nested pairs."""
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


def _print_warnings(c) -> None:
    typed = c.products.get("ast")
    for message, span in getattr(getattr(typed, "program", None), "warnings", []):
        print(render_at("warning", message, span), file=sys.stderr)


def _open(args, check: bool):
    from sirenc import driver

    return driver.open_source(args.file, args.method, check=check, max_rvs=args.max_rvs,
                              analysis_budget=args.analysis_budget)


def cmd_compile(args) -> int:
    from sirenc import driver

    c = _open(args, check=not args.no_check)
    stage = args.emit or ("so" if args.output else None)
    if stage is None:
        raise SirenUsageError("nothing to do: give -o FILE or --emit=STAGE")
    product = driver.run_until(c, stage)
    _print_warnings(c)
    if stage == "ast":
        print(driver.ast_text(product))
    elif stage in ("obj", "so"):
        data = product if isinstance(product, bytes) else open(product, "rb").read()
        if args.output:
            with open(args.output, "wb") as f:
                f.write(data)
        elif stage == "obj":
            sys.stdout.buffer.write(data)
        else:
            print(product)
    else:
        text = product if isinstance(product, str) else str(product)
        if args.output:
            with open(args.output, "w") as f:
                f.write(text + "\n")
        else:
            print(text)
    return 0


def cmd_check(args) -> int:
    from sirenc import driver

    c = _open(args, check=True)
    driver.run_until(c, "plan")
    _print_warnings(c)
    print(c.plan.to_json() if args.json else c.plan.text())
    return 0


def cmd_run(args) -> int:
    from sirenc import api, driver
    from sirenc.data import read_csv

    if args.particles < 1:
        raise SirenUsageError("--particles must be at least 1")
    c = _open(args, check=not args.no_check)
    module = driver.run_until(c, "llvm-dialect")
    model = api.from_llvm_dialect(module, driver.model_info(c, module))
    _print_warnings(c)
    rows = read_csv(args.data) if args.data else None
    f = model.filter(particles=args.particles, seed=args.seed, resampler=args.resampler,
                     ess_threshold=args.ess_threshold, threads=args.threads)
    start = time.perf_counter()
    f.run(rows)
    result = f.estimate()
    elapsed = time.perf_counter() - start
    plan = dict(c.plan.plan) if c.plan is not None else {}
    if args.json:
        print(json.dumps({
            "method": args.method, "particles": args.particles, "seed": args.seed,
            "result": _jsonable(result), "inferred_plan": plan, "runtime_plan": plan,
            "log_evidence": f.log_evidence, "ess": f.ess, "time_s": elapsed,
        }))
        return 0
    out = ["===== Handler =====", "SMC", "===== Inference Algorithm =====", args.method.upper()]
    if c.plan is not None:
        out += ["===== Inferred Inference Plan ====="] + [f"{k}: {v}" for k, v in plan.items()]
    out += ["===== Evaluation Time =====", repr(elapsed), "===== Result =====", format_value(result)]
    # Under pf every random variable is drawn where it is bound.
    out += ["===== Runtime Inference Plan ====="] + ([f"{k}: sample" for k in plan] or [""])
    out += ["===== Log Evidence =====", repr(f.log_evidence)]
    print("\n".join(out))
    return 0


COMMANDS = {"run": (_run_parser, cmd_run), "check": (_check_parser, cmd_check)}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in COMMANDS:
        make_parser, command = COMMANDS[argv[0]]
        argv = argv[1:]
    else:
        make_parser, command = _compile_parser, cmd_compile
    args = make_parser().parse_args(argv)
    try:
        return command(args)
    except SirenUsageError as e:
        print(f"sirenc: error: {e.message}", file=sys.stderr)
        return 2
    except SirenError as e:
        print(e.render(), file=sys.stderr)
        return 1
    except BrokenPipeError:
        return 0
    except Exception as e:  # a bug in sirenc, not in the user's program
        if os.environ.get("SIRENC_TRACEBACK"):
            raise
        print(f"sirenc: internal compiler error: {type(e).__name__}: {e}\n"
              "This is a bug in sirenc; SIRENC_TRACEBACK=1 shows where it happened.", file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main())
