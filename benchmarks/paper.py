"""The Siren paper's evaluation, rerun with sirenc's compiled filters.

Accuracy against run time of every inference plan of the eleven benchmark models, the speed-ups
over the default plans, and the analysis-precision table.

    python benchmarks/paper.py --quick       # every model, particles 1, 4, ..., 1024, 3 runs a point (~2 min)
    python benchmarks/paper.py --full        # every model, particles 1, 2, 4, ..., 1024, 100 runs a point
                                             # (23 min on 2 idle cores; budgets of 40 s of runs per plan and
                                             # 400 s per default plan bound it on slower machines: --budget,
                                             # --default-budget)
    python benchmarks/paper.py --quick --models noise,gtree --particles 1,4 --reps 2 --out /tmp/p
    python benchmarks/paper.py --report-only # redraw the report from results/summary.json
    python benchmarks/paper.py --full --scheduler tcp://HOST:8786   # the settings on a Dask cluster

For each model and each method (ssi, ds, bp) the sweep runs the default plan (the program without
annotations: the analysis infers the plan) and every plan benchmarks/plans.py says the analysis
accepts; each (model, method, plan) is compiled once and run `--reps` times (seeds 0, 1, ...) at
each particle count. A run's time is the wall time of `Filter.run()` (compiling is not timed); its
error, per variable of the model's result, is measured against the data generator's true values
(benchmarks/models/<name>/data.csv and the constants of gen_data.py): the mean squared error, or for
the switching state of slds the cross-entropy (the benchmark suite's definitions, ARCHITECTURE.md §20.2).

Writes, under --out (default benchmarks/paper/results): summary.json (per point: run-time and error
quantiles), report.md (the tables, beside the paper's numbers) and figures/<model>.png (accuracy
against time per variable and method; needs matplotlib, `pip install 'sirenc[plot]'`; without it
the report is written without figures).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import multiprocessing
import os
import platform
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from plans import BENCHMARKS, MODELS, ORACLE  # noqa: E402

METHODS = ("ssi", "ds", "bp")
FULL_PARTICLES = [2 ** k for k in range(11)]          # 1 .. 1024
QUICK_PARTICLES = [4 ** k for k in range(6)]          # 1, 4, .., 1024
DEFAULT_OUT = HERE / "paper" / "results"
MEMORY_LIMIT = "2G"
FULL_BUDGET = 40.0                                    # seconds of runs per (model, method, plan), --full,
FULL_DEFAULT_BUDGET = 400.0                           # and per default plan (its runs set the targets)
QUICK_BUDGET = 2.0                                    # and --quick
QUICK_MEMORY_LIMIT = "256M"                           # a runaway symbolic state fails sooner
# The paper's headline numbers (Siren, Section 6): speed-up to reach the target accuracy, accuracy
# gain at equal or lower run time (geometric mean, maximum), and the analysis precision.
REACH_DECADES = 0.5            # a plan reaches a target when its error is within this many orders of magnitude
PAPER = {"speedup": (1.76, 206.0), "accuracy": (1.83, 595.0), "precision": (27, 33)}


# ---------------------------------------------------------------- ground truth and the error metric

def _generator(model: str):
    spec = importlib.util.spec_from_file_location(f"gen_{model}", MODELS / model / "gen_data.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def truth(model: str) -> list[tuple[str, str, np.ndarray]]:
    """The true values of the model's result, component by component: (name, metric, values);
    metric "mse" (mean squared error) or "ce" (cross-entropy of a probability of true)."""
    data = np.loadtxt(MODELS / model / "data.csv", delimiter=",", skiprows=1, ndmin=2)
    header = (MODELS / model / "data.csv").read_text().splitlines()[0].split(",")
    col = {name: data[:, i] for i, name in enumerate(header)}
    g = _generator(model)
    a = np.atleast_1d

    def c(v):
        return a(np.asarray(v, dtype=float))

    if model in ("noise", "envnoise", "radar"):
        return [("x", "mse", col["x"]), ("q", "mse", c(g.Q)), ("r", "mse", c(g.R))]
    if model == "aircraft":
        return [("x", "mse", col["x"]), ("alt", "mse", col["alt"]), ("q", "mse", c(g.Q)), ("r", "mse", c(g.R))]
    if model in ("outlier", "outlierheavy"):
        return [("outlier_prob", "mse", c(g.OUTLIER_PROB)), ("x", "mse", col["x"])]
    if model == "gtree":
        return [("a", "mse", c(g.A)), ("b", "mse", col["b"])]
    if model == "runner":
        return [(v, "mse", col[v]) for v in ("sx", "sy", "x", "y")]
    if model == "slam":
        return [("map", "mse", c(g.MAP)), ("x", "mse", c(col["x"][-1]))]
    if model == "slds":
        return [("trans_prob0", "mse", c(g.TRANS[False])), ("trans_prob1", "mse", c(g.TRANS[True])),
                ("obs_noise0", "mse", c(g.OBS_VAR[False])), ("obs_noise1", "mse", c(g.OBS_VAR[True])),
                ("s", "ce", col["s"]), ("x", "mse", col["x"])]
    if model == "wheels":
        return [("velocity", "mse", c(col["velocity"][-1])), ("omega", "mse", c(col["omega"][-1]))]
    raise KeyError(model)


def components(estimate, k: int) -> list:
    """The k components of a result tuple from `Filter.estimate()`'s right-nested pairs."""
    out = []
    for _ in range(k - 1):
        first, estimate = estimate
        out.append(first)
    out.append(estimate)
    return out


