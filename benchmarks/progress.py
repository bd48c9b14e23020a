"""What progress reporting costs the population loop (issue 12, item 3).

    python benchmarks/progress.py [--steps 100] [--particles 100,1000,10000] [--repeat 15]
    SIRENRT_DIR=/path/to/older/build python benchmarks/progress.py --no-hook-only

Prints ns per particle-step (best of --repeat runs, the variants interleaved so that a change in
the machine's load hits them alike) for the random-walk model (benchmarks/models/walk, `-m pf`,
a resampling every step) on one thread:

* "no hook": ``Filter.run`` as before progress existed (the runtime tests one pointer per barrier);
* "bar": a hook with the progress bar's interval (0.1 s), calling a Python function that does
  nothing, so the cost is the runtime's and the callbacks', not the terminal's;
* "every step": a hook called at every barrier (interval 0), the worst case.

``--no-hook-only`` times just the first variant, for a runtime built before the hook existed
(``SIRENRT_DIR`` names its build folder): the before/after comparison of the loop itself.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "models" / "walk"))

from gen_data import generate  # noqa: E402


def main() -> None:
    import sirenc

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--particles", default="100,1000,10000")
    p.add_argument("--repeat", type=int, default=15)
    p.add_argument("--no-hook-only", action="store_true")
    args = p.parse_args()

    rows = np.ascontiguousarray(generate(args.steps, seed=0).reshape(-1, 1))
    model = sirenc.compile(str(HERE / "models" / "walk" / "model.si"), method="pf")
    variants = {"no hook": {}}
    if not args.no_hook_only:
        variants["bar"] = {"progress": lambda p: None, "progress_interval": 0.1}
        variants["every step"] = {"progress": lambda p: None, "progress_interval": 0.0}
    print(f"random walk, T = {args.steps}; ns per particle-step, best of {args.repeat}; "
          f"runtime {os.environ.get('SIRENRT_DIR', '(installed)')}")
    print(f"{'N':>7} | " + " | ".join(f"{name:>10}" for name in variants))
    for n in (int(x) for x in args.particles.split(",")):
        f = model.filter(particles=n, seed=0)
        best = dict.fromkeys(variants, float("inf"))
        for _ in range(args.repeat):
            for name, options in variants.items():
                start = time.perf_counter()
                f.run(rows, **options)
                best[name] = min(best[name], time.perf_counter() - start)
        print(f"{n:>7} | " + " | ".join(f"{best[name] * 1e9 / (n * len(rows)):>10.2f}" for name in variants))
    print("load average: " + ", ".join(f"{x:.2f}" for x in os.getloadavg()))


if __name__ == "__main__":
    main()
