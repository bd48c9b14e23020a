"""Speed of compiled filters next to hand-written C filters, in one run.

    python benchmarks/run.py [--steps 100] [--particles 1000,10000,100000] [--repeat 5] [--walk-only]
    python benchmarks/run.py --suite [--particles ...] [--models noise,slds] [--methods pf,ssi]
    python benchmarks/run.py --backend jax [--particles ...] [--models walk,slds] [--repeat 3] [--float32]

Prints ns per particle-step (best of --repeat runs) for the random-walk model
(benchmarks/models/walk) compiled with `-m pf`, and for two hand-written C
filters of the same model on the same data, all on one thread:

* "C, own stream": benchmarks/handwritten/rw_bootstrap.c, with the runtime's
  RNG (ARS-7 streams keyed per particle and step, keyed RT_LANE_RUN at a
  time as the population loop does, with their first normals made with SIMD
  as they are keyed), ziggurat, resampler, built with -march=native;
* "C, fastest": benchmarks/handwritten/rw_bootstrap_fast.c, one sequential
  xoshiro256+ generator and an inlined ziggurat, built with -march=native
  -ffast-math (which vectorises its weights' exp and sums).

The ratio columns are sirenc's time over each. Each timing is the best of
--repeat rounds that run every contender once (interleaved), so a drift in the
machine's speed reaches all of them. The last column is the compiled filter on
every core (the hand-written filters have no parallel version; the answers do
not change).

A second table times the same model with x symbolic under each hybrid method
(`-m ssi`, `-m ds`, `-m bp`: each particle carries an exact Gaussian belief), on
tier 2 (the compiler resolves the belief into a mean and a variance, docs/tier2.md)
and on tier 1 (the general symbolic runtime, --tier 1), and under `-m pf`, against
benchmarks/handwritten/rw_kalman_rb.c, a hand-written Rao-Blackwellised (Kalman)
particle filter with the same resampling, built with -march=native -ffast-math.
`--walk-only` prints the first table alone: at N = 10^6 and above the second
table's tier-1 runs take minutes.

`--suite` times the eleven benchmark models (benchmarks/models, on their own
data) under `-m pf`, and under `-m ssi`, `-m ds` and `-m bp` the program as written (plan
`dflt`: the analysis infers the plan) and every plan the plan analysis accepts
(benchmarks/plans.py), on tier 2 where it applies (and then on tier 1
too); `--methods` picks which of pf, ssi, ds and bp. Under pf each time is followed by its ratio to
the list-free walk's (benchmarks/models/walk on its own data, timed first). The load average is
printed: other jobs on the machine slow the large N most.

`--backend jax` times the JAX back end against the native filter on one thread, with the JIT
compile time apart (benchmarks/jax_sweep.py; benchmarks/gpu.sh runs it on a GPU machine).
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


def build_handwritten(out_dir: Path, name: str, native: bool = False, fast_math: bool = False,
                      extra: tuple[str, ...] | list[str] = ()) -> Path:
    from sirenc.backend.link import c_compiler
    from sirenc.runtime import include_dir, static_libraries

    exe = out_dir / name
    src_dir = HERE.parent / "runtime_c" / "src"
    static = [str(p) for p in static_libraries() if "export" not in Path(p).name]
    flags = ["-O3", "-DNDEBUG", *(["-march=native"] if native else []), *(["-ffast-math"] if fast_math else []),
             *extra]
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


def interleaved(timers: dict, repeat: int) -> dict:
    """The best of `repeat` rounds for each timer (a function of no arguments giving one timing), a
    round timing each once: when the machine's speed drifts (a shared machine's neighbours), every
    contender sees the same stretches of it, so the ratios hold better than with their runs one
    block after another."""
    best = {key: float("inf") for key in timers}
    for _ in range(repeat):
        for key, timer in timers.items():
            best[key] = min(best[key], timer())
    return best


def sirenc_timer(model, rows: np.ndarray | None, n: int, threads: int = 1, steps: int = 0,
                 memory_limit: str | None = None):
    """A function that runs one filter (made once: later runs reuse its memory) and gives ns per
    particle-step; `rows` replace the data file (None: the program reads its own, `steps` rows of it)."""
    f = model.filter(particles=n, seed=0, threads=threads, memory_limit=memory_limit)

    def timer() -> float:
        start = time.perf_counter()
        f.run(rows)
        return (time.perf_counter() - start) * 1e9 / (n * (len(rows) if rows is not None else steps))
    return timer


def time_sirenc(model, rows: np.ndarray | None, n: int, repeat: int, threads: int = 1, steps: int = 0,
                memory_limit: str | None = None) -> float:
    """Best ns per particle-step of `repeat` runs (sirenc_timer)."""
    timer = sirenc_timer(model, rows, n, threads, steps, memory_limit)
    return min(timer() for _ in range(repeat))


HYBRID = ("ssi", "ds", "bp")


def print_load() -> None:
    print("load average: " + ", ".join(f"{x:.2f}" for x in os.getloadavg()))


def suite(particles: list[int], models: list[str], repeat: int,
          methods: tuple[str, ...] = ("pf", *HYBRID)) -> None:
    """ns per particle-step of each benchmark model under pf (with its ratio to the list-free walk's,
    timed first) and every accepted plan of each hybrid method in `methods`."""
    from plans import MODELS, accepted_plans

    import sirenc
    from sirenc.diagnostics import SirenError

    print(f"benchmark models on their own data; ns per particle-step, best of {repeat}, one thread, "
          "memory limit 2G")
    print("tier: 2 where specialize-conjugacy compiled the symbolic state (then the same plan on tier 1 "
          "follows), 1 where it does not apply (sirenc check --json says why)")
    print("under pf, each time is followed by its ratio to the walk's "
          "(benchmarks/models/walk, -m pf, its own data)")
    print(f"{'model':<13} {'method':<6} {'plan':>5} {'tier':>4} | " + " | ".join(f"{f'N={n}':>11}" for n in particles))
    walk_steps = len((MODELS / "walk" / "data.csv").read_text().strip().splitlines()) - 1
    walk_model = sirenc.compile(str(MODELS / "walk" / "model.si"), method="pf")
    walk = ({n: time_sirenc(walk_model, None, n, repeat, steps=walk_steps) for n in particles}
            if "pf" in methods else {})
    if walk:
        print(f"{'walk':<13} {'pf':<6} {'-':>5} {'-':>4} | " + " | ".join(f"{walk[n]:>11.1f}" for n in particles))
    for name in models:
        steps = len((MODELS / name / "data.csv").read_text().strip().splitlines()) - 1
        runs = [("pf", "-", str(MODELS / name / "model.si"))] if "pf" in methods else []
        with tempfile.TemporaryDirectory() as tmp:
            for method in (m for m in HYBRID if m in methods):
                runs.append((method, "dflt", str(MODELS / name / "model.si")))   # the program as written
                for plan in accepted_plans(name, method):
                    d = Path(tmp) / method / plan.number
                    d.mkdir(parents=True)
                    runs.append((method, plan.number, str(plan.write(d))))
            timed = []
            for method, number, path in runs:
                model = sirenc.compile(path, method=method)
                timed.append((method, number, model))
                if model.info.get("tier") == 2:
                    timed.append((method, number, sirenc.compile(path, method=method, tier=1)))
            for method, number, model in timed:
                tier = "-" if method == "pf" else str(model.info["tier"])
                cells, errors = [], []
                for n in particles:
                    try:
                        t = time_sirenc(model, None, n, repeat, steps=steps, memory_limit='2G')
                        cells.append(f"{t:>6.1f} {t / walk[n]:>3.1f}x" if method == "pf" else f"{t:>11.1f}")
                    except SirenError as e:   # a symbolic state that outgrows the limit (ARCHITECTURE.md §12.5)
                        cells.append(f"{f'error {len(errors) + 1}':>11}")
                        errors.append(e.message.splitlines()[0])
                print(f"{name:<13} {method:<6} {number:>5} {tier:>4} | " + " | ".join(cells), flush=True)
                for k, message in enumerate(errors, 1):
                    print(f"    error {k}: {message}", flush=True)
    print_load()


def main() -> None:
    import sirenc

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--particles", default="1000,10000,100000")
    p.add_argument("--repeat", type=int, default=None, help="runs per timing, best kept (5; 3 with --backend jax)")
    p.add_argument("--suite", action="store_true", help="time the eleven benchmark models instead")
    p.add_argument("--walk-only", action="store_true", help="the walk's -m pf table alone, without the hybrid one")
    p.add_argument("--models", default="", help="with --suite or --backend jax: a comma-separated subset")
    p.add_argument("--methods", default="pf,ssi,ds,bp", help="with --suite: a comma-separated subset")
    p.add_argument("--backend", choices=("native", "jax"), default="native",
                   help="jax: the JAX back end next to the native filter (benchmarks/jax_sweep.py)")
    p.add_argument("--float32", action="store_true", help="with --backend jax: single precision")
    p.add_argument("--native-max", type=int, default=10**6,
                   help="with --backend jax: no native runs above this many particles")
    p.add_argument("--extrapolate", action="store_true",
                   help="with --backend jax: above --native-max, the native's cost at the largest N run")
    args = p.parse_args()
    particles = [int(x) for x in args.particles.split(",")]
    if args.backend == "jax":
        from jax_sweep import sweep
        sweep(particles, args.models.split(",") if args.models else ["walk"], args.repeat or 3, args.float32,
              args.native_max, args.extrapolate)
        return
    args.repeat = args.repeat or 5
    if args.suite:
        from plans import BENCHMARKS
        methods = tuple(args.methods.split(","))
        unknown = set(methods) - {"pf", *HYBRID}
        if unknown:
            p.error(f"--methods: unknown {', '.join(sorted(unknown))} (pf, ssi, ds, bp)")
        suite(particles, args.models.split(",") if args.models else list(BENCHMARKS), args.repeat, methods)
        return

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        ys = generate(args.steps, seed=0)
        data = tmp / "data.csv"
        write(data, ys)
        rows = np.ascontiguousarray(ys.reshape(-1, 1))
        own = build_handwritten(tmp, "rw_bootstrap", native=True)
        fast = build_handwritten(tmp, "rw_bootstrap_fast", native=True, fast_math=True)
        model = sirenc.compile(str(HERE / "models" / "walk" / "model.si"), method="pf")
        print(f"random walk, T = {args.steps} steps, systematic resampling every step; "
              f"ns per particle-step, best of {args.repeat}")
        threads = os.cpu_count() or 1
        print(f"{'N':>8} | {'sirenc -m pf':>12} | {'C, own stream':>13} | {'ratio':>5} | "
              f"{'C, fastest':>10} | {'ratio':>5} | {f'sirenc, {threads} threads':>18}")
        print(f"{'-' * 8}-+-{'-' * 12}-+-{'-' * 13}-+-{'-' * 5}-+-{'-' * 10}-+-{'-' * 5}-+-{'-' * 18}")
        for n in particles:
            t = interleaved({"ours": sirenc_timer(model, rows, n),
                             "ref": lambda: time_handwritten(own, data, n, 1),
                             "ref_fast": lambda: time_handwritten(fast, data, n, 1),
                             "parallel": sirenc_timer(model, rows, n, threads)}, args.repeat)
            ours, ref, ref_fast, parallel = t["ours"], t["ref"], t["ref_fast"], t["parallel"]
            print(f"{n:>8} | {ours:>12.2f} | {ref:>13.2f} | {ours / ref:>5.2f} | {ref_fast:>10.2f} | "
                  f"{ours / ref_fast:>5.2f} | {parallel:>18.2f}")
        if args.walk_only:
            print_load()
            return
        rb = build_handwritten(tmp, "rw_kalman_rb", native=True, fast_math=True)
        walk = str(HERE / "models" / "walk" / "model.si")
        symbolic = {(m, t): sirenc.compile(walk, method=m, tier=t) for m in HYBRID for t in (2, 1)}
        assert all(symbolic[m, 2].info["tier"] == 2 for m in HYBRID), "the walk qualifies for tier 2"
        print()
        print("the same walk with x symbolic (exact Gaussian belief per particle); ns per particle-step "
              "and ratio to the hand-written filter; t2: tier 2 (compiled conjugacy), t1: tier 1 (--tier 1)")
        cols = [f"-m {m} t{t}" for m in HYBRID for t in (2, 1)]
        print(f"{'N':>8} | {'C, Rao-Blackwellised':>20} | " + " | ".join(f"{c:>11} | {'ratio':>5}" for c in cols)
              + f" | {'-m pf':>7} | {'ratio':>5}")
        print(f"{'-' * 8}-+-{'-' * 20}-+-" + "-+-".join(f"{'-' * 11}-+-{'-' * 5}" for _ in cols)
              + f"-+-{'-' * 7}-+-{'-' * 5}")
        for n in particles:
            t = interleaved({"ref": lambda: time_handwritten(rb, data, n, 1),
                             **{key: sirenc_timer(m, rows, n) for key, m in symbolic.items()},
                             "pf": sirenc_timer(model, rows, n)}, args.repeat)
            ref, pf = t["ref"], t["pf"]
            cells = [f"{t[key]:>11.2f} | {t[key] / ref:>5.2f}" for key in symbolic]
            print(f"{n:>8} | {ref:>20.2f} | " + " | ".join(cells) + f" | {pf:>7.2f} | {pf / ref:>5.2f}")
        print_load()


if __name__ == "__main__":
    main()
