"""LLVM IR text of an ``llvm``-dialect module, written directly (issue 11).

xDSL's ``convert_module`` builds an llvmlite object per op and llvmlite then prints them: about
25 µs an op, the largest part of the back end for a program of 10^5 ops. This module prints the
ops sirenc's lowering makes straight to text (a few µs an op); anything else is refused.

A local value is named as llvmlite named it under ``convert_module`` -- one counter per function
over its arguments, its return value, its blocks, the phis of its blocks' arguments and then every
instruction in order, void ones included (``%.1``, ``%.2``, ...) -- so that LLVM parses the same
module as before, names included, and ``--emit=llvm`` prints the same text.

    text = module_text(module, linkage)     # .body, .intrinsics, .sizes
    text = module_text(module, linkage, {"f": ("f.copy", {"g": "h"})})   # also f's copy calling h for g
"""

from __future__ import annotations

import struct
from typing import NamedTuple

from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr, Float32Type, Float64Type, FloatAttr, IntegerAttr, IntegerType, ModuleOp, StringAttr,
)

from sirenc.passes.to_llvm.resume_abi import COLD_CALL

_BINARY = {
    "llvm.add": "add", "llvm.sub": "sub", "llvm.mul": "mul", "llvm.and": "and", "llvm.or": "or",
    "llvm.xor": "xor", "llvm.shl": "shl", "llvm.lshr": "lshr", "llvm.ashr": "ashr",
    "llvm.udiv": "udiv", "llvm.sdiv": "sdiv", "llvm.urem": "urem", "llvm.srem": "srem",
    "llvm.fadd": "fadd", "llvm.fsub": "fsub", "llvm.fmul": "fmul", "llvm.fdiv": "fdiv", "llvm.frem": "frem",
}
_CASTS = {"llvm.bitcast": "bitcast", "llvm.zext": "zext", "llvm.sext": "sext", "llvm.trunc": "trunc",
          "llvm.sitofp": "sitofp", "llvm.fptosi": "fptosi", "llvm.ptrtoint": "ptrtoint", "llvm.inttoptr": "inttoptr"}
_UNARY_INTRINSICS = {"llvm.intr.log": "llvm.log", "llvm.intr.sqrt": "llvm.sqrt", "llvm.intr.exp": "llvm.exp",
                     "llvm.intr.fabs": "llvm.fabs", "llvm.intr.floor": "llvm.floor", "llvm.intr.ceil": "llvm.ceil"}
_ICMP = tuple(str(f) for f in llvm.ICmpPredicateFlag)
_FCMP = tuple(str(f) for f in llvm.FCmpPredicateFlag)


class _Types(dict):
    """LLVM spelling of xDSL types, memoised: the same few type objects recur on every op."""

    def __missing__(self, t):
        if isinstance(t, IntegerType):
            text = f"i{t.width.data}"
        elif isinstance(t, Float64Type):
            text = "double"
        elif isinstance(t, Float32Type):
            text = "float"
        elif isinstance(t, llvm.LLVMPointerType):
            text = "ptr"
        elif isinstance(t, llvm.LLVMVoidType):
            text = "void"
        elif isinstance(t, llvm.LLVMArrayType):
            text = f"[{t.size.data} x {self[t.type]}]"
        elif isinstance(t, llvm.LLVMStructType):
            text = "{" + ", ".join(self[e] for e in t.types.data) + "}"
        else:
            raise ValueError(f"llvm text: no LLVM spelling for type {t}")
        self[t] = text
        return text


def _double(x: float) -> str:
    # LLVM's exact spelling of a double: its bits in hexadecimal.
    return "0x%016X" % struct.unpack("<Q", struct.pack("<d", x))[0]


def _scalar(t, type_text: str, value) -> str:
    if type_text == "double":
        return _double(value)
    if type_text == "float":
        return _double(struct.unpack("<f", struct.pack("<f", value))[0])
    if type_text == "i1":
        return "true" if value & 1 else "false"
    return str(value)


def _flags(attr) -> str:
    if isinstance(attr, IntegerAttr):     # overflow flags, as a bit set
        value = attr.value.data
        return "".join(f" {f}" for bit, f in ((2, "nuw"), (1, "nsw")) if value & bit)
    return "".join(f" {f.value}" for f in attr.data)


