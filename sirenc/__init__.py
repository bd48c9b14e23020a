"""sirenc: compile Siren probabilistic programs to native particle filters.

    import sirenc
    model = sirenc.compile("model.si", method="pf")
    f = model.filter(particles=1000, seed=0)
    f.run(); print(f.estimate(), f.log_evidence)

The API lives in ``sirenc.api`` (its filter in ``sirenc.native_filter``) and is imported on
first use, so that ``import sirenc`` stays cheap (no xDSL, no LLVM).
"""

from __future__ import annotations

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

_LAZY = ["compile", "load", "Model", "Filter", "runs", "run_many", "FilterBank", "tune"]
__all__ = [
    "__version__", *_LAZY, "SirenError", "SirenSyntaxError", "SirenNameError", "SirenTypeError", "SirenPlanError",
    "SirenDataError", "SirenRuntimeError", "SirenUsageError",
]


def __getattr__(name: str):
    if name == "__version__":     # pyproject.toml's version, read on first use (importlib.metadata is slow)
        from importlib import metadata
        try:
            version = metadata.version("sirenc")
        except metadata.PackageNotFoundError:     # a source tree on sys.path, never installed
            version = "0+unknown"
        globals()["__version__"] = version
        return version
    if name == "runs":
        from sirenc.repeated_runs import runs
        return runs
    if name == "tune":
        from sirenc.tuning import tune
        return tune
    if name == "Filter":
        from sirenc.native_filter import Filter
        return Filter
    if name == "run_many":
        from sirenc.distributed import run_many
        return run_many
    if name == "FilterBank":
        from sirenc.filter_bank import FilterBank
        return FilterBank
    if name in _LAZY:
        from sirenc import api
        return getattr(api, name)
    raise AttributeError(f"module 'sirenc' has no attribute {name!r}")
