"""The `sirenc` command line, end to end, as a user runs it."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import original_harness
from markers import needs_runtime

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def sirenc(*args, cwd=None):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-m", "sirenc.cli", *map(str, args)],
                          capture_output=True, text=True, cwd=cwd, env=env)


def section(stdout: str, name: str) -> list[str]:
    lines = stdout.splitlines()
    start = lines.index(f"===== {name} =====") + 1
    end = next((i for i in range(start, len(lines)) if lines[i].startswith("=====")), len(lines))
    return lines[start:end]


@pytest.mark.parametrize("argv", [["--help"], ["run", "--help"], ["check", "--help"], ["help"], ["help", "run"]])
def test_help(argv):
    r = sirenc(*argv)
    assert r.returncode == 0
    assert "usage: sirenc" in r.stdout


def test_the_help_lists_the_commands_and_help_is_a_command():
    top = sirenc("--help").stdout
    assert "sirenc run FILE" in top and "sirenc check FILE" in top and "sirenc help" in top
    assert sirenc("help", "check").stdout == sirenc("check", "--help").stdout
    r = sirenc("help", "frobnicate")
    assert r.returncode == 2 and "no command 'frobnicate'" in r.stderr and "Traceback" not in r.stderr


@needs_runtime
def test_s_is_the_seed_as_for_siren():
    one = sirenc("run", EXAMPLES / "coin.si", "-m", "pf", "-p", "300", "-s", "4", "--json")
    two = sirenc("run", EXAMPLES / "coin.si", "-m", "pf", "-p", "300", "--seed", "4", "--json")
    assert one.returncode == 0, one.stderr
    assert json.loads(one.stdout)["result"] == json.loads(two.stdout)["result"]


@needs_runtime
def test_run_prints_the_original_report():
    r = sirenc("run", EXAMPLES / "walk.si", "-m", "pf", "-p", "2000", "--seed", "3")
    assert r.returncode == 0, r.stderr
    result = float(section(r.stdout, "Result")[0])
    assert -8.0 < result < -5.0  # Kalman mean of the final position is about -6.58
    assert section(r.stdout, "Runtime Inference Plan") == ["x1: sample"]
    assert float(section(r.stdout, "Evaluation Time")[0]) > 0
    # The original's blocks, in its order (run checks the plan: the original's -a blocks), and
    # before the result, where the harness does not read, the posterior table.
    report = original_harness.parse(r.stdout)
    assert report["blocks"] == ["Handler", "Inference Algorithm", "Inferred Inference Plan", "Analysis Time",
                                "Evaluation Time", "Result", "Runtime Inference Plan"]
    assert [name for name, _ in original_harness.blocks(r.stdout)][4:6] == ["Evaluation Time", "Posterior"]
    head, row = section(r.stdout, "Posterior")
    assert head.split() == ["variable", "mean", "sd", "q5", "q50", "q95", "mcse", "ess"]
    assert row.split()[:2] == ["result", "x1"]      # walk.si returns its step's x1 as it is
    assert float(row.split()[2]) == pytest.approx(result, rel=1e-5)   # six significant digits
    assert report["result"] == result and report["flat_result"] == [[result]]
    assert report["inferred_plan"] == report["runtime_plan"] == {"x1": "sample"}
    assert report["handler"] == "SMC" and report["method"] == "PF"


@needs_runtime
def test_run_verbose_adds_the_log_evidence_where_the_harness_does_not_read():
    r = sirenc("run", EXAMPLES / "walk.si", "-p", "2000", "--seed", "3", "-v", "--no-check")
    assert r.returncode == 0, r.stderr
    assert -180 < float(section(r.stdout, "Log Evidence")[0]) < -170
    assert 0 < float(section(r.stdout, "ESS")[0]) <= 2000
    names = [name for name, _ in original_harness.blocks(r.stdout)]
    assert names == ["Handler", "Inference Algorithm", "Evaluation Time", "Posterior", "Result", "Log Evidence",
                     "ESS", "Resampling", "Runtime Inference Plan"]
    # With resampling at every step the final ESS is the particle count; the steps' ESS is not.
    line = section(r.stdout, "Resampling")[0]
    assert int(line.split(" resample() steps, ")[0]) > 0 and "ESS before resampling: min " in line
    # The harness reads every line after the runtime plan's header: nothing may follow it.
    assert original_harness.parse(r.stdout)["runtime_plan"] == {"x1": "sample"}


def test_the_harness_parser_rejects_a_block_after_the_runtime_plan():
    old = ("===== Handler =====\nSMC\n===== Inference Algorithm =====\nPF\n===== Evaluation Time =====\n"
           "0.1\n===== Result =====\n1.5\n===== Runtime Inference Plan =====\nx: sample\n"
           "===== Log Evidence =====\n-3.5\n")
    with pytest.raises((AssertionError, ValueError)):
        original_harness.parse(old)
    with pytest.raises(ValueError, match="not enough values to unpack"):
        original_harness.parse(old.replace("===== Log Evidence =====\n", ""))
    report = original_harness.parse(old.split("===== Log Evidence")[0])
    assert report["result"] == 1.5 and report["runtime_plan"] == {"x": "sample"}


@needs_runtime
def test_run_json_and_structured_result():
    r = sirenc("run", EXAMPLES / "tree.si", "-p", "500", "--json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    root, (first_mean, (counts, ids)) = report["result"]
    assert counts == [2.0, 2.0, 3.0] and ids == [1.0, 2.0, 3.0]
    assert report["particles"] == 500 and report["inferred_plan"] == {"root": "sample", "m": "sample"}
    # The posterior summary has the result's shape, a summary per number, the estimate's means.
    s_root, (s_first, (s_counts, s_ids)) = report["summary"]
    assert s_root["mean"] == pytest.approx(root, rel=1e-12) and s_root["particles"] <= 500
    assert [c["mean"] for c in s_counts] == counts and all(c["variance"] == 0.0 for c in s_counts)
    assert set(s_first["quantiles"]) == {"0.05", "0.5", "0.95"}
    assert set(report["history"]) == {"ess", "resampled", "log_evidence", "log_evidence_increment", "rows"}
    text = sirenc("run", EXAMPLES / "tree.si", "-p", "500")
    # The textual result is a Python literal the original's harness can parse.
    literal = ast.literal_eval(section(text.stdout, "Result")[0])
    assert literal[1][1] == ([2.0, 2.0, 3.0], [1.0, 2.0, 3.0])


@needs_runtime
def test_run_with_data_replaces_the_file(tmp_path):
    data = tmp_path / "rows.csv"
    data.write_text("y\n" + "\n".join(["10.0"] * 20) + "\n")
    r = sirenc("run", EXAMPLES / "walk.si", "-p", "2000", "--data", data, "--json")
    assert r.returncode == 0, r.stderr
    assert 8.0 < json.loads(r.stdout)["result"] < 11.0


@needs_runtime
@pytest.mark.parametrize("resampler", ["systematic", "multinomial", "stratified", "residual"])
def test_run_resamplers(resampler):
    r = sirenc("run", EXAMPLES / "coin.si", "-p", "4000", "--resampler", resampler, "--json")
    assert r.returncode == 0, r.stderr
    assert abs(json.loads(r.stdout)["result"] - 0.75) < 0.05


@needs_runtime
def test_compile_to_shared_library_and_load(tmp_path):
    out = tmp_path / "walk.so"
    r = sirenc(EXAMPLES / "walk.si", "-o", out)
    assert r.returncode == 0, r.stderr
    import sirenc as api

    model = api.load(out)
    assert model.info["name"] == "walk" and model.info["streamable"]
    f = model.filter(particles=1000, seed=0)
    f.run()
    assert -8.0 < f.estimate() < -5.0


@pytest.mark.parametrize("stage", ["ast", "siren", "plan", "smc", "llvm-dialect", "llvm"])
def test_every_stage_prints(stage):
    r = sirenc(EXAMPLES / "walk.si", f"--emit={stage}")
    assert r.returncode == 0, r.stderr
    marker = {"ast": "Fold(func='step')", "siren": "siren.fold", "plan": "siren.assume",
              "smc": "smc.resample", "llvm-dialect": "llvm.func @siren_resume",
              "llvm": "@sirenc_model"}[stage]
    assert marker in r.stdout


def test_check_prints_the_plan():
    r = sirenc("check", EXAMPLES / "walk.si", "-m", "pf")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "x1: sample"
    j = json.loads(sirenc("check", EXAMPLES / "walk.si", "-m", "pf", "--json").stdout)
    assert j["plan"] == {"x1": "sample"}


def test_user_errors_exit_1_with_a_located_diagnostic(tmp_path):
    bad = tmp_path / "bad.si"
    bad.write_text("let x = 1. in\nx + [1.]\n")
    r = sirenc(bad, "--emit=siren")
    assert r.returncode == 1
    first, line, caret = r.stderr.splitlines()[:3]
    assert first.startswith(f"{bad}:2:") and ": error: " in first
    assert line == "x + [1.]" and caret.strip().startswith("^")
    assert "Traceback" not in r.stderr


def test_usage_errors_exit_2(tmp_path):
    assert sirenc("run").returncode == 2
    r = sirenc("run", tmp_path / "missing.si")
    assert r.returncode == 2 and "cannot read" in r.stderr and "Traceback" not in r.stderr
    assert sirenc(EXAMPLES / "walk.si").returncode == 2  # nothing to do
    r = sirenc("check", EXAMPLES / "walk.si", "-m", "ssi", "--analysis-budget", "0")
    assert r.returncode == 2 and "--analysis-budget must be at least 1" in r.stderr


@needs_runtime
@pytest.mark.parametrize("method", ["ds", "bp"])
def test_run_delayed_sampling_and_belief_propagation(method, tmp_path):
    path = tmp_path / "flag.si"
    path.write_text(OUTLIER_FLAG)
    r = sirenc("run", path, "-m", method, "-p", "200", "--seed", "3")
    assert r.returncode == 0, r.stderr
    assert section(r.stdout, "Inference Algorithm") == [method.upper()]
    assert section(r.stdout, "Runtime Inference Plan") == ["x: symbolic", "o: sample"]
    ssi = sirenc("run", path, "-m", "ssi", "-p", "200", "--seed", "3")
    assert section(r.stdout, "Result") == section(ssi.stdout, "Result")   # one Gaussian chain: alike
    forced = tmp_path / "forced.si"
    forced.write_text(OUTLIER_FLAG.replace("let sample o", "let symbolic o"))
    assert sirenc("check", forced, "-m", method).returncode == 1
    r = sirenc("run", forced, "-m", method, "--no-check", "-p", "50", "--seed", "1")
    assert r.returncode == 1 and "o is annotated as symbolic but will be sampled" in r.stderr


@needs_runtime
def test_a_long_chain_of_lets_compiles(tmp_path):
    # Every stage recurses along the chain; the driver gives it a deep stack.
    lines = ["let x0 = 1. in", *(f"let x{i} = x{i - 1} + 1. in" for i in range(1, 3000)), "x2999"]
    program = tmp_path / "deep.si"
    program.write_text("\n".join(lines))
    r = sirenc("run", program, "-p", "5", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["result"] == 3000.0


WARNED = """val never = fun x -> x + 1. in
let x <- gaussian(0., 1.) in
let c = x + 1. < 2. in
x
"""


@pytest.mark.parametrize("command", [["check"], ["--emit=siren"]])
def test_unused_functions_warn_only_with_W_unused(tmp_path, command):
    path = tmp_path / "warned.si"
    path.write_text(WARNED)
    args = [*command[:1], path, *command[1:]] if command == ["check"] else [path, *command]

    def warnings(*flags):
        r = sirenc(*args, *flags)
        assert r.returncode == 0, r.stderr
        return [line for line in r.stderr.splitlines() if ": warning: " in line]

    # By default only the warning a user can act on: the original reads the comparison differently.
    default = warnings()
    assert len(default) == 1 and "the original Siren binds" in default[0]
    unused = warnings("-W", "unused")
    assert len(unused) == 2 and any("function 'never' is never called" in w for w in unused)
    assert warnings("-Wall") == unused
    assert warnings("-W", "none") == []


def test_warning_groups():
    from sirenc.cli.warning_groups import shown_warnings

    found = [("function 'f' is never called, so it is not type-checked", None), ("something else", None)]
    assert shown_warnings(found) == found[1:]
    assert shown_warnings(found, ["unused"]) == shown_warnings(found, ["all"]) == found
    assert shown_warnings(found, ["unused", "none"]) == []


@needs_runtime
def test_run_shows_no_unused_function_warning_by_default(tmp_path):
    path = tmp_path / "warned.si"
    path.write_text(WARNED)
    r = sirenc("run", path, "-p", "10")
    assert r.returncode == 0 and "never called" not in r.stderr and "the original Siren binds" in r.stderr
    assert "never called" in sirenc("run", path, "-p", "10", "-W", "unused").stderr


OUTLIER_FLAG = """
let x <- gaussian(0., 4.) in
let sample o <- bernoulli(0.2) in
let () = observe(gaussian(if o then 0. else x, if o then 100. else 1.), 1.5) in
x
"""


@needs_runtime
def test_run_ssi_prints_the_plan_the_run_recorded(tmp_path):
    path = tmp_path / "flag.si"
    path.write_text(OUTLIER_FLAG)
    r = sirenc("run", path, "-m", "ssi", "-p", "200", "--seed", "3")
    assert r.returncode == 0, r.stderr
    assert section(r.stdout, "Inference Algorithm") == ["SSI"]
    assert section(r.stdout, "Runtime Inference Plan") == ["x: symbolic", "o: sample"]
    report = json.loads(sirenc("run", path, "-m", "ssi", "-p", "200", "--seed", "3", "--json").stdout)
    assert report["runtime_plan"] == {"x": "symbolic", "o": "sample"}
    assert report["inferred_plan"] == {"x": "symbolic", "o": "sample"}


@needs_runtime
def test_run_ssi_no_check_reports_a_forced_symbolic_variable(tmp_path):
    path = tmp_path / "forced.si"
    path.write_text(OUTLIER_FLAG.replace("let sample o", "let symbolic o"))
    assert sirenc("check", path, "-m", "ssi").returncode == 1     # the analysis rejects the plan
    r = sirenc("run", path, "-m", "ssi", "--no-check", "-p", "50", "--seed", "1")
    assert r.returncode == 1 and r.stdout == ""
    assert "forced.si:4:" in r.stderr and "o is annotated as symbolic but will be sampled" in r.stderr
    assert "Traceback" not in r.stderr
