"""The C runtime's own test suite (runtime_c/tests), built with -Wall -Wextra -Werror
under AddressSanitizer and UndefinedBehaviorSanitizer, run by ctest."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from markers import needs_tools

ROOT = Path(__file__).resolve().parents[2]


@needs_tools("cmake", "cc")
def test_ctest_under_address_sanitizer(tmp_path_factory):
    build = tmp_path_factory.mktemp("ctest-asan")
    configure = ["cmake", "-S", str(ROOT), "-B", str(build), "-DSIRENRT_TESTS=ON", "-DSIRENRT_ASAN=ON",
                 "-DCMAKE_BUILD_TYPE=Debug"]
    if shutil.which("ninja"):
        configure += ["-G", "Ninja"]
    for cmd in (configure, ["cmake", "--build", str(build), "-j2"],
                ["ctest", "--test-dir", str(build), "--output-on-failure"]):
        r = subprocess.run(cmd, capture_output=True, text=True)
        assert r.returncode == 0, f"{' '.join(cmd)}\n{r.stdout[-4000:]}\n{r.stderr[-4000:]}"
    assert "100% tests passed" in r.stdout
    assert "warning:" not in r.stdout
