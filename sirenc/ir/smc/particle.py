"""The particle: ``smc.particle``, the program one particle runs, with the facts about it a
back end needs (``#smc.model``), and ``smc.finish``, its result."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, StringAttr, SymbolNameConstraint, i1, i32, i64
from xdsl.ir import ParametrizedAttribute, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation, irdl_attr_definition, irdl_op_definition, param_def, prop_def, region_def, traits_def,
    var_operand_def,
)
from xdsl.traits import IsTerminator, SymbolOpInterface
from xdsl.utils.exceptions import VerifyException

from sirenc.ir.smc.types import scalars_of


@irdl_attr_definition
class ModelAttr(ParametrizedAttribute):
    """What a backend needs to know about the particle program besides its code.

    `result`: the result's type descriptor; `streamable`: whether the program folds over
    the observation stream (`data_file`, "" when none), else `not_streamable_reason`;
    `frame_slots`: how many frame slots `spill-across-suspends` allocated; `roots`: per
    suspension point, the slots holding list handles, as [point, slot, descriptor], and
    the slots holding symbolic words, as [point, slot, "S"].

    Under a symbolic method the particle op also carries ``smc.vars``, the program
    variables by the `var` index of ``smc.assume``.
    """

    name = "smc.model"
    result: StringAttr = param_def()
    streamable: IntegerAttr = param_def()
    not_streamable_reason: StringAttr = param_def()
    data_file: StringAttr = param_def()
    frame_slots: IntegerAttr = param_def()
    roots: ArrayAttr = param_def()

    @staticmethod
    def build(result: str, streamable: bool, reason: str, data_file: str,
              frame_slots: int = 0, roots: Sequence[tuple[int, int, str]] = ()) -> "ModelAttr":
        return ModelAttr(
            StringAttr(result), IntegerAttr(int(streamable), i1), StringAttr(reason), StringAttr(data_file),
            IntegerAttr(frame_slots, i64),
            ArrayAttr([ArrayAttr([IntegerAttr(p, i32), IntegerAttr(s, i64), StringAttr(d)]) for p, s, d in roots]),
        )

    def with_frame(self, frame_slots: int, roots: Sequence[tuple[int, int, str]]) -> "ModelAttr":
        return ModelAttr.build(self.result.data, bool(self.streamable.value.data), self.not_streamable_reason.data,
                               self.data_file.data, frame_slots, roots)

    def with_result(self, result: str) -> "ModelAttr":
        return ModelAttr.build(result, bool(self.streamable.value.data), self.not_streamable_reason.data,
                               self.data_file.data, self.frame_slots.value.data, self.root_list())

    def root_list(self) -> list[tuple[int, int, str]]:
        return [(r.data[0].value.data, r.data[1].value.data, r.data[2].data) for r in self.roots.data]

    def verify(self) -> None:
        scalars_of(self.result.data)


@irdl_op_definition
class ParticleOp(IRDLOperation):
    """The program one particle runs, from the start to ``smc.finish``.

    `smc.particle @model <#smc.model<...>> { ... "smc.finish"(%r) : (f64) -> () }`
    """

    name = "smc.particle"
    sym_name = prop_def(SymbolNameConstraint())
    model = prop_def(ModelAttr)
    body = region_def("single_block")
    traits = traits_def(SymbolOpInterface())

    def __init__(self, name: str, model: ModelAttr, body: Region):
        super().__init__(properties={"sym_name": StringAttr(name), "model": model}, regions=[body])

    def verify_(self) -> None:
        if self.body.block.args:
            raise VerifyException("a particle program takes no arguments")
        last = self.body.block.last_op
        if not isinstance(last, FinishOp):
            raise VerifyException("a particle program ends with smc.finish")
        if [v.type for v in last.values] != scalars_of(self.model.result.data):
            raise VerifyException("smc.finish's values do not match the model's result type")


@irdl_op_definition
class FinishOp(IRDLOperation):
    """The particle has finished with this result (its scalars, in descriptor order).

    `"smc.finish"(%x, %l) : (f64, !smc.list<"f">) -> ()`
    """

    name = "smc.finish"
    values = var_operand_def()
    traits = traits_def(IsTerminator())

    def __init__(self, values: Sequence[SSAValue]):
        super().__init__(operands=[values])

    def verify_(self) -> None:
        if not isinstance(self.parent_op(), ParticleOp):
            raise VerifyException("smc.finish ends an smc.particle")