def error(metric: str, true: np.ndarray, est) -> float:
    """The paper's per-variable error: over the n true values t_j and the first min(n, m) of the m
    estimates e_j, (1/n) sum (t_j - e_j)^2, or for "ce" (1/n) sum -t log(e) - (1 - t) log(1 - e)
    (each log of at least 1e-10). The paper's harness truncated e to an integer before the log; here
    the estimated probability itself is used."""
    e = np.atleast_1d(np.asarray(est, dtype=float))
    m = min(len(true), len(e))
    t, e = true[:m], e[:m]
    if metric == "ce":
        terms = -t * np.log(np.clip(e, 0, 1) + 1e-10) - (1 - t) * np.log(1 - np.clip(e, 0, 1) + 1e-10)
    else:
        terms = (t - e) ** 2
    return float(np.sum(terms) / len(true))


# ---------------------------------------------------------------- the sweep

@dataclass(frozen=True)
class Config:
    model: str
    method: str
    plan: str                           # Appendix B's plan number, or "default"
    annotations: tuple                  # ((variable, "symbolic" | "sample"), ...); () for the default


class RunTooLong(Exception):
    pass


def _accepted(key: tuple[str, str]) -> tuple[str, str, list]:
    from plans import accepted_plans

    model, method = key
    return model, method, [(p.number, tuple(p.annotations.items())) for p in accepted_plans(model, method)]


def configs(accepted: dict) -> list[Config]:
    """Every (model, method, plan) of the sweep: the default plan and each accepted plan."""
    out = []
    for (model, method), plans in accepted.items():
        out.append(Config(model, method, "default", ()))
        out.extend(Config(model, method, number, ann) for number, ann in plans)
    return out


def _quantiles(xs: list[float]) -> dict:
    a = np.asarray(xs, dtype=float)
    q10, q50, q90 = np.percentile(a, [10, 50, 90])
    return {"p10": float(q10), "median": float(q50), "p90": float(q90)}


def setting(cfg: Config) -> tuple[dict[str, bytes], list]:
    """What a worker needs of a setting besides sirenc: its files (the annotated program, named
    <model>.si, and the model's data files) and the true values; so that workers need neither
    this repository nor its paths."""
    from plans import Plan

    plan = Plan(cfg.model, cfg.plan, dict(cfg.annotations))
    files = {data.name: data.read_bytes() for data in (MODELS / cfg.model).glob("*.csv")}
    files[f"{cfg.model}.si"] = plan.source().encode()
    return files, truth(cfg.model)


