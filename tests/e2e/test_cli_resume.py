"""`sirenc run --save FILE` and `--resume FILE` (issue 46, point 7): a stream saved after some rows and
resumed with the rest gives the single run's answers; the options a checkpoint fixes, and the files
it must not overwrite, are usage errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from markers import needs_runtime
from sirenc import cli

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"

pytestmark = needs_runtime


@pytest.fixture
def walk(tmp_path):
    """walk.si (which reads walk.csv with File.read) and its rows in two halves, in a folder of their own."""
    shutil.copy(EXAMPLES / "walk.si", tmp_path / "walk.si")
    header, *rows = (EXAMPLES / "walk.csv").read_text().splitlines()
    (tmp_path / "first.csv").write_text("\n".join([header, *rows[:40]]) + "\n")
    (tmp_path / "second.csv").write_text("\n".join([header, *rows[40:]]) + "\n")
    (tmp_path / "all.csv").write_text("\n".join([header, *rows]) + "\n")
    return tmp_path


def run(capsys, *argv) -> tuple[int, str, str]:
    status = cli.main(["run", *map(str, argv), "-q"])
    out, err = capsys.readouterr()
    return status, out, err


def report(capsys, *argv) -> dict:
    status, out, err = run(capsys, *argv, "--json")
    assert status == 0, err
    return json.loads(out)


SAME = ("result", "log_evidence", "ess", "summary", "runtime_plan")


@pytest.mark.parametrize("method", ["pf", "ssi"])
def test_save_then_resume_is_the_single_run(walk, capsys, method):
    options = ("-m", method, "-p", "300")
    whole = report(capsys, walk / "walk.si", *options, "--seed", 7, "--data", walk / "all.csv")
    half = report(capsys, walk / "walk.si", *options, "--seed", 7, "--data", walk / "first.csv",
                  "--save", walk / "walk.ckpt")
    assert half["result"] != whole["result"]            # the first half alone is another posterior
    resumed = report(capsys, walk / "walk.si", "-m", method, "--resume", walk / "walk.ckpt",
                     "--data", walk / "second.csv", "--threads", 2)
    assert {k: resumed[k] for k in SAME} == {k: whole[k] for k in SAME}
    assert resumed["particles"] == 300 and resumed["seed"] is None
    # The history is of the resumed rows only (a checkpoint does not keep it), numbered in the stream.
    assert resumed["history"]["rows"] == list(range(41, 101))
    assert resumed["history"]["log_evidence"] == whole["history"]["log_evidence"][40:]
    # Without --data nothing is fed: the report of the checkpoint as it stands.
    again = report(capsys, walk / "walk.si", "-m", method, "--resume", walk / "walk.ckpt")
    assert {k: again[k] for k in SAME} == {k: half[k] for k in SAME}


def test_resume_and_save_in_place_continue_a_stream(walk, capsys):
    """The same checkpoint file, resumed and saved again, row batch after row batch."""
    ckpt = walk / "stream.ckpt"
    header, *rows = (walk / "all.csv").read_text().splitlines()
    batches = [rows[i:i + 25] for i in range(0, len(rows), 25)]
    for i, batch in enumerate(batches):
        (walk / "batch.csv").write_text("\n".join([header, *batch]) + "\n")
        start = ("--seed", 2, "-p", 200) if i == 0 else ("--resume", ckpt)
        last = report(capsys, walk / "walk.si", *start, "--data", walk / "batch.csv", "--save", ckpt)
    whole = report(capsys, walk / "walk.si", "--seed", 2, "-p", 200, "--data", walk / "all.csv")
    assert {k: last[k] for k in SAME} == {k: whole[k] for k in SAME}


def test_save_without_data_streams_the_program_file(walk, capsys):
    (walk / "walk.csv").write_text((walk / "all.csv").read_text())
    saved = report(capsys, walk / "walk.si", "--seed", 5, "-p", 100, "--save", walk / "w.ckpt")
    whole = report(capsys, walk / "walk.si", "--seed", 5, "-p", 100)
    assert {k: saved[k] for k in SAME} == {k: whole[k] for k in SAME}
    assert len(saved["history"]["rows"]) == 100


def test_the_text_report_is_the_original_format(walk, capsys):
    import original_harness

    status, out, err = run(capsys, walk / "walk.si", "--data", walk / "first.csv", "--save", walk / "w.ckpt")
    assert status == 0 and err == "", err
    status, out, err = run(capsys, walk / "walk.si", "--resume", walk / "w.ckpt", "--data", walk / "second.csv")
    assert status == 0 and err == "", err
    assert original_harness.parse(out)["blocks"][:2] == ["Handler", "Inference Algorithm"]


@pytest.mark.parametrize("argv, message", [
    (["--resume", "CKPT", "--seed", "0"], "leave out --seed"),
    (["--resume", "CKPT", "-p", "300", "--ess-threshold", "0.5"], "leave out --particles, --ess-threshold"),
    (["--resume", "CKPT", "--resampler", "systematic"], "leave out --resampler"),
    (["--resume", "CKPT", "--memory-limit", "1G"], "leave out --memory-limit"),
    (["--resume", "CKPT", "--handler", "mh"], "--resume: an MH chain cannot be saved"),
    (["--save", "OUT", "--handler", "mh"], "--save: an MH chain cannot be saved"),
    (["--save", "OUT", "--backend", "jax"], "--save: an option of the native back end"),
    (["--resume", "CKPT", "--plot", "OUT.png"], "--plot cannot be combined with --resume"),
    (["--save", "OUT", "--runs", "3"], "--runs cannot be combined with --save"),
    (["--save", "PROGRAM"], "would overwrite the program"),
    (["--data", "DATA", "--save", "DATA"], "would overwrite the --data file"),
    (["--save", "PROGRAM_DATA"], "would overwrite {PROGRAM_DATA}, a data file of the program"),
    (["--resume", "MISSING"], "cannot read checkpoint"),
    (["--resume", "DATA"], "cannot resume from '{DATA}': not a sirenc checkpoint"),
    (["--resume", "TRUNCATED"], "cannot resume from '{TRUNCATED}': the checkpoint is damaged"),
    (["-m", "ssi", "--resume", "CKPT"], "the checkpoint is of another model"),
    (["--resume", "OTHER"], "the checkpoint is of another model"),
])
def test_what_a_checkpoint_does_not_go_with_is_a_usage_error(walk, capsys, argv, message):
    ckpt = walk / "w.ckpt"
    assert run(capsys, walk / "walk.si", "--data", walk / "first.csv", "--save", ckpt)[0] == 0
    (walk / "truncated.ckpt").write_bytes(ckpt.read_bytes()[:-100])
    other = walk / "other.si"       # another program that streams
    other.write_text((walk / "walk.si").read_text().replace("gaussian(x1, 0.5)", "gaussian(x1, 0.25)"))
    assert run(capsys, other, "--data", walk / "first.csv", "--save", walk / "other.ckpt")[0] == 0
    paths = {"CKPT": ckpt, "OUT": walk / "out.ckpt", "OUT.png": walk / "out.png", "PROGRAM": walk / "walk.si",
             "DATA": walk / "second.csv", "MISSING": walk / "missing.ckpt",
             "TRUNCATED": walk / "truncated.ckpt", "OTHER": walk / "other.ckpt", "PROGRAM_DATA": walk / "walk.csv"}
    (walk / "walk.csv").write_text((walk / "first.csv").read_text())
    before = {p: p.read_bytes() for p in walk.iterdir()}
    status, out, err = run(capsys, walk / "walk.si", *[str(paths.get(a, a)) for a in argv])
    assert status == 2 and out == "", err
    assert message.format(**{k: str(v) for k, v in paths.items()}) in err, err
    assert "Traceback" not in err
    assert {p: p.read_bytes() for p in walk.iterdir()} == before       # nothing written


def test_a_program_that_does_not_stream_cannot_be_saved(tmp_path, capsys):
    status, out, err = run(capsys, EXAMPLES / "coin.si", "--save", tmp_path / "c.ckpt")
    assert status == 2 and "--save: a checkpoint is of a stream, and" in err and "does not stream" in err
    assert not (tmp_path / "c.ckpt").exists()
