"""The program sirenc tune's tests race plans on: a Gaussian random walk of twenty steps, observed
with variance R, whose exact posterior mean the Kalman filter gives (linear_gaussian.kalman)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

YS = tuple(round(float(y), 3) for y in np.cumsum(np.random.default_rng(7).normal(size=20)))
Q, R = 1.0, 0.5
WALK = """\
val first = fun row -> List.hd(row) in
val step = fun (y, x) ->
  let x1 <- gaussian(x, 1.) in
  let () = observe(gaussian(x1, 0.5), y) in
  let () = resample() in
  x1
in
fold(step, List.map(first, File.read("ys.csv")), 0.)
"""


def write_ys(folder: Path) -> None:
    (folder / "ys.csv").write_text("y\n" + "".join(f"{y}\n" for y in YS))


def write_walk(folder: Path) -> Path:
    """WALK as folder/walk.si, beside the data it reads."""
    write_ys(folder)
    path = folder / "walk.si"
    path.write_text(WALK)
    return path
