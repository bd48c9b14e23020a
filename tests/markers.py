"""pytest markers for tests that need built artifacts or tools."""

from __future__ import annotations

import os
import shutil

import pytest


def _runtime_built() -> bool:
    try:
        from sirenc.runtime import shared_library_path, static_libraries
        return shared_library_path().exists() and all(p.exists() for p in static_libraries())
    except Exception:
        return False


ON_CI = os.environ.get("CI") == "true"

# CI installs the package, so there a missing runtime is a failure, never a skip.
needs_runtime = pytest.mark.skipif(not _runtime_built() and not ON_CI, reason="the C runtime is not built")


def runtime_missing(message: str) -> None:
    """For a module that needs the runtime to be imported at all: skip it, or on CI fail."""
    if ON_CI:
        pytest.fail(f"the C runtime is not built, and CI must test it: {message}", pytrace=False)
    pytest.skip(f"the C runtime is not built: {message}", allow_module_level=True)


def needs_tools(*tools: str):
    """Skip where a tool is missing, except on CI, which has them all: there the test runs and
    fails, so a missing install step cannot pass for a green run."""
    missing = [t for t in tools if shutil.which(t) is None]
    return pytest.mark.skipif(bool(missing) and not ON_CI, reason=f"needs {', '.join(missing)}")


def needs_module(*modules: str):
    """Skip where a Python module is missing, except on CI (which installs the test extra, so a
    missing module there is a failure, as for needs_tools)."""
    import importlib.util
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    return pytest.mark.skipif(bool(missing) and not ON_CI, reason=f"needs {', '.join(missing)}")
