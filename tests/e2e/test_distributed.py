"""Many streams on Dask (sirenc/distributed.py, sirenc/filter_bank.py, `sirenc run --data PATTERN`):
the same answers, bit for bit, as one filter per stream run here with the stream's seed, whatever the
workers, the order of the streams or a worker killed in the middle; a bad stream fails alone."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from markers import needs_module, needs_runtime

pytestmark = [needs_runtime, needs_module("distributed")]

ROOT = Path(__file__).resolve().parents[2]
WALK = ROOT / "examples" / "walk.si"
SEED = 7


@pytest.fixture(scope="module")
def walk():
    import sirenc
    return sirenc.compile(WALK)


@pytest.fixture(scope="module")
def client(dask_cluster):
    from distributed import Client

    with Client(dask_cluster) as c:
        yield c


def walk_rows(k: int, n: int = 60) -> np.ndarray:
    """Stream k: n observations of a Gaussian random walk (as examples/walk.csv), one column."""
    rng = np.random.default_rng(k)
    x = np.cumsum(rng.normal(size=n))
    return np.ascontiguousarray((x + rng.normal(scale=0.7, size=n)).reshape(n, 1))


def serial(model, name: str, rows, particles: int, seed: int = SEED):
    """The stream's answers from one filter run here with the stream's derived seed."""
    from sirenc.distributed import stream_seed

    f = model.filter(particles=particles, seed=stream_seed(seed, name))
    if isinstance(rows, (str, os.PathLike)):
        f.use_file(0, rows)
        rows = None
    f.run(rows)
    return f.estimate(), f.log_evidence


def test_a_cluster_gives_the_serial_answers_whatever_the_order(walk, client):
    import sirenc
    from sirenc.distributed import run_many

    streams = {f"stream-{k}": walk_rows(k) for k in range(6)}
    results = run_many(walk, streams, particles=300, seed=SEED, client=client)
    assert list(results) == list(streams)
    for name, rows in streams.items():
        assert results[name].ok, results[name].error
        assert (results[name].estimate, results[name].log_evidence) == serial(walk, name, rows, 300)
    shuffled = list(streams.items())
    random.Random(0).shuffle(shuffled)
    again = run_many(walk, dict(shuffled), particles=300, seed=SEED, client=client)
    assert {n: (r.estimate, r.log_evidence) for n, r in again.items()} == \
        {n: (r.estimate, r.log_evidence) for n, r in results.items()}
    kept = run_many(walk, dict(list(streams.items())[:2]), particles=300, seed=SEED, client=client, checkpoints=True)
    for name, r in kept.items():
        assert sirenc.Filter.load(walk, r.checkpoint).estimate() == results[name].estimate


def test_one_stream_runs_here_and_keeps_its_filter(walk):
    from sirenc.distributed import run_many, stream_seed

    rows = walk_rows(1)
    r = run_many(walk, {"only": rows}, particles=200, seed=SEED)["only"]
    assert r.filter is not None and r.seed == stream_seed(SEED, "only")
    assert (r.estimate, r.log_evidence) == serial(walk, "only", rows, 200)
    assert r.summary.mean == pytest.approx(r.estimate)


def test_a_bad_stream_fails_alone_with_its_located_error(walk, client, tmp_path):
    import sirenc
    from sirenc.distributed import run_many

    good = tmp_path / "good.csv"
    good.write_text("y\n" + "".join(f"{v[0]}\n" for v in walk_rows(2)))
    bad = tmp_path / "bad.csv"
    bad.write_text("y\n0.5\nabc\n1.0\n")
    by_file = run_many(walk, {"good": good, "bad": bad}, particles=200, seed=SEED, client=client)
    assert by_file["good"].ok and by_file["good"].estimate == serial(walk, "good", good, 200)[0]
    error = by_file["bad"].error
    assert isinstance(error, sirenc.SirenDataError) and by_file["bad"].estimate is None
    assert str(error).startswith(f"{bad}:3:1: error: cannot parse 'abc' as a number")
    # A stream of rows without the column the program reads fails inside the program, located there.
    by_rows = run_many(walk, {"ok": walk_rows(3), "no columns": np.empty((4, 0))}, particles=200, seed=SEED,
                       client=client)
    assert by_rows["ok"].ok
    assert isinstance(by_rows["no columns"].error, sirenc.SirenRuntimeError)
    assert str(by_rows["no columns"].error).startswith(f"{WALK}:8:24: error: List.hd of an empty list")


def test_bad_arguments_are_usage_errors_before_any_work(walk):
    import sirenc
    from sirenc.distributed import run_many

    for streams, message in [({1: walk_rows(0)}, "a stream's name is a string"),
                             (["a.csv", "a.csv"], "given twice"), ("a.csv", "a list of data file paths")]:
        with pytest.raises(sirenc.SirenUsageError, match=message):
            run_many(walk, streams)
    with pytest.raises(sirenc.SirenUsageError, match="unknown resampler"):
        run_many(walk, {"a": walk_rows(0)}, resampler="best")
    with pytest.raises(sirenc.SirenUsageError, match="reads no file"):
        run_many(sirenc.compile("let x <- gaussian(0., 1.) in x"), ["a.csv"])


def test_a_killed_worker_loses_no_stream(walk, client):
    from sirenc.distributed import run_many

    # Streams of about a second each, so that the kill lands in the middle of some.
    streams = {f"long-{k}": walk_rows(k, n=15000) for k in range(4)}
    pids = client.run(os.getpid)
    out = {}
    runner = threading.Thread(target=lambda: out.update(run_many(walk, streams, particles=4000, seed=SEED,
                                                                 client=client)))
    runner.start()
    deadline = time.monotonic() + 30
    victim = None
    while victim is None and time.monotonic() < deadline:
        busy = [w for w, keys in client.processing().items() if keys and w in pids]
        victim = busy[0] if busy else None
        time.sleep(0.05)
    assert victim is not None, "no worker ever ran a stream"
    time.sleep(0.2)
    assert client.processing()[victim] and runner.is_alive()      # in the middle of a stream
    os.kill(pids[victim], signal.SIGKILL)
    runner.join(120)
    assert not runner.is_alive()
    for name, rows in streams.items():
        assert out[name].ok, out[name].error
        assert (out[name].estimate, out[name].log_evidence) == serial(walk, name, rows, 4000)
    client.wait_for_workers(2, timeout=60)


def test_a_filter_bank_answers_as_each_stream_fed_alone(walk, client):
    import sirenc
    from sirenc.distributed import stream_seed
    from sirenc.filter_bank import REBASE

    names = ["north", "south", "east"]
    rows = {name: walk_rows(k, n=REBASE + 8) for k, name in enumerate(names)}
    with sirenc.FilterBank(walk, names, particles=200, seed=SEED, client=client) as bank:
        assert all(not r.ok for r in bank.estimate().values())          # no row yet
        bank.step({name: rows[name][:4] for name in names})             # several rows a stream at once
        for t in range(4, len(rows["north"])):
            bank.step({name: rows[name][t] for name in names})
        bank.step({"east": []})                                         # a row the program cannot read
        answers = bank.estimate()
    for name in ["north", "south"]:
        f = walk.filter(particles=200, seed=stream_seed(SEED, name))
        for row in rows[name]:
            f.step(row)
        assert (answers[name].estimate, answers[name].log_evidence, answers[name].ess) == \
            (f.estimate(), f.log_evidence, f.ess)
        assert answers[name].estimate == serial(walk, name, rows[name], 200)[0]
    assert isinstance(answers["east"].error, sirenc.SirenRuntimeError)
    assert "List.hd of an empty list" in str(answers["east"].error)
    with pytest.raises(sirenc.SirenUsageError, match="closed"):
        bank.step({"north": [1.0]})


def sirenc_cli(*args, cwd):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-m", "sirenc.cli", *map(str, args)],
                          capture_output=True, text=True, cwd=cwd, env=env)


def test_the_command_line_runs_a_filter_per_file(walk, client, tmp_path):
    folder = tmp_path / "streams"
    folder.mkdir()
    for k in range(3):
        (folder / f"s{k}.csv").write_text("y\n" + "".join(f"{v[0]}\n" for v in walk_rows(k)))
    (folder / "t.csv").write_text("y\n0.5\n1e\n")
    pattern = str(folder / "*.csv")
    # A local cluster of its own, and the answers keyed by file.
    r = sirenc_cli("run", WALK, "--data", pattern, "-p", 200, "--seed", SEED, "--json", cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    report = json.loads(r.stdout)
    assert sorted(report["streams"]) == sorted(str(p) for p in folder.glob("*.csv"))
    for k in range(3):
        name = str(folder / f"s{k}.csv")
        assert report["streams"][name]["result"] == serial(walk, name, folder / f"s{k}.csv", 200)[0]
        assert report["streams"][name]["error"] is None
    assert report["streams"][str(folder / "t.csv")]["error"].startswith(f"{folder / 't.csv'}:3:1: error:")
    assert f"{folder / 't.csv'}:3:1: error:" in r.stderr and "Traceback" not in r.stderr
    # On a running cluster: one row per stream after the header.
    r = sirenc_cli("run", WALK, "--data", str(folder / "s*.csv"), "-p", 200, "--seed", SEED,
                   "--scheduler", client.scheduler_info()["address"], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    table = r.stdout.split("===== Streams =====\n", 1)[1].splitlines()
    assert table[0].split() == ["stream", "estimate", "log", "evidence", "error"] and len(table) == 4
    assert [line.split()[0] for line in table[1:]] == [str(folder / f"s{k}.csv") for k in range(3)]


def test_the_command_line_refuses_what_a_run_per_file_does_not_take(tmp_path):
    r = sirenc_cli("run", WALK, "--data", str(tmp_path / "*.csv"), cwd=tmp_path)
    assert r.returncode == 2 and "no file matches this pattern" in r.stderr
    (tmp_path / "a.csv").write_text("y\n1\n")
    r = sirenc_cli("run", WALK, "--data", str(tmp_path / "*.csv"), "--save", tmp_path / "c.ckpt", cwd=tmp_path)
    assert r.returncode == 2 and "--save cannot be combined with --data" in r.stderr
