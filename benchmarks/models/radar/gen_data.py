"""Data for radar: x_t = x_{t-1} + 5 + N(0, q), z_t = x_t + N(0, r) with rare glint.

q = 2, r = 5; with probability 0.0001 the variance gains 1/Gamma(1, 1).
Writes data.csv next to this script: columns x, z.
"""
from pathlib import Path

import numpy as np

STEPS, Q, R = 100, 2.0, 5.0


def main(seed: int = 0, steps: int = STEPS) -> None:
    rng = np.random.default_rng(seed)
    x, rows = 0.0, []
    for _ in range(steps):
        x = x + 5.0 + rng.normal(0.0, np.sqrt(Q))
        var = R + (1.0 / rng.gamma(1.0, 1.0) if rng.random() < 0.0001 else 0.0)
        rows.append((x, x + rng.normal(0.0, np.sqrt(var))))
    np.savetxt(Path(__file__).with_name("data.csv"), rows, delimiter=",",
               header="x,z", comments="", fmt="%.6f")


if __name__ == "__main__":
    main()