def _symbol(name: str) -> str:
    return '@"' + name.replace("\\", "\\5C").replace('"', "\\22") + '"'


class _Function:
    """One function definition's text. Values are keyed by ``id``: xDSL hashes an SSA value in
    Python, and every one of them lives as long as the module does."""

    def __init__(self, fn: llvm.FuncOp, types: _Types, intrinsics: dict[str, str], globals_: dict[str, str],
                 symbol: str | None = None, callees: dict[str, str] | None = None):
        self.types = types
        self.callees = callees or {}   # callee -> the one this text calls instead
        self.intrinsics = intrinsics
        self.globals = globals_
        self.values: dict[int, str] = {}   # SSA value -> its operand text, without the type
        # A pointer llvmlite types by what it points to (a global's address, a GEP of one) -> that
        # type: the converter cast such a pointer before a GEP of another element type.
        self.typed_pointers: dict[int, str] = {}
        self.constants: dict[int, str] = {}   # constant attribute -> its text
        self.flags: dict[int, str] = {}       # flag attribute -> its text
        self.count = 0
        self.size = 0                 # instructions, phis included (llvmlite's count)
        blocks = list(fn.body.blocks)
        ftype = fn.function_type
        args = [self.name() for _ in ftype.inputs.data]
        self.name()                   # the return value's name
        labels = [self.name() for _ in blocks]
        self.label = {id(b): l for b, l in zip(blocks, labels)}
        for arg, name in zip(blocks[0].args, args):
            self.values[id(arg)] = name
        self.phis: dict[int, list] = {}     # block argument -> [type, [incoming text]]
        for block in blocks[1:]:
            for arg in block.args:
                name = self.name()
                self.values[id(arg)] = name
                self.phis[id(arg)] = [types[arg.type], []]
        self.size += len(self.phis)
        bodies = [self.block(b) for b in blocks]
        params = ", ".join(f"{types[t]} {a}" for t, a in zip(ftype.inputs.data, args))
        lines = [f"define {types[ftype.output]} {_symbol(symbol or fn.sym_name.data)}({params}) {{"]
        for i, (block, label, body) in enumerate(zip(blocks, labels, bodies)):
            lines.append(label[1:] + ":")
            for arg in block.args if i else ():
                t, incoming = self.phis[id(arg)]
                lines.append(f"  {self.values[id(arg)]} = phi {t} " + ", ".join(incoming))
            lines.append(body)
        lines.append("}")
        self.text = "\n".join(lines)

    def name(self) -> str:
        self.count += 1
        return f"%.{self.count}"

    def typed(self, v) -> str:
        return f"{self.types[v.type]} {self.values[id(v)]}"

    def flag_text(self, op, name: str) -> str:
        attr = op.properties.get(name)
        if attr is None:
            return ""
        text = self.flags.get(id(attr))
        if text is None:
            text = self.flags[id(attr)] = _flags(attr)
        return text

    def constant(self, op) -> str:
        value = op.properties["value"]
        text = self.constants.get(id(value))
        if text is None:
            if type(value) not in (IntegerAttr, FloatAttr):
                raise ValueError(f"llvm text: unsupported constant {value}")
            t = op.results[0].type
            text = self.constants[id(value)] = _scalar(t, self.types[t], value.value.data)
        return text

    def incoming(self, block, target, values) -> None:
        for arg, v in zip(target.args, values):
            self.phis[id(arg)][1].append(f"[ {self.values[id(v)]}, {self.label[id(block)]} ]")

    def block(self, block) -> str:
        out = []
        emit = out.append
        values, types, typed = self.values, self.types, self.typed_pointers
        op = block._first_op
        while op is not None:
            kind = op.name
            results = tuple(op.results)
            if kind == "llvm.mlir.constant":
                values[id(results[0])] = self.constant(op)
                op = op._next_op
                continue
            if kind == "llvm.mlir.addressof":
                symbol = op.properties["global_name"].root_reference.data
                values[id(results[0])] = _symbol(symbol)
                typed[id(results[0])] = self.globals[symbol]
                op = op._next_op
                continue
            self.size += 1
            name = self.name()
            operands = op._operands
            binary = _BINARY.get(kind)
            if binary is not None:
                a, b = operands
                flags = self.flag_text(op, "fastmathFlags" if binary[0] == "f" else "overflowFlags")
                emit(f"  {name} = {binary}{flags} {types[a.type]} {values[id(a)]}, {values[id(b)]}")
            elif kind == "llvm.getelementptr":
                base, elem = operands[0], types[op.properties["elem_type"]]
                pointee = typed.get(id(base))
                base_text = values[id(base)]
                if pointee is not None:
                    if pointee != elem:       # llvmlite casts a typed pointer to the GEP's
                        emit(f"  {name} = bitcast ptr {base_text} to ptr")
                        base_text, name = name, self.name()
                        self.size += 1
                    typed[id(results[0])] = elem
                ssa = iter(operands[1:])
                indices = "".join(
                    f", {self.typed(next(ssa))}" if i == llvm.GEP_USE_SSA_VAL else f", i32 {i}"
                    for i in op.properties["rawConstantIndices"].iter_values())
                inbounds = " inbounds" if "inbounds" in op.properties else ""
                emit(f"  {name} = getelementptr{inbounds} {elem}, ptr {base_text}{indices}")
            elif kind == "llvm.load":
                align = op.properties.get("alignment")
                emit(f"  {name} = load {types[results[0].type]}, {self.typed(operands[0])}"
                     + (f", align {align.value.data}" if align is not None else ""))
            elif kind == "llvm.store":
                align = op.properties.get("alignment")
                emit(f"  store {self.typed(operands[0])}, {self.typed(operands[1])}"
                     + (f", align {align.value.data}" if align is not None else ""))
            elif kind in _CASTS:
                flags = self.flag_text(op, "overflowFlags") + (" nneg" if "non_neg" in op.properties else "")
                emit(f"  {name} = {_CASTS[kind]}{flags} {self.typed(operands[0])} to {types[results[0].type]}")
            elif kind == "llvm.call":
                self.call(op, results, name, emit)
            elif kind == "llvm.icmp":
                a, b = operands
                emit(f"  {name} = icmp {_ICMP[op.properties['predicate'].value.data]} "
                     f"{types[a.type]} {values[id(a)]}, {values[id(b)]}")
            elif kind == "llvm.fcmp":
                a, b = operands
                emit(f"  {name} = fcmp {_FCMP[op.properties['predicate'].value.data]} "
                     f"{types[a.type]} {values[id(a)]}, {values[id(b)]}")
            elif kind == "llvm.select":
                c, a, b = operands
                if id(a) in typed:
                    typed[id(results[0])] = typed[id(a)]
                emit(f"  {name} = select {self.typed(c)}, {self.typed(a)}, {self.typed(b)}")
            elif kind == "llvm.fneg":
                emit(f"  {name} = fneg{self.flag_text(op, 'fastmathFlags')} {self.typed(operands[0])}")
            elif kind in _UNARY_INTRINSICS:
                x = operands[0]
                t = types[x.type]
                callee = f"{_UNARY_INTRINSICS[kind]}.{'f64' if t == 'double' else 'f32'}"
                self.intrinsics.setdefault(callee, f"declare {t} {_symbol(callee)}({t})")
                emit(f"  {name} = call {t} {_symbol(callee)}({t} {values[id(x)]})")
            elif kind == "llvm.br":
                target = op._successors[0]
                self.incoming(block, target, operands)
                emit(f"  br label {self.label[id(target)]}")
            elif kind == "llvm.cond_br":
                then, other = op._successors
                n_then = op.properties["operandSegmentSizes"].get_values()[1]
                self.incoming(block, then, operands[1:1 + n_then])
                self.incoming(block, other, operands[1 + n_then:])
                emit(f"  br {self.typed(operands[0])}, label {self.label[id(then)]}, "
                     f"label {self.label[id(other)]}")
            elif kind == "llvm.return":
                emit(f"  ret {self.typed(operands[0])}" if operands else "  ret void")
            elif kind == "llvm.unreachable":
                emit("  unreachable")
            else:
                raise ValueError(f"llvm text: no translation for {kind}")
            if results:
                values[id(results[0])] = name
            op = op._next_op
        return "\n".join(out)

    def call(self, op, results, name: str, emit) -> None:
        callee = op.properties.get("callee")
        if callee is None or op.op_bundle_operands:
            raise ValueError("llvm text: only direct calls without operand bundles")
        ret = self.types[results[0].type] if results else "void"
        tail = "tail " if op.properties["TailCallKind"].data != "none" else ""
        cconv = op.properties["CConv"].cconv_name
        cconv = "" if cconv == "ccc" else cconv + " "
        fast = self.flag_text(op, "fastmathFlags") if ret in ("double", "float") else ""
        args = ", ".join(self.typed(a) for a in op._operands)
        target = callee.string_value()
        cold = " cold" if COLD_CALL in op.attributes else ""
        call = f"{tail}call{fast} {cconv}{ret} {_symbol(self.callees.get(target, target))}({args}){cold}"
        emit(f"  {name} = {call}" if results else f"  {call}")


