"""sirenc's dialects and passes as an xDSL `Universe`.

pyproject.toml names `SIRENC_UNIVERSE` under the ``xdsl.universe`` entry points,
so the standard ``xdsl-opt`` (and ``sirenc-opt``, which extends it) finds them:

    xdsl-opt -p inline-functions model.mlir

The contents come from sirenc/registry.py; nothing is imported until used.
"""

from __future__ import annotations

from xdsl.universe import Universe

from sirenc.registry import dialect_factories, pass_factories

SIRENC_UNIVERSE = Universe(all_dialects=dialect_factories(), all_passes=pass_factories())
