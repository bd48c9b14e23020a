"""sirenc.backend.link: model.o + runtime archives -> model.so."""

from __future__ import annotations

import subprocess

import pytest

from markers import needs_runtime
from sirenc.backend import link
from sirenc.backend.llvm import object_bytes
from sirenc.diagnostics import SirenUsageError
from toy_model import toy_model


@pytest.fixture(scope="module")
def obj() -> bytes:
    return object_bytes(*toy_model())


@needs_runtime
def test_cached_link_is_named_by_content_and_reused(obj):
    first = link.link_shared(obj)
    assert first.name.startswith("model_") and first.suffix == ".so"
    assert link.link_shared(obj) == first
    other = link.link_shared(object_bytes(*toy_model(prior_var=2.0)))
    assert other != first


@needs_runtime
def test_exports_only_the_model_abi(obj, tmp_path):
    with pytest.raises(SirenUsageError, match="the folder .*sub does not exist"):
        link.link_shared(obj, output=tmp_path / "sub" / "toy.so")   # no folder is made (issue 11)
    (tmp_path / "sub").mkdir()
    out = link.link_shared(obj, output=tmp_path / "sub" / "toy.so")
    assert out == tmp_path / "sub" / "toy.so" and out.is_file()
    symbols = subprocess.run(["nm", "-D", "--defined-only", str(out)], capture_output=True,
                             text=True, check=True).stdout
    names = {line.split()[-1] for line in symbols.splitlines() if line.strip()}
    assert {"sirenc_info", "sirenc_new", "sirenc_run", "sirenc_model"} <= names
    assert not any(n.startswith("sirenrt_") for n in names)   # the runtime stays private


def test_missing_compiler_is_a_usage_error(monkeypatch):
    monkeypatch.setenv("CC", "no-such-cc-sirenc")
    with pytest.raises(SirenUsageError, match="needs a C compiler.*no-such-cc-sirenc"):
        link.c_compiler()


def test_linker_failure_shows_its_stderr(monkeypatch, tmp_path):
    fake = [tmp_path / "libsirenrt_export.a", tmp_path / "libsirenrt.a"]
    for lib in fake:
        subprocess.run(["ar", "rc", str(lib)], check=True)
    monkeypatch.setattr(link, "_runtime_archives", lambda: fake)
    with pytest.raises(SirenUsageError) as err:
        link.link_shared(b"this is not an object file", output=tmp_path / "bad.so")
    assert "linking bad.so failed" in err.value.message
    assert "model.o" in err.value.message          # the linker's own complaint
    assert not list(tmp_path.glob(".bad.so.*"))    # no partial output left behind
    assert not (tmp_path / "bad.so").exists()


@needs_runtime
def test_two_models_in_one_process_keep_their_own_descriptor(tmp_path):
    """Even when both are loaded RTLD_GLOBAL (as some hosts do)."""
    from sirenc.runtime.ffi import ffi

    paths = [link.link_shared(object_bytes(*toy_model(result_type=rt)), output=tmp_path / f"{rt}.so")
             for rt in ("f", "PfLf")]
    libs = [ffi.dlopen(str(p), ffi.RTLD_NOW | ffi.RTLD_GLOBAL) for p in paths]
    types = [ffi.string(lib.sirenc_info().result_type).decode() for lib in libs]
    assert types == ["f", "PfLf"]