def _declaration(fn: llvm.FuncOp, types: _Types) -> str:
    if fn.arg_attrs is not None and any(d.data for d in fn.arg_attrs.data):
        raise ValueError("llvm text: argument attributes are not supported")
    ftype = fn.function_type
    params = [types[t] for t in ftype.inputs.data] + (["..."] if ftype.is_variadic else [])
    return f"declare {types[ftype.output]} {_symbol(fn.sym_name.data)}({', '.join(params)})"


def _global(op: llvm.GlobalOp, types: _Types, linkage: str) -> str:
    t = types[op.global_type]
    kind = "constant" if op.constant is not None else "global"
    value = op.value
    if value is None:
        init = ""
    elif isinstance(value, StringAttr):
        raw = value.data.encode("utf-8")
        t = f"[{len(raw)} x i8]"
        init = ' c"' + "".join(chr(c) if 32 <= c < 127 and c not in (34, 92) else f"\\{c:02X}" for c in raw) + '"'
    elif isinstance(value, DenseIntOrFPElementsAttr) and isinstance(op.global_type, llvm.LLVMArrayType):
        elem = op.global_type.type
        et = types[elem]
        init = " [" + ", ".join(f"{et} {_scalar(elem, et, v)}" for v in value.get_values()) + "]"
    else:
        raise ValueError(f"llvm text: unsupported initializer of @{op.sym_name.data}")
    space = op.addr_space.value.data
    where = f" addrspace({space})" if space else ""
    return f"{_symbol(op.sym_name.data)} = {linkage}{where} {kind} {t}{init}"


