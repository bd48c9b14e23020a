"""The manylinux wheel, as tools/build_wheel.sh makes it: built from this tree, repaired by
auditwheel, installed into a fresh virtual environment, and run outside the source tree.

Everything is written under pytest's temporary folder: the build gets its own build-dir (pyproject's
is inside the repository), and the build requirements come from this environment
(``--no-build-isolation``), so no index is needed.
"""

from __future__ import annotations

import email.parser
import math
import os
import platform
import re
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest
from packaging.utils import parse_wheel_filename

from markers import needs_module, needs_tools

ROOT = Path(__file__).resolve().parents[2]
WALK = ["run", str(ROOT / "examples" / "walk.si"), "-m", "pf", "-p", "100", "--seed", "0"]

pytestmark = [
    pytest.mark.skipif(sys.platform != "linux", reason="manylinux wheels are Linux wheels"),
    needs_tools("cc", "patchelf"),
    needs_module("auditwheel", "scikit_build_core", "packaging"),
]


def _env(tmp: Path, **extra: str) -> dict[str, str]:
    """This interpreter's bin folder first on PATH (the script's python3, auditwheel's patchelf), no
    PYTHONPATH that could reach the source tree, and temporary files and pip's cache under ``tmp``
    (nor bytecode in the source tree, for the editable run)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return {**env, "TMPDIR": str(tmp), "PIP_CACHE_DIR": str(tmp / "pip-cache"),
            "PYTHONDONTWRITEBYTECODE": "1", **extra}


def _result(stdout: str) -> float:
    found = re.search(r"^=+ Result =+\n(\S+)$", stdout, re.M)
    assert found, stdout
    return float(found.group(1))


def _walk(command: list[str], cwd: Path, cache: Path, *flags: str) -> float:
    # A cache of its own per install: the cache key hashes the package's contents, not its
    # location, so the installed run could otherwise load a model.so the editable run linked.
    proc = subprocess.run([*command, *WALK, *flags], cwd=cwd, env=_env(cwd, SIRENC_CACHE_DIR=str(cache)),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return _result(proc.stdout)


def test_manylinux_wheel_installs_and_runs(tmp_path):
    dist = tmp_path / "dist"
    build = subprocess.run([str(ROOT / "tools" / "build_wheel.sh"), str(dist), "--no-build-isolation"],
                           cwd=tmp_path, env=_env(tmp_path), capture_output=True, text=True,
                           timeout=300)
    assert build.returncode == 0, build.stdout + build.stderr
    (wheel,) = dist.glob("*.whl")
    name, version, _, tags = parse_wheel_filename(wheel.name)
    assert {(t.interpreter, t.abi) for t in tags} == {("py3", "none")}, wheel.name
    assert all(re.fullmatch(rf"manylinux_2_\d+_{platform.machine()}", t.platform) for t in tags), wheel.name

    info = f"{name}-{version}.dist-info"
    with zipfile.ZipFile(wheel) as zf:
        metadata = email.parser.Parser().parsestr(zf.read(f"{info}/METADATA").decode())
        assert f"{info}/licenses/LICENSE" in zf.namelist()
    assert metadata["License-Expression"] == "MIT"
    assert metadata["License-File"] == "LICENSE"
    assert metadata["Author"] == "the sirenc authors"
    assert metadata["Description-Content-Type"] == "text/markdown"
    assert "sirenc run examples/walk.si" in metadata.get_payload()
    assert "Operating System :: POSIX :: Linux" in metadata.get_all("Classifier")
    assert metadata["Keywords"]

    # The dependencies are this environment's, reached through a .pth file (a path line: its .pth
    # files, the editable install's hook among them, are not processed); the wheel's own site-packages
    # comes first, so its sirenc is the one imported.
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps",
                    "--no-index", str(wheel)], env=_env(tmp_path), check=True)
    # The wheel is not purelib: it lands in platlib.
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['platlib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    site = Path(site)
    ours = sysconfig.get_paths()
    dependencies = dict.fromkeys([ours["purelib"], ours["platlib"]])
    (site / "dependencies.pth").write_text("".join(f"{d}\n" for d in dependencies))
    where = subprocess.run([str(python), "-c", "import sirenc, sirenc.runtime; "
                            "print(sirenc.__file__); print(sirenc.runtime.shared_library_path())"],
                           cwd=tmp_path, env=_env(tmp_path), capture_output=True, text=True, check=True)
    assert all(Path(line).is_relative_to(site) for line in where.stdout.split()), where.stdout

    editable = _walk([sys.executable, "-m", "sirenc"], tmp_path, tmp_path / "cache-editable")
    assert math.isfinite(editable)
    # With a C compiler `sirenc run` links a model.so against the wheel's static runtime; --no-cache
    # JIT-compiles against its libsirenrt.so instead.
    sirenc = [str(venv / "bin" / "sirenc")]
    assert _walk(sirenc, tmp_path, tmp_path / "cache-wheel") == editable
    assert _walk(sirenc, tmp_path, tmp_path / "cache-wheel", "--no-cache") == editable
