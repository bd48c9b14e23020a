"""sirenc.backend.llvm: conversion, the sirenc_model descriptor, O2, objects."""

from __future__ import annotations

import re

import subprocess
from pathlib import Path

import llvmlite.binding as llvm
import llvmlite.ir as ir
import pytest

from sirenc.backend.llvm import descriptor_type, ir_text, llvm_ir_text, object_bytes
from markers import needs_runtime, needs_tools
from toy_model import toy_model

REPO = Path(__file__).resolve().parents[2]
HEADER_DIR = REPO / "runtime_c" / "include"


@pytest.fixture(scope="module")
def toy():
    return toy_model(data_file="/data/ys.csv")


def _parsed(toy, optimize=False):
    ref = llvm.parse_assembly(llvm_ir_text(*toy, optimize=optimize))
    ref.verify()
    return ref


def test_descriptor_is_exported_and_resume_is_internal(toy):
    ref = _parsed(toy)
    model = ref.get_global_variable("sirenc_model")
    assert model.linkage == llvm.Linkage.external
    assert model.visibility == llvm.Visibility.default
    assert not model.is_declaration
    resume = ref.get_function("siren_resume")
    assert resume.linkage == llvm.Linkage.internal
    assert ref.get_function("sirenrt_sample_gaussian").is_declaration


def test_descriptor_contents(toy):
    text = llvm_ir_text(*toy)
    assert 'c"toy\\00"' in text and 'c"pf\\00"' in text and 'c"x: sample\\00"' in text
    assert 'c"/data/ys.csv\\00"' in text
    # site 0 carries the file, the span and the whole source line
    assert 'c"toy.si\\00"' in text
    assert 'c"let x = sample(gaussian(0., 1.)) in\\00"' in text
    assert "ptr @siren_resume" in text
    # the ABI version, frame 40 bytes, result at 24, streamable, 1 file, 2 sites, no list roots,
    # no variables and no symbolic roots (pf)
    line = next(l for l in text.splitlines() if l.startswith("@sirenc_model ="))
    from sirenc.runtime.abi import abi_version

    for field in (f"{{ i32 {abi_version()},", "i32 40, i32 24, ptr @siren_resume, i32 1,", "i32 1, ptr @sirenc_model.files",
                  "i32 2, ptr @sirenc_model.sites", "i32 0, ptr null, i32 0, ptr null, i32 0, ptr null, i32 1, ptr null, i32 0, ptr @siren_resume.span, ptr null, ptr null, ptr null }"):
        assert field in line


def test_strings_are_deduplicated(toy):
    text = llvm_ir_text(*toy)
    assert text.count('c"toy.si\\00"') == 1


def test_no_files_and_no_sites_give_null_arrays():
    module, info = toy_model()
    info.sites, info.files = [], []
    text = llvm_ir_text(module, info)
    line = next(l for l in text.splitlines() if l.startswith("@sirenc_model ="))
    assert line.rstrip().endswith("i32 0, ptr null, i32 0, ptr null, i32 1, ptr null, i32 0, ptr @siren_resume.span, ptr null, ptr null, ptr null }")


def test_o2_keeps_the_descriptor_and_folds_the_resume_function(toy):
    ref = _parsed(toy, optimize=True)
    assert ref.get_global_variable("sirenc_model").linkage == llvm.Linkage.external
    text = str(ref)
    assert "switch i64" in text          # the END/NEED tests became one switch
    assert "alloca" not in text


def test_missing_resume_function_is_reported():
    module, info = toy_model()
    fn = next(op for op in module.ops if op.sym_name.data == "siren_resume")
    fn.sym_name = type(fn.sym_name)("renamed")
    with pytest.raises(ValueError, match="siren_resume"):
        ir_text(module, info)


def test_object_is_pic_elf_defining_the_descriptor(toy):
    obj = object_bytes(*toy)
    assert obj[:4] == b"\x7fELF"
    assert b"sirenc_model" in obj
    assert b"sirenrt_stream_row" in obj


DESCRIPTOR_STRUCTS = ("sirenrt_model", "sirenrt_site", "sirenrt_root")


