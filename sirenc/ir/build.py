"""Cheap construction of the ops and attributes a big program has by the hundred thousand.

xDSL's ``IRDLOperation.__init__`` matches every argument against the op's definition (optional,
variadic, segment sizes) with abstract-class ``isinstance`` checks, and every attribute
constructor verifies its parameters: about 18 microseconds an op, a third of the compile time of
a 10^5-line program (issue 11). The ops built here have single operands and results and no
regions or successors, or one variadic operand or result that takes all the values, so there
is nothing to match; `new_op` builds the same op directly (the same operands and uses, results,
properties and attributes with the definition's defaults filled in, unknown location), checked
against its definition once per class. ``tests/unit/test_build.py`` compares
each shortcut with the constructor it replaces.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence

from xdsl.dialects.builtin import (
    UNKNOWN_LOC, ArrayAttr, FileLineColLoc, FloatAttr, FloatData, FunctionType, IntAttr, StringAttr, SymbolRefAttr, f64,
)
from xdsl.dialects import func
from xdsl.ir import Attribute, Block, BlockArgument, OpResult, Region, SSAValue, SSAValues, Use
from xdsl.irdl import AttrSizedSegments, IRDLOperation, OptionalDef, VariadicDef

from sirenc.diagnostics import Span

# Per op class: the properties and the attributes its definition fills in when a constructor
# leaves them out.
_Defaults = tuple[tuple[tuple[str, Attribute], ...], tuple[tuple[str, Attribute], ...]]
_DEFAULTS: dict[type, _Defaults] = {}
_NO_PROPERTIES: Mapping[str, Attribute] = {}
_NO_REFERENCES = ArrayAttr([])
_NO_VALUES = SSAValues()


def _defaults(cls: type[IRDLOperation]) -> _Defaults:
    op_def = cls.get_irdl_definition()
    # At most one variadic (or optional) operand and one result: the flat lists then say which
    # value is which, as IRDLOperation.__init__ flattens them.
    if sum(isinstance(d, VariadicDef) for _, d in op_def.operands) > 1 \
            or sum(isinstance(d, VariadicDef) for _, d in op_def.results) > 1 \
            or op_def.regions or op_def.successors or any(isinstance(o, AttrSizedSegments) for o in op_def.options):
        raise TypeError(f"new_op cannot build {op_def.name}: several variadics, regions or successors")
    defaults = tuple(tuple((name, d.default_value) for name, d in defs.items()
                           if not isinstance(d, OptionalDef) and d.default_value is not None)
                     for defs in (op_def.properties, op_def.attributes))
    _DEFAULTS[cls] = defaults
    return defaults


def new_op(cls: type[IRDLOperation], operands: Sequence[SSAValue], result_types: Sequence[Attribute],
           properties: Mapping[str, Attribute] = _NO_PROPERTIES) -> IRDLOperation:
    """``cls.build(operands=..., result_types=..., properties=...)`` for an op without regions or
    successors and with at most one variadic operand and result, whose values come flat."""
    return init_op(cls.__new__(cls), operands, result_types, properties)


def init_op(op: IRDLOperation, operands: Sequence[SSAValue], result_types: Sequence[Attribute],
            properties: Mapping[str, Attribute] = _NO_PROPERTIES) -> IRDLOperation:
    """What ``IRDLOperation.__init__(op, operands=..., result_types=..., properties=...)`` makes
    of flat operands and results (as for `new_op`), for an op's own ``__init__``."""
    defaults = _DEFAULTS.get(type(op))
    if defaults is None:
        defaults = _defaults(type(op))
    # Shared empty lists, and no loop or copy where there is nothing to take: a few tenths of
    # a microsecond each, a sixth of an op.
    if operands:
        uses = []
        for index, value in enumerate(operands):
            # value.add_use(use), without a call per operand.
            first = value.first_use
            use = Use(op, index, None, first)
            if first is not None:
                first._prev_use = use
            value.first_use = use
            uses.append(use)
        operands = SSAValues(operands)
        uses = tuple(uses)
    else:
        operands, uses = _NO_VALUES, ()
    if len(result_types) == 1:
        results = SSAValues((OpResult(result_types[0], op, 0),))
    elif result_types:
        results = SSAValues([OpResult(t, op, i) for i, t in enumerate(result_types)])
    else:
        results = _NO_VALUES
    props = dict(properties)
    prop_defaults, attr_defaults = defaults
    for name, default in prop_defaults:
        if name not in props:
            props[name] = default
    # Attribute by attribute, in the order Operation.__init__ sets them, not through `__dict__`:
    # the instance keeps its values inline (sharing the class's keys) instead of a dict of its
    # own, 176 bytes less per op and quicker to set and read.
    op._operands = operands
    op._operand_uses = uses
    op.results = results
    op.properties = props
    op.attributes = dict(attr_defaults) if attr_defaults else {}
    op.location = UNKNOWN_LOC
    op._successors = ()
    op._successor_uses = ()
    op.regions = ()
    return op


