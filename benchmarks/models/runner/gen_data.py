"""Data for runner: velocities sx, sy random walks (variance 0.1), positions
x += sx, y += sy (+ N(0, 1)), altitude a = alt(x, y) (the model's `alt`).

Writes data.csv next to this script: columns sx, sy, x, y, sx_obs, sy_obs, a_obs.
"""
from pathlib import Path

import numpy as np

STEPS = 100


def alt(x: float, y: float) -> float:
    return 10.0 - 0.01 * x * x + 0.0001 * x * x * x if 50.0 < y else x + 0.1


def main(seed: int = 0, steps: int = STEPS) -> None:
    rng = np.random.default_rng(seed)
    sx, sy, x, y, rows = 0.0, 0.0, 0.1, 0.1, []
    for _ in range(steps):
        x, y = x + sx + rng.normal(), y + sy + rng.normal()
        sx, sy = sx + rng.normal(0.0, np.sqrt(0.1)), sy + rng.normal(0.0, np.sqrt(0.1))
        rows.append((sx, sy, x, y, sx + rng.normal(), sy + rng.normal(), alt(x, y) + rng.normal()))
    np.savetxt(Path(__file__).with_name("data.csv"), rows, delimiter=",",
               header="sx,sy,x,y,sx_obs,sy_obs,a_obs", comments="", fmt="%.6f")


if __name__ == "__main__":
    main()
