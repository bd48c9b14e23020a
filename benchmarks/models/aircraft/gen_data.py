"""Data for aircraft: position random walk, constant altitude 10; q = r = 0.1.

Writes data.csv next to this script: columns x, alt, t, x_obs, alt_obs
(the model reads columns 4 and 5).
"""
from pathlib import Path

import numpy as np

STEPS, Q, R, ALT = 100, 0.1, 0.1, 10.0


def main(seed: int = 0, steps: int = STEPS) -> None:
    rng = np.random.default_rng(seed)
    x, rows = 0.0, []
    for t in range(steps):
        x = x + rng.normal(0.0, np.sqrt(Q))
        rows.append((x, ALT, float(t), x + rng.normal(0.0, np.sqrt(R)),
                     ALT + rng.normal(0.0, np.sqrt(R))))
    np.savetxt(Path(__file__).with_name("data.csv"), rows, delimiter=",",
               header="x,alt,t,x_obs,alt_obs", comments="", fmt="%.6f")


if __name__ == "__main__":
    main()
