"""Streams a second of ``sirenc.run_many`` on a local Dask cluster of 1, 2, ... worker processes,
against the same streams run one after another in this process; and rows a second of a
``sirenc.FilterBank`` fed the same streams ``--batch`` rows a stream at a time.

    python benchmarks/streams.py [--streams 64] [--rows 100] [--particles 1000] [--workers 1,2] [--repeat 3]
                                 [--batch 10]

Each stream is a Gaussian random walk observed with noise, as examples/walk.csv (``--rows`` rows),
filtered by examples/walk.si with ``--particles`` particles and its own seed. The serial row runs
every stream in this process with the work a worker does (``run_stream``: the filter's run, its
estimate and its summary). A cluster row runs ``run_many`` on a cluster started beforehand, whose
workers have compiled the model beforehand: what it times is the steady state of a running
cluster; ``start`` is the cluster's start and that compilation, which a one-off run (``sirenc run
--data 'dir/*.csv'``) pays once. ``bank rows/s`` is every stream's rows over the time a FilterBank
on that cluster took to take them all and answer (serial: each stream fed row by row here, by
``Filter.step``). Times are the best of ``--repeat``; each answer is checked against the serial
one, bit for bit.
"""

from __future__ import annotations

import argparse
import logging
import os
import time
from pathlib import Path

import numpy as np

WALK = Path(__file__).resolve().parent.parent / "examples" / "walk.si"


def walk_streams(n: int, rows: int) -> dict[str, np.ndarray]:
    streams = {}
    for k in range(n):
        rng = np.random.default_rng(k)
        x = np.cumsum(rng.normal(size=rows))
        streams[f"walk-{k:03d}"] = np.ascontiguousarray((x + rng.normal(scale=np.sqrt(0.5), size=rows))[:, None])
    return streams


def fed_by_bank(model, streams: dict, particles: int, client, batch: int) -> dict:
    from sirenc.filter_bank import FilterBank

    rows = len(next(iter(streams.values())))
    with FilterBank(model, list(streams), particles=particles, client=client) as bank:
        for t in range(0, rows, batch):
            bank.step({name: data[t:t + batch] for name, data in streams.items()})
        return bank.estimate()


def fed_here(model, streams: dict, particles: int) -> dict:
    from sirenc.distributed import stream_seed

    out = {}
    for name, data in streams.items():
        f = model.filter(particles=particles, seed=stream_seed(0, name))
        for row in data:
            f.step(row)
        out[name] = f.estimate()
    return out


def compile_on_worker(shipped) -> None:
    shipped.model()          # kept in the worker's cache, as run_many's first task there would


def best_of(repeat: int, run) -> tuple[float, dict]:
    best, out = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        out = run()
        best = min(best, time.perf_counter() - start)
    return best, out


def main() -> None:
    import sirenc
    from distributed import Client, LocalCluster

    from sirenc.distributed import ShippedModel, run_many, run_stream, stream_seed

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--streams", type=int, default=64)
    p.add_argument("--rows", type=int, default=100)
    p.add_argument("--particles", type=int, default=1000)
    p.add_argument("--workers", default="1,2", help="comma-separated worker counts (default 1,2)")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--batch", type=int, default=10, help="rows a stream in each FilterBank.step (default 10)")
    args = p.parse_args()

    model = sirenc.compile(WALK)
    streams = walk_streams(args.streams, args.rows)
    print(f"{args.streams} streams x {args.rows} rows, {args.particles} particles, examples/walk.si; "
          f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}")
    serial_s, serial = best_of(args.repeat, lambda: {
        name: run_stream(model, name, rows, stream_seed(0, name), args.particles, {})
        for name, rows in streams.items()})
    fed_s, fed = best_of(args.repeat, lambda: fed_here(model, streams, args.particles))
    all_rows = args.streams * args.rows
    print(f"{'workers':>8}  {'start s':>8}  {'run s':>8}  {'streams/s':>10}  {'vs serial':>9}  {'bank rows/s':>11}")
    print(f"{'serial':>8}  {'':>8}  {serial_s:8.3f}  {args.streams / serial_s:10.1f}  {1.0:9.2f}  "
          f"{all_rows / fed_s:11.0f}")
    for workers in (int(w) for w in args.workers.split(",")):
        start = time.perf_counter()
        with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                          scheduler_kwargs={"dashboard_address": ":0"}, silence_logs=logging.CRITICAL) as cluster, \
                Client(cluster) as client:
            client.wait_for_workers(workers)
            client.run(compile_on_worker, ShippedModel.of(model))
            started = time.perf_counter() - start
            seconds, results = best_of(args.repeat, lambda: run_many(model, streams, particles=args.particles,
                                                                     client=client))
            bank_s, banked = best_of(args.repeat, lambda: fed_by_bank(model, streams, args.particles, client,
                                                                      args.batch))
        for name, r in results.items():
            assert (r.estimate, r.log_evidence) == (serial[name].estimate, serial[name].log_evidence), name
            assert banked[name].estimate == fed[name] == r.estimate, name
        print(f"{workers:>8}  {started:8.2f}  {seconds:8.3f}  {args.streams / seconds:10.1f}  "
              f"{serial_s / seconds:9.2f}  {all_rows / bank_s:11.0f}")


if __name__ == "__main__":
    main()
