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


def check_output(output: str | os.PathLike) -> Path:
    """The absolute path to write ``output`` at, or a ``SirenUsageError`` saying why not.

    Output is written to a temporary file in the target folder and renamed over the target, so
    the target must be missing or a regular file: a directory, a device (``/dev/null``), a pipe
    or a symbolic link is refused before anything is written, as is a folder that does not exist.
    """
    if isinstance(output, bytes) or not isinstance(output, (str, os.PathLike)):
        raise SirenUsageError(f"the output must be a path (str or os.PathLike), not {type(output).__name__}")
    name = os.fspath(output)
    if isinstance(name, bytes) or not name or "\0" in name:
        raise SirenUsageError(f"the output must be a file name, not {name!r}")
    out = Path(name).absolute()
    if os.path.islink(out):
        raise SirenUsageError(f"refusing to write {name}: it is a symbolic link (give the path it points to)")
    if os.path.exists(out) and not os.path.isfile(out):
        what = "a directory" if os.path.isdir(out) else "not a regular file (a device, a pipe or a socket)"
        raise SirenUsageError(f"refusing to write {name}: it is {what}")
    if name.endswith(os.sep) or (os.altsep and name.endswith(os.altsep)):
        raise SirenUsageError(f"refusing to write {name}: it names a directory")
    if not out.parent.is_dir():
        raise SirenUsageError(f"cannot write {name}: the folder {out.parent} does not exist")
    return out


def write_atomically(output: str | os.PathLike, data: bytes, mode: int = 0o666) -> Path:
    """Write ``data`` to ``output`` (checked by ``check_output``) through a temporary file in the
    same folder, renamed over it; the new file gets ``mode`` less the umask."""
    out = check_output(output)
    partial = out.parent / f".{out.name}.{os.getpid()}.{os.urandom(6).hex()}.tmp"
    try:
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(partial, out)
    except OSError as e:
        raise SirenUsageError(f"cannot write {os.fspath(output)}: {e.strerror}") from None
    finally:
        if os.path.lexists(partial):
            os.unlink(partial)
    return out


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
        out.parent.mkdir(parents=True, exist_ok=True)
    else:
        out = check_output(output)
    cc = c_compiler()
    with tempfile.TemporaryDirectory(prefix="sirenc-link-") as tmp:
        obj_path = Path(tmp) / "model.o"
        obj_path.write_bytes(obj)
        linked = Path(tmp) / "model.so"
        proc = subprocess.run(link_command(cc, obj_path, linked, archives), capture_output=True, text=True)
        if proc.returncode != 0:
            raise SirenUsageError(
                f"linking {out.name} failed ({Path(cc).name} exited with status "
                f"{proc.returncode}):\n{proc.stderr.strip()}"
            )
        # Checked again and renamed into place from beside the target: readers never see half a file.
        return write_atomically(out if output is None else output, linked.read_bytes(), mode=0o777)
