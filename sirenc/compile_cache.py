"""The compile cache of ``sirenc run``: an unchanged program is loaded, not compiled, again.

    key = entry_key(c, data)               # c: the driver's Compilation, data: --data or None
    hit = lookup(key, c, data)             # (Model, CachedFacts) or None
    if hit is None:
        hit = store(key, c, data, warnings)   # compiles, links a model.so into the cache, loads it

An entry is a linked ``model.so`` (the runtime linked in, so loading it needs neither xDSL nor
LLVM: a hit starts in a fraction of a second) and a JSON file with what the report prints
besides the run (the checked plan, the analysis time of the compilation that made the entry,
the warnings). The key is a SHA-256 of everything the compiled code depends on:

- the program text, its path and folder (``File.read`` names are resolved against the folder and
  the absolute paths, like the program's path in error messages, are compiled into the model);
- ``--data``'s absolute path (the file is read at run time, so its contents are not part of the
  key: an edited data file is read afresh);
- the options that change the code: method, ``--tier``, ``--no-check``, ``--max-rvs``,
  ``--analysis-budget``;
- the compiler: sirenc's version, a hash of the sirenc package's source files (a developer's edit
  invalidates every entry), the runtime archives and header it links, and the host CPU (the code
  is compiled for it, as the JIT's is).

Entries live in ``cache_dir()/run`` (``$SIRENC_CACHE_DIR``, else ``$XDG_CACHE_HOME/sirenc``, else
``~/.cache/sirenc``); files are written to a temporary name and renamed into place, so a reader
never sees half an entry, and two runs may fill the same entry at once. After each store the
least recently used entries are removed until the folder holds at most ``max_bytes()``
(``$SIRENC_CACHE_MAX_BYTES``, default 256 MiB). Without a C compiler there is no cache: ``run``
JIT-compiles as before; where an entry cannot be written (``CacheUnusable``: a read-only cache
folder, a failed link) it does too, after a warning. ``sirenc run --no-cache`` bypasses the cache.

What is read back is never trusted further than it is checked (issue 42), as a library that is
loaded runs its code: the folder must belong to the user and be writable by no one else (one that
others can write is emptied and made private; one of another user is not used), entries are
written with mode 0700/0600, and the JSON file records the SHA-256 of the library and what the key
was made of (the key, the program text's hash, the options, sirenc's version and ABI). A library
is loaded only after its bytes and the record match: a damaged, truncated, planted or misfiled
entry is removed and compiled again, after a warning.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
import shutil
import stat
import sys
from dataclasses import dataclass, field
from pathlib import Path

from sirenc.diagnostics import Span, SirenUsageError

FORMAT = 2                                  # of the JSON facts; part of the key
DEFAULT_MAX_BYTES = 256 * 1024 * 1024


class CacheUnusable(SirenUsageError):
    """The entry could not be written (an unwritable cache folder, a failed link): the caller
    compiles without the cache."""


@dataclass
class CachedFacts:
    """What ``sirenc run`` prints that comes from compiling, not from running."""

    plan: dict[str, str] | None               # the checked plan; None with --no-check
    analysis_time: float | None               # seconds the plan analysis took (None: not run)
    warnings: list[tuple[str, Span | None]] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            "plan": self.plan, "analysis_time": self.analysis_time,
            "warnings": [[m, None if s is None else [s.file, s.line, s.col, s.end_line, s.end_col]]
                         for m, s in self.warnings],
        }

    @classmethod
    def from_dict(cls, d: dict) -> "CachedFacts":
        return cls(d["plan"], d["analysis_time"],
                   [(m, None if s is None else Span(*s)) for m, s in d["warnings"]])


def cache_folder() -> Path:
    from sirenc.backend.link import cache_dir
    return cache_dir() / "run"


def max_bytes() -> int:
    raw = os.environ.get("SIRENC_CACHE_MAX_BYTES")
    if not raw:
        return DEFAULT_MAX_BYTES
    try:
        value = int(raw)
    except ValueError:
        raise SirenUsageError(f"SIRENC_CACHE_MAX_BYTES must be a number of bytes, not {raw!r}") from None
    if value < 0:
        raise SirenUsageError(f"SIRENC_CACHE_MAX_BYTES must not be negative, not {raw!r}")
    return value


def available() -> bool:
    """Whether entries can be made: linking a model.so needs a C compiler."""
    return shutil.which(os.environ.get("CC", "cc")) is not None


@functools.cache
def compiler_identity() -> str:
    """sirenc's version, its package sources, the runtime it links, and the host CPU, hashed."""
    import sirenc
    from sirenc.runtime import include_dir, static_libraries

    runtime = [*static_libraries(), include_dir() / "sirenrt.h", include_dir() / "sirenrt_families.h"]
    return identity_of(sirenc.__version__, Path(sirenc.__file__).resolve().parent, runtime)


