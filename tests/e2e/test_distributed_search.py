"""The paper sweep (benchmarks/paper.py --scheduler) and sirenc tune (client=, --scheduler) on a Dask
cluster: the settings and pilot runs spread over two workers give the local run's errors and
estimates, bit for bit (times are measured, so only they may differ)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from markers import needs_module, needs_runtime

pytestmark = [needs_runtime, needs_module("distributed")]

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import paper  # noqa: E402
from tune_walk import write_walk  # noqa: E402



@pytest.fixture(scope="module")
def address(dask_cluster):
    return dask_cluster.scheduler_address


@pytest.fixture(scope="module")
def walk(tmp_path_factory) -> Path:
    return write_walk(tmp_path_factory.mktemp("walk"))


def errors(results: list[dict]) -> dict:
    """Per setting, what does not depend on the clock: each point's particles, runs and error quantiles."""
    return {(r["model"], r["method"], r["plan"]): (r["error"], r["tier"], [
        (p["particles"], p["runs"], p["failures"], p.get("errors")) for p in r["points"]]) for r in results}


def test_the_sweep_on_a_cluster_gives_the_local_errors(address):
    args = (["gtree", "noise"], ["ssi", "ds"], [1, 4, 16], 3, 1, 2, 10.0, (0, 0), "256M")
    local, accepted = paper.sweep(*args, log=lambda _: None)
    lines = []
    spread, accepted_there = paper.sweep(*args, log=lines.append, scheduler=address)
    assert accepted_there == accepted
    assert errors(spread) == errors(local)
    assert len(local) == len(paper.configs(accepted)) > 10
    assert lines[0].endswith(f"2 Dask worker threads at {address}")
    assert all(p.get("time") for r in spread for p in r["points"])


def test_the_sweep_command_takes_a_scheduler(address, tmp_path):
    out = tmp_path / "results"
    rc = paper.main(["--quick", "--models", "gtree", "--methods", "ssi", "--particles", "1,4", "--reps", "2",
                     "--scheduler", address, "--no-figures", "--out", str(out)])
    assert rc == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["meta"]["scheduler"] == address
    assert {r["plan"] for r in summary["results"]} == {"default", "1", "2", "3"}


def pilots(result) -> dict:
    return {(r.method, tuple(r.plan.items())): r for r in result.rows}


def test_tune_on_a_cluster_makes_the_local_pilot_runs(address, walk):
    import sirenc

    here = sirenc.tune(walk, target_error=1e-3, seed=0)
    there = sirenc.tune(walk, target_error=1e-3, seed=0, client=address)
    assert pilots(there).keys() == pilots(here).keys()
    compared = 0
    for key, r in pilots(there).items():
        old = pilots(here)[key]
        assert (r.status == "rejected") == (old.status == "rejected")
        if r.status == "rejected":
            assert r.reason == old.reason
        if r.error_particles is not None and r.error_particles == old.error_particles:
            assert (r.error, r.exact) == (old.error, old.exact)       # the same seeds, the same estimates
            compared += 1
    assert compared >= 5
    # The choice rests on measured times: the cluster's is the local one or indistinguishable from it.
    assert pilots(here)[(there.chosen.method, tuple(there.chosen.plan.items()))].status in ("chosen",
                                                                                            "indistinguishable")


def test_tune_on_a_cluster_keeps_its_time_budget(address, walk):
    import sirenc

    budget = 2.0
    start = time.perf_counter()
    result = sirenc.tune(walk, time_budget=budget, seed=2, client=address)
    assert time.perf_counter() - start <= budget * 1.2 + 0.5
    assert result.chosen.status == "chosen"


def test_the_tune_command_takes_a_scheduler(address, walk):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    r = subprocess.run([sys.executable, "-m", "sirenc.cli", "tune", str(walk), "-m", "ssi", "--target-error", "1e-3",
                        "--json", "--scheduler", address], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["chosen"]["method"] == "ssi"


def test_tune_names_a_scheduler_it_cannot_reach(walk):
    import sirenc
    from sirenc.diagnostics import SirenUsageError

    with pytest.raises(SirenUsageError, match="cannot reach the Dask scheduler at tcp://127.0.0.1:9"):
        sirenc.tune(walk, target_error=1e-3, client="tcp://127.0.0.1:9")
