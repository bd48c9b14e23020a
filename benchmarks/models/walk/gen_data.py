"""Observations for the random-walk model: x_t ~ N(x_{t-1}, 1), y_t ~ N(x_t, 0.5).

    python gen_data.py [STEPS] [SEED]   -> writes data.csv next to this file
"""

import sys
from pathlib import Path

import numpy as np


def generate(steps: int = 100, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x, ys = 0.0, []
    for _ in range(steps):
        x = rng.normal(x, 1.0)
        ys.append(rng.normal(x, np.sqrt(0.5)))
    return np.array(ys)


def write(path: Path, ys: np.ndarray) -> None:
    path.write_text("y\n" + "".join(f"{y!r}\n" for y in ys.tolist()))


if __name__ == "__main__":
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    write(Path(__file__).with_name("data.csv"), generate(steps, seed))
