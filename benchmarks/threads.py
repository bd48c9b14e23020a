"""Thread speed-up of compiled filters, and the serial part left in the resampling barrier.

    python benchmarks/threads.py [--particles 1000000] [--threads 1,2] [--repeat 5] [--models walk,noise]
                                 [--no-profile]

For each model (benchmarks/models/<name>, compiled with `-m pf`, systematic resampling at every
step) runs the filter on its data with each thread count and prints the best of --repeat wall
times, the speed-up over the first thread count, and the Amdahl serial fraction that speed-up
implies (s = (T/S - 1) / (T - 1) for speed-up S on T threads: 0 is a perfect split, 1 no gain).

It then runs each model once more per thread count with SIRENRT_PROFILE=1, which makes the
runtime time the phases of the population loop and print them when the filter is freed: resuming
particles; the resampling barrier's passes that run on every thread (weigh: exp of the log weights;
offspring: the counts, and the bitmaps of free slots and copy sources; count: the survivors' lists
promoted to the shared heap and counted, and their symbolic states; copy: the copies);
and its serial parts (the block combines and offsets, the leftover and, for multinomial and residual
resampling, the offspring draw).  The fraction column is that serial part over the whole run.

The machine's load average is printed before and after: other jobs steal cores and make the
speed-up look worse than it is, which is why each time is a best of several runs.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def time_model(model, n: int, threads: int, repeat: int) -> tuple[float, object]:
    f = model.filter(particles=n, seed=0, threads=threads)
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        f.run()
        best = min(best, time.perf_counter() - start)
    return best, f.estimate()


PROFILE_CHILD = """
import sys, sirenc
m = sirenc.compile(sys.argv[1], method="pf")
f = m.filter(particles=int(sys.argv[2]), seed=0, threads=int(sys.argv[3]))
f.run()
del f
"""


def profile(path: Path, n: int, threads: int) -> dict[str, float]:
    """Phase times (seconds) the runtime prints under SIRENRT_PROFILE, from a fresh process."""
    env = dict(os.environ, SIRENRT_PROFILE="1")
    out = subprocess.run([sys.executable, "-c", PROFILE_CHILD, str(path), str(n), str(threads)],
                         env=env, capture_output=True, text=True, check=True).stderr
    return {k: float(v) for k, v in re.findall(r"(\w+)=([0-9.eE+-]+)s", out)}


def main() -> None:
    import sirenc

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--particles", type=int, default=1_000_000)
    p.add_argument("--threads", default="1,2")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--models", default="walk,noise")
    p.add_argument("--no-profile", action="store_true", help="skip the SIRENRT_PROFILE runs")
    args = p.parse_args()
    counts = [int(t) for t in args.threads.split(",")]

    print(f"N = {args.particles}, systematic resampling every step, best of {args.repeat}; "
          f"{os.cpu_count()} cores, load average {load()}")
    head = f"{'model':>6} | " + " | ".join(f"{f'{t} thr (s)':>10}" for t in counts)
    head += " | " + " | ".join(f"{f'x{t}/{counts[0]}':>7} {'serial':>6}" for t in counts[1:])
    print(head)
    print("-" * len(head))
    for name in args.models.split(","):
        path = HERE / "models" / name / "model.si"
        model = sirenc.compile(str(path), method="pf")
        times, answers = [], []
        for t in counts:
            best, answer = time_model(model, args.particles, t, args.repeat)
            times.append(best)
            answers.append(repr(answer))
        row = f"{name:>6} | " + " | ".join(f"{t:>10.3f}" for t in times)
        for t, secs in zip(counts[1:], times[1:]):
            speedup = times[0] / secs
            ratio = t / counts[0]
            serial = (ratio / speedup - 1) / (ratio - 1)
            row += f" | {speedup:>7.2f} {serial:>6.2f}"
        same = all(a == answers[0] for a in answers)
        print(row + ("" if same else "   ANSWERS DIFFER"))

    if args.no_profile:
        return
    print("\nphases of one run per thread count (SIRENRT_PROFILE=1), seconds; serial = the barrier's "
          "serial part as a fraction of the whole run")
    phases = ["resume", "weigh", "offspring", "count", "copy", "serial"]
    print(f"{'model':>6} | {'threads':>7} | " + " | ".join(f"{p:>9}" for p in phases) + f" | {'fraction':>8}")
    for name in args.models.split(","):
        for t in counts:
            ph = profile(HERE / "models" / name / "model.si", args.particles, t)
            missing = [p for p in phases if p not in ph]
            if missing:  # the runtime's profile line and this table must name the same phases
                sys.exit(f"the runtime's SIRENRT_PROFILE line lacks {', '.join(missing)}: got {sorted(ph)}")
            total = sum(ph[p] for p in phases)
            print(f"{name:>6} | {t:>7} | " + " | ".join(f"{ph[p]:>9.4f}" for p in phases) +
                  f" | {ph['serial'] / total:>8.5f}")
    print(f"load average at the end: {load()}")

if __name__ == "__main__":
    main()
