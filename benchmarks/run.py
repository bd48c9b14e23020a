"""Speed of compiled filters next to hand-written C bootstrap filters, in one run.

    python benchmarks/run.py [--steps 100] [--particles 1000,10000,100000] [--repeat 5]

Prints ns per particle-step (best of --repeat runs) for the random-walk model
(benchmarks/models/walk) compiled with `-m pf`, and for two hand-written C
filters of the same model on the same data, all on one thread:

* "C, own stream": benchmarks/handwritten/rw_bootstrap.c, with the runtime's
  RNG (Philox streams keyed per particle and step, keyed RT_RNG_LANES at a
  time as the population loop does), ziggurat, resampler;
* "C, fastest": benchmarks/handwritten/rw_bootstrap_fast.c, one sequential
  xoshiro256+ generator and an inlined ziggurat, built with -march=native.

The ratio columns are sirenc's time over each. The last column is the compiled
filter on every core (the hand-written filters have no parallel version; the
answers do not change). The load average is printed: other jobs on the machine
slow the large N most.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "models" / "walk"))

from gen_data import generate, write  # noqa: E402


def build_handwritten(out_dir: Path, name: str, native: bool = False) -> Path:
    from sirenc.backend.link import c_compiler
    from sirenc.runtime import include_dir, static_libraries

    exe = out_dir / name
    src_dir = HERE.parent / "runtime_c" / "src"
    static = [str(p) for p in static_libraries() if "export" not in Path(p).name]
    flags = ["-O3", "-DNDEBUG", *(["-march=native"] if native else [])]
    cmd = [c_compiler(), *flags, f"-I{include_dir()}", f"-I{src_dir}",
           str(HERE / "handwritten" / f"{name}.c"), *static, "-lm", "-lpthread", "-o", str(exe)]
    subprocess.run(cmd, check=True)
    return exe


def time_handwritten(exe: Path, data: Path, n: int, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        out = subprocess.run([str(exe), str(data), str(n), "0"], check=True, capture_output=True, text=True).stdout
        best = min(best, float(re.search(r"ns_per_particle_step=([0-9.eE+-]+)", out).group(1)))
    return best


def time_sirenc(model, rows: np.ndarray, n: int, repeat: int, threads: int = 1) -> float:
    f = model.filter(particles=n, seed=0, threads=threads)
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        f.run(rows)
        best = min(best, time.perf_counter() - start)
    return best * 1e9 / (n * len(rows))


def main() -> None:
    import sirenc

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--particles", default="1000,10000,100000")
    p.add_argument("--repeat", type=int, default=5)
    args = p.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        ys = generate(args.steps, seed=0)
        data = tmp / "data.csv"
        write(data, ys)
        rows = np.ascontiguousarray(ys.reshape(-1, 1))
        own = build_handwritten(tmp, "rw_bootstrap")
        fast = build_handwritten(tmp, "rw_bootstrap_fast", native=True)
        model = sirenc.compile(str(HERE / "models" / "walk" / "model.si"), method="pf")
        print(f"random walk, T = {args.steps} steps, systematic resampling every step; "
              f"ns per particle-step, best of {args.repeat}")
        threads = os.cpu_count() or 1
        print(f"{'N':>8} | {'sirenc -m pf':>12} | {'C, own stream':>13} | {'ratio':>5} | "
              f"{'C, fastest':>10} | {'ratio':>5} | {f'sirenc, {threads} threads':>18}")
        print(f"{'-' * 8}-+-{'-' * 12}-+-{'-' * 13}-+-{'-' * 5}-+-{'-' * 10}-+-{'-' * 5}-+-{'-' * 18}")
        for n in (int(x) for x in args.particles.split(",")):
            ours = time_sirenc(model, rows, n, args.repeat)
            ref = time_handwritten(own, data, n, args.repeat)
            ref_fast = time_handwritten(fast, data, n, args.repeat)
            parallel = time_sirenc(model, rows, n, args.repeat, threads)
            print(f"{n:>8} | {ours:>12.2f} | {ref:>13.2f} | {ours / ref:>5.2f} | {ref_fast:>10.2f} | "
                  f"{ours / ref_fast:>5.2f} | {parallel:>18.2f}")
        load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
        print(f"load average: {load}")


if __name__ == "__main__":
    main()
