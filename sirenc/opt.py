"""`sirenc-opt`: xdsl-opt with sirenc's dialects and passes, for pass-level tests.

    sirenc-opt -p inline-functions,lower-siren-to-smc model.mlir
"""

from __future__ import annotations

import sys

from xdsl.xdsl_opt_main import xDSLOptMain

from sirenc import registry


class SirencOptMain(xDSLOptMain):
    """xDSL's dialects and passes plus those of sirenc/registry.py.

    With sirenc installed, xDSL's multiverse already holds sirenc's through the
    ``xdsl.universe`` entry point; registering from the table as well keeps
    ``python -m sirenc.opt`` working from a checkout that was never installed.
    """

    def register_all_dialects(self):
        super().register_all_dialects()
        registry.register_dialects(self.ctx)

    def register_all_passes(self):
        super().register_all_passes()
        for name, factory in registry.pass_factories().items():
            self.register_pass(name, factory)


def main() -> int:
    SirencOptMain(description="sirenc modular optimizer").run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