def identity_of(version: str, package: Path, runtime: list[Path]) -> str:
    h = hashlib.sha256(f"sirenc {version}\0format {FORMAT}\0".encode())
    for path in sorted(p for p in package.rglob("*") if p.suffix in (".py", ".lark") and p.is_file()):
        h.update(f"\0{path.relative_to(package)}\0".encode())
        h.update(path.read_bytes())
    for path in runtime:
        h.update(f"\0{path.name}\0".encode())
        h.update(path.read_bytes())
    h.update(_host_cpu().encode())
    return h.hexdigest()


def _host_cpu() -> str:
    """The CPU the code is compiled for (native, as the JIT), without loading LLVM."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            lines = [line for line in f if line.startswith(("model name", "flags", "Features"))]
        return platform.machine() + "\0" + "".join(dict.fromkeys(lines))
    except OSError:
        return platform.machine() + "\0" + platform.processor()


def entry_key(c, data: str | None) -> str:
    """The key of compilation ``c`` (before it ran) with ``--data`` file ``data``."""
    h = hashlib.sha256()
    for part in (compiler_identity(), c.text, c.path, c.base_dir,
                 os.path.abspath(data) if data is not None else "",
                 c.method, str(c.check), str(c.max_rvs), str(c.analysis_budget), str(c.tier)):
        h.update(part.encode("utf-8", "surrogatepass") + b"\0")
    return h.hexdigest()


def expected_record(key: str, c, data: str | None) -> dict:
    """What the JSON file of entry ``key`` must say for its library to be loaded for compilation
    ``c`` (before it ran): a copy of another entry, or of an older sirenc's, says otherwise."""
    import sirenc
    from sirenc.runtime.abi import abi_version

    return {"key": key, "sirenc": sirenc.__version__, "abi": abi_version(),
            "program": hashlib.sha256(c.text.encode("utf-8", "surrogatepass")).hexdigest(), "path": c.path,
            "options": {"data": os.path.abspath(data) if data is not None else None, "method": c.method,
                        "check": c.check, "max_rvs": c.max_rvs, "analysis_budget": c.analysis_budget,
                        "tier": c.tier}}


class _Damaged(Exception):
    """An entry that must not be loaded; the message says why."""


def private_folder() -> Path:
    """The cache folder, created if missing, owned by the user and writable by no one else."""
    folder = cache_folder()
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = os.lstat(folder)
    except OSError as e:
        raise CacheUnusable(f"cannot create the cache folder {folder}: {e.strerror}") from None
    if not stat.S_ISDIR(st.st_mode):
        raise CacheUnusable(f"the cache folder {folder} is not a folder (a symbolic link?)")
    if st.st_uid != os.geteuid():
        raise CacheUnusable(f"the cache folder {folder} belongs to another user")
    if st.st_mode & 0o022:
        # Anyone could have planted entries in it: none of them is kept.
        try:
            os.chmod(folder, 0o700)
            with os.scandir(folder) as it:
                for entry in it:
                    if not entry.is_dir(follow_symlinks=False):
                        os.unlink(entry.path)
        except OSError as e:
            raise CacheUnusable(f"the cache folder {folder} is writable by others and cannot be made "
                                f"private: {e.strerror}") from None
        _warn(f"the cache folder {folder} was writable by others: its entries were removed and it is "
              "now private (mode 0700)")
    return folder


def _warn(message: str) -> None:
    print(f"sirenc: warning: {message}", file=sys.stderr)


