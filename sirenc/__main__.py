"""``python -m sirenc``: the ``sirenc`` command (sirenc/cli/)."""

import sys

from sirenc.cli import main

sys.exit(main())
