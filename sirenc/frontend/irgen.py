"""IR generation: typed AST -> `siren` dialect.

Each function instance (one per distinct signature, chosen by type inference)
becomes a ``func.func`` taking its whole parameter pattern as one value; the
main expression becomes ``func.func @main``. Patterns become ``siren.fst`` /
``siren.snd`` chains, multi-argument calls pass a right-nested pair (ARCHITECTURE.md §3.2).
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr, f64, i1
from xdsl.ir import Attribute, Block, Operation, SSAValue

from sirenc import distributions
from sirenc.frontend import ast
from sirenc.frontend import types as T
from sirenc.ir import siren
from sirenc.ir.build import Attributes, new_block, new_func, new_op, new_region
from sirenc.passes.rewriting import append, drop

_BINOPS = {"+": siren.AddOp, "-": siren.SubOp, "*": siren.MulOp, "/": siren.DivOp, "<": siren.LtOp}
_UNBOUND = object()
_OPERATOR_BINOPS = {"add": "+", "sub": "-", "mul": "*", "div": "/", "lt": "<", "eq": "="}
# Expressions whose value irgen makes for them alone (no variable's binding).
_OWN_VALUE = (ast.Const, ast.Neg, ast.BinOp)
_PRIVATE = StringAttr("private")
# The method that builds each kind of expression, by its class.
_EXPR: dict[type, object] = {}


def ir_type(t: T.Type) -> Attribute:
    if isinstance(t, T.TPair):
        return siren.PairType(ir_type(t.fst), ir_type(t.snd))
    if isinstance(t, T.TList):
        return siren.ListType(ir_type(t.elem))
    if isinstance(t, T.TDist):
        return siren.dist_type(t.family)
    if t == T.TBool:
        return i1
    if t == T.TUnit:
        return siren.unit
    if t == T.TString:
        return siren.string
    return f64  # floats, and type variables left unresolved (defaulted)


class _FunctionBuilder:
    def __init__(self, instance: T.Instance, attrs: Attributes, ir_types: dict):
        self.instance = instance
        self.attrs = attrs
        self.types = instance.types
        self.coercions = instance.coercions
        # ir_type of each typechecker type met, shared by the functions: one attribute each,
        # not a new (verified) one per expression.
        self.ir_types = ir_types

    # -- helpers ---------------------------------------------------------------

    def type_of(self, node: ast.Node) -> Attribute:
        return self.ir_type(self.types[id(node)])

    def ir_type(self, t: T.Type) -> Attribute:
        attr = self.ir_types.get(t)
        if attr is None:
            attr = self.ir_types[t] = ir_type(t)
        return attr

    def emit(self, block: Block, op: Operation, node: ast.Node | None = None, span=None) -> SSAValue:
        if span is None and node is not None:
            span = node.span
        if span is not None:
            op.location = self.attrs.loc(span)
        append(op, block)
        for result in op.results:   # (its one result, if any, without SSAValues' __getitem__)
            return result
        return None

    def pack(self, block: Block, values: list[SSAValue], node: ast.Node) -> SSAValue:
        """The single value a call passes: unit, the argument, or nested pairs."""
        if not values:
            return self.emit(block, siren.ConstOp(None), node)
        return siren.pack(lambda op: self.emit(block, op, node), values)

    def unpack(self, block: Block, value: SSAValue, n: int, node: ast.Node) -> list[SSAValue]:
        return siren.unpack(lambda op: self.emit(block, op, node), value, n)

    def args(self, block: Block, node: ast.Call, env: dict, arity: int) -> list[SSAValue]:
        values = [self.expr(block, a, env) for a in node.args]
        if len(values) == arity:
            return values
        return self.unpack(block, self.pack(block, values, node), arity, node)

    # The environment is one dict, changed in place: a binding is added on the way into
    # its scope and undone on the way out (``unbind``), so a chain of n `let`s costs O(n),
    # not n copies of a growing dict.

    def bind(self, block: Block, pattern: ast.Pattern, value: SSAValue, env: dict,
             undo: list) -> None:
        """Bind ``pattern`` to ``value`` in ``env``; what it shadows is pushed on ``undo``."""
        if isinstance(pattern, ast.PVar):
            undo.append((pattern.name, env.get(pattern.name, _UNBOUND)))
            env[pattern.name] = value
        elif isinstance(pattern, ast.PTuple):
            items = pattern.items
            for i, item in enumerate(items):
                if i == len(items) - 1:
                    self.bind(block, item, value, env, undo)
                else:
                    self.bind(block, item, self.emit(block, siren.FstOp(value), pattern), env, undo)
                    value = self.emit(block, siren.SndOp(value), pattern)

    @staticmethod
    def unbind(env: dict, undo: list) -> None:
        for name, old in reversed(undo):
            if old is _UNBOUND:
                del env[name]
            else:
                env[name] = old

    def call(self, block: Block, callee: str, arg: SSAValue, result: Attribute, node) -> SSAValue:
        return self.emit(block, new_op(func.CallOp, [arg], [result], {"callee": self.attrs.symbol(callee)}), node)

    # -- expressions -----------------------------------------------------------

    def expr(self, block: Block, e: ast.Expr, env: dict) -> SSAValue:
        method = _EXPR.get(type(e))
        if method is None:
            method = _EXPR[type(e)] = getattr(_FunctionBuilder, "_" + type(e).__name__)
        value = method(self, block, e, env)
        target = self.coercions.get(id(e))
        if target is not None:
            value = self.convert(block, value, self.types[id(e)], target, e)
        return value

    def convert(self, block: Block, value: SSAValue, source: T.Type, target: T.Type, node) -> SSAValue:
        """The value converted as the original Siren would (``coercions``): a bool to 1./0.,
        a float to its truth (not 0.); pairs and lists componentwise."""
        if source == target:
            return value
        if source == T.TBool and target == T.TFloat:
            return self.emit(block, siren.BoolToFloatOp(value), node)
        if source == T.TFloat and target == T.TBool:
            return self.emit(block, siren.FloatToBoolOp(value), node)
        if isinstance(source, T.TPair) and isinstance(target, T.TPair):
            fst = self.convert(block, self.emit(block, siren.FstOp(value), node), source.fst, target.fst, node)
            snd = self.convert(block, self.emit(block, siren.SndOp(value), node), source.snd, target.snd, node)
            return self.emit(block, siren.PairOp(fst, snd), node)
        if isinstance(source, T.TList) and isinstance(target, T.TList):
            body = new_block((self.ir_type(source.elem),))
            item = self.convert(body, body.args[0], source.elem, target.elem, node)
            self.emit(body, siren.YieldOp(item), node)
            return self.emit(block, siren.MapOp(value, self.ir_type(target), body), node)
        raise AssertionError(f"no conversion from {source} to {target}")


    def _Const(self, block, e: ast.Const, env):
        value = e.value
        if type(value) is float:
            value = self.attrs.float(value)
        return self.emit(block, siren.ConstOp(value), e)

    def _Var(self, block, e: ast.Var, env):
        return env[e.name]

    def _Tuple(self, block, e: ast.Tuple, env):
        return self.pack(block, [self.expr(block, i, env) for i in e.items], e)

    def _ListLit(self, block, e: ast.ListLit, env):
        items = [self.expr(block, i, env) for i in e.items]
        lst = self.emit(block, siren.NilOp(self.type_of(e)), e)
        # The conses share the literal's location: one attribute, not one per element of
        # a literal that may have 10^5 (and lower-siren-to-smc folds a constant one by it).
        location = lst.owner.location
        for item in reversed(items):
            cons = siren.ConsOp(item, lst)
            cons.location = location
            lst = self.emit(block, cons)
        return lst

    def _Let(self, block, e: ast.Let, env):
        # A chain of lets (`let x0 = ... in let x1 = ... in ...`) is taken in a loop, not a
        # recursion per let (two frames each, 10^5 deep for a 10^5-line chain): the values and
        # bindings on the way in, then on the way out what each let's return does, innermost
        # first (unbind, drop, and the conversion `expr` makes of an inner let's value).
        chain = []
        while True:
            value = self.expr(block, e.value, env)
            undo: list = []
            self.bind(block, e.pattern, value, env, undo)
            chain.append((e, value, undo))
            if type(e.body) is not ast.Let:
                break
            e = e.body
        result = self.expr(block, e.body, env)
        for i in range(len(chain) - 1, -1, -1):
            let, value, undo = chain[i]
            self.unbind(env, undo)
            # A constant made for this binding alone that every use folded away (`let x0 = 1. in
            # let x1 = x0 + 1. in ...`) is not kept: nothing outside the body can name it.
            if type(let.value) in _OWN_VALUE and value is not result and value.first_use is None \
                    and isinstance(value.owner, siren.ConstOp):
                drop(value.owner)
            if i:
                target = self.coercions.get(id(let))
                if target is not None:
                    result = self.convert(block, result, self.types[id(let)], target, let)
        return result

    def _BinOp(self, block, e: ast.BinOp, env):
        # A left-nested chain (`x + x + ... + x`) is taken in a loop from its innermost operator
        # out, not a recursion per operator; each inner operator's value gets the conversion
        # `expr` would make of it.
        chain = [e]
        while type(chain[-1].left) is ast.BinOp:
            chain.append(chain[-1].left)
        inner = chain.pop()
        value = self.binary(block, inner, self.expr(block, inner.left, env), env)
        while chain:
            target = self.coercions.get(id(inner))
            if target is not None:
                value = self.convert(block, value, self.types[id(inner)], target, inner)
            inner = chain.pop()
            value = self.binary(block, inner, value, env)
        return value

    def binary(self, block, e: ast.BinOp, lhs: SSAValue, env) -> SSAValue:
        """The value of `e` whose left operand's value is `lhs`."""
        op_type = _BINOPS.get(e.op)
        foldable = op_type in siren.FOLDS
        if foldable:
            folded = self.fold_literal(block, op_type, lhs, e)
            if folded is not None:
                return folded
        rhs = self.expr(block, e.right, env)
        if foldable:
            folded = self.fold(block, op_type, [(lhs, e.left), (rhs, e.right)], e)
            if folded is not None:
                return folded
        return self.binop(block, e.op, lhs, rhs, e)

    def fold_literal(self, block: Block, op_type: type, lhs: SSAValue, node: ast.BinOp) -> SSAValue | None:
        """What `fold` makes of `lhs <op> 1.5`, a float literal on the right (`let x1 = x0 + 1. in`,
        `1. + 1. + ...`), without the literal's constant first (which `fold` would take, give the
        value and move to the operator's location): the same op at the same place, one op and one
        location fewer made."""
        right = node.right
        if type(right) is not ast.Const or type(right.value) is not float or id(right) in self.coercions:
            return None
        left = node.left
        number = siren.float_constant(lhs)
        if number is None or (type(left) not in _OWN_VALUE and type(left) is not ast.Var):
            return None
        result = siren.folded(op_type, [number, right.value])
        if result is None:
            return None
        if type(left) is not ast.Var:
            drop(lhs.owner)
        return self.emit(block, siren.ConstOp(self.attrs.float(result)), node)

    def binop(self, block, op: str, lhs, rhs, node):
        if op == "=":
            return self.emit(block, siren.EqOp(lhs, rhs), node)
        return self.emit(block, _BINOPS[op](lhs, rhs), node)

    def _Neg(self, block, e: ast.Neg, env):
        # A chain of minus signs (`- - ... - x`) in a loop from the innermost out, as _BinOp.
        chain = [e]
        while type(chain[-1].operand) is ast.Neg:
            chain.append(chain[-1].operand)
        inner = chain.pop()
        value = self.negation(block, inner, self.expr(block, inner.operand, env))
        while chain:
            target = self.coercions.get(id(inner))
            if target is not None:
                value = self.convert(block, value, self.types[id(inner)], target, inner)
            inner = chain.pop()
            value = self.negation(block, inner, value)
        return value

    def negation(self, block, e: ast.Neg, operand: SSAValue) -> SSAValue:
        folded = self.fold(block, siren.NegOp, [(operand, e.operand)], e)
        if folded is not None:
            return folded
        return self.emit(block, siren.NegOp(operand), e)

    def fold(self, block: Block, op_type: type, operands: list[tuple[SSAValue, ast.Expr]], node) -> SSAValue | None:
        """The constant an op of `op_type` makes of operands that are float constants of their own
        (``siren.folded``) or a variable's, in place of the ops made for it; None when one is not.
        A chain such as `- - - 1.`, `1. + 2. + 3.` or `let x1 = x0 + 1. in ...` is then one constant
        per value, not an op per operator through every stage (issue 11). What else reaches a
        constant (a call's result, a `let` expression's) is left to the fold-constants pass."""
        values = []
        for value, source in operands:
            number = siren.float_constant(value)
            if (type(source) not in _OWN_VALUE and type(source) is not ast.Var) or number is None:
                return None
            values.append(number)
        result = siren.folded(op_type, values)
        if result is None:
            return None
        # A variable's constant is its binding's, which other uses may share (_Let drops it once
        # none is left); the others were made for this operand alone, the last one made (at the end
        # of the block) takes the value and the others go.
        own = [value.owner for value, source in operands if type(source) is not ast.Var]
        if not own:
            return self.emit(block, siren.ConstOp(self.attrs.float(result)), node)
        const = own.pop()
        for op in own:
            drop(op)
        const.properties["value"] = self.attrs.float(result)
        const.location = self.attrs.loc(node.span)
        return const.result

    def _Call(self, block, e: ast.Call, env):
        kind = e.kind
        if kind == "operator":
            return self.operator(block, e, env)
        if kind == "distribution":
            arity = distributions.family(e.name).arity
            return self.emit(block, siren.DistOp(e.name, self.args(block, e, env, arity)), e)
        if kind == "library":
            return self.library(block, e, env)
        arg = self.pack(block, [self.expr(block, a, env) for a in e.args], e)
        return self.call(block, self.instance.targets[id(e)], arg, self.type_of(e), e)

    def operator(self, block, e: ast.Call, env):
        name = e.name
        if name in _OPERATOR_BINOPS:
            lhs, rhs = self.args(block, e, env, 2)
            return self.binop(block, _OPERATOR_BINOPS[name], lhs, rhs, e)
        if name == "pair":
            first, second = self.args(block, e, env, 2)
            return self.emit(block, siren.PairOp(first, second), e)
        if name == "cons":
            head, tail = self.args(block, e, env, 2)
            return self.emit(block, siren.ConsOp(head, tail), e)
        assert name == "lst"
        nil = self.emit(block, siren.NilOp(self.type_of(e)), e)
        values = [self.expr(block, a, env) for a in e.args]
        if not values or values[0].type == siren.unit:
            return nil
        return self.emit(block, siren.ConsOp(self.pack(block, values, e), nil), e)

    def library(self, block, e: ast.Call, env):
        name = f"{e.module}.{e.name}"
        if name == "List.map":
            lst = self.expr(block, e.args[1], env)
            elem_type = lst.type.element
            body = new_block((elem_type,))
            out_type = self.type_of(e)
            mapped = self.call(body, self.instance.targets[id(e)], body.args[0], out_type.element, e)
            self.emit(body, siren.YieldOp(mapped), e)
            return self.emit(block, siren.MapOp(lst, out_type, body), e)
        if name == "List.range":
            lo, hi = self.args(block, e, env, 2)
            return self.emit(block, siren.RangeOp(lo, hi), e)
        (arg,) = self.args(block, e, env, 1)
        op = {
            "List.hd": siren.HdOp, "List.tl": siren.TlOp, "List.len": siren.LenOp,
            "List.rev": siren.RevOp, "File.read": siren.FileReadOp,
        }[name]
        return self.emit(block, op(arg), e)

    def _If(self, block, e: ast.If, env):
        cond = self.expr(block, e.cond, env)
        branches = []
        for branch in (e.then, e.else_):
            inner = new_block()
            self.emit(inner, siren.YieldOp(self.expr(inner, branch, env)), branch)
            branches.append(inner)
        return self.emit(block, siren.IfOp(cond, self.type_of(e), *branches), e)

    def _Fold(self, block, e: ast.Fold, env):
        lst = self.expr(block, e.lst, env)
        init = self.expr(block, e.init, env)
        body = new_block((lst.type.element, init.type))
        arg = self.emit(body, siren.PairOp(body.args[0], body.args[1]), e)
        converted = self.instance.fold_results.get(id(e))
        if converted is None:
            acc = self.call(body, self.instance.targets[id(e)], arg, init.type, e)
        else:  # the function returns bools where the accumulator holds numbers
            source, target = converted
            acc = self.call(body, self.instance.targets[id(e)], arg, self.ir_type(source), e)
            acc = self.convert(body, acc, source, target, e)
        self.emit(body, siren.YieldOp(acc), e)
        return self.emit(block, siren.FoldOp(lst, init, body), e)

    def _Assume(self, block, e: ast.Assume, env):
        dist = self.expr(block, e.dist, env)
        value_type = f64
        if isinstance(dist.owner, siren.DistOp):
            value_type = siren.draw_type(dist.type, [p.type for p in dist.owner.params])
        elif distributions.family(dist.type.family.data).value == distributions.BOOL:
            value_type = i1
        span = e.annotation_span or e.name_span
        x = self.emit(block, siren.AssumeOp(dist, e.name, e.annotation, value_type), span=span)
        undo = [(e.name, env.get(e.name, _UNBOUND))]
        env[e.name] = x
        result = self.expr(block, e.body, env)
        self.unbind(env, undo)
        return result

    def _Observe(self, block, e: ast.Observe, env):
        dist = self.expr(block, e.dist, env)
        value = self.expr(block, e.value, env)
        return self.emit(block, siren.ObserveOp(dist, value), e)

    def _Resample(self, block, e: ast.Resample, env):
        return self.emit(block, siren.ResampleOp(), e)

    # -- functions -------------------------------------------------------------

    def build(self) -> func.FuncOp:
        inst = self.instance
        if inst.func is None:
            block = new_block()
            env: dict = {}
            main = self.expr(block, self._main_expr, env)
            append(new_op(func.ReturnOp, [main], []), block)
            return new_func("main", self.attrs.function_type((), (main.type,)), new_region(block))
        param = self.ir_type(inst.param)
        block = new_block((param,))
        env: dict = {}
        self.bind(block, inst.func.params, block.args[0], env, [])
        result = self.expr(block, inst.func.body, env)
        ret = new_op(func.ReturnOp, [result], [])
        ret.location = self.attrs.loc(inst.func.body.span)
        append(ret, block)
        f = new_func(inst.name, self.attrs.function_type((param,), (result.type,)), new_region(block), _PRIVATE)
        f.location = self.attrs.loc(inst.func.name_span)
        return f


def irgen(typed: T.TypedProgram) -> ModuleOp:
    attrs = Attributes()
    ir_types: dict = {}
    block = new_block()
    for inst in typed.functions.values():
        append(_FunctionBuilder(inst, attrs, ir_types).build(), block)
    main_builder = _FunctionBuilder(typed.main, attrs, ir_types)
    main_builder._main_expr = typed.program.main
    append(main_builder.build(), block)
    module = ModuleOp(new_region(block))
    return module
