"""What the errors of a command (`sirenc`'s, `siren`'s) print, and the exit status each ends it with:
1 when the program, its plan or its data is wrong (a diagnostic with the source location is
printed), 2 on bad usage, 3 on an internal compiler error (a bug in sirenc), 130 when interrupted."""

from __future__ import annotations

import os
import sys

from sirenc.diagnostics import SirenError, SirenUsageError


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
