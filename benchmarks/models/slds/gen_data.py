"""Data for slds: switching state s_t (P(s=1 | s_prev) = 0.75 / 0.1), x_t a random
walk with variance 1.2429 (s=1) or 0.02248262 (s=0), y_t = x_t + N(0, 0.1 / 2.0).

Writes data.csv next to this script: columns s, x, y.
"""
from pathlib import Path

import numpy as np

STEPS = 100
TRANS = {False: 0.1, True: 0.75}
STEP_VAR = {False: 0.02248262, True: 1.2429}
OBS_VAR = {False: 2.0, True: 0.1}


def main(seed: int = 0, steps: int = STEPS) -> None:
    rng = np.random.default_rng(seed)
    s, x, rows = False, 0.0, []
    for _ in range(steps):
        s = bool(rng.random() < TRANS[s])
        x = x + rng.normal(0.0, np.sqrt(STEP_VAR[s]))
        rows.append((1.0 if s else 0.0, x, x + rng.normal(0.0, np.sqrt(OBS_VAR[s]))))
    np.savetxt(Path(__file__).with_name("data.csv"), rows, delimiter=",",
               header="s,x,y", comments="", fmt="%.6f")


if __name__ == "__main__":
    main()
