"""A model that keeps its trajectory against the same model without it, side by side in one run.

    python benchmarks/trajectory.py [--particles 10000,100000] [--steps 100] [--repeat 3]
                                    [--threads-particles 1000000]

The random walk of benchmarks/models/walk (x_t ~ N(x_{t-1}, 1), y_t ~ N(x_t, 0.5)) under -m pf,
systematic resampling every step, one thread, in three forms:
  last      returns x_T only (no list);
  kept      conses x_t onto a history every step and returns x_T (the list lives, is never read);
  returned  conses x_t onto a history and returns List.rev(history) (the whole trajectory).
Prints ns per particle-step of run() (best of --repeat, the forms interleaved), the ratio to `last`,
and the time of estimate() per particle-step (the mean trajectory).  With --threads-particles N,
also times `returned` at N particles on 1 and 2 threads and checks that both give the same estimate
bit for bit.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
WALK = (HERE / "models" / "walk" / "model.si").read_text()
KEPT = """
val first = fun row -> List.hd(row) in
val step = fun (y, (x, hist)) ->
  let x1 <- gaussian(x, 1.) in
  let () = observe(gaussian(x1, 0.5), y) in
  let () = resample() in
  (x1, x1 :: hist)
in
let (x, hist) = fold(step, List.map(first, File.read("data.csv")), (0., [])) in
{result}
"""
FORMS = {"last": WALK, "kept": KEPT.format(result="x"), "returned": KEPT.format(result="List.rev(hist)")}


def data(folder: Path, steps: int) -> None:
    rng = np.random.default_rng(0)
    x, ys = 0.0, []
    for _ in range(steps):
        x = rng.normal(x, 1.0)
        ys.append(rng.normal(x, np.sqrt(0.5)))
    (folder / "data.csv").write_text("y\n" + "".join(f"{y!r}\n" for y in ys))


def timed(model, n: int, threads: int = 1):
    f = model.filter(particles=n, seed=0, threads=threads)
    t0 = time.perf_counter()
    f.run()
    t1 = time.perf_counter()
    est = f.estimate()
    return t1 - t0, time.perf_counter() - t1, est


def main(argv=None) -> None:
    import sirenc

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--particles", default="10000,100000")
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--threads-particles", type=int, default=0)
    args = p.parse_args(argv)
    ns = [int(n) for n in args.particles.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        data(folder, args.steps)
        models = {}
        for name, source in FORMS.items():
            (folder / f"{name}.si").write_text(source)
            models[name] = sirenc.compile(str(folder / f"{name}.si"), method="pf")
        best = {}
        for _ in range(args.repeat):
            for n in ns:
                for name, model in models.items():
                    run_s, est_s, _ = timed(model, n)
                    old = best.get((name, n), (float("inf"), float("inf")))
                    best[(name, n)] = (min(old[0], run_s), min(old[1], est_s))
        steps = args.steps
        print(f"random walk, -m pf, T = {steps}, one thread, best of {args.repeat}; ns per particle-step")
        print(f"{'N':>8} {'form':>9} {'run':>8} {'x last':>7} {'estimate':>9}")
        for n in ns:
            base = best[("last", n)][0]
            for name in models:
                run_s, est_s = best[(name, n)]
                print(f"{n:>8} {name:>9} {run_s / (n * steps) * 1e9:>8.1f} {run_s / base:>6.1f}x "
                      f"{est_s / (n * steps) * 1e9:>9.2f}")
        if args.threads_particles:
            n = args.threads_particles
            results = {t: min((timed(models["returned"], n, t) for _ in range(args.repeat)), key=lambda r: r[0])
                       for t in (1, 2)}
            same = bool(np.array_equal(results[1][2], results[2][2]))
            print(f"returned at N = {n}: 1 thread {results[1][0]:.2f} s, 2 threads {results[2][0]:.2f} s, "
                  f"speed-up {results[1][0] / results[2][0]:.2f}x, estimates bit-identical: {same}")
            if not same:
                sys.exit(1)


if __name__ == "__main__":
    main()
