"""Data for envnoise: the noise model with rare environment outliers.

x_t = 1.001 x_{t-1} + N(0, q); with probability 0.0001 the observation noise
gains 1000 * Beta(1, 1); z_t = 2 x_t + N(0, r + extra); q = 2, r = 1.
Writes data.csv next to this script: columns x, z.
"""
from pathlib import Path

import numpy as np

STEPS, Q, R = 100, 2.0, 1.0


def main(seed: int = 0, steps: int = STEPS) -> None:
    rng = np.random.default_rng(seed)
    x, rows = 0.0, []
    for _ in range(steps):
        x = 1.001 * x + rng.normal(0.0, np.sqrt(Q))
        extra = 1000.0 * rng.beta(1.0, 1.0) if rng.random() < 0.0001 else 0.0
        rows.append((x, 2.0 * x + rng.normal(0.0, np.sqrt(R + extra))))
    np.savetxt(Path(__file__).with_name("data.csv"), rows, delimiter=",",
               header="x,z", comments="", fmt="%.6f")


if __name__ == "__main__":
    main()
