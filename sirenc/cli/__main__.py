"""``python -m sirenc.cli``: the ``sirenc`` command."""

import sys

from sirenc.cli import main

sys.exit(main())
