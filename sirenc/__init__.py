"""sirenc: compile Siren probabilistic programs to native particle filters.

    import sirenc
    model = sirenc.compile("model.si", method="pf")
    f = model.filter(particles=1000, seed=0)
    f.run(); print(f.estimate(), f.log_evidence)

The API lives in ``sirenc.api`` and is imported on first use, so that
``import sirenc`` stays cheap (no xDSL, no LLVM).
"""

from __future__ import annotations

__all__ = ["compile", "load", "Model", "Filter"]


def __getattr__(name: str):
    if name in __all__:
        from sirenc import api
        return getattr(api, name)
    raise AttributeError(f"module 'sirenc' has no attribute {name!r}")
