"""`sirenc tune` and `sirenc.tune`: the fastest plan that reaches a target error, on a Gaussian
random walk of twenty steps, whose exact posterior mean the Kalman filter gives."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import sirenc
from linear_gaussian import kalman
from markers import needs_runtime
from sirenc.diagnostics import SirenUsageError
from sirenc.tuning.pilots import flatten
from tune_walk import Q, R, WALK, YS, write_walk, write_ys

pytestmark = needs_runtime

ROOT = Path(__file__).resolve().parents[2]
EXACT = kalman(YS, Q, R)[0]
DRIFT = 1.5           # how far this machine's speed moves between two runs of tune under load
TARGET = 1e-3          # pf needs about a thousand particles: its runs cost more than a run's fixed cost


@pytest.fixture(scope="module")
def walk(tmp_path_factory) -> Path:
    return write_walk(tmp_path_factory.mktemp("tune"))


@pytest.fixture(scope="module")
def tuned(walk):
    return sirenc.tune(walk, target_error=TARGET, seed=0)


def sirenc_cli(*args, cwd=None):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-m", "sirenc.cli", *map(str, args)],
                          capture_output=True, text=True, cwd=cwd, env=env)


def mse(model, particles: int, runs: int = 30) -> tuple[float, float]:
    """The mean squared error against the exact answer of ``runs`` runs, and their median time."""
    errors, seconds = [], []
    for seed in range(runs):
        start = time.perf_counter()
        estimate = flatten(model.filter(particles=particles, seed=1000 + seed).run().estimate())
        seconds.append(time.perf_counter() - start)
        errors.append((estimate[0] - EXACT) ** 2)
    return float(np.mean(errors)), float(np.median(seconds))


def beside(program: Path, text: str, name: str = "tuned.si") -> Path:
    """``text`` as a program next to ``program``, so that it reads the same data file."""
    path = program.parent / name
    path.write_text(text)
    return path


def row(result, method: str, plan: dict):
    return next(r for r in result.rows if r.method == method and r.plan == plan)


def test_the_chosen_plan_reaches_the_target_and_is_no_slower_than_the_program_as_written(tuned, walk):
    chosen = tuned.chosen
    assert chosen.status == "chosen" and tuned.reference == "exact"
    model = sirenc.compile(beside(walk, tuned.source), method=chosen.method)
    error, seconds = mse(model, int(chosen.particles))
    assert error <= TARGET
    default = tuned.default                     # pf, the program as written
    assert default.method == "pf" and default.plan == {"x1": "sample"}
    assert chosen.seconds <= default.seconds
    # ... and measured afresh: pf with the particles tune says it needs is not faster.
    pf = sirenc.compile(walk, method="pf")
    pf_error, pf_seconds = mse(pf, int(default.particles))
    assert pf_error <= 2 * TARGET               # tune's estimate of pf's needs holds, within noise
    assert seconds <= 1.5 * pf_seconds


def test_without_an_exact_plan_the_pooled_reference_still_finds_enough_particles(walk):
    result = sirenc.tune(walk, methods="pf", target_error=10 * TARGET, seed=1)
    assert result.reference == "pooled" and result.chosen.method == "pf"
    error, _ = mse(sirenc.compile(beside(walk, result.source, "pf.si"), method="pf"), int(result.chosen.particles),
                   runs=40)
    assert error <= 2 * 10 * TARGET             # within the noise of 8 pilot runs a point


def test_a_rejected_plan_is_reported_with_the_analysis_reason(tuned, walk):
    r = row(tuned, "ds", {"x1": "symbolic"})
    assert r.status == "rejected"
    assert r.reason == ("plan cannot be satisfied under ds: 'x1' is annotated symbolic but its encoding "
                        "cannot be determined")
    assert r.location == f"{walk}:3:7"
    assert f"rejected: {r.reason} ({r.location})" in tuned.table()
    with pytest.raises(sirenc.SirenPlanError) as e:          # what the analysis itself says
        sirenc.compile(WALK.replace("let x1", "let symbolic x1"), method="ds")
    assert e.value.message.splitlines()[0] == r.reason


def test_the_tuned_program_compiles_to_the_reported_plan(tuned, walk):
    chosen = tuned.chosen
    text = tuned.source
    for var, annotation in chosen.plan.items():
        if annotation is not None:
            assert f"let {annotation} {var} <-" in text
    model = sirenc.compile(beside(walk, text), method=chosen.method)
    plan = dict(line.split(": ") for line in model.info["plan"].splitlines())
    assert plan == chosen.inferred
    assert model.info["tier"] == chosen.tier or chosen.tier is None
    for var, annotation in chosen.plan.items():
        if annotation == "symbolic":
            assert plan[var] == "symbolic"


def test_every_plan_is_tried_once_and_pf_has_one(tuned):
    plans = [(r.method, tuple(r.plan.items())) for r in tuned.rows]
    assert len(plans) == len(set(plans)) == 1 + 3 * 3       # pf; per symbolic method as written, symbolic, sample
    assert [r.plan for r in tuned.rows if r.method == "pf"] == [{"x1": "sample"}]
    assert {r.status for r in tuned.rows} <= {"chosen", "indistinguishable", "dropped", "rejected"}
    assert 0 < tuned.win_share <= 1 and tuned.regret >= 1


def test_the_same_seed_gives_the_same_pilot_runs(tuned, walk):
    again = sirenc.tune(walk, target_error=TARGET, seed=0)
    first = {(r.method, tuple(r.plan.items())): r for r in tuned.rows}
    for r in again.rows:
        old = first[(r.method, tuple(r.plan.items()))]
        assert (r.status == "rejected") == (old.status == "rejected")
        if r.error_particles is not None and r.error_particles == old.error_particles:
            assert r.error == old.error and r.exact == old.exact
    # Times are measured, so plans within their noise may trade places: the choice of one run
    # is the other's choice or indistinguishable from it, or, where the machine's speed drifted
    # between the two runs by more than tune's EQUAL, as fast as the other's choice within that
    # drift (a CI run on 2 busy cores: the second run's choice, 0.19 ms to the target, had been
    # dropped by the first as slower than its choice).
    same = first[(again.chosen.method, tuple(again.chosen.plan.items()))]
    assert same.status in ("chosen", "indistinguishable") or \
        (same.seconds is not None and same.seconds <= DRIFT * tuned.chosen.seconds)


def test_a_time_budget_is_kept(walk):
    budget = 1.5
    start = time.perf_counter()
    result = sirenc.tune(walk, time_budget=budget, seed=2)
    elapsed = time.perf_counter() - start
    assert elapsed <= budget * 1.2 + 0.2
    assert result.seconds <= elapsed and not result.target_given and result.target_error >= 0


def test_a_budget_too_short_to_compile_every_plan_still_measures_the_program_as_written(walk):
    # Ten plans cost about two seconds to compile here; half a second leaves room for the
    # program as written, which is compiled and run first whatever the budget says.
    result = sirenc.tune(walk, methods=("ssi", "ds"), time_budget=0.5, seed=4)
    written = row(result, "ssi", {"x1": None})
    assert written.runs > 0 and result.chosen.runs > 0
    assert result.seconds <= 0.5 * 1.2 + 0.4


def test_the_program_as_written_stays_in_the_race_to_the_end(walk):
    result = sirenc.tune(walk, methods=("ssi", "pf"), target_error=TARGET, seed=5)
    for r in (row(result, "ssi", {"x1": None}), row(result, "pf", {"x1": "sample"})):
        assert r.status in ("chosen", "indistinguishable") or r.reason == "slower than the chosen plan", r


def test_no_plan_needs_more_particles_than_a_run_may_use(walk):
    capped = sirenc.tune(walk, methods="pf", target_error=10 * TARGET, seed=1, particles=(100, 1000))
    assert capped.chosen.particles <= 1000
    with pytest.raises(SirenUsageError, match=r"no plan reaches the target error 0\.0001 with at most 100 "
                       r"particles a run; the closest, pf: x1 sample, reached .* with 100 particles: give a larger"):
        sirenc.tune(walk, methods="pf", target_error=TARGET / 10, seed=1, particles=(100,))


def test_a_target_per_part_measures_each_part_in_its_own_units(walk):
    scaled = beside(walk, WALK.replace("fold(step,", "let x = fold(step,").rstrip() + " in\n(x, 10. * x)\n",
                    "scaled.si")
    one = sirenc.tune(walk, methods="pf", target_error=10 * TARGET, seed=1)
    each = sirenc.tune(scaled, methods="pf", target_error=[10 * TARGET, 1000 * TARGET], seed=1)
    assert each.target_error == (10 * TARGET, 1000 * TARGET)
    assert each.chosen.particles == one.chosen.particles
    assert each.chosen.error == pytest.approx(one.chosen.error / (10 * TARGET), rel=1e-9)
    assert "target errors 0.01, 1 (the user's, one per part of the result)" in each.table()
    with pytest.raises(SirenUsageError, match="the target error gives 3 numbers, one per part of the result, "
                       r"and the result has 2 parts"):
        sirenc.tune(scaled, methods="pf", target_error=(1, 1, 1), seed=1)
    with pytest.raises(SirenUsageError, match=r"target_error must be a positive number, or a list of them"):
        sirenc.tune(scaled, methods="pf", target_error=[1, -1])
    r = sirenc_cli("tune", scaled, "-m", "pf", "--target-error", f"{10 * TARGET},{1000 * TARGET}", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["target_error"] == [10 * TARGET, 1000 * TARGET]
    bad = sirenc_cli("tune", scaled, "--target-error", "0.1,x")
    assert bad.returncode == 2 and "a number, or numbers separated by commas, not '0.1,x'" in bad.stderr


def test_compiling_a_screened_plan_goes_on_from_its_screening(walk):
    from sirenc.tuning import plans, screening

    program = plans.read_program(walk)
    candidate = next(c for c in plans.candidates(program, ["ssi"]) if c.plan == {"x1": "sample"})
    verdict = screening.screen(program, candidate, screening.Options())
    assert verdict.accepted and verdict.compilation is not None
    models = [screening.compile_model(program, candidate, screening.Options(), None, started)
              for started in (verdict.compilation, None)]
    screening.restore_source(program)
    runs = [flatten(m.filter(particles=50, seed=3).run().estimate()) for m in models]
    assert np.array_equal(runs[0], runs[1])


def test_plans_are_left_unanalysed_only_when_the_budget_is_spent():
    # 2**8 + 1 plans under ssi, more than a second can analyse; the program as written is
    # exact, so the first round settles at once, and the later rounds analyse more.
    names = [f"v{i}" for i in range(8)]
    program = "".join(f"let {v} <- gaussian(0., 1.) in\nlet () = observe(gaussian({v}, 1.), 0.5) in\n" for v in names)
    program += "(" + ", ".join(names) + ")\n"
    budget = 1.5
    result = sirenc.tune(program, methods="ssi", time_budget=budget, seed=0)
    unread = [r for r in result.rows if r.reason == "the time budget ran out before the analysis reached it"]
    assert unread and result.chosen.exact
    assert result.seconds >= 0.85 * budget


def test_annotations_in_the_program_are_kept(tmp_path):
    write_ys(tmp_path)
    two = WALK.replace("  x1\nin", "  let z <- gaussian(x1, 1.) in\n  x1\nin").replace("let x1", "let sample x1")
    path = tmp_path / "fixed.si"
    path.write_text(two)
    result = sirenc.tune(path, methods=("ssi",), target_error=0.05, seed=0, particles=(10, 100))
    assert result.program.free == ("z",) and result.program.fixed == {"x1": "sample"}
    assert {tuple(r.plan) for r in result.rows} == {("z",)}
    assert "let sample x1 <-" in result.source
    assert "fixed by the program: x1 sample" in result.table()


def test_usage_errors_are_clear(walk):
    with pytest.raises(SirenUsageError, match="needs a target error"):
        sirenc.tune(walk)
    with pytest.raises(SirenUsageError, match="target_error must be a positive number"):
        sirenc.tune(walk, target_error=-1)
    with pytest.raises(SirenUsageError, match="unknown method 'mcmc'"):
        sirenc.tune(walk, methods=["ssi", "mcmc"], target_error=1)
    many = "".join(f"let v{i} <- gaussian(0., 1.) in\n" for i in range(11)) + "v0\n"
    with pytest.raises(SirenUsageError, match=r"<string>:11:5: tune tries every plan .* 2\*\*11"):
        sirenc.tune(many, target_error=1)


def test_the_command_writes_the_tuned_program_and_refuses_its_input(walk, tmp_path):
    out = tmp_path / "tuned.si"
    r = sirenc_cli("tune", walk, "-m", "ssi", "-m", "pf", "--target-error", TARGET, "-o", out)
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""                       # no progress line where standard error is no terminal
    assert "chosen" in r.stdout and "target error 0.001" in r.stdout
    assert re.search(r"let (symbolic |sample )?x1 <-", out.read_text())
    assert out.read_text().replace("symbolic ", "").replace("sample ", "") == walk.read_text()
    before = walk.read_text()
    refused = sirenc_cli("tune", walk, "--target-error", TARGET, "-o", walk)
    assert refused.returncode == 2 and "would overwrite the program" in refused.stderr
    data = sirenc_cli("tune", walk, "--target-error", TARGET, "-o", walk.parent / "ys.csv")
    assert data.returncode == 2 and "a data file of the program" in data.stderr
    assert walk.read_text() == before


def test_the_command_prints_strict_json(walk):
    r = sirenc_cli("tune", walk, "-m", "ssi", "-m", "ds", "--target-error", TARGET, "--json")
    assert r.returncode == 0, r.stderr

    def refuse(name):
        raise AssertionError(f"not strict JSON: {name}")

    report = json.loads(r.stdout, parse_constant=refuse)
    assert report["chosen"]["status"] == "chosen" and report["target_error"] == TARGET
    assert {p["method"] for p in report["plans"]} == {"ssi", "ds"}
    assert report["default"] is None and "fold(step" in report["source"]
    rejected = [p for p in report["plans"] if p["status"] == "rejected"]
    assert rejected and all(p["reason"] and p["location"] for p in rejected)


def test_the_command_needs_a_target_or_a_budget(walk):
    r = sirenc_cli("tune", walk)
    assert r.returncode == 2 and "needs a target error" in r.stderr
    assert "--target-error" in sirenc_cli("help", "tune").stdout
