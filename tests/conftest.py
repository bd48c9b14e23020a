"""Shared test fixtures.

pytest puts this directory on ``sys.path`` (rootdir conftest, no package), so
tests can ``import toy_model`` and ``from markers import needs_runtime``.
"""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True, scope="session")
def _private_cache(tmp_path_factory):
    """Compiled models of a test session go to a fresh cache, not ~/.cache."""
    mp = pytest.MonkeyPatch()
    mp.setenv("SIRENC_CACHE_DIR", str(tmp_path_factory.mktemp("sirenc-cache")))
    yield
    mp.undo()
