"""Compiled models shared by the end-to-end tests."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from toy_model import toy_model

OBSERVATIONS = [1.0]        # one observation: exact standard errors are known (toy_model)

# The toy program in Siren, compiled by the whole pipeline: same model, same answers.
TOY_SI = """\
val first = fun row -> List.hd(row) in
val step = fun (y, x) ->
  let () = observe(gaussian(x, 1.), y) in
  let () = resample() in
  x
in
let x <- gaussian(0., 1.) in
fold(step, List.map(first, File.read("ys.csv")), x)
"""


@dataclass
class ModelFile:
    so: Path                # a compiled model.so
    data: Path              # its data file 0 (CSV with a header line)
    ys: list[float]         # the observations in that file


@pytest.fixture(scope="session")
def data_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("data") / "ys.csv"
    path.write_text("y\n" + "".join(f"{y}\n" for y in OBSERVATIONS))
    return path


@pytest.fixture(scope="session", params=["llvm-dialect", "si"])
def model_so(request, tmp_path_factory, data_file) -> ModelFile:
    """A model.so of the toy program (prior N(0,1), observe N(x,1) per row, result x):
    from the hand-written llvm-dialect module, and from Siren source."""
    import sirenc
    from sirenc.api import from_llvm_dialect

    out = tmp_path_factory.mktemp("so") / "toy.so"
    if request.param == "llvm-dialect":
        from_llvm_dialect(*toy_model(data_file=str(data_file)), output=out)
    else:
        source = data_file.parent / "toy.si"       # File.read is relative to the program
        source.write_text(TOY_SI)
        sirenc.compile(source, output=out)
    return ModelFile(out, data_file, OBSERVATIONS)


@pytest.fixture(scope="session")
def dask_cluster():
    """A local Dask cluster of two one-thread worker processes (tests/e2e/test_distributed*.py; a
    test may kill a worker: its nanny starts another)."""
    from distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      scheduler_kwargs={"dashboard_address": ":0"}) as cluster:
        yield cluster