def run_config(args: tuple) -> dict:
    """Compile one (model, method, plan) and run it at each particle count, `reps` seeds each."""
    cfg, (files, true), particles, reps, tier, run_limit, budgets, memory_limit, resampler = args
    budget = budgets[1] if cfg.plan == "default" else budgets[0]
    import sirenc
    from sirenc.diagnostics import SirenError

    out = {"model": cfg.model, "method": cfg.method, "plan": cfg.plan, "points": [], "error": None}
    with tempfile.TemporaryDirectory() as tmp:
        for name, content in files.items():
            (Path(tmp) / name).write_bytes(content)
        path = Path(tmp) / f"{cfg.model}.si"
        start = time.perf_counter()
        try:
            model = sirenc.compile(str(path), method=cfg.method, tier=tier)
        except SirenError as e:
            out["error"] = f"compile: {e.message.splitlines()[0]}"
            return out
        out["compile_s"] = time.perf_counter() - start
        out["tier"] = model.info.get("tier")
        runtime_plan = None

        def guard(progress):
            if progress.elapsed > run_limit:
                raise RunTooLong

        spent, last = 0.0, None                   # run time so far; (particles, median) of the last point
        for n in particles:
            if budget and last is not None and spent + reps * last[1] * n / last[0] > budget:
                out["points"].append({"particles": n, "runs": 0, "failures": 0,
                                      "stopped": f"over the setting's budget of {budget:g} s of runs"})
                break
            times, errs, failures = [], [[] for _ in true], []
            stop = None
            for seed in range(reps):
                f = model.filter(particles=n, seed=seed, memory_limit=memory_limit, resampler=resampler)
                t0 = time.perf_counter()
                try:
                    f.run(progress=guard, progress_interval=1.0)
                except RunTooLong:
                    stop = f"a run took over {run_limit:g} s"
                    break
                except SirenError as e:           # a runaway symbolic state, all weights zero, ...
                    failures.append(e.message.splitlines()[0])
                    if "memory" in e.message.lower():
                        stop = failures[-1]
                        break
                    continue
                times.append(time.perf_counter() - t0)
                est = components(f.estimate(), len(true))
                for i, (_, metric, t) in enumerate(true):
                    errs[i].append(error(metric, t, est[i]))
                if runtime_plan is None and cfg.method == "ssi" and model.info.get("tier") == 1:
                    runtime_plan = f.runtime_plan()
            spent += sum(times)
            point = {"particles": n, "runs": len(times), "failures": len(failures)}
            if failures:
                point["failure"] = failures[0]
            if times and stop is None:
                point["time"] = _quantiles(times)
                point["errors"] = {name: _quantiles(errs[i]) for i, (name, _, _) in enumerate(true)}
                last = (n, point["time"]["median"])
            out["points"].append(point)
            if stop is not None:
                point["stopped"] = stop
                break
        out["runtime_plan"] = runtime_plan
    return out


def sweep(models: list[str], methods: list[str], particles: list[int], reps: int, jobs: int, tier: int,
          run_limit: float, budget: tuple[float, float], memory_limit: str, resampler: str = "systematic",
          log=print, scheduler: str | None = None) -> tuple[list[dict], dict]:
    """Runs every setting, on `jobs` local processes or on the Dask cluster of `scheduler` (an
    address); returns the results and the accepted plans per (model, method)."""
    ctx = multiprocessing.get_context("spawn")
    pool = ctx.Pool(jobs) if jobs > 1 and scheduler is None else None
    imap = pool.imap_unordered if pool else map
    try:
        keys = [(m, me) for m in models for me in methods]
        found = {(m, me): plans for m, me, plans in imap(_accepted, keys)}
        accepted = {k: found[k] for k in keys}
        cfgs = configs(accepted)
        # Larger jobs first (the defaults and the symbolic-heavy models), so the workers end together.
        weight = {"slds": 3, "slam": 3, "runner": 2, "wheels": 2}
        order = sorted(cfgs, key=lambda c: -(weight.get(c.model, 1) * (4 if c.plan == "default" else 1)))
        tasks = [(c, setting(c), particles, reps, tier, run_limit, budget, memory_limit, resampler) for c in order]

        def started(workers: str) -> None:
            log(f"{len(cfgs)} (model, method, plan) settings; particles {particles}; {reps} runs a point; {workers}")

        if scheduler is not None:
            done = on_cluster(scheduler, tasks, lambda n: started(f"{n} Dask worker threads at {scheduler}"))
        else:
            started(f"{jobs} workers")
            done = imap(run_config, tasks)
        results = []
        for k, r in enumerate(done, 1):
            results.append(r)
            log(f"[{k}/{len(tasks)}] {r['model']} {r['method']} {r['plan']}"
                + (f" ({r['error']})" if r["error"] else ""))
    finally:
        if pool:
            pool.close()
            pool.join()
    return results, accepted


