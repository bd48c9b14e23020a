"""Large-scale fuzzing of sirenc (issue 11, item 7); the CI-scale runs are tests/fuzz/.

    python benchmarks/fuzz.py --programs 5000 --data 1000 [--seed 0] [--timeout 60] [--out DIR]

Generates Siren programs (well typed, ill typed, and token/byte mutations of well-typed ones)
and CSV data files for a fixed streamed model (read by File.read and given by --data), runs
each through ``sirenc`` (``run`` with varied options, ``check``, or a compilation) in a worker
process, and checks the invariant: exit 0, or exit 1 with a ``file:line:col: error:``, or
exit 2 with an ``error:`` message; never exit 3, a signal, a hang or a Python traceback.

Prints a table of outcomes (rows: input class; columns: exit status / signal / hang) and the
distinct failure classes, each with a saved example under ``--out`` (default: a new temporary
folder): model.si, data.csv, given.csv and outcome.txt (the command line and its output).
The script checks every input class, including those tests/fuzz/ leaves out while their bugs
are open (non-UTF-8 programs and data, CR-only line endings).
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "fuzz"))

from hypothesis import HealthCheck, Phase, given, settings, seed as hseed  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import fuzzgen  # noqa: E402
import fuzzrun  # noqa: E402


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--programs", type=int, default=1000, help="programs to generate (default 1000)")
    p.add_argument("--data", type=int, default=300, help="data files to generate (default 300)")
    p.add_argument("--seed", type=int, default=0, help="generator seed (default 0)")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds before a case counts as a hang")
    p.add_argument("--out", help="folder for the failing cases (default: a new temporary folder)")
    p.add_argument("--max-depth", type=int, default=5, help="nesting depth of generated programs")
    p.add_argument("--big", type=int, default=40, help="big programs (long, deep) to generate (default 40)")
    p.add_argument("--big-size", type=int, default=2000,
                   help="the largest size of a big program (lines, nesting levels...; default 2000)")
    p.add_argument("--options", type=int, default=100,
                   help="runs of a fixed model with odd command-line options (default 100)")
    p.add_argument("--files", type=int, default=20,
                   help="programs reading many data files, up to 100 (default 20)")
    args = p.parse_args(argv)

    out = args.out or tempfile.mkdtemp(prefix="sirenc-fuzz-")
    os.makedirs(out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="sirenc-fuzz-work-")
    env = dict(os.environ)
    env.setdefault("SIRENC_CACHE_DIR", os.path.join(work, "cache"))
    table = collections.defaultdict(collections.Counter)
    failures = collections.OrderedDict()    # message class -> (count, first saved case, outcome)
    data_bytes = fuzzgen.DATA_CSV.encode()
    start = time.monotonic()

    with fuzzrun.Worker(timeout=args.timeout, env=env) as worker:
        def record(label: str, folder: str, outcome: fuzzrun.Outcome, detail: str = "") -> None:
            table[label][outcome.kind()] += 1
            problem = fuzzrun.violation(outcome)
            if problem is None:
                return
            key = outcome.kind() + " | " + detail + fuzzrun.message_class(outcome)
            if key in failures:
                n, path, first = failures[key]
                failures[key] = (n + 1, path, first)
            else:
                failures[key] = (1, fuzzrun.save_failure(out, label, folder, outcome), outcome)

        def run_program(label: str, program: bytes, data) -> None:
            folder = os.path.join(work, "case")
            fuzzrun.write_case(folder, program, data_bytes)
            argv = data.draw(fuzzgen.command_lines("model.si", folder))
            record(label, folder, worker.run(argv, cwd=folder))

        def budget(n):
            return settings(max_examples=max(n, 1), deadline=None, database=None, derandomize=False,
                            phases=[Phase.generate], suppress_health_check=list(HealthCheck))

        n_typed, n_ill = args.programs * 4 // 10, args.programs * 2 // 10
        n_mut = args.programs - n_typed - n_ill

        @hseed(args.seed)
        @budget(n_typed)
        @given(fuzzgen.programs(ill=False, max_depth=args.max_depth), st.data())
        def typed(program, data):
            run_program("well-typed", program.encode(), data)

        @hseed(args.seed + 1)
        @budget(n_ill)
        @given(fuzzgen.programs(ill=True, max_depth=args.max_depth), st.data())
        def ill(program, data):
            run_program("ill-typed", program.encode(), data)

        @hseed(args.seed + 2)
        @budget(n_mut)
        @given(fuzzgen.programs(ill=False, max_depth=3).flatmap(fuzzgen.mutated), st.data())
        def mutants(program, data):
            run_program("mutated", program, data)

        @hseed(args.seed + 3)
        @budget(args.data)
        @given(st.one_of(fuzzgen.csv_files(), fuzzgen.mutated_csv()), st.booleans(), st.data())
        def data_files(csv, by_option, data):
            folder = os.path.join(work, "case")
            model = fuzzgen.DATA_MODEL.encode()
            if by_option:   # --data replaces what File.read would read
                fuzzrun.write_case(folder, model, data_bytes, csv)
                argv = data.draw(fuzzgen.command_lines("model.si", folder, data="given.csv"))
                label = "csv --data"
            else:
                fuzzrun.write_case(folder, model, csv)
                argv = ["run", "model.si", "-p", "5", "--seed", "1"]
                label = "csv File.read"
            if argv[0] != "run":
                argv = ["run", "model.si", "-p", "5", "--data", "given.csv"]
            record(label, folder, worker.run(argv, cwd=folder))

        @hseed(args.seed + 4)
        @budget(args.files)
        @given(fuzzgen.many_files(most=100))
        def files(case):
            program, extra = case
            folder = os.path.join(work, "case")
            fuzzrun.write_case(folder, program.encode(), data_bytes, extra=extra)
            record("many files", folder, worker.run(["run", "model.si", "-p", "2"], cwd=folder))

        @hseed(args.seed + 5)
        @budget(args.big)
        @given(fuzzgen.big_programs(most=args.big_size))
        def big(case):
            kind, size, program = case
            folder = os.path.join(work, "case")
            fuzzrun.write_case(folder, program.encode(), data_bytes)
            record("big", folder, worker.run(["run", "model.si", "-p", "2"], cwd=folder), f"{kind}: ")

        @hseed(args.seed + 6)
        @budget(args.options)
        @given(fuzzgen.odd_command_lines())
        def options(argv):
            folder = os.path.join(work, "case")
            fuzzrun.write_case(folder, fuzzgen.DATA_MODEL.encode(), data_bytes, data_bytes)
            record("odd options", folder, worker.run(argv, cwd=folder))

        for name, test, n in (("odd options", options, args.options), ("well-typed", typed, n_typed), ("ill-typed", ill, n_ill),
                              ("mutated", mutants, n_mut), ("data", data_files, args.data),
                              ("many files", files, args.files), ("big", big, args.big)):
            if n > 0:
                t = time.monotonic()
                test()
                print(f"# {name}: {n} cases in {time.monotonic() - t:.0f} s", file=sys.stderr, flush=True)

    kinds = sorted({k for row in table.values() for k in row})
    width = max([len(k) for k in table] + [14])
    print(f"{'input class':<{width}} " + " ".join(f"{k:>9}" for k in kinds) + f" {'total':>7}")
    for label, row in table.items():
        print(f"{label:<{width}} " + " ".join(f"{row[k]:>9}" for k in kinds) + f" {sum(row.values()):>7}")
    total = sum(sum(r.values()) for r in table.values())
    print(f"\n{total} cases in {time.monotonic() - start:.0f} s; {len(failures)} failure classes; "
          f"failing cases saved under {out}")
    for key, (n, path, outcome) in failures.items():
        detail = key.split(" | ", 1)[1].split(": ", 1)[0] + ": " if key.split(" | ", 1)[1].startswith(
            tuple(k + ":" for k in fuzzgen.STRESS_KINDS)) else ""
        print(f"\n[{n}x] {detail}{fuzzrun.violation(outcome)}\n  command: sirenc {' '.join(outcome.argv)}"
              f"\n  example: {path}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
