"""Every code example in docs/ runs, and shows what it claims.

The user documents (docs/language.md, docs/tutorial.md, docs/api.md, docs/tier2.md) are read as a sequence of
fenced code blocks. The first word of a block's info string says what it is; ``key=value`` words
after it are options. Each document gets one working folder (under pytest's temporary folders),
and its blocks run there in order, so a later block can use the files an earlier one wrote.

  ```siren [file=NAME]        a complete program, saved as NAME (default model.si) and run with
                              `sirenc run NAME` (-m pf); it must succeed without warnings. Its
                              output is the result line of the report.
  ```siren check=M [file=]    saved, and checked with `sirenc check NAME -m M`; it must be
                              accepted. Its output is the inferred plan.
  ```siren-error [check=M]    a program that must fail: `sirenc check -m M`, or `sirenc run`
                              (compile-time and run-time errors). Its output is the error.
  ```python                   executed in the working folder; its output is what it prints.
  ```sh                       run by bash -e in the working folder, with `sirenc`, `siren` and
                              `python` of this checkout first on PATH; its output is stdout and stderr.
  ```c file=NAME              saved, and compiled with `cc -Wall -Werror` against sirenrt.h.
  ```csv file=NAME            a data file, saved.
  ```text output              the expected output of the runnable block just before it: its
                              lines must appear, in order and one after another, in the actual
                              output; `...` in a line matches any text, and a line that is just
                              `...` matches any number of lines. A `siren-error` must have one.
  ```text                     not code (a grammar sketch, say); not run.

Any other tag fails the test, so no example escapes it. sirenc runs in this process
(``sirenc.cli.main``) for the siren blocks, and in a subprocess for the sh blocks.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import stat
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from markers import needs_runtime, needs_tools
from sirenc.methods import METHODS

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
USER_DOCS = ("language.md", "tutorial.md", "api.md", "tier2.md", "jax.md")
RUNNABLE = ("siren", "siren-error", "python", "sh", "c")
KNOWN = (*RUNNABLE, "csv", "text")

pytestmark = [needs_runtime]


# ---------------------------------------------------------------------------------- extraction

@dataclass
class Block:
    doc: str
    line: int                    # of the opening fence, 1-based
    tag: str
    options: dict[str, str]
    flags: set[str]
    body: str
    expected: "Block | None" = None   # the `text output` block that follows, if any

    @property
    def where(self) -> str:
        return f"docs/{self.doc}:{self.line}"

    def __str__(self) -> str:   # pytest ids
        return f"{self.doc}:{self.line}:{self.tag}"


_FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,})(?P<info>[^`\n]*)$")


def extract(doc: str) -> list[Block]:
    """The fenced blocks of ``docs/doc``, each `text output` block attached to the one before it."""
    lines = (DOCS / doc).read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, words = m["fence"], m["info"].split()
        start = i
        body: list[str] = []
        i += 1
        while i < len(lines) and not lines[i].strip().startswith(fence):
            body.append(lines[i])
            i += 1
        if i == len(lines):
            raise AssertionError(f"docs/{doc}:{start + 1}: unclosed code block")
        i += 1
        tag = words[0] if words else ""
        options = dict(w.split("=", 1) for w in words[1:] if "=" in w)
        flags = {w for w in words[1:] if "=" not in w}
        blocks.append(Block(doc, start + 1, tag, options, flags, "\n".join(body) + "\n"))
    return blocks


def examples(doc: str) -> list[Block]:
    """The blocks of ``doc`` in order, without the `text output` blocks (attached instead)."""
    out: list[Block] = []
    for block in extract(doc):
        if block.tag == "text" and "output" in block.flags:
            assert out and out[-1].tag in RUNNABLE and out[-1].expected is None, (
                f"{block.where}: a `text output` block must follow a runnable block")
            out[-1].expected = block
        else:
            out.append(block)
    return out


ALL = [b for doc in USER_DOCS if (DOCS / doc).exists() for b in examples(doc)]


# ---------------------------------------------------------------------------------- matching

def _pattern(expected: str) -> re.Pattern:
    parts = []
    for line in expected.rstrip("\n").split("\n"):
        line = line.rstrip()
        if line == "...":
            parts.append(r"(?:[^\n]*\n)*?[^\n]*")
        else:
            parts.append(".*?".join(re.escape(piece) for piece in line.split("...")) + r"[ \t]*")
    return re.compile(r"^" + r"\n".join(parts) + r"$", re.M)


def matches(expected: str, actual: str) -> bool:
    actual = "\n".join(line.rstrip() for line in actual.splitlines())
    return _pattern(expected).search(actual) is not None


def test_matching_rules():
    assert matches("b\nc", "a\nb\nc\nd")
    assert not matches("b\nd", "a\nb\nc\nd")
    assert matches("a\n...\nd", "a\nb\nc\nd")
    assert matches("x = ...!", "x = 42!")
    assert not matches("x = 4", "x = 42")


# ---------------------------------------------------------------------------------- running

@dataclass
class Workspace:
    """One document's working folder, and how far its blocks have run."""

    path: Path
    bin: Path
    done: int = 0
    failed: dict[int, str] = field(default_factory=dict)