def _read_private(path: Path) -> bytes | None:
    """The bytes of the user's own file ``path``, which no one else may write; None when missing."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        return None
    except OSError as e:
        raise _Damaged(f"cannot be opened: {e.strerror}") from None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o022:
            raise _Damaged("is not a private file of this user")
        return f.read()


def lookup(key: str, c, data: str | None):
    """``(Model, CachedFacts)`` of the entry ``key`` for compilation ``c`` (before it ran) with
    ``--data`` file ``data``, or None when there is none. An entry that does not check out is
    removed, after a warning, and never loaded."""
    from sirenc import api

    try:
        folder = private_folder()
    except CacheUnusable:
        return None        # store says why, and the run goes on without the cache
    so, record_path = folder / f"{key}.so", folder / f"{key}.json"
    try:
        record_bytes = _read_private(record_path)
        library = _read_private(so)
        if record_bytes is None or library is None:
            return None    # not made yet, or being made: the record is written last
        try:
            record = json.loads(record_bytes)
            entry, facts = record["entry"], CachedFacts.from_dict(record["facts"])
        except (ValueError, KeyError, TypeError):
            raise _Damaged("has an unreadable record") from None
        if entry != {**expected_record(key, c, data), "library": entry.get("library")}:
            raise _Damaged("was made for another program, options or sirenc")
        if hashlib.sha256(library).hexdigest() != entry["library"]:
            raise _Damaged("holds a library other than the one it recorded (truncated or replaced)")
        model = api.load(so)      # the folder is private: the file is the one just checked
    except (_Damaged, SirenUsageError) as e:
        for path in (so, record_path):
            try:
                os.unlink(path)
            except OSError:
                pass
        why = e.message if isinstance(e, SirenUsageError) else str(e)
        _warn(f"the compile cache entry {so.name} {why}; it was removed and the program is compiled again")
        return None
    for path in (so, record_path):      # used now: the last to be evicted
        try:
            os.utime(path)
        except OSError:
            pass
    return model, facts


def store(key: str, c, data: str | None, warnings) -> tuple:
    """Compile ``c`` into the entry ``key`` and load it: ``(Model, CachedFacts)``."""
    import tempfile

    from sirenc import api, driver
    from sirenc.backend.link import link_shared, write_atomically
    from sirenc.backend.llvm import object_bytes

    limit = max_bytes()
    record = expected_record(key, c, data)      # of c as it was keyed, before the passes run
    c.snapshots = False   # nothing prints the intermediate stages of a run
    module = driver.run_until(c, "llvm-dialect")
    info = driver.model_info(c, module)
    if data is not None:
        info.replace_data(data)
    facts = CachedFacts(dict(c.plan.plan) if c.plan is not None else None,
                        None if not c.check else c.plan.seconds, list(warnings(c)))
    folder = private_folder()
    so, record_path = folder / f"{key}.so", folder / f"{key}.json"
    try:
        with tempfile.TemporaryDirectory(prefix="sirenc-entry-") as tmp:
            library = link_shared(object_bytes(module, info, native=True), output=Path(tmp) / "model.so").read_bytes()
        record["library"] = hashlib.sha256(library).hexdigest()
        write_atomically(so, library, mode=0o700)
        write_atomically(record_path, json.dumps({"entry": record, "facts": facts.to_dict()}).encode(),
                         mode=0o600)
    except SirenUsageError as e:
        raise CacheUnusable(e.message) from None
    evict(limit, keep=(so, record_path))
    return api.load(so), facts


def evict(limit: int, keep: tuple[Path, ...] = ()) -> None:
    """Remove the least recently used entries until the folder holds at most ``limit`` bytes
    (``keep``, the entry just made, stays even when it alone is larger). Temporary files
    (``.NAME...tmp``, another run's entry being written) are neither counted nor removed."""
    entries: dict[str, list[os.DirEntry]] = {}
    try:
        with os.scandir(cache_folder()) as it:
            for entry in it:
                if entry.is_file(follow_symlinks=False) and not entry.name.startswith("."):
                    entries.setdefault(entry.name.split(".", 1)[0], []).append(entry)
    except OSError:
        return
    kept = {p.name for p in keep}
    sized = []
    for files in entries.values():
        try:
            stats = [f.stat(follow_symlinks=False) for f in files]
        except OSError:
            continue
        sized.append((max(s.st_mtime_ns for s in stats), sum(s.st_size for s in stats), files))
    total = sum(size for _, size, _ in sized)
    for _, size, files in sorted(sized, key=lambda e: e[0]):
        if total <= limit:
            break
        if any(f.name in kept for f in files):
            continue
        for f in files:
            try:
                os.unlink(f.path)
            except OSError:
                pass
        total -= size
