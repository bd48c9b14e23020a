"""sirenc: compile Siren probabilistic programs to native particle filters.

    import sirenc
    model = sirenc.compile("model.si", method="pf")
    f = model.filter(particles=1000, seed=0)
    f.run(); print(f.estimate(), f.log_evidence)

The API lives in ``sirenc.api`` and is imported on first use, so that
``import sirenc`` stays cheap (no xDSL, no LLVM).
"""

from __future__ import annotations

from importlib import metadata as _metadata

from sirenc.diagnostics import (
    SirenDataError,
    SirenError,
    SirenNameError,
    SirenPlanError,
    SirenRuntimeError,
    SirenSyntaxError,
    SirenTypeError,
    SirenUsageError,
)

try:
    __version__ = _metadata.version("sirenc")   # pyproject.toml's version: the one source of truth
except _metadata.PackageNotFoundError:          # a source tree on sys.path, never installed
    __version__ = "0+unknown"

_LAZY = ["compile", "load", "Model", "Filter"]
__all__ = [
    "__version__", *_LAZY, "SirenError", "SirenSyntaxError", "SirenNameError", "SirenTypeError", "SirenPlanError",
    "SirenDataError", "SirenRuntimeError", "SirenUsageError",
]


def __getattr__(name: str):
    if name in _LAZY:
        from sirenc import api
        return getattr(api, name)
    raise AttributeError(f"module 'sirenc' has no attribute {name!r}")
