"""Fuzzing data files (issue 11, item 7): generated and mutated CSV files, read by a fixed
streamed model (fuzzgen.DATA_MODEL) through File.read or given with ``sirenc run --data``, must
end with exit 0 or a located error (file:line:col), never exit 3, a signal, a hang or a
traceback; and a file's line endings (\\n, \\r\\n, \\r) must not change the answer.
"""

from __future__ import annotations

import json

from hypothesis import given, settings, strategies as st

import fuzzgen
import fuzzrun
from fuzzcase import FUZZ, check
from markers import needs_runtime

pytestmark = needs_runtime

MODEL = fuzzgen.DATA_MODEL.encode()
DATA = fuzzgen.DATA_CSV.encode()


# CR-only line endings (a file File.read read as zero rows) and non-UTF-8 bytes in a file given
# with --data (an internal error, UnicodeDecodeError) were bugs until issue 11's fix.
CR_ONLY_IN_CI = True
NON_UTF8_IN_CI = True
ENDINGS = ("\n", "\r\n") + (("\r",) if CR_ONLY_IN_CI else ())


@settings(FUZZ, max_examples=120)
@given(csv=st.one_of(fuzzgen.csv_files(cr_only=CR_ONLY_IN_CI, non_utf8=NON_UTF8_IN_CI),
                     fuzzgen.mutated_csv(non_utf8=NON_UTF8_IN_CI)),
       by_option=st.booleans(), data=st.data())
def test_data_files(worker, case_dir, csv, by_option, data):
    if by_option:   # --data replaces the rows File.read would read
        fuzzrun.write_case(case_dir, MODEL, DATA, csv)
        argv = data.draw(fuzzgen.command_lines("model.si", case_dir, data="given.csv"), label="argv")
        if argv[0] != "run":
            argv = ["run", "model.si", "-p", "3", "--data", "given.csv"]
    else:
        fuzzrun.write_case(case_dir, MODEL, csv)
        argv = ["run", "model.si", "-p", "3", "--seed", "1"]
    outcome = worker.run(argv, cwd=case_dir)
    check(outcome, csv)
    if outcome.code == 1 and not by_option:
        # A bad file is reported at its own line and column (or the model's, for a short row).
        assert "data.csv:" in outcome.stderr or "model.si:" in outcome.stderr, outcome.stderr


FIELD = st.sampled_from(["0", "1.5", "-2", "3e-1", ".5", " 7 ", "-0", "2."])
# Rows of one width (2 or 3 fields): --data takes a table.
ROWS = st.integers(2, 3).flatmap(lambda w: st.lists(st.lists(FIELD, min_size=w, max_size=w), max_size=6))


@settings(FUZZ, max_examples=25)
@given(rows=ROWS, final=st.booleans(), by_option=st.booleans())
def test_line_endings_do_not_change_the_answer(worker, case_dir, rows, final, by_option):
    answers = set()
    for nl in ENDINGS:
        text = nl.join(["t,y"] + [",".join(r) for r in rows]) + (nl if final else "")
        if by_option:
            fuzzrun.write_case(case_dir, MODEL, DATA, text.encode())
            argv = ["run", "model.si", "-p", "4", "--seed", "2", "--json", "--data", "given.csv"]
        else:
            fuzzrun.write_case(case_dir, MODEL, text.encode())
            argv = ["run", "model.si", "-p", "4", "--seed", "2", "--json"]
        outcome = worker.run(argv, cwd=case_dir)
        check(outcome, text)
        assert outcome.code == 0, outcome.stderr
        answers.add(json.dumps(json.loads(outcome.stdout)["result"]))
    assert len(answers) == 1, f"line endings change the answer: {answers}"