@needs_tools("cc")
def test_descriptor_layout_matches_the_c_header(tmp_path):
    """The LLVM struct types derived from the header have the C compiler's field offsets and
    sizes, and cffi's (what hosts read a descriptor with)."""
    from sirenc.runtime.ffi import ffi

    fields = {s: [name for name, _ in ffi.typeof(s).fields] for s in DESCRIPTOR_STRUCTS}
    src = tmp_path / "layout.c"
    src.write_text(
        '#include <stdio.h>\n#include <stddef.h>\n#include "sirenrt.h"\nint main(void){\n'
        + "".join("".join(f'printf("%zu\\n", offsetof({s}, {f}));\n' for f in fields[s])
                  + f'printf("%zu\\n", sizeof({s}));\n' for s in DESCRIPTOR_STRUCTS)
        + "return 0;}\n")
    exe = tmp_path / "layout"
    subprocess.run(["cc", "-I", str(HEADER_DIR), "-o", str(exe), str(src)], check=True)
    c_numbers = [int(x) for x in subprocess.run([str(exe)], capture_output=True, text=True,
                                                check=True).stdout.split()]
    cffi_numbers = [n for s in DESCRIPTOR_STRUCTS
                    for n in [*(ffi.offsetof(s, f) for f in fields[s]), ffi.sizeof(s)]]

    llvm.initialize_native_target()
    td = llvm.Target.from_default_triple().create_target_machine().target_data
    ref = llvm.parse_assembly("".join(f"@{s} = external global {descriptor_type(s)}\n" for s in DESCRIPTOR_STRUCTS))
    ours = []
    for s in DESCRIPTOR_STRUCTS:
        ty = ref.get_global_variable(s).global_value_type
        ours += [*(td.get_element_offset(ty, i) for i in range(len(fields[s]))), td.get_abi_size(ty)]
    assert ours == c_numbers == cffi_numbers


def test_descriptor_is_filled_by_field_name():
    from sirenc.backend.llvm import _struct

    null = ir.Constant(ir.PointerType(), None)
    root = _struct("sirenrt_root", type=null, offset=16, pc=3)
    assert str(root) == "{i32, i32, ptr} {i32 3, i32 16, ptr null}"
    with pytest.raises(ValueError, match="sirenrt_root has the fields"):
        _struct("sirenrt_root", pc=3, offset=16)


@needs_runtime
def test_jit_gives_the_descriptor_address(toy):
    from sirenc.backend.llvm import jit_compile
    from sirenc.runtime.ffi import ffi

    jit = jit_compile(*toy)
    model = ffi.cast("const sirenrt_model *", jit.model_address)
    assert ffi.string(model.name) == b"toy" and model.frame_size == 40
    assert ffi.string(model.sites[0].text) == b"let x = sample(gaussian(0., 1.)) in"
    assert model.resume != ffi.NULL


@needs_runtime
def test_jit_reports_unknown_runtime_functions_instead_of_aborting():
    from sirenc.backend.llvm import jit_compile

    module, info = toy_model()
    for op in module.ops:
        if op.sym_name.data == "sirenrt_stream_row":
            op.sym_name = type(op.sym_name)("sirenrt_no_such_function")
            break
    for op in module.walk():
        callee = getattr(op, "callee", None)
        if callee is not None and callee.string_value() == "sirenrt_stream_row":
            op.callee = type(callee)("sirenrt_no_such_function")
    with pytest.raises(RuntimeError, match="sirenrt_no_such_function"):
        jit_compile(module, info)


@pytest.mark.parametrize("method, tier, expected", [
    ("pf", 2, False),     # a sample is a draw
    ("ssi", 2, True),     # tier 2: the Gaussian belief is numbers, nothing is drawn
    ("ssi", 1, False),    # tier 1: sirenrt_sym_* may draw (a value, a hoist)
])
def test_never_draws_is_set_from_the_calls(method, tier, expected):
    from sirenc.driver import compile_to_llvm_dialect

    source = ("val step = fun (y, x) -> let x1 <- gaussian(x, 1.) in "
              "let () = observe(gaussian(x1, 0.5), y) in let () = resample() in x1 in fold(step, [1., 2.], 0.)")
    _, info = compile_to_llvm_dialect(source, method=method, tier=tier)
    assert info.never_draws is expected
    line = next(l for l in llvm_ir_text(*compile_to_llvm_dialect(source, method=method, tier=tier)).splitlines()
                if l.startswith("@sirenc_model ="))
    # frame_result_type (a tier-2 program's result is symbolic here, so its frame holds the atoms
    # too), result_names (the step's x1), then var_sites (tier 1's variables)
    assert re.search(rf"i32 {int(expected)}, ptr @siren_resume\.span, ptr (null|@sirenc_model\.str\.\d+), "
                     rf"ptr @sirenc_model\.str\.\d+, ptr {'@sirenc_model.var_sites' if tier == 1 and method != 'pf' else 'null'} }}$",
                     line.rstrip())


def test_never_draws_allows_only_calls_that_cannot_draw():
    from sirenc.passes.to_llvm.resume_abi import never_draws

    assert never_draws([]) and never_draws(["sirenrt_observe_gaussian", "sirenrt_list_head_word",
                                            "sirenrt_stream_row", "sirenrt_add_log_weight", "sirenrt_file"])
    for drawing in ("sirenrt_sample_gaussian", "sirenrt_std_normal", "sirenrt_sym_value", "sirenrt_sym_assume",
                    "sirenrt_some_future_function"):
        assert not never_draws(["sirenrt_list_tl", drawing])
