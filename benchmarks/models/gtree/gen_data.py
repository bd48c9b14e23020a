"""Data for gtree: a = -13.4536; per step b ~ N(a, 10), obs_b ~ N(b, 1000), obs_a ~ N(a, 1000).

Writes data.csv next to this script: columns t, b, obs_b, obs_a.
"""
from pathlib import Path

import numpy as np

STEPS, A = 100, -13.4536


def main(seed: int = 0, steps: int = STEPS) -> None:
    rng = np.random.default_rng(seed)
    rows = []
    for t in range(steps):
        b = rng.normal(A, np.sqrt(10.0))
        rows.append((float(t), b, rng.normal(b, np.sqrt(1000.0)), rng.normal(A, np.sqrt(1000.0))))
    np.savetxt(Path(__file__).with_name("data.csv"), rows, delimiter=",",
               header="t,b,obs_b,obs_a", comments="", fmt="%.6f")


if __name__ == "__main__":
    main()
