"""Data for outlier: random walk x_t, y_t = x_t + N(0, 1), or N(0, 10000) w.p. 0.07394.

Writes data.csv next to this script: columns x, y.
"""
from pathlib import Path

import numpy as np

STEPS, OUTLIER_PROB = 100, 0.07394


def main(seed: int = 0, steps: int = STEPS) -> None:
    rng = np.random.default_rng(seed)
    x, rows = rng.normal(0.0, 50.0), []
    for _ in range(steps):
        x = x + rng.normal(0.0, 1.0)
        y = rng.normal(0.0, 100.0) if rng.random() < OUTLIER_PROB else x + rng.normal(0.0, 1.0)
        rows.append((x, y))
    np.savetxt(Path(__file__).with_name("data.csv"), rows, delimiter=",",
               header="x,y", comments="", fmt="%.6f")


if __name__ == "__main__":
    main()