def new_func(name: str, function_type: FunctionType, body: Region,
             visibility: StringAttr | None = None) -> func.FuncOp:
    """``func.FuncOp(name, function_type, body, visibility)``: the same properties and region,
    without matching them against the definition (which fills in no default for a function) or
    the checks of a region's attachment (a program of 10^5 functions makes as many)."""
    properties = {"sym_name": StringAttr(name), "function_type": function_type}
    if visibility is not None:
        properties["sym_visibility"] = visibility
    op = func.FuncOp.__new__(func.FuncOp)
    op._operands = _NO_VALUES
    op._operand_uses = ()
    op.results = _NO_VALUES
    op.properties = properties
    op.attributes = {}
    op.location = UNKNOWN_LOC
    op._successors = ()
    op._successor_uses = ()
    op.regions = (body,)
    body.parent = op
    return op


def new_block(arg_types: Sequence[Attribute] = ()) -> Block:
    """``Block(arg_types=arg_types)``, without a new unknown location per argument."""
    block = Block.__new__(Block)
    block._args = tuple([BlockArgument(t, block, i, UNKNOWN_LOC) for i, t in enumerate(arg_types)])
    block._first_op = None
    block._last_op = None
    return block


def new_region(block: Block) -> Region:
    """``Region(block)`` for a new block, without the checks of its attachment."""
    region = Region.__new__(Region)
    region._first_block = block
    region._last_block = block
    block.parent = region
    return region


_set = object.__setattr__


def _attr(cls, **params) -> Attribute:
    """A parametrized attribute of parameters known to be valid, without re-verifying them."""
    attr = cls.__new__(cls)
    for name, value in params.items():
        object.__setattr__(attr, name, value)
    return attr


def _data(cls, value) -> Attribute:
    """``cls(value)`` for a Data attribute whose value is known to be valid."""
    attr = cls.__new__(cls)
    object.__setattr__(attr, "data", value)
    return attr


class Attributes:
    """The attributes one compilation makes many equal copies of, made once each: float
    constants (by their bits, so 0. and -0. stay apart and a NaN finds itself), source
    locations, symbol references and function types."""

    def __init__(self) -> None:
        self._floats: dict[bytes, FloatAttr] = {}
        self._files: dict[str, StringAttr] = {}
        self._ints: dict[int, IntAttr] = {}
        self._locs: dict[tuple[str, int, int], FileLineColLoc] = {}
        self._symbols: dict[str, SymbolRefAttr] = {}
        self._function_types: dict[tuple, FunctionType] = {}

    def float(self, value: float) -> FloatAttr:
        key = struct.pack("<d", value)
        attr = self._floats.get(key)
        if attr is None:
            # FloatAttr(value, f64) without its rounding to the type (a Python float is an f64
            # already) and verification.
            attr = self._floats[key] = _attr(FloatAttr, value=_data(FloatData, value), type=f64)
        return attr

    def loc(self, span: Span) -> FileLineColLoc:
        key = (span.file, span.line, span.col)
        loc = self._locs.get(key)
        if loc is None:
            loc = self._locs[key] = self._new_loc(*key)
        return loc

    def _new_loc(self, file: str, line: int, col: int) -> FileLineColLoc:
        filename = self._files.get(file)
        if filename is None:
            filename = self._files[file] = StringAttr(file)
        # (_attr's fields one by one, and _int's look-ups inline: a program of 10^5 lines makes
        # as many)
        ints = self._ints
        line_attr = ints.get(line)
        if line_attr is None:
            line_attr = self._int(line)
        col_attr = ints.get(col)
        if col_attr is None:
            col_attr = self._int(col)
        loc = FileLineColLoc.__new__(FileLineColLoc)
        _set(loc, "filename", filename)
        _set(loc, "line", line_attr)
        _set(loc, "column", col_attr)
        return loc

    def symbol(self, name: str) -> SymbolRefAttr:
        """SymbolRefAttr(name)."""
        symbol = self._symbols.get(name)
        if symbol is None:
            symbol = self._symbols[name] = _attr(SymbolRefAttr, root_reference=StringAttr(name),
                                                 nested_references=_NO_REFERENCES)
        return symbol

    def function_type(self, inputs: tuple[Attribute, ...], outputs: tuple[Attribute, ...]) -> FunctionType:
        """FunctionType.from_lists(inputs, outputs)."""
        key = (inputs, outputs)
        ftype = self._function_types.get(key)
        if ftype is None:
            ftype = self._function_types[key] = FunctionType.from_lists(inputs, outputs)
        return ftype

    def _int(self, value: int) -> IntAttr:
        attr = self._ints.get(value)
        if attr is None:
            # IntAttr(value) without verifying that an int is an int: a location makes two.
            attr = self._ints[value] = _data(IntAttr, value)
        return attr


__all__ = ["Attributes", "init_op", "new_block", "new_func", "new_op", "new_region"]
