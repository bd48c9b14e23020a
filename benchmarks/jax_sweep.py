"""The JAX back end next to the native filter: ns per particle-step as the population grows.

    python benchmarks/run.py --backend jax [--particles 1000,10000,100000] [--models walk,slds]
        [--repeat 3] [--float32] [--native-max 1000000] [--extrapolate]

Each benchmark model (benchmarks/models/<name>, on its own data file) is compiled with `-m pf`
for both back ends. Per model and N the table gives

* jax: ns per particle-step of ``JaxFilter.run()``, best of --repeat runs after a first one;
  a particle-step is one particle through one data row, so a run is N x rows of data.csv;
* compile: the first run's time minus the best, in seconds (tracing and XLA compilation: the
  model keeps the compiled function for the same N, so the later runs time the filter alone);
* native: the native filter (`sirenc.compile(path, "pf")`) on one thread, ns per particle-step,
  best of --repeat (one run where N x rows > 10^8: seconds each, little noise). "-" above
  --native-max particles, or with --extrapolate the value at the largest N measured, marked
  "*": the native filter's cost per particle-step is about flat in N once the population
  outgrows the caches;
* native/jax: how many times faster the JAX filter is.

A model the JAX back end does not accept is listed as "refused" with the first line of the
reason (any other error of a model as "error").
benchmarks/gpu.sh runs this on a GPU machine.
"""

from __future__ import annotations

import os
import platform
import time
from pathlib import Path

MODELS = Path(__file__).resolve().parent / "models"


def data_rows(name: str) -> int:
    """Data rows of a model's data file (its first line is a header)."""
    return len((MODELS / name / "data.csv").read_text().strip().splitlines()) - 1


def time_runs(model, n: int, repeat: int, **options) -> tuple[float, list[float]]:
    """Seconds of a first run() and of --repeat later runs of a filter of n particles."""
    f = model.filter(particles=n, seed=0, **options)
    start = time.perf_counter()
    f.run()
    first = time.perf_counter() - start
    later = []
    for _ in range(repeat):
        start = time.perf_counter()
        f.run()      # waits for the device: it reads the run's error flag before returning
        later.append(time.perf_counter() - start)
    return first, later


def failure(e) -> str:
    """A table row's text for a model that did not run: refused by the JAX back end, or an error."""
    from sirenc.backend.jax_trace import JaxBackendError

    return f"{'refused' if isinstance(e, JaxBackendError) else 'error'}: {e.message.splitlines()[0]}"


def header() -> str:
    from importlib.metadata import version

    import jax
    import jaxlib
    import numpy

    return (f"JAX device: {jax.devices()[0]} ({jax.devices()[0].device_kind}, {len(jax.devices())} device(s)); "
            f"jax {jax.__version__}, jaxlib {jaxlib.__version__}, numpy {numpy.__version__}, "
            f"python {platform.python_version()}, sirenc {version('sirenc')}; "
            f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores")


def sweep(particles: list[int], models: list[str], repeat: int, float32: bool = False,
          native_max: int = 10**6, extrapolate: bool = False) -> None:
    import sirenc
    from sirenc.diagnostics import SirenError

    print(header())
    print(f"-m pf on each model's own data; ns per particle-step, best of {repeat} after a first run; "
          f"JAX in {'float32' if float32 else 'float64'}, native on one thread")
    cols = f"{'model':<13} {'N':>9} | {'jax':>9} | {'compile s':>9} | {'native':>9} | {'native/jax':>10}"
    print(cols)
    print("-" * len(cols))
    extrapolated = False
    repeat = max(repeat, 1)
    for name in models:
        path = str(MODELS / name / "model.si")
        steps = data_rows(name)
        try:
            jax_model = sirenc.compile(path, method="pf", backend="jax", float32=float32)
        except SirenError as e:
            print(f"{name:<13} {failure(e)}", flush=True)
            continue
        native = sirenc.compile(path, method="pf") if min(particles) <= native_max else None
        native_ns = None      # the largest N's, for --extrapolate
        for n in sorted(particles):      # --extrapolate carries the largest N measured
            try:
                first, later = time_runs(jax_model, n, repeat)
            except SirenError as e:      # refusals of what only tracing meets, run-time errors
                print(f"{name:<13} {failure(e)}", flush=True)
                break
            jax_ns = min(later) * 1e9 / (n * steps)
            compile_s = first - min(later)
            cell, ratio = f"{'-':>9}", f"{'-':>10}"
            if n <= native_max:
                # No JIT: the first run counts. One run when a run takes seconds (N x rows > 10^8).
                first, later = time_runs(native, n, repeat - 1 if n * steps <= 10**8 else 0, threads=1)
                native_ns = min([first, *later]) * 1e9 / (n * steps)
                cell, ratio = f"{native_ns:>9.2f}", f"{native_ns / jax_ns:>10.2f}"
            elif extrapolate and native_ns is not None:
                extrapolated = True
                cell, ratio = f"{native_ns:>8.2f}*", f"{native_ns / jax_ns:>9.2f}*"
            print(f"{name:<13} {n:>9} | {jax_ns:>9.3f} | {compile_s:>9.2f} | {cell} | {ratio}", flush=True)
    if extrapolated:
        print(f"* native not run above N = {native_max}: the ns per particle-step of the largest N run, "
              "taken as flat in N")
    print("load average: " + ", ".join(f"{x:.2f}" for x in os.getloadavg()))
