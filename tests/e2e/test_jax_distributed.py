"""The JAX back end across processes (``jax.distributed``, docs/jax.md): a population sharded over
the devices of two CPU processes answers bit for bit as one process with as many devices, for a
run, a stream, a checkpoint and a filter resumed from it."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

from markers import needs_module, needs_runtime

pytestmark = [needs_runtime, needs_module("jax")]

WALK = Path(__file__).resolve().parents[2] / "examples" / "walk.si"

# Process PROCESS of PROCESSES (1: no jax.distributed) runs the same calls as the others, as a
# program run on every host of a cluster does, and prints its answers as the last line.
PROGRAM = textwrap.dedent("""
    import hashlib, json, sys
    import jax
    process, processes, port, source = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
    if processes > 1:
        jax.config.update("jax_cpu_collectives_implementation", "gloo")
        jax.distributed.initialize(f"127.0.0.1:{port}", num_processes=processes, process_id=process)
    import sirenc
    from sirenc.backend.jax_model import JaxFilter

    model = sirenc.compile(source, backend="jax")
    f = model.filter(particles=1000, seed=3, devices=jax.devices()).run()
    g = model.filter(particles=1000, seed=3, devices=jax.devices())
    for row in ([0.5], [1.2], [0.8]):
        g.step(row)
    checkpoint = g.to_bytes()
    h = JaxFilter.load(model, checkpoint, devices=jax.devices())
    g.step([0.1])
    h.step([0.1])
    print(json.dumps({"devices": len(jax.devices()), "local": len(jax.local_devices()),
                      "estimate": f.estimate(), "log_evidence": f.log_evidence, "ess": f.ess,
                      "history": f.history()["log_evidence"].tolist(), "sd": f.summary().sd,
                      "streamed": g.estimate(), "resumed": h.estimate(),
                      "checkpoint": hashlib.sha256(checkpoint).hexdigest()}))
""")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def answers(processes: int, devices_each: int = 1) -> list[dict]:
    env = {**os.environ, "JAX_PLATFORMS": "cpu",
           "XLA_FLAGS": f"--xla_force_host_platform_device_count={devices_each}"}
    port = str(free_port())
    runs = [subprocess.Popen([sys.executable, "-c", PROGRAM, str(i), str(processes), port, str(WALK)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
            for i in range(processes)]
    out = []
    for run in runs:
        stdout, stderr = run.communicate(timeout=300)
        assert run.returncode == 0, stderr
        out.append(json.loads(stdout.splitlines()[-1]))
    return out


def test_two_processes_answer_as_one_process_with_two_devices():
    one, two = answers(1, devices_each=2), answers(2)
    assert one[0]["devices"] == 2 and one[0]["local"] == 2
    for process in two:
        assert process["devices"] == 2 and process["local"] == 1
        assert {k: v for k, v in process.items() if k != "local"} == {k: v for k, v in one[0].items() if k != "local"}
    assert two[0]["streamed"] == two[0]["resumed"]
