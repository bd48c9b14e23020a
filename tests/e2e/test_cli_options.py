"""What the command lines say about their options (issue 46, point 7): a bad value is named as the
option the user typed, never as the Python parameter behind it; `siren` without `-s` says which
seed it drew; an analysis that runs out of budget says so."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import original_harness
from markers import needs_runtime
from sirenc import cli, siren_cli

ROOT = Path(__file__).resolve().parents[2]
WALK = ROOT / "examples" / "walk.si"

# The Python API's parameters whose names a command-line message must not use.
PARAMETERS = ("ess_threshold", "threads", "memory_limit", "particles", "seed", "samples", "warmup",
              "thinning", "max_rvs", "analysis_budget", "resampler")

BAD_RUN_VALUES = [
    ("--ess-threshold", ["--ess-threshold", "2"]),
    ("--ess-threshold", ["--ess-threshold", "nan"]),
    ("--threads", ["--threads", "0"]),
    ("--threads", ["--threads", "257"]),
    ("--memory-limit", ["--memory-limit", "lots"]),
    ("--particles", ["-p", "0"]),
    ("--seed", ["--seed", "-1"]),
    ("--samples", ["--handler", "mh", "--samples", "0"]),
    ("--warmup", ["--handler", "mh", "--warmup", "-1"]),
    ("--thinning", ["--handler", "mh", "--thinning", "0"]),
    ("--max-rvs", ["--max-rvs", "0"]),
    ("--analysis-budget", ["--analysis-budget", "0"]),
    ("--resampler", ["--resampler", "best"]),
]


def _assert_names_the_option(status: int, err: str, option: str) -> None:
    assert status == 2, err
    assert option in err and "Traceback" not in err, err
    # Without the options themselves (--ess-threshold contains no ess_threshold, but the
    # usage line argparse prints for --resampler lists every option): no Python name is left.
    words = re.sub(r"--[a-z-]+|\[[^\]]*\]", " ", err.split("error:", 1)[1])
    assert not [p for p in PARAMETERS if re.search(rf"\b{p}\b", words)], err


@pytest.mark.parametrize("option, argv", BAD_RUN_VALUES, ids=[" ".join(a) for _, a in BAD_RUN_VALUES])
def test_sirenc_run_names_the_option_of_a_bad_value(option, argv, capsys):
    status = _main(cli.main, ["run", str(WALK), "-q", *argv])
    _assert_names_the_option(status, capsys.readouterr().err, option)


@pytest.mark.parametrize("option, argv", [
    ("--max-rvs", ["--max-rvs", "0"]), ("--analysis-budget", ["--analysis-budget", "-3"]),
])
@pytest.mark.parametrize("command", [["check"], []], ids=["check", "compile"])
def test_sirenc_check_and_compile_name_the_option(command, option, argv, capsys):
    status = _main(cli.main, [*command, str(WALK), "-m", "ssi", *argv, *([] if command else ["--emit=plan"])])
    _assert_names_the_option(status, capsys.readouterr().err, option)


@pytest.mark.parametrize("option, argv", [
    ("--particles", ["-p", "0"]),
    ("--seed", ["-s", "-1"]),
    ("--seed", ["-s", str(2**64)]),
    ("--memory-limit", ["--memory-limit", "lots"]),
    ("--samples", ["-l", "mh", "--samples", "0"]),
    ("--warmup", ["-l", "mh", "-w", "-1"]),
    ("--thinning", ["-l", "mh", "-t", "0"]),
    ("--max-rvs", ["--max-rvs", "0"]),          # checked even where no analysis runs
    ("--max-rvs", ["-a", "--max-rvs", "0"]),
    ("--analysis-budget", ["-ao", "--analysis-budget", "0"]),
])
def test_siren_names_the_option_of_a_bad_value_before_any_output(option, argv, capsys):
    status = _main(siren_cli.main, [str(WALK), *argv])
    out, err = capsys.readouterr()
    _assert_names_the_option(status, err, option)
    assert out == ""          # not half a report: the harness would read its headers


def _main(main, argv) -> int:
    try:
        return main(argv)
    except SystemExit as e:      # argparse's own usage errors
        return e.code


@needs_runtime
def test_siren_without_s_says_which_seed_it_drew_and_that_seed_repeats_the_run(tmp_path, capsys):
    argv = [str(WALK), "-m", "pf", "-p", "50"]
    assert siren_cli.main(argv) == 0
    out, err = capsys.readouterr()
    m = re.fullmatch(r"siren: seed (\d+) \(rerun with -s \1 to repeat this run\)\n", err)
    assert m, err
    report = original_harness.parse(out)           # standard output is still the original's report
    assert siren_cli.main([*argv, "-s", m.group(1)]) == 0
    again, err = capsys.readouterr()
    assert err == "" and original_harness.parse(again)["result"] == report["result"]


BIG = """\
val step = fun (y, x) ->
  let x1 <- gaussian(x, 1.) in
  let () = observe(gaussian(x1, 0.5), y) in
  x1
