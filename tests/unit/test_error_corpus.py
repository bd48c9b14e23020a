"""The bad-program corpus: every ``tests/errors/*.si`` whose first line is
``# EXPECT: LINE:COL: MESSAGE`` must fail to load with that diagnostic.

Files marked otherwise (``# EXPECT-RUN:`` for run-time and data errors) are checked elsewhere.
"""

from __future__ import annotations

import pathlib
import re

import pytest

from sirenc.diagnostics import SirenError, SirenNameError, SirenSyntaxError, SirenTypeError
from sirenc.frontend import load

CORPUS = pathlib.Path(__file__).resolve().parents[1] / "errors"
_EXPECT = re.compile(r"# EXPECT: (\d+):(\d+): (.+)")


def _load_time_cases() -> list[pathlib.Path]:
    return sorted(p for p in CORPUS.glob("*.si") if p.read_text().startswith("# EXPECT:"))


@pytest.mark.parametrize("path", _load_time_cases(), ids=lambda p: p.stem)
def test_bad_program_is_rejected_with_its_diagnostic(path):
    header = path.read_text().splitlines()[0]
    match = _EXPECT.fullmatch(header.strip())
    assert match, f"malformed EXPECT line: {header!r}"
    line, col, message = int(match[1]), int(match[2]), match[3]
    with pytest.raises(SirenError) as info:
        load(str(path))
    rendered = info.value.render().splitlines()
    assert rendered[0].startswith(f"{path}:{line}:{col}: error:"), rendered[0]
    assert message in rendered[0]
    assert len(rendered) >= 3 and rendered[2].strip().startswith("^"), "the caret line is missing"
    assert rendered[2].index("^") == col - 1


def test_corpus_covers_every_kind_of_error():
    kinds = {SirenSyntaxError: 0, SirenNameError: 0, SirenTypeError: 0}
    for path in _load_time_cases():
        try:
            load(str(path))
        except SirenError as error:
            kinds[type(error)] = kinds.get(type(error), 0) + 1
    assert kinds[SirenSyntaxError] >= 10
    assert kinds[SirenNameError] >= 8
    assert kinds[SirenTypeError] >= 10
