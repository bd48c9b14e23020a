"""One ABI, written once: the family table (sirenc/distributions.py) generates
sirenrt_families.h, sirenrt.h is read for the cffi declarations and the descriptor
types, and these tests check that every other side agrees with them: the compiled
runtime's own family table, and the signatures generated code calls."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from markers import needs_runtime
from sirenc.distributions import FAMILIES
from sirenc.runtime import abi
from sirenc.runtime.families_header import HEADER_NAME, header_text

INCLUDE = Path(__file__).resolve().parents[2] / "runtime_c" / "include"


def test_committed_families_header_is_what_the_table_generates():
    assert (INCLUDE / HEADER_NAME).read_text() == header_text(), (
        "regenerate it: python -m sirenc.runtime.families_header > runtime_c/include/sirenrt_families.h")


@needs_runtime
def test_the_runtime_was_built_from_the_same_family_table():
    from sirenc.runtime.ffi import ffi, runtime_lib

    LIB = runtime_lib()
    assert LIB.SIRENRT_N_FAMILIES == len(FAMILIES)
    for f in FAMILIES:
        assert getattr(LIB, f"SIRENRT_FAM_{f.name.upper()}") == f.id
        info = LIB.sirenrt_family_info(f.id)
        assert (ffi.string(info.name).decode(), info.n_params) == (f.name, f.arity)
    assert LIB.sirenrt_family_info(len(FAMILIES)) == ffi.NULL
    assert LIB.sirenrt_family_info(-1) == ffi.NULL


def test_one_abi_version():
    assert abi.abi_version() == 17
    assert re.search(r"^#define SIRENRT_ABI_VERSION 17$", (INCLUDE / "sirenrt.h").read_text(), re.M)


def test_the_header_reader_refuses_what_it_does_not_understand(tmp_path):
    header = tmp_path / "h.h"
    header.write_text("#pragma once\nint f(void);\n")
    with pytest.raises(ValueError, match="unexpected directive"):
        abi.cdef(header)
    header.write_text("#ifdef __cplusplus\nextern \"C\" {\n#endif\n#define N 3 /* three */\nint f(void);\n"
                      "#ifdef __cplusplus\n}\n#endif\n")
    assert abi.cdef(header) == "#define N 3\nint f(void);\n"


# ---------------------------------------------------------------- generated code against the header

# Canonical valid arguments of each family, for a program that draws and observes every one.
EXAMPLE_ARGS = {
    "gaussian": "1.5, 4.", "beta": "2., 5.", "bernoulli": "0.3", "binomial": "10., 0.3",
    "beta_binomial": "10., 2., 3.", "negative_binomial": "3., 0.4", "exponential": "2.",
    "gamma": "3., 2.", "poisson": "3.5", "delta": "2.5", "categorical": "2., 4., [0.2, 0.5, 0.3]",
    "uniform_int": "1., 6.", "student_t": "1., 4., 5.",
}
# ... and every list and data operation (the fold over file 0 reads it as a stream; categorical's
# literal of constants is built by sirenrt_list_from_words, a literal of lists by
# sirenrt_list_from_nested_words, `s :: r` conses one word, `(s, s) :: []` two).
FUNCTIONS = """
val first = fun row -> List.hd(row) in
val step = fun (y, x) ->
  let x1 <- gaussian(x, 1.) in let () = observe(gaussian(x1, 0.5), y) in let () = resample() in x1
in
"""
LISTS_AND_DATA = """
let r = List.rev(List.range(0., 3.)) in
let f = File.read("other.csv") in
let s = fold(step, List.map(first, File.read("data.csv")), 0.) in
(s, List.len(List.tl(r)) + List.hd(r) + List.len(f) + List.len(s :: r) + List.len([[1.], []])
    + List.len((s, s) :: []))
"""


def every_call_program() -> str:
    assert set(EXAMPLE_ARGS) == {f.name for f in FAMILIES}
    calls = [f"{name}({args})" for name, args in EXAMPLE_ARGS.items()]
    draws = "".join(f"let v{i} <- {d} in let () = observe({d}, v{i}) in\n" for i, d in enumerate(calls))
    return FUNCTIONS + draws + LISTS_AND_DATA


NON_FAMILY_CALLS = {"std_normal", "add_log_weight", "list_cons_word", "list_cons_typed", "list_set",
                    "list_from_words", "list_from_nested_words", "list_head_word",
                    "list_tl", "list_len", "list_rev_typed", "list_range", "file", "stream_row"}

# How LLVM spells the C types of the ABI (its own table, so that it checks backend/llvm.py's).
LLVM_SPELLING = {"double": "double", "void": "void", "int32_t": "i32", "uint32_t": "i32",
                 "int64_t": "i64", "uint64_t": "i64"}


def _llvm_spelling(ctype) -> str:
    return "ptr" if ctype.kind == "pointer" else LLVM_SPELLING[ctype.cname]


def _declarations(tmp_path, capsys) -> dict[str, str]:
    from sirenc.cli import main

    for name in ("data.csv", "other.csv"):
        (tmp_path / name).write_text("y\n1\n2\n")
    program = tmp_path / "every.si"
    program.write_text(every_call_program())
    assert main(["--emit=llvm", str(program)]) == 0
    found = re.findall(r"^declare (\S+) @(sirenrt_\w+)\((.*)\)$", capsys.readouterr().out, re.M)
    return {name: f"{ret} ({args})" for ret, name, args in found}


@needs_runtime
def test_generated_code_calls_the_runtime_with_the_header_signatures(tmp_path, capsys):
    from sirenc.runtime.ffi import ffi, runtime_lib

    LIB = runtime_lib()
    declared = _declarations(tmp_path, capsys)
    expected_names = {f"sirenrt_{op}_{f.name}" for f in FAMILIES for op in ("sample", "observe")}
    expected_names |= {f"sirenrt_{op}" for op in NON_FAMILY_CALLS}
    assert set(declared) == expected_names
    for name, signature in declared.items():
        c = ffi.typeof(getattr(LIB, name))
        header = f"{_llvm_spelling(c.result)} ({', '.join(_llvm_spelling(a) for a in c.args)})"
        assert signature == header, name