_workspaces: dict[str, Workspace] = {}


@pytest.fixture
def workspace(tmp_path_factory):
    def get(doc: str) -> Workspace:
        if doc not in _workspaces:
            path = tmp_path_factory.mktemp(doc.replace(".", "_"))
            tools = tmp_path_factory.mktemp("bin")
            _tool(tools / "sirenc", f'exec "{sys.executable}" -m sirenc.cli "$@"\n')
            _tool(tools / "siren", f'exec "{sys.executable}" -m sirenc.siren_cli "$@"\n')
            _tool(tools / "python", f'exec "{sys.executable}" "$@"\n')
            _workspaces[doc] = Workspace(path, tools)
        return _workspaces[doc]
    return get


def _tool(path: Path, command: str) -> None:
    path.write_text("#!/bin/sh\n" + command)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def _sirenc(ws: Workspace, argv: list[str], main=None) -> tuple[int, str, str]:
    """``sirenc ARGV`` in this process, in the working folder: (status, stdout, stderr)."""
    if main is None:
        from sirenc.cli import main

    out, err = io.StringIO(), io.StringIO()
    cwd = os.getcwd()
    os.chdir(ws.path)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = main(argv)
            except SystemExit as e:   # argparse
                status = e.code if isinstance(e.code, int) else 2
    finally:
        os.chdir(cwd)
    return status, out.getvalue(), err.getvalue()


def _save(ws: Workspace, block: Block, default: str | None = None) -> str:
    name = block.options.get("file", default)
    assert name, f"{block.where}: a {block.tag} block needs file=NAME"
    (ws.path / name).write_text(block.body, encoding="utf-8")
    return name


def _method(block: Block) -> str | None:
    method = block.options.get("check")
    assert method is None or method in METHODS, f"{block.where}: check={method}?"
    return method


def _result_line(report: str) -> str:
    lines = report.splitlines()
    return lines[lines.index("===== Result =====") + 1] + "\n"


