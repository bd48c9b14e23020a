"""`sirenc.tune` against brute force on the benchmark models: does tune find the fastest plan to
a target error, and what does finding it cost?

    python benchmarks/tune.py --quick                          # noise, gtree, outlier under ssi (~3 min)
    python benchmarks/tune.py --models noise,radar --methods ssi,bp --particles 1,4,16,64,256,1024,4096 --reps 8
    python benchmarks/tune.py --quick --out /tmp/tune.json     # also write the rows as JSON

For each model and method: brute force compiles every plan the analysis accepts
(benchmarks/plans.py, the paper's sweep's plans) and the program as written, runs each `--reps`
times (seeds 0, 1, ...) at every particle count of the grid, and measures each point's error
as tune does (sirenc.tuning.accuracy: the mean squared error of one run's estimate of the
result's numbers against the exact answer where a plan gives it, else against the pooled most
accurate runs). The target is the error the plan that samples every variable (the plain
particle filter's plan) reaches at `--target-particles`. A plan's time to the target is its
median run time where its error reaches the target (``time_to``); the best plan is the one of
least time. Then `sirenc.tune` runs with that target (`methods` the one method,
so it picks among the same plans), and the table gives its pick, its predicted particles and
time, the pick's own time to the target as brute force measured it, over the best plan's
(1.0: tune found the fastest), and the seconds tune and brute force took.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from paper import QUICK_PARTICLES  # noqa: E402
from plans import BENCHMARKS, MODELS, Plan, accepted_plans  # noqa: E402

QUICK_MODELS = ("noise", "gtree", "outlier")
QUICK_GRID = (*QUICK_PARTICLES, 4096)          # the paper's quick sweep's counts, and one more
QUICK_REPS = 16
RUN_LIMIT = 2.0          # seconds: a plan whose run takes longer is not run at larger counts


def brute_force(model: str, method: str, grid: list[int], reps: int) -> dict:
    """Every accepted plan and the program as written, at every count of ``grid``: per plan its
    groups of runs (sirenc.tuning.pilots.Group) and the seconds it all took."""
    import sirenc
    from sirenc.diagnostics import SirenError
    from sirenc.tuning.pilots import Group, run_once

    start = time.perf_counter()
    plans = [Plan(model, "default", {}), *accepted_plans(model, method)]
    out = {"plans": {}, "failed": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for plan in plans:
            path = plan.write(Path(tmp))
            try:
                compiled = sirenc.compile(path, method=method)
                compiled.filter(particles=1, seed=0).run()          # what a first run pays once
            except SirenError as e:
                out["failed"][plan.number] = e.message.splitlines()[0]
                continue
            groups = []
            for n in grid:
                runs = [run_once(compiled, n, seed) for seed in range(reps)]
                groups.append(Group(n, np.array([e for e, _ in runs]), np.array([s for _, s in runs])))
                if np.median(groups[-1].seconds) > RUN_LIMIT:
                    break
            out["plans"][plan.number] = {"annotations": plan.annotations, "groups": groups}
    out["seconds"] = time.perf_counter() - start
    return out


def measured(found: dict) -> tuple[dict, bool]:
    """Per plan, its (particles, median seconds, error) points, against tune's reference: the
    exact answer where a plan gives it, else the pooled most accurate runs of the other plans."""
    from sirenc.tuning import accuracy

    summaries = {k: [accuracy.summarize(g) for g in p["groups"]] for k, p in found["plans"].items()}
    exact = next((k for k, p in found["plans"].items() if accuracy.same_answer(p["groups"][0])), None)
    points = {}
    for k, ss in summaries.items():
        if exact is not None:
            ref = accuracy.exact_reference(summaries[exact][0])
        else:
            ref = accuracy.pooled_reference([s for j, other in summaries.items() if j != k for s in other] or ss)
        points[k] = [(s.particles, float(s.seconds[0]), 0.0 if k == exact else float(accuracy.error(s, ref)[0]))
                     for s in ss]
    return points, exact is not None


def time_to(points: list, target: float) -> float | None:
    """The run time at which the error reaches ``target``: at the first count of the grid from
    which on every count reaches it, or between it and the count before, log-log interpolated
    (the grid's factors of 4 would otherwise count up to 4 times the particles needed)."""
    ok = [i for i in range(len(points)) if all(e <= target for _, _, e in points[i:])]
    if not ok:
        return None
    i = ok[0]
    n, t, e = points[i]
    if i == 0 or e <= 0:
        return t
    n0, t0, e0 = points[i - 1]
    needed = math.exp(math.log(n0) + (math.log(target) - math.log(e0)) * math.log(n / n0) / math.log(e / e0))
    return t0 + (t - t0) * (needed - n0) / (n - n0)


def compare(model: str, method: str, grid: list[int], reps: int, target_particles: int, seed: int) -> dict:
    import sirenc

    found = brute_force(model, method, grid, reps)
    points, exact = measured(found)
    sampled = next(k for k, p in found["plans"].items() if k != "default"
                   and all(a == "sample" for a in p["annotations"].values()))
    at = min(points[sampled], key=lambda p: abs(p[0] - target_particles))
    target = at[2]
    reach = {k: time_to(p, target) for k, p in points.items()}
    best = min((k for k in reach if reach[k] is not None), key=lambda k: reach[k])
    start = time.perf_counter()
    tuned = sirenc.tune(MODELS / model / "model.si", methods=(method,), target_error=target, seed=seed)
    tune_seconds = time.perf_counter() - start
    pick = tuned.chosen
    number = "default" if all(a is None for a in pick.plan.values()) else next(
        (k for k, p in found["plans"].items() if p["annotations"] == pick.plan), None)
    accepted_by_tune = sum(r.status != "rejected" for r in tuned.rows if not all(a is None for a in r.plan.values()))
    pick_reach = reach.get(number)
    return {
        "model": model, "method": method, "target": target, "target_particles": at[0], "exact": exact,
        "plans": len(found["plans"]), "accepted_brute": len(found["plans"]) - 1, "accepted_tune": accepted_by_tune,
        "tune_pick": pick.describe(), "tune_plan": number, "tune_particles": pick.particles,
        "tune_predicted_s": pick.seconds, "tune_s": tune_seconds, "tune_win_share": tuned.win_share,
        "tune_regret": tuned.regret, "pick_time_to_target_s": pick_reach,
        "best_plan": best, "best_annotations": found["plans"][best]["annotations"],
        "best_time_to_target_s": reach[best],
        "ratio": None if pick_reach is None else pick_reach / reach[best],
        "default_time_to_target_s": reach["default"], "brute_s": found["seconds"], "failed": found["failed"],
    }


def _ms(s: float | None) -> str:
    return "-" if s is None or not math.isfinite(s) else f"{s * 1e3:.3g}"


def table(rows: list[dict]) -> str:
    head = ("model", "method", "target", "tune's pick", "N", "pred. ms", "pick ms", "best plan", "best ms",
            "pick/best", "default ms", "tune s", "brute s")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        best = "default" if r["best_plan"] == "default" else f"{r['best_plan']} " + " ".join(
            f"{v}:{a[:3]}" for v, a in r["best_annotations"].items())
        pick = (r["tune_plan"] or "?") + " (" + r["tune_pick"].split(": ", 1)[1] + ")"
        lines.append("| " + " | ".join([
            r["model"], r["method"], f"{r['target']:.3g}", pick, f"{r['tune_particles']:.0f}",
            _ms(r["tune_predicted_s"]), _ms(r["pick_time_to_target_s"]), best, _ms(r["best_time_to_target_s"]),
            "-" if r["ratio"] is None else f"{r['ratio']:.2f}", _ms(r["default_time_to_target_s"]),
            f"{r['tune_s']:.1f}", f"{r['brute_s']:.1f}"]) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true",
                   help=f"models {', '.join(QUICK_MODELS)}, method ssi, particles {QUICK_GRID}, "
                   f"{QUICK_REPS} runs a point")
    p.add_argument("--models", default="", help=f"comma-separated, of {', '.join(BENCHMARKS)}")
    p.add_argument("--methods", default="ssi")
    p.add_argument("--particles", default="", help=f"the brute-force grid (default {','.join(map(str, QUICK_GRID))})")
    p.add_argument("--reps", type=int, default=QUICK_REPS, help="runs a point")
    p.add_argument("--target-particles", type=int, default=256,
                   help="the target is the error of the plan that samples everything at this count of the grid")
    p.add_argument("--seed", type=int, default=0, help="tune's seed")
    p.add_argument("--out", default="", help="also write the rows as JSON here")
    args = p.parse_args(argv)
    models = args.models.split(",") if args.models else list(QUICK_MODELS if args.quick else BENCHMARKS)
    grid = [int(n) for n in args.particles.split(",")] if args.particles else list(QUICK_GRID)
    rows = []
    for model in models:
        for method in args.methods.split(","):
            print(f"{model} {method} ...", file=sys.stderr, flush=True)
            rows.append(compare(model, method, grid, args.reps, args.target_particles, args.seed))
    print(table(rows))
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1, default=float))
    return 0


if __name__ == "__main__":
    sys.exit(main())
