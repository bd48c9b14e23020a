"""List memory of compiled filters: time per particle-step against the number of steps, and peak
memory, side by side with another sirenc (for example the commit before a change) in one run.

    python benchmarks/lists.py [--models noise,slam] [--particles 1000] [--steps 100,1000,10000]
                               [--memory 10000x1000] [--repeat 3]
                               [--baseline PYTHON] [--baseline-steps 100,1000]

For each model of benchmarks/models/ (compiled with `-m pf`, systematic resampling at every step,
one thread) prints ns per particle-step at each number of steps T (data made by the model's
gen_data.py for T steps, in a temporary folder), the ratio of the slowest to the fastest, and the
peak memory of one filter of --memory particles x steps: the growth of the process' peak resident
set over the run, and the list words the runtime holds at the end (sirenrt_filter_memory_words).
Each measurement runs in a fresh process.  --baseline names the Python of another environment with
another sirenc installed (a virtual environment built from an older commit): its numbers are
printed next to ours.  The old memory model grows as T^2, so its steps are capped separately.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
# The models that carry a list (all but walk, whose data generator is also of another shape).
MODELS = sorted(p.name for p in (HERE / "models").iterdir()
                if (p / "gen_data.py").exists() and "def main(" in (p / "gen_data.py").read_text())

CHILD = r"""
import json, resource, sys, time
import sirenc
from sirenc.runtime.ffi import runtime_lib
model_si, n, repeat = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
model = sirenc.compile(model_si, method="pf")
best = float("inf")
for _ in range(repeat):
    f = model.filter(particles=n, seed=0)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    f.run()
    best = min(best, time.perf_counter() - t0)
    words = runtime_lib().sirenrt_filter_memory_words(f._f)
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    del f
print(json.dumps({"seconds": best, "words": int(words), "grown_kb": grown}))
"""


def prepare(model: str, steps: int, folder: Path) -> Path:
    """The model and its data for `steps` steps in folder/model-steps/."""
    out = folder / f"{model}-{steps}"
    out.mkdir()
    src = HERE / "models" / model
    shutil.copy(src / "model.si", out / "model.si")
    shutil.copy(src / "gen_data.py", out / "gen_data.py")
    subprocess.run([sys.executable, "-c", f"import gen_data; gen_data.main(seed=0, steps={steps})"],
                   cwd=out, check=True)
    return out / "model.si"


def measure(python: str, model_si: Path, n: int, repeat: int) -> dict:
    out = subprocess.run([python, "-c", CHILD, str(model_si), str(n), str(repeat)], capture_output=True,
                         text=True, cwd=model_si.parent)
    if out.returncode != 0:
        why = (out.stderr.strip().splitlines() or [f"exit status {out.returncode}"])[-1]
        print(f"# {model_si.parent.name} with {python}: {why}", file=sys.stderr)
        return {"error": why}
    return json.loads(out.stdout.strip().splitlines()[-1])


def ns(r: dict, n: int, steps: int) -> str:
    return "error" if "error" in r else f"{r['seconds'] / (n * steps) * 1e9:.0f}"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--particles", type=int, default=1000)
    ap.add_argument("--steps", default="100,1000,10000")
    ap.add_argument("--memory", default="10000x1000", help="particles x steps of the memory run")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--baseline", help="python of an environment with the sirenc to compare against")
    ap.add_argument("--baseline-steps", default="100,1000")
    args = ap.parse_args(argv)
    models = args.models.split(",")
    steps = [int(s) for s in args.steps.split(",")]
    base_steps = [int(s) for s in args.baseline_steps.split(",")]
    mem_n, mem_t = (int(x) for x in args.memory.split("x"))
    print(f"# N = {args.particles}, one thread, load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    head = ["model"] + [f"T={t}" for t in steps] + ["max/min"]
    if args.baseline:
        head += [f"base T={t}" for t in base_steps]
    head += [f"MB N={mem_n},T={mem_t}", "words/particle"]
    if args.baseline:
        head += ["base MB", "base words/particle"]
    print(" | ".join(head))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for model in models:
            made = {t: prepare(model, t, folder) for t in sorted(set(steps + base_steps + [mem_t]))}
            row = [model]
            times = []
            for t in steps:
                r = measure(sys.executable, made[t], args.particles, args.repeat)
                row.append(ns(r, args.particles, t))
                if "error" not in r:
                    times.append(r["seconds"] / t)
            row.append(f"{max(times) / min(times):.2f}" if times else "-")
            if args.baseline:
                row += [ns(measure(args.baseline, made[t], args.particles, args.repeat), args.particles, t)
                        for t in base_steps]
            for python in [sys.executable] + ([args.baseline] if args.baseline else []):
                r = measure(python, made[mem_t], mem_n, 1)
                row += (["error", "error"] if "error" in r else
                        [f"{r['grown_kb'] / 1024:.0f}", f"{r['words'] / mem_n:.0f}"])
            print(" | ".join(row), flush=True)
    print(f"# load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