def run_block(ws: Workspace, block: Block) -> str:
    """Run one block; fail if it does not do what its tag promises; return its output."""
    if block.tag == "siren":
        name = _save(ws, block, "model.si")
        method = _method(block)
        if method:
            status, out, err = _sirenc(ws, ["check", name, "-m", method])
            assert status == 0, f"{block.where}: `sirenc check -m {method}` rejected it:\n{err}"
            assert not err, f"{block.where}: warnings:\n{err}"
            return out
        status, out, err = _sirenc(ws, ["run", name, "-p", "1000", "--seed", "0"])
        assert status == 0, f"{block.where}: `sirenc run` failed:\n{err}"
        assert not err, f"{block.where}: warnings:\n{err}"
        return _result_line(out)
    if block.tag == "siren-error":
        assert block.expected is not None, f"{block.where}: a siren-error needs a `text output` block"
        name = _save(ws, block, "model.si")
        method = _method(block)
        argv = ["check", name, "-m", method] if method else ["run", name, "-p", "100", "--seed", "0"]
        status, out, err = _sirenc(ws, argv)
        assert status == 1, f"{block.where}: expected an error (status 1), got {status}:\n{out}{err}"
        return err
    if block.tag == "python":
        out = io.StringIO()
        cwd = os.getcwd()
        os.chdir(ws.path)
        try:
            with contextlib.redirect_stdout(out):
                exec(compile(block.body, block.where, "exec"), {"__name__": "__main__"})
        finally:
            os.chdir(cwd)
        return out.getvalue()
    if block.tag == "sh":
        env = dict(os.environ, PATH=f"{ws.bin}{os.pathsep}{os.environ.get('PATH', '')}",
                   PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
        proc = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", block.body], cwd=ws.path, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
        assert proc.returncode == 0, f"{block.where}: exit status {proc.returncode}:\n{proc.stdout}"
        return proc.stdout
    if block.tag == "c":
        from sirenc.runtime import include_dir

        name = _save(ws, block)
        proc = subprocess.run(["cc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-I", str(include_dir()),
                               "-c", name, "-o", os.devnull], cwd=ws.path, capture_output=True, text=True)
        assert proc.returncode == 0, f"{block.where}: does not compile:\n{proc.stderr}"
        return ""
    if block.tag == "csv":
        _save(ws, block)
        return ""
    assert block.tag == "text", f"{block.where}: unknown code block tag {block.tag!r} (one of {KNOWN})"
    return ""


def run_through(ws: Workspace, blocks: list[Block], index: int) -> None:
    """Run the document's blocks up to ``blocks[index]`` that have not run yet, in order."""
    while ws.done <= index:
        i = ws.done
        ws.done += 1
        block = blocks[i]
        try:
            output = run_block(ws, block)
            if block.expected is not None:
                assert matches(block.expected.body, output), (
                    f"{block.expected.where}: the output of the block at line {block.line} does not "
                    f"match.\nexpected:\n{block.expected.body}\nactual:\n{output}")
        except Exception as e:  # noqa: BLE001 -- reported by the block's own test
            ws.failed[i] = f"{type(e).__name__}: {e}"


# ---------------------------------------------------------------------------------- tests

def test_user_docs_exist():
    for doc in USER_DOCS:
        assert (DOCS / doc).exists(), f"docs/{doc} is missing"
        assert any(b.tag in RUNNABLE for b in examples(doc)), f"docs/{doc} has no examples"


def test_readme_points_to_the_docs():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for doc in USER_DOCS:
        assert f"docs/{doc}" in readme, f"README.md does not point to docs/{doc}"


def test_tags_are_known():
    for block in ALL:
        assert block.tag in KNOWN, f"{block.where}: unknown code block tag {block.tag!r} (one of {KNOWN})"
        if block.tag in ("c", "csv"):
            assert "file" in block.options, f"{block.where}: a {block.tag} block needs file=NAME"


def test_docs_stay_inside_the_repository():
    for doc in USER_DOCS:
        text = (DOCS / doc).read_text(encoding="utf-8")
        assert "../shared" not in text and "SPEC" not in text, f"docs/{doc} points outside the repository"


_LINK = re.compile(r"\]\(([^)\s]+)\)")


def test_every_link_stays_inside_the_repository():
    # A clone of the project has nothing but its own files: every relative link of the README and
    # the documents must name one of them.
    for doc in [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]:
        for target in _LINK.findall(doc.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue   # a web address, or a place in the same document
            path = (doc.parent / target.split("#")[0]).resolve()
            assert path.is_relative_to(ROOT.resolve()), f"{doc.name}: the link {target} leaves the repository"
            assert path.exists(), f"{doc.name}: the link {target} names no file of the repository"


def _param(block: Block):
    marks = [needs_tools("cc")] if block.tag in ("c", "sh") else []
    return pytest.param(block, marks=marks, id=str(block))


@pytest.mark.parametrize("block", [_param(b) for b in ALL if b.tag != "text"])
def test_example(block, workspace):
    blocks = examples(block.doc)
    index = next(i for i, b in enumerate(blocks) if b.line == block.line)
    ws = workspace(block.doc)
    run_through(ws, blocks, index)
    if index in ws.failed:
        pytest.fail(ws.failed[index], pytrace=False)


# ---------------------------------------------------------------------------------- the CLI

_OPTION = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*)")


def _section(text: str, heading: str) -> str:
    """The text under the level-3 heading ``heading`` up to the next heading."""
    m = re.search(r"^### " + re.escape(heading) + r"\s*$(.*?)(?=^#{1,3} )", text + "\n## end", re.M | re.S)
    assert m, f"docs/api.md has no section '### {heading}'"
    return m.group(1)


def _without_examples(text: str) -> str:
    """``text`` without its code blocks, except plain ```text blocks (a command's synopsis)."""
    kept, inside, keep = [], False, True
    for line in text.splitlines():
        if line.startswith("```"):
            if not inside:
                inside, keep = True, line.strip() == "```text"
            else:
                inside = False
            continue
        if not inside or keep:
            kept.append(line)
    return "\n".join(kept)


@pytest.mark.parametrize("command", ["sirenc", "sirenc run", "sirenc check", "siren"])
def test_documented_options_exist(command, workspace):
    """Every option named in api.md's section on a command is an option of that command."""
    section = _section((DOCS / "api.md").read_text(encoding="utf-8"), f"`{command}`")
    section = _without_examples(section)
    documented = set(_OPTION.findall(section))
    if command == "siren":
        from sirenc.siren_cli import main as siren_main
        status, out, _ = _sirenc(workspace("api.md"), ["--help"], siren_main)
    else:
        status, out, _ = _sirenc(workspace("api.md"), [*command.split()[1:], "--help"])
    assert status == 0
    accepted = set(_OPTION.findall(out))
    assert documented, f"no options found in the section on {command}"
    missing = sorted(documented - accepted)
    assert not missing, f"docs/api.md names options that `{command}` does not have: {missing}"


# ---------------------------------------------------------------------------------- the APIs

def test_every_c_entry_point_is_documented():
    header = (ROOT / "runtime_c" / "include" / "sirenrt.h").read_text(encoding="utf-8")
    exported = re.findall(r"^SIRENRT_API[^(]*?\b(sirenc_\w+)\(", header, re.M)
    assert len(exported) >= 9
    api = (DOCS / "api.md").read_text(encoding="utf-8")
    missing = [name for name in exported if not re.search(rf"\b{name}\(", api)]
    assert not missing, f"docs/api.md does not describe {missing} of sirenrt.h"


def test_every_public_python_name_is_documented():
    import sirenc
    from sirenc.api import Model
    from sirenc.backend import interface
    from sirenc.native_filter import Filter

    api = (DOCS / "api.md").read_text(encoding="utf-8")
    missing = [n for n in sirenc.__all__ if f"sirenc.{n}" not in api and f"`{n}`" not in api]
    missing += [f"model.{n}" for n in {*vars(Model), *vars(interface.Model)}
                if not n.startswith("_") and f"model.{n}" not in api]
    missing += [f"f.{n}" for n in {*vars(Filter), *vars(interface.Filter)} if not n.startswith("_") and f"f.{n}" not in api]
    assert not missing, f"docs/api.md does not describe {missing}"