def on_cluster(scheduler: str, tasks: list[tuple], started):
    """`run_config` of each task on the Dask cluster at `scheduler`, as each finishes. This module
    travels by value (cloudpickle), and each task carries its files and true values, so the
    workers need sirenc (and Dask) installed, not this repository."""
    import cloudpickle

    from sirenc.distributed import RETRIES, connected

    cloudpickle.register_pickle_by_value(sys.modules[run_config.__module__])
    with connected(scheduler, workers=1) as client:
        from distributed import as_completed

        started(sum(client.nthreads().values()))
        futures = [client.submit(run_config, t, pure=False, retries=RETRIES) for t in tasks]
        for future in as_completed(futures):
            yield future.result()


# ---------------------------------------------------------------- the analysis precision (27 of 33)

def precision(accepted: dict) -> list[dict]:
    """Per (model, method): the satisfiable plans (Appendix B's ground truth), the plans sirenc's
    analysis accepts and those the original's accepted."""
    oracle = json.loads(ORACLE.read_text())["benchmarks"]
    rows = []
    for (model, method), found in accepted.items():
        plans = oracle[model]["plans"]
        sat = {n for n, p in plans.items() if p[method]["truth"] == "T"}
        orig = {n for n, p in plans.items() if p[method]["verdict"] == "ok"}
        ours = {number for number, _ in found}
        rows.append({"model": model, "method": method, "plans": len(plans),
                     "satisfiable": sorted(sat, key=int), "sirenc": sorted(ours, key=int),
                     "original": sorted(orig, key=int),
                     "sirenc_all": sat <= ours, "original_all": sat <= orig,
                     "sirenc_unsound": sorted(ours - sat, key=int)})
    return rows


# ---------------------------------------------------------------- speed-ups

def _curve(res: dict, var: str) -> list[tuple[int, float, float]]:
    """(particles, median time, 90th-percentile error) of each completed point."""
    return [(p["particles"], p["time"]["median"], p["errors"][var]["p90"])
            for p in res["points"] if "time" in p]


def _reaches(curve, target: float) -> float | None:
    """The smallest median run time at which the 90th-percentile error is within ``REACH_DECADES``
    (half an order of magnitude) of the target (or rounds to 0 at 5 decimals): the paper's
    definition."""
    ok = [t for _, t, e in curve
          if round(e, 5) == 0 or (e > 0 and target > 0 and math.log10(e) - math.log10(target) <= REACH_DECADES)]
    return min(ok) if ok else None


def speedups(results: list[dict]) -> list[dict]:
    """Per (model, method, variable): the default plan's target and the best plan's speed-up to
    reach it, and the best accuracy at equal or lower run time than the default at its largest
    particle count."""
    by = {}
    for r in results:
        by.setdefault((r["model"], r["method"]), []).append(r)
    rows = []
    for (model, method), rs in sorted(by.items(), key=lambda kv: (BENCHMARKS.index(kv[0][0]),
                                                                   METHODS.index(kv[0][1]))):
        default = next((r for r in rs if r["plan"] == "default"), None)
        for var, _, _ in truth(model):
            row = {"model": model, "method": method, "variable": var}
            rows.append(row)
            dcurve = _curve(default, var) if default else []
            if not dcurve:
                row["note"] = "the default plan completed no point"
                continue
            n_d, t_d, target = dcurve[-1]
            row.update(target=target, default_particles=n_d, default_time=t_d)
            reach = {}
            for r in rs:
                t = _reaches(_curve(r, var), target)
                if t is not None:
                    reach[r["plan"]] = t
            t_default = reach["default"]
            best = min(reach, key=reach.get)
            row.update(best_plan=best, speedup=t_default / reach[best])
            # accuracy at equal or lower run time
            cands = [(e, r["plan"]) for r in rs for _, t, e in _curve(r, var) if t <= t_d]
            e_best, p_best = min(cands)
            row.update(acc_plan=p_best, accuracy=(1.0 if target == 0 else target / e_best if e_best > 0
                                                  else math.inf))
    return rows


