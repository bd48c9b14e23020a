"""pytest markers for tests that need built artifacts."""

from __future__ import annotations

import os

import pytest


def _runtime_built() -> bool:
    try:
        from sirenc.runtime import shared_library_path, static_libraries
        return shared_library_path().exists() and all(p.exists() for p in static_libraries())
    except Exception:
        return False


# CI installs the package, so there a missing runtime is a failure, never a skip.
needs_runtime = pytest.mark.skipif(
    not _runtime_built() and os.environ.get("CI") != "true", reason="the C runtime is not built"
)
