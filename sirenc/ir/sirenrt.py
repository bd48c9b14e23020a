"""The `sirenrt` dialect: the C runtime's view of a compiled model.

`lower-smc-to-llvm` puts a particle's state in a frame of bytes and numbers the
data files and run-time error sites its code refers to. The C runtime needs
those facts besides the code (sirenrt.h's ``sirenrt_model``): how big a frame
is, where the result starts, which files and sites the ids mean, and which
frame words hold list handles at each resume point (the collector's roots).
They are one attribute, attached to ``@siren_resume`` under the key
``sirenrt.layout``; the driver reads it to build the model's tables.

    llvm.func @siren_resume(%ctx: !llvm.ptr, %frame: !llvm.ptr, %log_weight: !llvm.ptr) -> i32
        attributes {sirenrt.layout = #sirenrt.layout<32 : i64, 8 : i64, ["/data.csv"],
                                                    [loc("m.si":3:9)], [[1 : i32, 16 : i64, "Lf"]]>, ...}

Byte offsets and the runtime's tables live here, not in the `smc` dialect,
which knows nothing of the C runtime.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import ArrayAttr, FileLineColLoc, IntegerAttr, StringAttr, i32, i64
from xdsl.ir import Dialect, ParametrizedAttribute
from xdsl.irdl import irdl_attr_definition, param_def
from xdsl.utils.exceptions import VerifyException

from sirenc.ir.smc import list_type, scalars_of


@irdl_attr_definition
class LayoutAttr(ParametrizedAttribute):
    """Where `lower-smc-to-llvm` put a particle's state, and the tables the C runtime reads.

    `frame_size`, `result_offset`: bytes (the pc is an i32 at byte 0, padded to 8);
    `files`: the data files by file id (file 0 is the data run()/step() replace); `sites`:
    the run-time error sites by site id; `roots`: per resume point, the frame words
    holding list handles, as [pc, byte offset, descriptor], and (symbolic methods) those
    holding symbolic words, as [pc, byte offset, "S"] (the model's sym_roots).
    The program variables of a symbolic method are the function's ``sirenrt.vars``, and the
    site of each one's first binding its ``sirenrt.var_sites``.

    `#sirenrt.layout<32 : i64, 8 : i64, ["/data.csv"], [loc("m.si":3:9)], [[1 : i32, 16 : i64, "Lf"]]>`
    """

    name = "sirenrt.layout"
    frame_size: IntegerAttr = param_def()
    result_offset: IntegerAttr = param_def()
    files: ArrayAttr[StringAttr] = param_def()
    sites: ArrayAttr[FileLineColLoc] = param_def()
    roots: ArrayAttr = param_def()

    @staticmethod
    def build(frame_size: int, result_offset: int, files: Sequence[str], sites: Sequence[FileLineColLoc],
              roots: Sequence[tuple[int, int, str]]) -> "LayoutAttr":
        return LayoutAttr(
            IntegerAttr(frame_size, i64), IntegerAttr(result_offset, i64),
            ArrayAttr([StringAttr(f) for f in files]), ArrayAttr(list(sites)),
            ArrayAttr([ArrayAttr([IntegerAttr(p, i32), IntegerAttr(o, i64), StringAttr(d)]) for p, o, d in roots]),
        )

    def file_list(self) -> list[str]:
        return [f.data for f in self.files.data]

    def root_list(self) -> list[tuple[int, int, str]]:
        return [(r.data[0].value.data, r.data[1].value.data, r.data[2].data) for r in self.roots.data]

    def verify(self) -> None:
        size, results = self.frame_size.value.data, self.result_offset.value.data
        if size % 8 or results % 8 or not 8 <= results <= size:
            raise VerifyException("a frame is whole words: the pc's word, then the result from result_offset")
        for root in self.roots.data:
            if not (isinstance(root, ArrayAttr) and len(root.data) == 3
                    and isinstance(root.data[0], IntegerAttr) and isinstance(root.data[1], IntegerAttr)
                    and isinstance(root.data[2], StringAttr)):
                raise VerifyException("a root is [pc : i32, byte offset : i64, descriptor]")
            pc, offset, descriptor = root.data[0].value.data, root.data[1].value.data, root.data[2].data
            if pc < 1:
                raise VerifyException("roots belong to resume points (pc 1, 2, ...)")
            if offset % 8 or not results <= offset <= size - 8:
                raise VerifyException(f"root offset {offset} is not a word of the frame past the pc")
            # The descriptor grammar is sirenrt.h's; the smc dialect parses it for its list types.
            # "S": a symbolic word (the model's sym_roots).
            if descriptor == "S":
                continue
            if not descriptor.startswith("L") or scalars_of(descriptor) != [list_type(descriptor[1:])]:
                raise VerifyException(f"a root holds a list handle, not '{descriptor}' (a symbolic word's root is \"S\")")


SirenRT = Dialect("sirenrt", [], [LayoutAttr])
