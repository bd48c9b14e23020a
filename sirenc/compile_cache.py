"""The compile cache of ``sirenc run``: an unchanged program is loaded, not compiled, again.

    key = entry_key(c, data)               # c: the driver's Compilation, data: --data or None
    hit = lookup(key)                      # (Model, CachedFacts) or None
    if hit is None:
        hit = store(key, c, data)          # compiles, links a model.so into the cache, loads it

An entry is a linked ``model.so`` (the runtime linked in, so loading it needs neither xDSL nor
LLVM: a hit starts in a fraction of a second) and a JSON file with what the report prints
besides the run (the checked plan, the analysis time of the compilation that made the entry,
the warnings). The key is a SHA-256 of everything the compiled code depends on:

- the program text, its path and folder (``File.read`` names are resolved against the folder and
  the absolute paths, like the program's path in error messages, are compiled into the model);
- ``--data``'s absolute path (the file is read at run time, so its contents are not part of the
  key: an edited data file is read afresh);
- the options that change the code: method, ``--no-check``, ``--max-rvs``, ``--analysis-budget``;
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
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from sirenc.diagnostics import Span, SirenUsageError

FORMAT = 1                                  # of the JSON facts; part of the key
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

    def to_json(self) -> str:
        return json.dumps({
            "plan": self.plan, "analysis_time": self.analysis_time,
            "warnings": [[m, None if s is None else [s.file, s.line, s.col, s.end_line, s.end_col]]
                         for m, s in self.warnings],
        })

    @classmethod
    def from_json(cls, text: str) -> "CachedFacts":
        d = json.loads(text)
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


def _paths(key: str) -> tuple[Path, Path]:
    folder = cache_folder()
    return folder / f"{key}.so", folder / f"{key}.json"


def lookup(key: str):
    """``(Model, CachedFacts)`` of the entry ``key``, or None when there is none (or it is damaged)."""
    from sirenc import api

    so, facts_path = _paths(key)
    try:
        facts = CachedFacts.from_json(facts_path.read_text(encoding="utf-8"))
        model = api.load(so)
    except (OSError, ValueError, KeyError, TypeError, SirenUsageError):
        return None
    for path in (so, facts_path):      # used now: the last to be evicted
        try:
            os.utime(path)
        except OSError:
            pass
    return model, facts


def store(key: str, c, data: str | None, warnings) -> tuple:
    """Compile ``c`` into the entry ``key`` and load it: ``(Model, CachedFacts)``."""
    from sirenc import api, driver
    from sirenc.backend.link import link_shared, write_atomically
    from sirenc.backend.llvm import object_bytes

    limit = max_bytes()
    c.snapshots = False   # nothing prints the intermediate stages of a run
    module = driver.run_until(c, "llvm-dialect")
    info = driver.model_info(c, module)
    if data is not None:
        info.replace_data(data)
    facts = CachedFacts(dict(c.plan.plan) if c.plan is not None else None,
                        None if not c.check else c.plan.seconds, list(warnings(c)))
    so, facts_path = _paths(key)
    try:
        so.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise CacheUnusable(f"cannot create the cache folder {so.parent}: {e.strerror}") from None
    try:
        link_shared(object_bytes(module, info, native=True), output=so)
        write_atomically(facts_path, facts.to_json().encode())
    except SirenUsageError as e:
        raise CacheUnusable(e.message) from None
    evict(limit, keep=(so, facts_path))
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
