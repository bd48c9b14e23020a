"""Process replay: a restructuring must not change any answer.

    python benchmarks/replay.py record before.json    # on the old code
    python benchmarks/replay.py compare before.json   # on the new code: exit 1 on any difference

Compiles every program under benchmarks/models/ and examples/, and one that
draws and observes every distribution family, with `-m pf`
and runs each for fixed seeds, particle counts, resamplers and thread counts;
records the estimate, log evidence and ESS as exact bit patterns (float.hex),
or the error text when a program does not compile or run. `compare` reports
every program whose record differs. Issues that change answers on purpose
(new random streams) re-record.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RUNS = [  # (particles, seed, resampler, threads)
    (200, 1, "systematic", 1),
    (300, 7, "multinomial", 1),
    (257, 3, "residual", 2),
    (100, 11, "stratified", 1),
    (9001, 5, "systematic", 3),  # three resampling blocks, their copies split across threads mid-block
]


# Every family drawn and observed, so that each one's lowering is replayed.
FAMILIES_SOURCE = """
let a <- gaussian(1.5, 4.) in let b <- beta(2., 5.) in let c <- bernoulli(0.3) in
let d <- binomial(10., 0.3) in let e <- beta_binomial(10., 2., 3.) in
let g <- negative_binomial(3., 0.4) in let h <- exponential(2.) in let i <- gamma(3., 2.) in
let j <- poisson(3.5) in let k <- delta(2.5) in let l <- categorical(2., 4., [0.2, 0.5, 0.3]) in
let m <- uniform_int(1., 6.) in let n <- student_t(1., 4., 5.) in
let () = observe(gaussian(a, 2.), 0.3) in let () = observe(beta(2., 5.), b) in
let () = observe(bernoulli(0.4), c) in let () = observe(binomial(10., 0.3), d) in
let () = observe(beta_binomial(10., 2., 3.), e) in let () = observe(negative_binomial(3., 0.4), g) in
let () = observe(exponential(2.), h) in let () = observe(gamma(3., 2.), i) in
let () = observe(poisson(j + 0.5), 2.) in let () = observe(delta(2.5), k) in
let () = observe(categorical(2., 4., [0.2, 0.5, 0.3]), l) in let () = observe(uniform_int(1., 6.), m) in
let () = observe(student_t(n, 4., 5.), 0.2) in
(a, (b, ((if c then 1. else 0.), (d, (e, (g, (h, (i, (j, (k, (l, (m, n))))))))))))
"""


def programs() -> list[Path | str]:
    found = sorted((ROOT / "benchmarks" / "models").glob("*/*.si")) + sorted((ROOT / "examples").glob("*.si"))
    return [*found, FAMILIES_SOURCE]


def _hex(values) -> list[str]:
    return [float(v).hex() for v in np.ravel(np.asarray(values, dtype=np.float64))]


def record_program(path: Path | str) -> dict:
    import sirenc
    from sirenc.diagnostics import SirenError

    out: dict[str, object] = {}
    try:
        model = sirenc.compile(str(path) if isinstance(path, Path) else path, method="pf")
    except SirenError as e:
        return {"compile_error": str(e)}
    for particles, seed, resampler, threads in RUNS:
        key = f"{particles}/{seed}/{resampler}/{threads}"
        try:
            f = model.filter(particles=particles, seed=seed, resampler=resampler, threads=threads)
            f.run()
            est = f.estimate()
            flat = _flatten(est)
            out[key] = {"estimate": _hex(flat), "log_evidence": float(f.log_evidence).hex(),
                        "ess": float(f.ess).hex()}
        except Exception as e:  # noqa: BLE001 - a run-time error is part of the record
            out[key] = {"error": f"{type(e).__name__}: {e}"}
    return out


def _flatten(value) -> list[float]:
    if isinstance(value, (list, tuple)):
        return [x for item in value for x in _flatten(item)]
    if isinstance(value, np.ndarray):
        return [float(x) for x in value.ravel()]
    if value is None:
        return []
    return [float(value)]


def record() -> dict:
    return {(str(p.relative_to(ROOT)) if isinstance(p, Path) else "<families>"): record_program(p)
            for p in programs()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=("record", "compare"))
    parser.add_argument("file")
    args = parser.parse_args(argv)
    now = record()
    if args.action == "record":
        Path(args.file).write_text(json.dumps(now, indent=1, sort_keys=True))
        runs = sum(len(v) for v in now.values())
        print(f"recorded {len(now)} programs, {runs} runs -> {args.file}")
        return 0
    before = json.loads(Path(args.file).read_text())
    differ = [name for name in sorted(set(before) | set(now)) if before.get(name) != now.get(name)]
    for name in differ:
        print(f"DIFFERS: {name}\n  before: {before.get(name)}\n  now:    {now.get(name)}")
    same = len(set(before) | set(now)) - len(differ)
    print(f"{same} programs identical, {len(differ)} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
