"""``python -m sirenc``: the ``sirenc`` command (sirenc/cli.py)."""

import sys

from sirenc.cli import main

sys.exit(main())
