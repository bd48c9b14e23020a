"""The `smc` dialect: one particle's program as a resumable procedure.

After `lower-siren-to-smc` the model is ``func.func @siren_resume(%ctx, %frame,
%log_weight) -> i32`` over machine scalars (``f64``, ``i1``, ``i64``) and list handles
(``!smc.list<"f">``: an arena index, typed by its element so that the runtime's
collector knows which frame slots and list words are handles), with ``arith``
for arithmetic, ``scf.if``/``scf.while`` for control, and the ops below for
what is particular to a particle filter: calls into the C runtime, suspension
points (resample barriers and waiting for a stream row), the particle's frame,
which keeps values alive across a suspension, and list handles.

    %x = "smc.rt"(%ctx, %m, %v, %site) <{callee = "sirenrt_sample_gaussian"}> : (!llvm.ptr, f64, f64, i32) -> f64
    "smc.suspend"() <{status = 1 : i32, point = 1 : i32}> : () -> ()
    "smc.frame_store"(%frame, %x) <{offset = 16 : i64}> : (!llvm.ptr, f64) -> ()
    %y = "smc.frame_load"(%frame) <{offset = 16 : i64}> : (!llvm.ptr) -> f64
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import Float64Type, IntegerAttr, IntegerType, StringAttr, i32, i64
from xdsl.dialects.llvm import LLVMPointerType
from xdsl.ir import Attribute, Dialect, ParametrizedAttribute, SSAValue, TypeAttribute
from xdsl.irdl import (
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    param_def,
    opt_result_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import MemoryReadEffect, MemoryWriteEffect, Pure
from xdsl.utils.exceptions import VerifyException

# Status codes of @siren_resume (runtime_c/include/sirenrt.h).
FINISHED, AT_RESAMPLE, NEED_ROW = 0, 1, 2



@irdl_attr_definition
class ListHandleType(ParametrizedAttribute, TypeAttribute):
    """A list handle whose elements have the runtime type descriptor `element`."""

    name = "smc.list"
    element: StringAttr = param_def()

    @property
    def descriptor(self) -> str:
        return "L" + self.element.data


def list_type(element: str) -> ListHandleType:
    return ListHandleType(StringAttr(element))


_SCALARS = (Float64Type, IntegerType, ListHandleType)


@irdl_op_definition
class RuntimeCallOp(IRDLOperation):
    """A call of a C runtime function `sirenrt_*` (sampling, scoring, lists, data)."""

    name = "smc.rt"
    callee = prop_def(StringAttr)
    args = var_operand_def()
    result = opt_result_def()
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())

    def __init__(self, callee: str, args: Sequence[SSAValue], result_type: Attribute | None):
        super().__init__(
            operands=[args], properties={"callee": StringAttr(callee)},
            result_types=[[result_type] if result_type is not None else []],
        )

    def verify_(self) -> None:
        if not self.callee.data.startswith("sirenrt_"):
            raise VerifyException("smc.rt calls only the sirenrt_ runtime")


@irdl_op_definition
class SuspendOp(IRDLOperation):
    """Stop this particle: return `status` to the population loop, resume here later.

    `point` numbers the resume points of the procedure (1, 2, ...; 0 is the start).
    """

    name = "smc.suspend"
    status = prop_def(IntegerAttr)
    point = opt_prop_def(IntegerAttr)
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())

    def __init__(self, status: int):
        super().__init__(properties={"status": IntegerAttr(status, i32)})

    def verify_(self) -> None:
        if self.status.value.data not in (AT_RESAMPLE, NEED_ROW):
            raise VerifyException("a suspension returns AT_RESAMPLE (1) or NEED_ROW (2)")


@irdl_op_definition
class FrameLoadOp(IRDLOperation):
    """Read a scalar from the particle's frame at a byte offset."""

    name = "smc.frame_load"
    frame = operand_def(LLVMPointerType)
    offset = prop_def(IntegerAttr)
    result = result_def()
    traits = traits_def(MemoryReadEffect())

    def __init__(self, frame: SSAValue, offset: int, result_type: Attribute):
        super().__init__(
            operands=[frame], properties={"offset": IntegerAttr(offset, i64)}, result_types=[result_type],
        )

    def verify_(self) -> None:
        if not isinstance(self.result.type, _SCALARS):
            raise VerifyException("frames hold scalars only")
        if self.offset.value.data % 8:
            raise VerifyException("frame slots are 8-byte aligned")


@irdl_op_definition
class FrameStoreOp(IRDLOperation):
    """Write a scalar to the particle's frame at a byte offset."""

    name = "smc.frame_store"
    frame = operand_def(LLVMPointerType)
    value = operand_def()
    offset = prop_def(IntegerAttr)
    traits = traits_def(MemoryWriteEffect())

    def __init__(self, frame: SSAValue, value: SSAValue, offset: int):
        super().__init__(operands=[frame, value], properties={"offset": IntegerAttr(offset, i64)})

    def verify_(self) -> None:
        if not isinstance(self.value.type, _SCALARS):
            raise VerifyException("frames hold scalars only")
        if self.offset.value.data % 8:
            raise VerifyException("frame slots are 8-byte aligned")


@irdl_op_definition
class AddLogWeightOp(IRDLOperation):
    """Adds a log density the procedure computed to the particle's log weight.

    `"smc.add_log_weight"(%lp, %site) : (f64, i32) -> ()`; `site` is the
    observation, named if this makes every particle's weight zero.
    """

    name = "smc.add_log_weight"
    log_density = operand_def(Float64Type)
    site = operand_def(IntegerType)
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())

    def __init__(self, log_density: SSAValue, site: SSAValue):
        super().__init__(operands=[log_density, site])


@irdl_op_definition
class NilOp(IRDLOperation):
    """The empty list. `%l = "smc.nil"() : () -> !smc.list<"f">`"""

    name = "smc.nil"
    result = result_def(ListHandleType)
    traits = traits_def(Pure())

    def __init__(self, typ: ListHandleType):
        super().__init__(result_types=[typ])


@irdl_op_definition
class IsNilOp(IRDLOperation):
    """Whether a list is empty. `%b = "smc.is_nil"(%l) : (!smc.list<"f">) -> i1`"""

    name = "smc.is_nil"
    list = operand_def(ListHandleType)
    result = result_def(IntegerType)
    traits = traits_def(Pure())

    def __init__(self, lst: SSAValue):
        super().__init__(operands=[lst], result_types=[IntegerType(1)])


@irdl_op_definition
class HandleCastOp(IRDLOperation):
    """Between a list handle and the raw 64-bit word it is stored as in a list cell."""

    name = "smc.handle_cast"
    input = operand_def()
    result = result_def()
    traits = traits_def(Pure())

    def __init__(self, value: SSAValue, to: Attribute):
        super().__init__(operands=[value], result_types=[to])

    def verify_(self) -> None:
        kinds = {type(self.input.type), type(self.result.type)}
        if kinds != {ListHandleType, IntegerType} or i64 not in (self.input.type, self.result.type):
            raise VerifyException("smc.handle_cast converts between i64 and !smc.list")


SMC = Dialect(
    "smc",
    [RuntimeCallOp, SuspendOp, FrameLoadOp, FrameStoreOp, AddLogWeightOp, NilOp, IsNilOp, HandleCastOp],
    [ListHandleType],
)
