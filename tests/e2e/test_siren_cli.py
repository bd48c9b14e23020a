"""`siren`, the original's command line on top of sirenc (ARCHITECTURE.md §18), read as the original's
benchmark harness reads it (tests/original_harness.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest

import original_harness
from markers import needs_runtime

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
NOISE = ROOT / "benchmarks" / "models" / "noise" / "model.si"


def siren(*args, cwd=None):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-m", "sirenc.siren_cli", *map(str, args)],
                          capture_output=True, text=True, cwd=cwd, env=env)


def program(tmp_path, text: str, name: str = "m.si") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


SYMBOLIC = """let symbolic x <- gaussian(0., 1.) in
let () = observe(gaussian(x, 1.), 2.) in
x
"""

UNUSED = """val never = fun x -> x + 1. in
let x <- gaussian(0., 1.) in
let () = observe(gaussian(x, 1.), 2.) in
x
"""


def test_installed_beside_sirenc():
    scripts = {e.name: e.value for e in entry_points(group="console_scripts") if e.name.startswith("siren")}
    assert scripts.get("siren") == "sirenc.siren_cli:main" and "sirenc" in scripts


def test_help_lists_the_original_flags():
    r = siren("--help")
    assert r.returncode == 0 and "usage: siren" in r.stdout
    for flag in ["--particles", "--samples", "--warmup", "--thinning", "--analyze", "-ao", "--analyze-only",
                 "--handler", "--method", "--seed", "--max-rvs", "--verbose", "--profile"]:
        assert flag in r.stdout, flag


@needs_runtime
def test_run_pf_prints_what_the_harness_reads():
    r = siren(EXAMPLES / "walk.si", "-m", "pf", "-p", "2000", "-s", "3")
    assert r.returncode == 0, r.stderr
    report = original_harness.parse(r.stdout)
    assert report["blocks"] == ["Handler", "Inference Algorithm", "Evaluation Time", "Result",
                                "Runtime Inference Plan"]
    assert report["handler"] == "SMC" and report["method"] == "PF"
    assert -8.0 < report["result"] < -5.0 and report["evaluation_time"] > 0
    assert report["runtime_plan"] == {"x1": "sample"}


@needs_runtime
def test_structured_result_and_analyze():
    r = siren(EXAMPLES / "tree.si", "-m", "pf", "-p", "500", "-a")
    assert r.returncode == 0, r.stderr
    report = original_harness.parse(r.stdout)
    assert report["blocks"] == ["Handler", "Inference Algorithm", "Inferred Inference Plan", "Analysis Time",
                                "Evaluation Time", "Result", "Runtime Inference Plan"]
    assert report["inferred_plan"] == report["runtime_plan"] == {"root": "sample", "m": "sample"}
    assert report["result"][1][1] == ([2.0, 2.0, 3.0], [1.0, 2.0, 3.0])
    assert report["analysis_time"] >= 0


@needs_runtime
def test_seeds():
    def result(*seed):
        r = siren(EXAMPLES / "walk.si", "-m", "pf", "-p", "50", *seed)
        assert r.returncode == 0, r.stderr
        return original_harness.parse(r.stdout)["result"]

    assert result("-s", "7") == result("--seed", "7")
    # Without a seed every run is a fresh one, as the harness' repetitions expect.
    assert len({result(), result(), result()}) > 1


@needs_runtime
def test_verbose_blocks_sit_before_the_runtime_plan():
    r = siren(EXAMPLES / "walk.si", "-m", "pf", "-p", "100", "-s", "1", "-v")
    assert r.returncode == 0, r.stderr
    names = [name for name, _ in original_harness.blocks(r.stdout)]
    assert names[-3:] == ["Log Evidence", "ESS", "Runtime Inference Plan"]
    assert original_harness.parse(r.stdout.replace("===== Log Evidence", "===== Mixture")
                                  .replace("===== ESS", "===== Prob State"))["runtime_plan"] == {"x1": "sample"}


@needs_runtime
def test_mh_flags_are_accepted_under_smc():
    r = siren(EXAMPLES / "coin.si", "-m", "pf", "-l", "smc", "--samples", "10", "-w", "2", "-t", "1",
              "--max-rvs", "5", "-p", "200")
    assert r.returncode == 0, r.stderr
    assert 0 < original_harness.parse(r.stdout)["result"] < 1


@pytest.mark.parametrize("method", ["ssi", "ds", "bp"])
def test_analyze_only_for_every_method(method):
    r = siren(NOISE, "-ao", "-m", method)
    assert r.returncode == 0, r.stderr
    report = original_harness.parse(r.stdout)
    assert report["blocks"] == ["Handler", "Inference Algorithm", "Inferred Inference Plan", "Analysis Time"]
    assert report["method"] == method.upper()
    assert set(report["inferred_plan"]) == {"invq", "invr", "x"}
    check = subprocess.run([sys.executable, "-m", "sirenc.cli", "check", str(NOISE), "-m", method],
                           capture_output=True, text=True)
    assert original_harness._plan(check.stdout.splitlines()) == report["inferred_plan"]


def test_analyze_only_defaults_to_ssi_and_accepts_mh(tmp_path):
    r = siren(program(tmp_path, SYMBOLIC), "-ao", "-l", "mh")
    assert r.returncode == 0, r.stderr
    report = original_harness.parse(r.stdout)
    assert (report["handler"], report["method"], report["inferred_plan"]) == ("MH", "SSI", {"x": "symbolic"})


@pytest.mark.parametrize("method", ["ds", "bp"])
def test_delayed_sampling_and_belief_propagation_run(method):
    r = siren(EXAMPLES / "walk.si", "-m", method, "-a", "-p", "50", "-s", "1")
    assert r.returncode == 0, r.stderr
    report = original_harness.parse(r.stdout)
    assert (report["handler"], report["method"]) == ("SMC", method.upper())
    assert report["runtime_plan"] == {"x1": "symbolic"}


def test_mh_runs_with_the_original_report():
    r = siren(EXAMPLES / "walk.si", "-m", "pf", "-l", "mh", "--samples", "50", "-w", "5", "-t", "2", "-s", "1")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("===== Handler =====\nMH\n===== Inference Algorithm =====\nPF\n")


def test_bad_usage_exits_2(tmp_path):
    assert siren().returncode == 2
    assert siren(EXAMPLES / "walk.si", "-m", "pf", "-p", "0").returncode == 2
    assert siren(EXAMPLES / "walk.si", "-m", "nope").returncode == 2
    r = siren(tmp_path / "missing.si", "-m", "pf")
    assert r.returncode == 2 and "cannot read" in r.stderr


def test_errors_in_the_program_come_before_any_output(tmp_path):
    r = siren(program(tmp_path, "let x = in x\n"), "-m", "pf")
    assert r.returncode == 1 and r.stdout == "" and ": error: " in r.stderr


def test_a_rejected_plan_stops_after_the_inferred_plan_header(tmp_path):
    r = siren(program(tmp_path, SYMBOLIC), "-m", "pf", "-a")
    assert r.returncode == 1
    assert r.stdout.splitlines()[-1] == "===== Inferred Inference Plan ====="
    assert r.stderr.splitlines()[-1].startswith("AnalysisViolatedAnnotationError: ")


@needs_runtime
def test_a_symbolic_annotation_under_pf_is_the_original_runtime_violation(tmp_path):
    # The harness' ground truth: a failed run whose output names RuntimeViolatedAnnotationError.
    r = siren(program(tmp_path, SYMBOLIC), "-m", "pf")
    assert r.returncode == 1 and "RuntimeViolatedAnnotationError" in r.stdout + r.stderr
    assert "'x' is annotated symbolic" in r.stderr


@needs_runtime
def test_ssi_is_the_default_and_reports_what_the_run_kept_symbolic(tmp_path):
    coin = "let p <- beta(1., 1.) in let () = observe(bernoulli(p), true) in p\n"
    r = siren(program(tmp_path, coin), "-p", "5", "-s", "1")
    assert r.returncode == 0, r.stderr
    report = original_harness.parse(r.stdout)
    assert report["method"] == "SSI"
    assert report["result"] == pytest.approx(2 / 3, rel=1e-12)
    assert report["runtime_plan"] == {"p": "symbolic"}


@needs_runtime
def test_a_symbolic_variable_ssi_must_sample_is_the_original_runtime_violation(tmp_path):
    square = "let symbolic p <- gaussian(0., 1.) in let () = observe(gaussian(p * p, 1.), 0.5) in p\n"
    r = siren(program(tmp_path, square), "-p", "5", "-s", "1")
    assert r.returncode == 1, r.stdout
    assert r.stderr.splitlines()[-1] == "RuntimeViolatedAnnotationError: p is annotated as symbolic but will be sampled"
    assert ":1:" in r.stderr and "observe(gaussian(p * p, 1.), 0.5)" in r.stderr


@needs_runtime
def test_unused_functions_are_silent_unless_asked(tmp_path):
    path = program(tmp_path, UNUSED)
    r = siren(path, "-m", "pf", "-p", "10", "-s", "1")      # without -s it says which seed it drew
    assert r.returncode == 0 and r.stderr == ""
    r = siren(path, "-m", "pf", "-p", "10", "-s", "1", "-W", "unused")
    assert r.returncode == 0 and "function 'never' is never called" in r.stderr


@needs_runtime
def test_profile_prints_a_profile_instead_of_the_report():
    r = siren(EXAMPLES / "coin.si", "-m", "pf", "--profile")
    assert r.returncode == 0, r.stderr
    assert "function calls" in r.stdout and "=====" not in r.stdout


@needs_runtime
def test_memory_limit(tmp_path):
    walk = EXAMPLES / "walk.si"
    assert siren(walk, "-m", "pf", "-p", "10", "-s", "1", "--memory-limit", "64M").returncode == 0
    r = siren(walk, "-m", "pf", "-p", "10", "--memory-limit", "lots")
    assert r.returncode == 2 and "--memory-limit must be a number of bytes" in r.stderr
    r = siren(walk, "-m", "pf", "-p", "1000000", "--memory-limit", "1K")
    assert r.returncode == 2 and "more than the memory limit" in r.stderr and "Traceback" not in r.stderr
