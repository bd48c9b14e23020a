"""Data for wheels: velocity and angular velocity random walks (variance 1);
left = v - 2 omega + N(0, 1), right = v + 2 omega + N(0, 0.95).

Writes data.csv next to this script: columns velocity, omega, left_rate, right_rate.
"""
from pathlib import Path

import numpy as np

STEPS = 100


def main(seed: int = 0, steps: int = STEPS) -> None:
    rng = np.random.default_rng(seed)
    v, omega, rows = rng.normal(0.0, 50.0), rng.normal(0.0, 50.0), []
    for _ in range(steps):
        v, omega = v + rng.normal(), omega + rng.normal()
        rows.append((v, omega, v - 2.0 * omega + rng.normal(),
                     v + 2.0 * omega + rng.normal(0.0, np.sqrt(0.95))))
    np.savetxt(Path(__file__).with_name("data.csv"), rows, delimiter=",",
               header="velocity,omega,left_rate,right_rate", comments="", fmt="%.6f")


if __name__ == "__main__":
    main()
