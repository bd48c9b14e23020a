"""Whether an output the command line names is one of its inputs."""

from __future__ import annotations

import os


def same_file(a: str, b: str) -> bool:
    """Whether paths ``a`` and ``b`` name one file, also through links; where one names no file yet,
    whether they would."""
    try:
        return os.path.samefile(a, b)     # also through links
    except OSError:                       # one does not exist (yet)
        return os.path.realpath(a) == os.path.realpath(b)