in
let mu <- gaussian(0., 1.) in
fold(step, List.range(0., 20.), mu)
"""

BUDGET_WARNING = re.compile(r"m\.si:\d+:\d+: warning: the plan analysis used up its budget of 10 steps here and "
                            r"gave up, so every variable is reported dynamic; --analysis-budget N raises the "
                            r"budget \(e\.g\. --analysis-budget 100\)")


@pytest.mark.parametrize("argv", [["check", "FILE", "-m", "ssi"], ["check", "FILE", "-m", "ssi", "--json"],
                                  ["FILE", "-m", "ssi", "--emit=plan"]], ids=["check", "check-json", "compile"])
def test_a_run_out_budget_is_a_warning(tmp_path, capsys, argv):
    path = tmp_path / "m.si"
    path.write_text(BIG)
    argv = [str(path) if a == "FILE" else a for a in argv]
    assert cli.main([*argv, "--analysis-budget", "10"]) == 0
    out, err = capsys.readouterr()
    assert BUDGET_WARNING.search(err), err
    if "--json" in argv:
        assert json.loads(out)["budget_exhausted"] is True
    assert cli.main(argv) == 0             # enough budget: no warning
    out, err = capsys.readouterr()
    assert err == ""
    if "--json" in argv:
        assert json.loads(out)["budget_exhausted"] is False
    assert cli.main([*argv, "--analysis-budget", "10", "-W", "none"]) == 0
    assert capsys.readouterr().err == ""


@needs_runtime
@pytest.mark.parametrize("no_cache", [True, False], ids=["jit", "cached"])
def test_a_run_out_budget_is_a_warning_of_sirenc_run(tmp_path, capsys, no_cache):
    path = tmp_path / "m.si"
    path.write_text(BIG)
    argv = ["run", str(path), "-m", "ssi", "-p", "10", "-q", "--analysis-budget", "10"]
    for _ in range(1 if no_cache else 2):         # the second run comes from the compile cache
        assert cli.main([*argv, *(["--no-cache"] if no_cache else [])]) == 0
        out, err = capsys.readouterr()
        assert BUDGET_WARNING.search(err), err
        assert original_harness.parse(out)["inferred_plan"] == {"mu": "dynamic", "x1": "dynamic"}


@pytest.mark.parametrize("flag", [pytest.param("-a", marks=needs_runtime), "-ao"])
def test_a_run_out_budget_is_a_warning_of_siren(tmp_path, capsys, flag):
    path = tmp_path / "m.si"
    path.write_text(BIG)
    status = siren_cli.main([str(path), flag, "-m", "ssi", "-p", "10", "-s", "1", "--analysis-budget", "10"])
    out, err = capsys.readouterr()
    assert status == 0, err
    assert BUDGET_WARNING.search(err), err
    assert original_harness.parse(out)["inferred_plan"] == {"mu": "dynamic", "x1": "dynamic"}
