"""Link a compiled model object with the C runtime into a ``model.so``.

The shared object is self-contained: the runtime is linked in statically, the
``sirenc_*`` entry points come from ``libsirenrt_export.a`` (whole archive, so
every export is kept even though nothing in the object references them), and
the runtime's own symbols are hidden so that a process which also loaded
``libsirenrt.so`` (the JIT path) never mixes the two copies, and
``-Bsymbolic`` binds every internal reference to the model's own
definitions::

    so = link_shared(object_bytes(module, info))            # cached by content
    so = link_shared(obj, output="model.so")               # exactly there

Cached files are named by content hash, because ``dlopen`` caches by path and
would return old code for a rebuilt file at the same path (P13).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from sirenc.diagnostics import SirenUsageError


def cache_dir() -> Path:
    """``$SIRENC_CACHE_DIR``, else ``$XDG_CACHE_HOME/sirenc``, else ``~/.cache/sirenc``."""
    explicit = os.environ.get("SIRENC_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "sirenc"


def c_compiler() -> str:
    """The C compiler driver used to link (``$CC``, default ``cc``)."""
    name = os.environ.get("CC", "cc")
    found = shutil.which(name)
    if found is None:
        raise SirenUsageError(
            f"building a model.so needs a C compiler, and '{name}' is not on PATH; "
            "install one (e.g. gcc), set CC, or compile without an output file to use the JIT"
        )
    return found


def _runtime_archives() -> list[Path]:
    from sirenc.runtime import static_libraries
    libs = [Path(p) for p in static_libraries()]
    for lib in libs:
        if not lib.is_file():
            raise SirenUsageError(f"the sirenc runtime library {lib} is missing; rebuild the runtime")
    return libs


def content_hash(obj: bytes, archives: list[Path]) -> str:
    """Hash of everything that determines the linked file's contents."""
    h = hashlib.sha1(obj)
    for lib in archives:
        st = lib.stat()
        h.update(f"\0{lib}\0{st.st_size}\0{st.st_mtime_ns}".encode())
    return h.hexdigest()


def link_command(cc: str, obj: Path, out: Path, archives: list[Path]) -> list[str]:
    export, *runtime = archives
    return [
        cc, "-shared", "-o", str(out), str(obj),
        "-Wl,--whole-archive", str(export), "-Wl,--no-whole-archive",
        *map(str, runtime),
        *(f"-Wl,--exclude-libs,{lib.name}" for lib in runtime),
        # References inside the .so bind to its own definitions, so a host that
        # dlopens two models RTLD_GLOBAL still gets each model's own descriptor.
        "-Wl,-Bsymbolic",
        "-lm", "-lpthread",
    ]


def link_shared(obj: bytes, output: str | os.PathLike | None = None) -> Path:
    """Link ``obj`` into a shared object and return its path.

    Without ``output`` the result lands in the cache as ``model_<sha1>.so``
    and is reused when the same object is linked again.
    """
    archives = _runtime_archives()
    if output is None:
        out = cache_dir() / f"model_{content_hash(obj, archives)}.so"
        if out.is_file():
            return out
    else:
        out = Path(output).absolute()
    out.parent.mkdir(parents=True, exist_ok=True)
    cc = c_compiler()
    with tempfile.TemporaryDirectory(prefix="sirenc-link-") as tmp:
        obj_path = Path(tmp) / "model.o"
        obj_path.write_bytes(obj)
        # Link beside the target, then rename: readers never see half a file.
        partial = str(out.parent / f".{out.name}.{os.getpid()}.{Path(tmp).name}.tmp")
        try:
            proc = subprocess.run(link_command(cc, obj_path, Path(partial), archives),
                                  capture_output=True, text=True)
            if proc.returncode != 0:
                raise SirenUsageError(
                    f"linking {out.name} failed ({Path(cc).name} exited with status "
                    f"{proc.returncode}):\n{proc.stderr.strip()}"
                )
            os.replace(partial, out)
        finally:
            if os.path.exists(partial):
                os.unlink(partial)
    return out
