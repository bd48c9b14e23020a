"""Run sirenc command lines in a worker process and check the fuzzing invariant.

The invariant (issue 11, item 7): every command line ends with exit status 0, or with
status 1 and an error located as ``file:line:col: error:`` (a problem in the program or its
data), or with status 2 and an ``error:`` message (bad usage). Never status 3 (an internal
compiler error), a signal, a hang, or a Python traceback.

A worker is a child Python process that calls ``sirenc.cli.main(argv)`` for each request it
reads from its standard input (one JSON line), with its standard output and error (the
Python streams and file descriptors 1 and 2, so the C runtime's writes are caught too)
captured, and answers with one JSON line on a private pipe. This costs one compilation's
time per program instead of an interpreter start, and a signal or a hang kills only the
worker: the parent sees the pipe close (or its deadline pass), records the failure and
starts a new worker.

    with Worker() as w:
        outcome = w.run(["run", "model.si", "-p", "10"])
        problem = violation(outcome)     # None when the invariant holds
"""

from __future__ import annotations

import json
import os
import re
import select
import signal
import subprocess
import sys
import time
from dataclasses import dataclass

# A located diagnostic: `path:line:col: error: ...` at the start of a line.
LOCATED = re.compile(r"^.+:\d+:\d+: error: ", re.MULTILINE)
USAGE = re.compile(r"^(\S+ )*\S*:? ?error: ", re.MULTILINE)   # `sirenc run: error: ...` (argparse too)
TRACEBACK = "Traceback (most recent call last)"


@dataclass
class Outcome:
    argv: list
    status: str          # "exit" | "signal" | "hang" | "crash" (the worker raised, i.e. a traceback)
    code: int | None     # exit status, or the signal number
    stdout: str = ""
    stderr: str = ""
    seconds: float = 0.0

    def kind(self) -> str:
        """The outcome's class for a summary table: exit-0, exit-1, exit-2, exit-3, signal-11, hang..."""
        if self.status == "exit":
            return f"exit-{self.code}"
        if self.status == "signal":
            return f"signal-{self.code}"
        return self.status


def violation(o: Outcome) -> str | None:
    """Why ``o`` breaks the invariant, or None."""
    if o.status == "hang":
        return f"no answer within {o.seconds:.0f} s (hang)"
    if o.status == "signal":
        return f"killed by signal {o.code} ({_signame(o.code)})"
    if o.status == "crash":
        return "Python traceback: " + _last_line(o.stderr)
    if TRACEBACK in o.stderr or TRACEBACK in o.stdout:
        return "Python traceback printed: " + _last_line(o.stderr)
    if o.code == 0:
        return None
    if o.code == 1:
        return None if LOCATED.search(o.stderr) else "exit 1 without a file:line:col location: " + error_line(o.stderr)
    if o.code == 2:
        return None if USAGE.search(o.stderr) else "exit 2 without an error message: " + _first_line(o.stderr)
    if o.code == 3:
        return "internal compiler error (exit 3): " + error_line(o.stderr)
    return f"unexpected exit status {o.code}: " + _first_line(o.stderr)


def _signame(n) -> str:
    try:
        return signal.Signals(n).name
    except (ValueError, TypeError):
        return "?"


def error_line(text: str) -> str:
    """The first line of ``text`` that reports an error (warnings come before it)."""
    for line in text.splitlines():
        if "error:" in line:
            return line[:300]
    return _first_line(text)


def _first_line(text: str) -> str:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    return lines[0][:300] if lines else "(no message)"


def _last_line(text: str) -> str:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    return lines[-1][:300] if lines else "(no message)"


def message_class(o: Outcome) -> str:
    """A short key that groups failures by cause: the message without locations and numbers."""
    text = violation(o) or ""
    text = re.sub(r"\S+:\d+:\d+:", "F:L:C:", text)
    text = re.sub(r"'[^']*'", "'…'", text)
    text = re.sub(r"0x[0-9a-f]+", "X", text)
    text = re.sub(r"-?\d+(\.\d+)?(e[-+]?\d+)?", "N", text)
    return text[:160]