def geomean(xs: list[float]) -> float:
    xs = [x for x in xs if math.isfinite(x)]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else math.nan


# ---------------------------------------------------------------- the report

def figures(results: list[dict], out: Path) -> list[str]:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.ticker import NullFormatter
    except ImportError:
        return []
    (out / "figures").mkdir(parents=True, exist_ok=True)
    names = []
    models = list(dict.fromkeys(r["model"] for r in results))
    for model in models:
        vars_ = [v for v, _, _ in truth(model)]
        methods = [m for m in METHODS if any(r["model"] == model and r["method"] == m for r in results)]
        fig, axes = plt.subplots(len(vars_), len(methods), figsize=(4.2 * len(methods), 2.8 * len(vars_)),
                                 squeeze=False)
        for j, method in enumerate(methods):
            rs = sorted((r for r in results if r["model"] == model and r["method"] == method),
                        key=lambda r: (r["plan"] != "default", int(r["plan"]) if r["plan"].isdigit() else -1))
            for i, var in enumerate(vars_):
                ax = axes[i][j]
                target = None
                for r in rs:
                    c = _curve(r, var)
                    if not c:
                        continue
                    ts, es = [x[1] for x in c], [max(x[2], 1e-12) for x in c]
                    if r["plan"] == "default":
                        ax.plot(ts, es, "k--o", lw=2.2, ms=3, label="default", zorder=5)
                        target = c[-1][2]
                    else:
                        ax.plot(ts, es, "-o", lw=1, ms=2, label=f"plan {r['plan']}")
                if target:
                    ax.axhline(target, color="grey", lw=0.8, ls=":")
                    ax.axhspan(target, target * 10 ** 0.5, color="grey", alpha=0.12)
                ax.set_xscale("log")
                ax.set_yscale("log")
                ax.xaxis.set_minor_formatter(NullFormatter())
                ax.yaxis.set_minor_formatter(NullFormatter())
                ax.set_title(f"{model} {method}: {var}", fontsize=9)
                ax.tick_params(labelsize=7)
                if i == len(vars_) - 1:
                    ax.set_xlabel("median run time (s)", fontsize=8)
                if j == 0:
                    ax.set_ylabel("90th-pct. error", fontsize=8)
                if i == 0:
                    ax.legend(fontsize=6, ncol=2 if len(rs) > 8 else 1, loc="best")
        height = 2.8 * len(vars_)
        fig.subplots_adjust(left=0.08, right=0.98, top=1 - 0.3 / height, bottom=0.5 / height,
                            hspace=0.45, wspace=0.22)   # (tight_layout takes seconds a figure)
        name = f"figures/{model}.png"
        fig.savefig(out / name, dpi=80)
        plt.close(fig)
        names.append(name)
    return names


def _fmt(x: float | None) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    if math.isinf(x):
        return "inf"
    return f"{x:.3g}"