class ModuleText(NamedTuple):
    body: str                 # the globals and the functions, in the module's order
    intrinsics: str           # declarations of the intrinsics they call, in order of first use
    sizes: dict[str, int]     # each definition's size in instructions


def module_text(module: ModuleOp, linkage, copies: dict[str, tuple[str, dict[str, str]]] | None = None,
                copy_below: int | None = None) -> ModuleText:
    """The text of ``module``. ``linkage(declared)`` gives a definition's linkage from the one its op
    declares.  ``copies`` maps a function to the name of an internal copy of it that follows it, and
    the callees that copy calls in place of the original's; with ``copy_below``, only a function of
    fewer instructions gets its copy (``sizes`` lists the copies made)."""
    copies = copies or {}
    types = _Types()
    intrinsics: dict[str, str] = {}
    globals_, functions, sizes = [], [], {}
    global_types = {}
    for op in module.ops:
        if isinstance(op, llvm.GlobalOp):
            globals_.append(_global(op, types, op.linkage.linkage.data))
            global_types[op.sym_name.data] = types[op.global_type]
        elif isinstance(op, llvm.FuncOp):
            if op.body.blocks:
                f = _Function(op, types, intrinsics, global_types)
                functions.append(f.text.replace("define ", f"define {linkage(op.linkage.linkage.data)} ", 1))
                sizes[op.sym_name.data] = f.size
                if op.sym_name.data in copies and (copy_below is None or f.size < copy_below):
                    name, callees = copies[op.sym_name.data]
                    copy = _Function(op, types, intrinsics, global_types, name, callees)
                    functions.append(copy.text.replace("define ", "define internal ", 1))
                    sizes[name] = copy.size
            else:
                functions.append(_declaration(op, types))
        else:
            raise ValueError(f"llvm text: a module holds llvm.func and llvm.mlir.global ops, not {op.name}")
    return ModuleText("\n\n".join(globals_ + functions), "\n\n".join(intrinsics.values()), sizes)
