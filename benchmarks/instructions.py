"""Instructions a particle-step, counted by valgrind: the walk's speed in a measure that does not drift.

    python benchmarks/instructions.py [--particles 10000] [--steps 50,100] [--top 8]

benchmarks/run.py times the random walk against the hand-written C filters, but a shared machine's
speed drifts by more than a change to the walk's loop is worth (10-50% within minutes here, where a
change may be worth 3%). Instructions executed are the same at every run of one build, whatever
else the machine does. This counts them with callgrind for three filters of the walk (one thread,
systematic resampling every step, the walk's own data):

* sirenc: benchmarks/models/walk compiled by `sirenc model.si -o` (the portable build), run from a
  small C host through its C ABI (sirenc_new, sirenc_run);
* "C, own stream": benchmarks/handwritten/rw_bootstrap.c;
* "C, fastest": benchmarks/handwritten/rw_bootstrap_fast.c with -ffast-math.

Each filter runs on the first S1 and on the first S2 rows of the data (--steps S1,S2), and the
difference of the two counts over (S2 - S1) N particle-steps is its cost a particle-step, without
what it does once (loading, reading the data, allocating). The hand-written filters are built for
AVX2 and FMA, not -march=native: valgrind's CPU has no AVX-512 (nor VAES), and the runtime's kernels
choose AVX2 (AES-NI for the streams' blocks) under it for every contender alike. Instructions are
not time (a vector instruction does more, a cache miss costs more), so run.py's ratios stay the
ones to report; this tells whether a change removed work. The functions that take most of sirenc's count follow the table.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
WALK = HERE / "models" / "walk"
sys.path.insert(0, str(HERE))

from run import build_handwritten  # noqa: E402

# Runs the walk's compiled filter once on the rows of a CSV file (a header line, then y per line).
HOST = r"""
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include "sirenrt.h"
typedef sirenrt_filter *(*new_fn)(int64_t, uint64_t, const sirenrt_options *);
typedef int32_t (*run_fn)(sirenrt_filter *, const double *, int64_t, int64_t);
typedef void (*free_fn)(sirenrt_filter *);
int main(int argc, char **argv) {
  if (argc != 4) return 2;
  void *lib = dlopen(argv[1], RTLD_NOW);
  if (!lib) { fprintf(stderr, "%s\n", dlerror()); return 1; }
  new_fn make = (new_fn)dlsym(lib, "sirenc_new");
  run_fn run = (run_fn)dlsym(lib, "sirenc_run");
  free_fn drop = (free_fn)dlsym(lib, "sirenc_free");
  FILE *data = fopen(argv[2], "r");
  int64_t n = atoll(argv[3]), rows = 0;
  double *ys = NULL;
  char line[128];
  if (!make || !run || !drop || !data || !fgets(line, sizeof line, data)) return 1;
  while (fgets(line, sizeof line, data)) {
    ys = realloc(ys, (size_t)(rows + 1) * sizeof *ys);
    ys[rows++] = atof(line);
  }
  sirenrt_options opts = {SIRENRT_SYSTEMATIC, 0.0, 1, 0};
  sirenrt_filter *f = make(n, 0, &opts);
  if (!f || run(f, ys, rows, 1)) return 1;
  drop(f);
  free(ys);
  return 0;
}
"""


def counted(cmd: list[str], out: Path) -> dict[str, int]:
    """Instructions by function for one run under callgrind, and "" for the whole program."""
    subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *cmd], check=True,
                   capture_output=True)
    report = subprocess.run(["callgrind_annotate", "--inclusive=no", "--threshold=100", str(out)], check=True,
                            capture_output=True, text=True).stdout
    by_function: dict[str, int] = {}
    for line in report.splitlines():
        m = re.match(r"\s*([\d,]+)\s+(?:\([\d. %]+\)\s+)?(\S.*?)\s*$", line)
        if not m:
            continue
        count, what = int(m.group(1).replace(",", "")), m.group(2)
        if what.startswith("PROGRAM TOTALS"):
            by_function[""] = count
        elif ":" in what:
            name = what.split(":", 1)[1].split(" ")[0]
            by_function[name] = by_function.get(name, 0) + count
    return by_function


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--particles", type=int, default=10000)
    p.add_argument("--steps", default="50,100", help="S1,S2: the two runs' rows (S1 < S2 <= the data's rows)")
    p.add_argument("--top", type=int, default=8, help="how many of sirenc's functions to list")
    args = p.parse_args()
    short, long = (int(s) for s in args.steps.split(","))
    for tool in ("valgrind", "callgrind_annotate"):
        if shutil.which(tool) is None:
            sys.exit(f"instructions.py: {tool} is not installed (Debian: apt-get install valgrind)")
    rows = (WALK / "data.csv").read_text().splitlines()
    if not 0 < short < long <= len(rows) - 1:
        sys.exit(f"instructions.py: --steps needs 0 < S1 < S2 <= {len(rows) - 1}, the walk's rows")
    n = args.particles

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        data = {s: tmp / f"data{s}.csv" for s in (short, long)}
        for s, path in data.items():
            path.write_text("\n".join(rows[:s + 1]) + "\n")
        model = tmp / "walk.so"
        subprocess.run([sys.executable, "-m", "sirenc", str(WALK / "model.si"), "-o", str(model)], check=True)
        (tmp / "host.c").write_text(HOST)
        cflags = subprocess.run([sys.executable, "-m", "sirenc", "--cflags"], check=True, capture_output=True,
                                text=True).stdout.split()
        subprocess.run(["cc", "-O2", *cflags, str(tmp / "host.c"), "-o", str(tmp / "host"), "-ldl"], check=True)
        avx2 = ["-mavx2", "-mfma"]
        contenders = {
            "sirenc -m pf": lambda s: [str(tmp / "host"), str(model), str(data[s]), str(n)],
            "C, own stream": lambda s, exe=build_handwritten(tmp, "rw_bootstrap", extra=avx2):
                [str(exe), str(data[s]), str(n), "0"],
            "C, fastest": lambda s, exe=build_handwritten(tmp, "rw_bootstrap_fast", fast_math=True, extra=avx2):
                [str(exe), str(data[s]), str(n), "0"],
        }
        per_step: dict[str, dict[str, float]] = {}
        for name, command in contenders.items():
            a, b = (counted(command(s), tmp / f"cg.{s}") for s in (short, long))
            steps = (long - short) * n
            per_step[name] = {f: (b.get(f, 0) - a.get(f, 0)) / steps for f in b}

    base = per_step["sirenc -m pf"][""]
    print(f"random walk, N = {n}, one thread, systematic resampling every step; instructions a particle-step "
          f"(callgrind, rows {short} -> {long}; valgrind's CPU: AVX2 and AES-NI, no AVX-512)")
    print(f"{'filter':<16} | {'instructions':>12} | {'sirenc / it':>11}")
    for name, counts in per_step.items():
        print(f"{name:<16} | {counts['']:>12.1f} | {base / counts['']:>11.2f}")
    top = sorted(((c, f) for f, c in per_step["sirenc -m pf"].items() if f), reverse=True)[:args.top]
    print("sirenc's largest: " + ", ".join(f"{f} {c:.1f}" for c, f in top))


if __name__ == "__main__":
    main()
