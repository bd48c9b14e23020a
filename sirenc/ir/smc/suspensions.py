"""Where a particle stops until the population goes on (a resampling barrier, the next row of
the stream), and the frame slots that keep its values across the stop."""

from __future__ import annotations

from xdsl.dialects.builtin import IntegerAttr, IntegerType, i1, i64
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def, opt_prop_def, prop_def, result_def, traits_def
from xdsl.traits import MemoryReadEffect, MemoryWriteEffect
from xdsl.utils.exceptions import VerifyException

from sirenc.ir.smc.types import ListHandleType, check_scalar, list_type


@irdl_op_definition
class ResampleOp(IRDLOperation):
    """A resampling barrier: the particle stops here until the population has resampled.

    `"smc.resample"() <{point = 1 : i32}> : () -> ()`; `point` numbers the suspension
    points (1, 2, ...), set by `spill-across-suspends`.
    """

    name = "smc.resample"
    point = opt_prop_def(IntegerAttr)
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())

    def __init__(self):
        super().__init__()


@irdl_op_definition
class NextRowOp(IRDLOperation):
    """Row `index` of the observation stream: waits until it has arrived or the stream has
    closed; `more` is false once the stream has ended (then `row` is the empty list).

    `%more, %row = "smc.next_row"(%i) <{point = 1 : i32}> : (i64) -> (i1, !smc.list<"f">)`
    Waiting is a suspension point; after it the op runs again with the same `index`.
    The op is located at the stream's `File.read`: a data file that cannot be read is
    reported there.
    """

    name = "smc.next_row"
    index = operand_def(IntegerType)
    point = opt_prop_def(IntegerAttr)
    more = result_def(IntegerType)
    row = result_def(ListHandleType)
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())

    def __init__(self, index: SSAValue):
        super().__init__(operands=[index], result_types=[i1, list_type("f")])

    def verify_(self) -> None:
        if self.index.type != i64 or self.more.type != i1 or self.row.type != list_type("f"):
            raise VerifyException("smc.next_row takes an i64 index and gives (i1, !smc.list<\"f\">)")


SUSPENSIONS = (ResampleOp, NextRowOp)


# -- the frame -------------------------------------------------------------------------


@irdl_op_definition
class FrameLoadOp(IRDLOperation):
    """Reads frame slot `slot`, which keeps a value alive across a suspension.

    `%x = "smc.frame_load"() <{slot = 0 : i64}> : () -> f64`
    """

    name = "smc.frame_load"
    slot = prop_def(IntegerAttr)
    result = result_def()
    traits = traits_def(MemoryReadEffect())

    def __init__(self, slot: int, result_type: Attribute):
        super().__init__(properties={"slot": IntegerAttr(slot, i64)}, result_types=[result_type])

    def verify_(self) -> None:
        check_scalar(self.result, "a frame slot")
        if self.slot.value.data < 0:
            raise VerifyException("frame slots are numbered from 0")


@irdl_op_definition
class FrameStoreOp(IRDLOperation):
    """Writes a scalar to frame slot `slot`. `"smc.frame_store"(%x) <{slot = 0 : i64}> : (f64) -> ()`"""

    name = "smc.frame_store"
    value = operand_def()
    slot = prop_def(IntegerAttr)
    traits = traits_def(MemoryWriteEffect())

    def __init__(self, value: SSAValue, slot: int):
        super().__init__(operands=[value], properties={"slot": IntegerAttr(slot, i64)})

    def verify_(self) -> None:
        check_scalar(self.value, "a frame slot")
        if self.slot.value.data < 0:
            raise VerifyException("frame slots are numbered from 0")