class Worker:
    """A child process running sirenc.cli.main for each request; restarted after a crash or hang."""

    def __init__(self, timeout: float = 30.0, env: dict | None = None, memory_limit_gb: float = 6.0,
                 recycle: int = 500):
        self.timeout = timeout
        self.recycle = recycle      # a fresh worker after this many requests (JIT-ed code piles up)
        self.served = 0
        self.env = dict(os.environ if env is None else env)
        self.memory_limit = int(memory_limit_gb * 2**30)
        self.proc = None
        self.reply = None
        self.started = 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _start(self) -> None:
        r, w = os.pipe()
        self.env["SIRENC_FUZZ_REPLY_FD"] = str(w)
        self.proc = subprocess.Popen(
            [sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); import fuzzrun; fuzzrun.serve()",
             os.path.dirname(os.path.abspath(__file__)), str(self.memory_limit)],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            pass_fds=(w,), env=self.env)
        os.close(w)
        self.reply = os.fdopen(r, "rb")
        self.started += 1

    def close(self) -> None:
        if self.proc is not None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.reply.close()
            self.proc = None

    def _kill(self) -> int | None:
        self.proc.kill()
        code = self.proc.wait()
        self.reply.close()
        self.proc = None
        return code

    def run(self, argv: list, cwd: str | None = None) -> Outcome:
        if self.proc is not None and self.served >= self.recycle:
            self.close()
        if self.proc is None:
            self._start()
            self.served = 0
        self.served += 1
        start = time.monotonic()
        try:
            self.proc.stdin.write((json.dumps({"argv": argv, "cwd": cwd}) + "\n").encode())
            self.proc.stdin.flush()
        except BrokenPipeError:
            pass
        fd = self.reply.fileno()
        data = b""
        while not data.endswith(b"\n"):
            left = self.timeout - (time.monotonic() - start)
            ready, _, _ = select.select([fd], [], [], max(left, 0))
            if not ready:
                self._kill()
                return Outcome(argv, "hang", None, seconds=time.monotonic() - start)
            chunk = os.read(fd, 1 << 20)
            if not chunk:       # the worker died
                code = self.proc.wait()
                self.reply.close()
                self.proc = None
                if code < 0:
                    return Outcome(argv, "signal", -code, seconds=time.monotonic() - start)
                return Outcome(argv, "exit", code, stderr="worker exited without answering",
                               seconds=time.monotonic() - start)
            data += chunk
        answer = json.loads(data)
        return Outcome(argv, answer["status"], answer["code"], answer["stdout"], answer["stderr"],
                       time.monotonic() - start)


def serve() -> None:
    """The worker's loop (see the module docstring)."""
    import io
    import resource
    import tempfile
    import traceback

    reply = os.fdopen(int(os.environ["SIRENC_FUZZ_REPLY_FD"]), "w")
    limit = int(sys.argv[2])
    if limit > 0:   # a runaway allocation fails instead of taking the machine's memory
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    from sirenc.cli import main

    capture = tempfile.TemporaryFile()
    saved = os.dup(1), os.dup(2)
    home = os.getcwd()
    for line in sys.stdin:
        request = json.loads(line)
        capture.seek(0)
        capture.truncate()
        os.dup2(capture.fileno(), 1)
        os.dup2(capture.fileno(), 2)
        out, err = io.StringIO(), io.StringIO()
        sys.stdout, sys.stderr = out, err
        status, code = "exit", None
        try:
            if request["cwd"]:
                os.chdir(request["cwd"])
            code = main(request["argv"])
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
            if not isinstance(e.code, int) and e.code is not None:
                err.write(str(e.code) + "\n")
        except BaseException:
            status, code = "crash", None
            err.write(traceback.format_exc())
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.chdir(home)
        capture.seek(0)
        raw = capture.read().decode("utf-8", "replace")
        reply.write(json.dumps({"status": status, "code": code, "stdout": out.getvalue(),
                                "stderr": err.getvalue() + raw}) + "\n")
        reply.flush()


def write_case(folder: str, program: bytes, data: bytes, given: bytes | None = None,
               extra: dict | None = None) -> None:
    """Lay out one case in ``folder``: model.si, the data.csv it reads, given.csv for --data, and
    ``extra`` files by name."""
    os.makedirs(folder, exist_ok=True)
    for name, content in (extra or {}).items():
        with open(os.path.join(folder, name), "wb") as f:
            f.write(content)
    for name, content in (("model.si", program), ("data.csv", data), ("given.csv", given)):
        path = os.path.join(folder, name)
        if content is None:
            if os.path.exists(path):
                os.remove(path)
            continue
        with open(path, "wb") as f:
            f.write(content)
    for leftover in ("model.so",):
        path = os.path.join(folder, leftover)
        if os.path.exists(path):
            os.remove(path)


def save_failure(root: str, label: str, folder: str, outcome: Outcome) -> str:
    """Copy a failing case to ``root/label-N`` with its command line and output; return that path."""
    import shutil

    n = 0
    while os.path.exists(os.path.join(root, f"{label}-{n}")):
        n += 1
    dest = os.path.join(root, f"{label}-{n}")
    os.makedirs(dest)
    for name in os.listdir(folder):
        path = os.path.join(folder, name)
        if os.path.isfile(path) and not name.endswith(".so"):
            shutil.copy(path, dest)
    with open(os.path.join(dest, "outcome.txt"), "w") as f:
        f.write(f"command: sirenc {' '.join(outcome.argv)}\n(run in the folder of model.si)\n")
        f.write(f"outcome: {outcome.kind()} after {outcome.seconds:.1f} s\nviolation: {violation(outcome)}\n")
        f.write(f"--- stderr ---\n{outcome.stderr}\n--- stdout ---\n{outcome.stdout[:4000]}\n")
    return dest
