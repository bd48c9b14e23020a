"""`sirenc.tune` against brute force on the benchmark models: does tune find the fastest plan to
a target error, and what does finding it cost?

    python benchmarks/tune.py --quick                          # noise, gtree, outlier under ssi (~3 min)
    python benchmarks/tune.py --models noise,radar --methods ssi,bp --particles 1,4,16,64,256,1024,4096 --reps 8
    python benchmarks/tune.py --quick --out /tmp/tune.json     # also write the rows as JSON

For each model and method: brute force compiles every plan the analysis accepts
(benchmarks/plans.py, the paper's sweep's plans) and the program as written, runs each `--reps`
times (seeds 0, 1, ...) at every particle count of the grid, and measures each point's error as
tune does (sirenc.tuning.accuracy: the largest over the result's parts of the mean squared error
of one run's estimate of the part's numbers against the exact answer where a plan gives it, else
against the pooled most accurate runs). The target is the error the plan that samples every
variable (the plain particle filter's plan) reaches at `--target-particles`. A plan's time to
the target is its median run time where its error reaches the target (``time_to``); the best
plan is the one of least time. Then `sirenc.tune` runs with that target (`methods` the one
method, so it picks among the same plans), and the table gives its pick, its predicted particles
and time, the pick's own time to the target as brute force measured it, over the best plan's
(1.0: tune found the fastest), and the seconds tune and brute force took.

    python benchmarks/tune.py --sweep benchmarks/paper/results/summary.json [--models noise] [--methods ssi]

``--sweep``: tune against the results of the paper's sweep (``benchmarks/paper.py --full`` writes
OUT/summary.json) instead of a brute force of its own. Per (model, method) of the sweep:

* the sweep's targets are paper.py's (``speedups``): per variable, the default plan's
  90th-percentile error at its largest completed particle count N. A plan's time to the targets
  is the largest over the variables of its time to reach each (``paper._reaches``: within half
  an order of magnitude); None if it misses one. The best plan is the one of least time. The
  sweep's cost for the setting is its run time (runs x median time, summed over the points of
  every plan) plus its compiling.
* tune's target is one error per part of the result (a variable of the sweep), by tune's metric
  (the mean squared error of the part's numbers against the posterior mean), that asks the
  sweep's question. The sweep's error of a part is about its Monte Carlo error m plus the
  posterior mean's own distance d to the true values, which no plan changes; so a plan reaches
  the sweep's target (``paper.REACH_DECADES``, 10^0.5 times the default's error) when its Monte
  Carlo error is at most 10^0.5 (m + d) - d. Here m is measured for the default plan, outside
  tune's time, as the mean over ``TARGET_SEEDS`` runs at N of the squared error against the mean
  of ``TARGET_SEEDS`` runs at 4N (other seeds; that reference's own noise adds about 1/32 of a
  run's variance, which is left in), and d from that reference (over the first of its numbers
  as the true values have: paper.py's rule). The sweep's percentiles and, for slds' switching
  state, its cross-entropy are not what tune measures, so the translation is approximate. Where
  the default plan is exact (its runs at one particle agree) its error is 0: tune then gets no
  target, only its time budget, and targets the smallest error its pilots reach.
* tune runs on the unannotated program under the one method, with a time budget of a tenth of
  the sweep's cost and at most the sweep's N particles a run (``--max-particles N``: the sweep
  cannot say whether a plan that needs more reaches its targets, as it runs none with more);
  its pick is mapped to the sweep's plan number by its annotations (the program as written, or
  annotations equal to the plan the analysis infers for it, is "default"; a plan the sweep did
  not run is "unmatched").

The goals, per setting: the pick's time to the sweep's targets at most ``GOAL_RATIO`` times
the best plan's, never more than the default's, and tune's time at most a tenth of the
sweep's cost.
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

from paper import METHODS, QUICK_PARTICLES, REACH_DECADES, _curve, _reaches, truth  # noqa: E402
from plans import BENCHMARKS, MODELS, Plan, accepted_plans, all_plans  # noqa: E402

QUICK_MODELS = ("noise", "gtree", "outlier")
QUICK_GRID = (*QUICK_PARTICLES, 4096)          # the paper's quick sweep's counts, and one more
QUICK_REPS = 16
RUN_LIMIT = 2.0          # seconds: a plan whose run takes longer is not run at larger counts
TARGET_SEEDS = 8         # --sweep: runs at N (and at 4N, the reference) that measure tune's target
GOAL_RATIO = 1.5         # --sweep: the pick's time to the targets over the best plan's, at most


def brute_force(model: str, method: str, grid: list[int], reps: int) -> dict:
    """Every accepted plan and the program as written, at every count of ``grid``: per plan its
    groups of runs (sirenc.tuning.pilots.Group) and the seconds it all took."""
    import sirenc
    from sirenc.diagnostics import SirenError
    from sirenc.tuning.pilots import Group, result_layout, run_once

    start = time.perf_counter()
    plans = [Plan(model, "default", {}), *accepted_plans(model, method)]
    out = {"plans": {}, "failed": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for plan in plans:
            path = plan.write(Path(tmp))
            try:
                compiled = sirenc.compile(path, method=method)
                out["parts"] = result_layout(compiled)[0]       # also what a first run pays once
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
        points[k] = [(s.particles, float(s.seconds[0]),
                      0.0 if k == exact else float(accuracy.error(s, ref, found.get("parts"))[0])) for s in ss]
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


# ---------------------------------------------------------------- --sweep: against paper.py's results

def sweep_setting(model: str, rs: list[dict]) -> dict | None:
    """One (model, method) of the sweep: each plan's time to the default's targets, the default's
    largest completed particle count, and what the setting cost; None when the default plan
    completed no point (there are no targets)."""
    default = next((r for r in rs if r["plan"] == "default"), None)
    variables = [v for v, _, _ in truth(model)]
    if default is None or not _curve(default, variables[0]):
        return None
    targets = {v: _curve(default, v)[-1][2] for v in variables}

    def time_to(r: dict) -> float | None:
        ts = [_reaches(_curve(r, v), t) for v, t in targets.items()]
        return None if None in ts else max(ts)

    cost = sum(r.get("compile_s", 0.0) + sum(p["runs"] * p["time"]["median"] for p in r["points"] if "time" in p)
               for r in rs)
    return {"reach": {r["plan"]: time_to(r) for r in rs}, "particles": _curve(default, variables[0])[-1][0],
            "cost": cost}


def tune_target(path: Path, model: str, method: str, particles: int) -> list[float] | None:
    """The target per part of the result, by tune's metric, that asks the sweep's question, as
    the module docstring says; None where the default plan is exact (its error is 0)."""
    import sirenc
    from sirenc.tuning import accuracy
    from sirenc.tuning.pilots import Group, result_layout, run_once

    compiled = sirenc.compile(path, method=method)
    ones = [run_once(compiled, 1, seed) for seed in range(2)]
    if accuracy.same_answer(Group(1, np.array([e for e, _ in ones]), np.array([t for _, t in ones]))):
        return None
    parts, count = result_layout(compiled)
    runs = np.array([run_once(compiled, particles, seed)[0] for seed in range(TARGET_SEEDS)])
    ref = np.mean([run_once(compiled, 4 * particles, 1000 + seed)[0] for seed in range(TARGET_SEEDS)], axis=0)
    squared = np.mean((runs - ref) ** 2, axis=0)
    true = truth(model)
    slack = 10 ** REACH_DECADES
    targets = []
    for p in range(count):
        monte_carlo = float(squared[parts == p].mean()) if np.any(parts == p) else 0.0
        distance = 0.0
        if len(true) == count:
            own, values = ref[parts == p], true[p][2]
            n = min(len(own), len(values))
            distance = float(np.mean((own[:n] - values[:n]) ** 2)) if n else 0.0
        # The sweep's error of a part is its Monte Carlo error plus the posterior's own distance
        # to the true values, which no plan changes; a plan reaches the sweep's target (slack
        # times the default's error) when its Monte Carlo error is at most that less the distance.
        targets.append(slack * (monte_carlo + distance) - distance or slack * squared.mean())
    return targets


def sweep_number(model: str, swept: set[str], tuned) -> str:
    """The sweep's number of tune's pick (see the module docstring)."""
    pick = tuned.chosen
    if all(a is None for a in pick.plan.values()):
        return "default"
    number = next((p.number for p in all_plans(model) if p.annotations == pick.plan), None)
    if number in swept:
        return number
    written = next((r for r in tuned.rows if all(a is None for a in r.plan.values())), None)
    if written is not None and all(written.inferred.get(v) == a for v, a in pick.plan.items()):
        return "default"
    return "unmatched"


def validate(model: str, method: str, rs: list[dict], seed: int) -> dict:
    import sirenc
    from sirenc.diagnostics import SirenError
    from sirenc.tuning import schedule_to

    row = {"model": model, "method": method}
    found = sweep_setting(model, rs)
    if found is None:
        row["note"] = "the default plan completed no point"
        return row
    reach = found["reach"]
    reached = [k for k, t in reach.items() if t is not None]
    best = min(reached, key=reach.get)          # the default reaches its own targets
    row.update(best_plan=best, best_s=reach[best], default_s=reach["default"], sweep_s=found["cost"],
               budget_s=found["cost"] / 10, particles=found["particles"])
    with tempfile.TemporaryDirectory() as tmp:
        path = Plan(model, "default", {}).write(Path(tmp))
        target = tune_target(path, model, method, found["particles"])
        row["target"] = target
        start = time.perf_counter()
        try:
            tuned = sirenc.tune(path, methods=(method,), target_error=target, time_budget=row["budget_s"], seed=seed,
                                particles=schedule_to(found["particles"]))
        except SirenError as e:
            tuned = None
            row["note"] = "tune: " + e.message.splitlines()[0]
        row["tune_s"] = time.perf_counter() - start
    if tuned is not None:
        number = sweep_number(model, set(reach), tuned)
        pick_s = reach.get(number)
        row.update(tune_pick=tuned.chosen.describe(), tune_plan=number, tune_particles=tuned.chosen.particles,
                   tune_target=tuned.target_error, pick_s=pick_s,
                   ratio=None if pick_s is None else pick_s / reach[best])
    pick_s = row.get("pick_s")
    row["worse_than_default"] = pick_s is None or pick_s > reach["default"]
    row["goals"] = {"ratio": row.get("ratio") is not None and row["ratio"] <= GOAL_RATIO,
                    "not_worse": not row["worse_than_default"],
                    "time": row["tune_s"] <= row["sweep_s"] / 10}
    return row


def sweep_table(rows: list[dict]) -> str:
    head = ("model", "method", "N", "tune target", "sweep best", "best ms", "tune's pick", "pick ms", "pick/best",
            "default ms", "worse?", "tune s", "sweep s", "tune/sweep")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        if "best_plan" not in r:
            lines.append("| " + " | ".join([r["model"], r["method"], *["-"] * (len(head) - 3), r["note"]]) + " |")
            continue
        pick = r.get("note") or f"{r['tune_plan']} ({r['tune_pick'].split(': ', 1)[1]})"
        target = "exact: none" if r["target"] is None else " / ".join(f"{e:.3g}" for e in r["target"])
        lines.append("| " + " | ".join([
            r["model"], r["method"], str(r["particles"]), target, r["best_plan"], _ms(r["best_s"]), pick,
            _ms(r.get("pick_s")), "-" if r.get("ratio") is None else f"{r['ratio']:.2f}", _ms(r["default_s"]),
            "**yes**" if r["worse_than_default"] else "no", f"{r['tune_s']:.1f}", f"{r['sweep_s']:.1f}",
            f"{r['tune_s'] / r['sweep_s']:.2f}"]) + " |")
    return "\n".join(lines)


def sweep_summary(rows: list[dict]) -> str:
    n = len(rows)
    met = {k: sum(r.get("goals", {}).get(k, False) for r in rows) for k in ("ratio", "not_worse", "time")}
    every = sum(all(r.get("goals", {}).get(k, False) for k in met) for r in rows)
    return (f"{n} settings: pick/best <= {GOAL_RATIO:g} in {met['ratio']}, never worse than the default in "
            f"{met['not_worse']}, tune <= 1/10 of the sweep's time in {met['time']}; all three in {every}")


def run_sweep(path: Path, models: list[str], methods: list[str], seed: int) -> list[dict]:
    results = json.loads(path.read_text())["results"]
    by: dict[tuple[str, str], list[dict]] = {}
    for r in results:
        by.setdefault((r["model"], r["method"]), []).append(r)
    rows = []
    for key in sorted(by, key=lambda k: (BENCHMARKS.index(k[0]), METHODS.index(k[1]))):
        if (models and key[0] not in models) or (methods and key[1] not in methods):
            continue
        print(f"{key[0]} {key[1]} ...", file=sys.stderr, flush=True)
        rows.append(validate(*key, by[key], seed))
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true",
                   help=f"models {', '.join(QUICK_MODELS)}, method ssi, particles {QUICK_GRID}, "
                   f"{QUICK_REPS} runs a point")
    p.add_argument("--models", default="", help=f"comma-separated, of {', '.join(BENCHMARKS)}")
    p.add_argument("--methods", default="", help="comma-separated (default ssi; with --sweep, the sweep's)")
    p.add_argument("--particles", default="", help=f"the brute-force grid (default {','.join(map(str, QUICK_GRID))})")
    p.add_argument("--reps", type=int, default=QUICK_REPS, help="runs a point")
    p.add_argument("--target-particles", type=int, default=256,
                   help="the target is the error of the plan that samples everything at this count of the grid")
    p.add_argument("--seed", type=int, default=0, help="tune's seed")
    p.add_argument("--out", default="", help="also write the rows as JSON here")
    p.add_argument("--sweep", default="", metavar="SUMMARY",
                   help="tune against paper.py's results (its summary.json) instead of a brute force")
    args = p.parse_args(argv)
    if args.sweep:
        rows = run_sweep(Path(args.sweep), args.models.split(",") if args.models else [],
                         args.methods.split(",") if args.methods else [], args.seed)
        print(sweep_table(rows))
        print(sweep_summary(rows))
        if args.out:
            Path(args.out).write_text(json.dumps(rows, indent=1, default=float))
        return 0
    models = args.models.split(",") if args.models else list(QUICK_MODELS if args.quick else BENCHMARKS)
    grid = [int(n) for n in args.particles.split(",")] if args.particles else list(QUICK_GRID)
    rows = []
    for model in models:
        for method in (args.methods or "ssi").split(","):
            print(f"{model} {method} ...", file=sys.stderr, flush=True)
            rows.append(compare(model, method, grid, args.reps, args.target_particles, args.seed))
    print(table(rows))
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1, default=float))
    return 0


if __name__ == "__main__":
    sys.exit(main())
