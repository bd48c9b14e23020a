"""Runs the lit/filecheck suite under tests/filecheck as one pytest test."""

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent / "filecheck"


def test_filecheck_suite(tmp_path):
    env = dict(os.environ, SIRENC_LIT_OUT=str(tmp_path))
    # filecheck and lit live next to the interpreter, also in an unactivated venv.
    env["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), env.get("PATH", "")])
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).parent.parent), env.get("PYTHONPATH", "")])
    result = subprocess.run(
        [sys.executable, "-c", "from lit.main import main; main()", "-q", "-j2", str(HERE)],
        capture_output=True, text=True, env=env,
    )
    assert result.returncode == 0, result.stdout + result.stderr
