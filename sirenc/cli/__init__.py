"""The `sirenc` command line.

    sirenc model.si -o model.so [-m pf] [--emit=STAGE]   compile
    sirenc run model.si [-m pf] [-p 1000] [--seed S] [-v] compile (JIT) and run
    sirenc run model.si --handler mh [--samples N] [-w W] [-t K]   ... with an MH chain
    sirenc run model.si [--resume CKPT] [--data rows.csv] --save CKPT   ... a stream, saved and resumed
    sirenc check model.si [-m pf|ssi|ds|bp]              check the inference plan
    sirenc tune model.si --target-error E [-o tuned.si]  the fastest plan that reaches E (or --time-budget S)
    sirenc --version
    sirenc --cflags                                      include flags for a C host (sirenrt.h)

Every command defaults to ``-m pf`` (methods.DEFAULT), the plain particle filter.

`sirenc run` prints the original's report (ARCHITECTURE.md §18), which the original's
benchmark harness reads, plus a table of the posterior before the result, where
the harness does not look; `-v` adds the log evidence and the ESS (final, and
before each resampling) before the runtime plan (where the original's own `-v`
blocks go), `--json` has everything. With `--handler mh` an MH chain (ARCHITECTURE.md §15.2) replaces the
particle filter: the same report from its recorded states, with no log evidence; `-v` prints the
acceptance rate. Warnings go to standard error; `-W GROUP` chooses which
(sirenc/cli/warning_groups.py: never-called functions only with `-W unused`).

Exit status: 0 on success, 1 when the program, its plan or its data is wrong
(a diagnostic with the source location is printed), 2 on bad usage, 3 on an
internal compiler error (a bug in sirenc); sirenc/cli/exit_status.py.
"""

from __future__ import annotations

import sys

from sirenc.cli.check import cmd_check
from sirenc.cli.emit import cmd_compile
from sirenc.cli.exit_status import guarded
from sirenc.cli.options import check_options, compile_options, run_options
from sirenc.cli.run import cmd_run
from sirenc.cli.tune import cmd_tune, tune_options

COMMANDS = {"run": (run_options, cmd_run), "check": (check_options, cmd_check), "tune": (tune_options, cmd_tune)}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "help":   # as `git help`: the help of sirenc, or of one command
        if len(argv) > 2 or (len(argv) == 2 and argv[1] not in COMMANDS):
            print(f"sirenc: error: no command {' '.join(argv[1:])!r}; the commands are "
                  f"{', '.join(COMMANDS)} and help", file=sys.stderr)
            return 2
        (COMMANDS[argv[1]][0] if len(argv) == 2 else compile_options)().parser.print_help()
        return 0
    if argv and argv[0] in COMMANDS:
        make_options, command = COMMANDS[argv[0]]
        argv = argv[1:]
    else:
        make_options, command = compile_options, cmd_compile
    return guarded(command, make_options().parse(argv))
