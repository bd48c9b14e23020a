"""Data for slam: a robot on cells 0..10 of the map [F,F,T,F,F,T,T,T,F,T,T];
commands -1/0/+1, wheel slip with probability 0.1, sensor flips with 0.1.

Writes data.csv next to this script: columns x, obs (1/0), cmd.
"""
from pathlib import Path

import numpy as np

STEPS = 100
MAP = [False, False, True, False, False, True, True, True, False, True, True]


def main(seed: int = 0, steps: int = STEPS) -> None:
    rng = np.random.default_rng(seed)
    x, rows = 0, []
    for _ in range(steps):
        cmd = int(rng.integers(-1, 2))
        if rng.random() >= 0.1 and 0 <= x + cmd < len(MAP):
            x += cmd
        reading = MAP[x] if rng.random() >= 0.1 else not MAP[x]
        rows.append((float(x), 1.0 if reading else 0.0, float(cmd)))
    np.savetxt(Path(__file__).with_name("data.csv"), rows, delimiter=",",
               header="x,obs,cmd", comments="", fmt="%.6f")


if __name__ == "__main__":
    main()
