"""Reading observation rows supplied on the command line (`sirenc run --data`).

Same rules as `File.read` (SPEC 0.2): the first line is a header, fields are
floats separated by commas, trailing blank lines are ignored. A field that
does not parse is an error naming the file, line and column.
"""

from __future__ import annotations

import numpy as np

from sirenc.diagnostics import SirenDataError, SirenUsageError, Span, register_source


def parse_csv(text: str, path: str) -> np.ndarray:
    register_source(path, text)
    lines = text.splitlines()
    while lines and not lines[-1].strip():
        lines.pop()
    rows: list[list[float]] = []
    for number, line in enumerate(lines[1:], start=2):
        row, col = [], 1
        for field in line.split(","):
            try:
                row.append(float(field))
            except ValueError:
                width = max(len(field), 1)
                what = "an empty field" if not field.strip() else f"'{field.strip()}' is not a number"
                raise SirenDataError(f"bad data: {what}", Span(path, number, col, number, col + width)) from None
            col += len(field) + 1
        if rows and len(row) != len(rows[0]):
            raise SirenDataError(
                f"bad data: this row has {len(row)} fields, the first row has {len(rows[0])}",
                Span(path, number, 1, number, len(line) + 1),
            )
        rows.append(row)
    width = len(rows[0]) if rows else 0
    return np.array(rows, dtype=np.float64).reshape(len(rows), width)


def read_csv(path: str) -> np.ndarray:
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise SirenUsageError(f"cannot read data file '{path}': {e.strerror}") from None
    return parse_csv(text, path)
