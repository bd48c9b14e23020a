"""A C program embeds a compiled model.so through dlopen and the sirenc_* ABI."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from markers import needs_runtime, needs_tools
from sirenc.runtime.abi import abi_version
from toy_model import exact_log_evidence, exact_posterior, one_observation_standard_errors

pytestmark = [needs_runtime, needs_tools("cc")]

HERE = Path(__file__).resolve().parent
PARTICLES = 10_000


@pytest.fixture(scope="module")
def embed_exe(tmp_path_factory) -> Path:
    from sirenc.runtime import include_dir

    exe = tmp_path_factory.mktemp("embed") / "embed_main"
    subprocess.run(["cc", "-O1", "-I", str(include_dir()), "-o", str(exe),
                    str(HERE / "embed_main.c"), "-ldl"], check=True)
    return exe


def _run(exe: Path, so: Path, *args: str) -> tuple[dict[str, str], str]:
    proc = subprocess.run([str(exe), str(so), *args], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    fields = {}
    for line in proc.stdout.splitlines():
        key, _, value = line.partition(" ")
        fields.setdefault(key, value)
    return fields, proc.stdout


def test_c_host_runs_the_model(embed_exe, model_so):
    fields, out = _run(embed_exe, model_so.so, str(PARTICLES), "7", *map(str, model_so.ys))
    assert fields["abi_version"] == str(abi_version())
    assert fields["name"] == "toy" and fields["method"] == "pf"
    assert fields["result_type"] == "f" and fields["n_files"] == "1"

    mean, _ = exact_posterior(model_so.ys)
    se_mean, se_logz = one_observation_standard_errors(model_so.ys[0], PARTICLES)
    assert abs(float(fields["estimate"]) - mean) < 4 * se_mean
    assert abs(float(fields["log_evidence"]) - exact_log_evidence(model_so.ys)) < 4 * se_logz
    assert 0 < float(fields["ess"]) <= PARTICLES

    status, needed = fields["small_cap_status"].split()
    assert status == "2" and needed == "1"
    # rows == NULL reads the model's data file, which holds the same observations
    assert abs(float(fields["file_estimate"]) - mean) < 4 * se_mean


def test_c_host_gets_errors_as_text(embed_exe, model_so):
    fields, out = _run(embed_exe, model_so.so, "100", "1", "1.0")
    assert fields["zero_particles"] == "rejected"
    assert fields["zero_particles_error"].strip()
    assert fields["bad_step_status"] != "0"
    assert fields["bad_step_error"].strip()
