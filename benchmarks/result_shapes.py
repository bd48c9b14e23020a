"""What a symbolic walk's result costs: the same Kalman walk under ssi, returning its last position,
its trajectory (whose summaries need each element's variance), or only the trajectory's length.

    python benchmarks/result_shapes.py [--particles N] [--steps T] [--repeats R]

Prints ns per particle-step (best of R runs; the program's final expectation and posterior atoms,
computed once at the end, included) on tier 2 and tier 1."""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

import sirenc

PROGRAM = """
val step = fun (row, (x, xs)) ->
  let x <- gaussian(x, 1.) in
  let () = observe(gaussian(x, 0.5), List.hd(row)) in
  let () = resample() in (x, cons(x, xs))
in
let (x, xs) = fold(step, File.read("d.csv"), (0., [])) in
"""
SHAPES = {"last position": "x", "trajectory": "(x, List.rev(xs))", "length only": "List.len(xs)"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--particles", type=int, default=20000)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        ys = np.random.default_rng(0).normal(size=args.steps).cumsum()
        (Path(d) / "d.csv").write_text("y\n" + "".join(f"{float(y)!r}\n" for y in ys))
        print(f"{'result':<16}{'tier 2 ns':>12}{'tier 1 ns':>12}   (N = {args.particles}, T = {args.steps})")
        for name, tail in SHAPES.items():
            (Path(d) / "m.si").write_text(PROGRAM + tail)
            row = []
            for tier in (2, 1):
                model = sirenc.compile(Path(d) / "m.si", method="ssi", tier=tier)
                best = float("inf")
                for _ in range(args.repeats):
                    start = time.perf_counter()
                    with model.filter(particles=args.particles, seed=1) as f:
                        f.run()
                    best = min(best, time.perf_counter() - start)
                row.append(best / args.particles / args.steps * 1e9)
            print(f"{name:<16}{row[0]:>12.1f}{row[1]:>12.1f}")


if __name__ == "__main__":
    main()