def report(summary: dict, out: Path, draw: bool = True) -> str:
    results, meta = summary["results"], summary["meta"]
    rows = speedups(results)
    prec = summary["precision"]
    figs = figures(results, out) if draw else []
    L = []
    w = L.append
    w("# The Siren paper's evaluation with sirenc's compiled filters\n")
    w(f"Command: `{meta['command']}`  ")
    w(f"Commit: `{meta['commit']}`{' (with uncommitted changes)' if meta.get('dirty') else ''}  ")
    w(f"Date: {meta['date']}; machine: {meta['machine']}; {meta['jobs']} worker processes; "
      f"load average before / after: {meta['load_before']} / {meta['load_after']}  ")
    w(f"Sweep wall time: **{meta['wall_s']:.0f} s** ({meta['wall_s'] / 60:.1f} min) for "
      f"{len(results)} (model, method, plan) settings, particles {meta['particles']}, "
      f"{meta['reps']} runs (seeds 0..{meta['reps'] - 1}) a point, {meta.get('resampler', 'systematic')} "
      f"resampling at every `resample()`, tier {meta['tier']} "
      + ("(symbolic state compiled into arithmetic where sirenc can)" if meta["tier"] == 2
         else "(the general symbolic runtime for every plan)")
      + f", memory limit {meta.get('memory_limit', MEMORY_LIMIT)}, "
      f"at most {meta['run_limit']:g} s a run"
      + (f", at most {meta['budget'][0]:g} s of runs per (model, method, plan) and "
         f"{meta['budget'][1]:g} s per default plan (a particle count whose projected runs would pass "
         f"it is skipped, with the larger ones: listed under Settings)"
         if any(meta.get("budget") or ()) else "") + ".\n")
    w("Run time is the wall time of `Filter.run()` (compiling excluded); error is per variable of "
      "the result against the data generator's true values: mean squared error, cross-entropy for "
      "slds `s`. A point's statistic is the 90th percentile of the error over its runs and the median "
      "of the run time. The *target* of a (model, method, variable) is the default plan's "
      "90th-percentile error at its largest particle count; a plan *reaches* it at the smallest median "
      "run time whose 90th-percentile error is at most 10^0.5 times the target (the paper's "
      "definition). *Speed-up*: the default's time to reach the target over the best plan's (the "
      "default is a candidate, so at least 1). *Accuracy*: the target over the lowest "
      "90th-percentile error any plan reaches with a median run time at most the default's at its "
      "largest particle count. Means are geometric, over every (model, method, variable).\n")

    sp = [r["speedup"] for r in rows if "speedup" in r]
    ac = [r["accuracy"] for r in rows if "accuracy" in r]
    n_all = sum(1 for r in prec if r["sirenc_all"])
    n_orig = sum(1 for r in prec if r["original_all"])
    w("## Headline\n")
    w("| | sirenc (this run) | the paper |")
    w("|---|---|---|")
    w(f"| speed-up to reach the target accuracy: geometric mean | {_fmt(geomean(sp))}x | {PAPER['speedup'][0]}x |")
    w(f"| speed-up to reach the target accuracy: maximum | {_fmt(max(sp) if sp else None)}x | {PAPER['speedup'][1]:g}x |")
    w(f"| accuracy at equal or lower run time: geometric mean | {_fmt(geomean(ac))}x | {PAPER['accuracy'][0]}x |")
    finite = [x for x in ac if math.isfinite(x)]
    w(f"| accuracy at equal or lower run time: maximum | {_fmt(max(finite) if finite else None)}x"
      + (f" ({len(ac) - len(finite)} more where a plan's error is 0, left out of both)" if len(finite) < len(ac) else "")
      + f" | {PAPER['accuracy'][1]:g}x |")
    w(f"| (model, method) settings where the analysis accepts every satisfiable plan | "
      f"{n_all} of {len(prec)} | {PAPER['precision'][0]} of {PAPER['precision'][1]} "
      f"(Appendix B's verdicts give {n_orig} of {len(prec)}) |")
    w(f"\n{len(sp)} (model, method, variable) triples have a speed-up; {sum(1 for x in sp if x > 1.0001)} "
      f"of them above 1.\n")

    w("## Speed-up and accuracy per model, method and variable\n")
    w("| model | method | variable | default N | target (p90 error) | best plan | speed-up | "
      "most accurate plan (time <= default's) | accuracy gain |")
    w("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        if "speedup" not in r:
            w(f"| {r['model']} | {r['method']} | {r['variable']} | {r.get('default_particles', '-')} | "
              f"{_fmt(r.get('target'))} | - | - | - | - ({r.get('note', '')}) |")
            continue
        w(f"| {r['model']} | {r['method']} | {r['variable']} | {r['default_particles']} | {_fmt(r['target'])} | "
          f"{r['best_plan']} | {_fmt(r['speedup'])} | {r['acc_plan']} | {_fmt(r['accuracy'])} |")

    w("\n## Analysis precision\n")
    w("Satisfiable: the plans that ran without a violated annotation in the original (Appendix B's "
      "`truth`). A setting counts when every satisfiable plan is accepted.\n")
    w("| model | method | plans | satisfiable | accepted by sirenc | all? | accepted by the original | all? |")
    w("|---|---|---|---|---|---|---|---|")
    for r in prec:
        w(f"| {r['model']} | {r['method']} | {r['plans']} | {' '.join(r['satisfiable']) or '-'} | "
          f"{' '.join(r['sirenc']) or '-'} | {'yes' if r['sirenc_all'] else '**no**'} | "
          f"{' '.join(r['original']) or '-'} | {'yes' if r['original_all'] else '**no**'} |")
    unsound = [r for r in prec if r["sirenc_unsound"]]
    w(f"\nsirenc accepts every satisfiable plan in **{n_all} of {len(prec)}** settings (the paper: "
      f"{PAPER['precision'][0]} of {PAPER['precision'][1]}); accepted plans the oracle marks unsatisfiable: "
      + (", ".join(f"{r['model']} {r['method']} {' '.join(r['sirenc_unsound'])}" for r in unsound) or "none")
      + ".\n")

    w("## Settings\n")
    w("| model | method | plan | tier | compile (s) | points | median time at the largest N (s) | notes |")
    w("|---|---|---|---|---|---|---|---|")
    for r in sorted(results, key=lambda r: (BENCHMARKS.index(r["model"]), METHODS.index(r["method"]),
                                            r["plan"] != "default", int(r["plan"]) if r["plan"].isdigit() else 0)):
        done = [p for p in r["points"] if "time" in p]
        notes = []
        if r["error"]:
            notes.append(r["error"])
        for p in r["points"]:
            if p.get("stopped"):
                notes.append(f"stopped at N={p['particles']}: {p['stopped']}")
            elif p.get("failures"):
                notes.append(f"N={p['particles']}: {p['failures']} failed runs ({p['failure']})")
        if r.get("runtime_plan"):
            notes.append("runtime plan " + ", ".join(f"{k}: {v}" for k, v in r["runtime_plan"].items()))
        last = done[-1] if done else None
        w(f"| {r['model']} | {r['method']} | {r['plan']} | {r.get('tier', '-')} | {_fmt(r.get('compile_s'))} | "
          f"{len(done)} | {_fmt(last['time']['median']) + ' (N=' + str(last['particles']) + ')' if last else '-'} | "
          f"{'; '.join(notes)} |")

    if figs:
        w("\n## Figures\n")
        w("90th-percentile error against median run time, one panel per variable (rows) and method "
          "(columns); the default plan is the thick dashed black line, the dotted line its target and "
          "the shaded band the half order of magnitude within which a plan reaches it.\n")
        for name in figs:
            w(f"![{Path(name).stem}]({name})\n")
    elif draw:
        w("\n(matplotlib is not installed: no figures.)\n")
    text = "\n".join(L) + "\n"
    (out / "report.md").write_text(text)
    return text


def _git(*args: str) -> str:
    try:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def _machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, {platform.system()}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    g = p.add_mutually_exclusive_group()
    g.add_argument("--quick", action="store_true", help="particles 1, 4, .., 1024, 3 runs a point, 2 s of runs a plan (the default)")
    g.add_argument("--full", action="store_true", help="particles 1, 2, 4, .., 1024, 100 runs a point, budgets 40 s / 400 s")
    g.add_argument("--report-only", action="store_true", help="redraw the report from OUT/summary.json")
    p.add_argument("--models", default="", help="comma-separated subset of the benchmark models")
    p.add_argument("--methods", default=",".join(METHODS))
    p.add_argument("--particles", default="", help="comma-separated particle counts (overrides the preset)")
    p.add_argument("--reps", type=int, default=0, help="runs a point (overrides the preset)")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="worker processes")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="run the settings on the Dask cluster of the scheduler at ADDRESS (tcp://host:8786) "
                        "instead of --jobs local processes (pip install 'sirenc[distributed]')")
    p.add_argument("--tier", type=int, default=2, choices=(1, 2), help="2: tier 2 where it applies; 1: never")
    p.add_argument("--run-limit", type=float, default=0,
                   help="seconds a run may take; past it the plan's larger particle counts are skipped")
    p.add_argument("--budget", type=float, default=-1,
                   help="seconds of runs a (model, method, plan) may take in all; a particle count that "
                        "would go past it is skipped with the larger ones (0: no budget; default 40 s with --full, "
                        "2 s with --quick)")
    p.add_argument("--default-budget", type=float, default=-1,
                   help="--budget for the default plans (default: 400 s with --full, "
                        "2 s with --quick)")
    p.add_argument("--memory-limit", default="",
                   help=f"each filter's memory limit (default {MEMORY_LIMIT}; --quick {QUICK_MEMORY_LIMIT})")
    p.add_argument("--resampler", default="systematic",
                   choices=("systematic", "multinomial", "stratified", "residual"),
                   help="the filters' resampler (the original resampled multinomially)")
    p.add_argument("--no-figures", action="store_true", help="write the report without figures")
    p.add_argument("--out", default=str(DEFAULT_OUT))
    args = p.parse_args(argv)
    out = Path(args.out)
    if args.report_only:
        report(json.loads((out / "summary.json").read_text()), out, draw=not args.no_figures)
        print(f"wrote {out / 'report.md'}")
        return 0
    models = args.models.split(",") if args.models else list(BENCHMARKS)
    methods = args.methods.split(",")
    particles = ([int(x) for x in args.particles.split(",")] if args.particles
                 else FULL_PARTICLES if args.full else QUICK_PARTICLES)
    reps = args.reps or (100 if args.full else 3)
    run_limit = args.run_limit or (10.0 if args.full else 2.0)
    budget = (args.budget if args.budget >= 0 else FULL_BUDGET if args.full else QUICK_BUDGET,
              args.default_budget if args.default_budget >= 0
              else FULL_DEFAULT_BUDGET if args.full else QUICK_BUDGET)
    out.mkdir(parents=True, exist_ok=True)

    start = time.perf_counter()
    load_before = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    memory_limit = args.memory_limit or (MEMORY_LIMIT if args.full else QUICK_MEMORY_LIMIT)
    results, accepted = sweep(models, methods, particles, reps, args.jobs, args.tier, run_limit, budget,
                              memory_limit, args.resampler,
                              log=lambda s: print(f"{time.perf_counter() - start:7.1f}s {s}", flush=True),
                              scheduler=args.scheduler)
    prec = precision(accepted)
    wall = time.perf_counter() - start
    command = "python benchmarks/paper.py " + " ".join(sys.argv[1:] if argv is None else argv)
    meta = {"command": command.strip(), "commit": _git("rev-parse", "HEAD"),
            "dirty": bool(_git("status", "--porcelain", "--", "benchmarks", "sirenc", "runtime_c")),
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "machine": _machine(),
            "jobs": args.jobs, "scheduler": args.scheduler, "particles": particles, "reps": reps, "tier": args.tier,
            "resampler": args.resampler, "run_limit": run_limit, "budget": budget, "memory_limit": memory_limit, "wall_s": wall, "load_before": load_before,
            "load_after": ", ".join(f"{x:.2f}" for x in os.getloadavg())}
    summary = {"meta": meta, "results": results, "precision": prec}
    (out / "summary.json").write_text(json.dumps(summary, separators=(",", ":")))
    report(summary, out, draw=not args.no_figures)
    print(f"wrote {out / 'report.md'} in {wall:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
