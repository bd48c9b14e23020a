"""Hypothesis strategies for fuzzing sirenc: Siren programs, their mutations, CSV data files.

* ``programs(ill=...)``: grammar- and type-aware programs: top-level functions (called, folded,
  mapped), ``let`` with name/tuple/unit patterns, ``if``, operators and their named forms,
  lists and the ``List.*`` library, every distribution with valid or invalid parameters (or
  arbitrary expressions as parameters), random variables (with ``sample``/``symbolic``
  annotations), ``observe``, ``resample()`` and ``File.read("data.csv")`` of the CSV that
  ``DATA_CSV`` holds. With ``ill=True`` one place of the program is made wrong: an expression
  of another type, an unbound or unknown name, a wrong number of arguments, a recursive call,
  a pattern of the wrong shape...
* ``mutated(source)``: byte/token-level mutations of a program: tokens deleted, duplicated,
  swapped or replaced, random characters inserted, truncation, and (``non_utf8=True``) bytes
  that are not UTF-8.
* ``csv_files()`` and ``mutated_csv()``: data files for the fixed streamed model ``DATA_MODEL``.
* ``command_lines()``: the options of ``sirenc run`` / ``check`` / compile around a program.

Programs are built from ``draw`` calls only, so hypothesis shrinks them and ``derandomize``
makes a run repeatable.
"""

from __future__ import annotations

import re

from hypothesis import strategies as st

F, B, U = "float", "bool", "unit"


def Pair(a, b):
    return ("pair", a, b)


def List(a):
    return ("list", a)


ROWS = List(List(F))
# The types a `let` binds or a function takes/returns (lists of lists only come from File.read).
VALUE_TYPES = [F, F, F, B, U, Pair(F, F), Pair(F, B), List(F), List(B), Pair(F, List(F))]
RESULT_TYPES = [F, F, B, U, Pair(F, F), Pair(F, B), List(F), Pair(F, List(F)), List(B), ROWS]

DATA_CSV = "t,y,z\n0,0.5,1\n1,1.2,0\n2,0.8,1\n3,-0.3,0\n"
DATA_ROWS = 4

FLOAT_LITERALS = ["0.", "1.", "2.", "3", "0.5", ".5", "1e-3", "2.5E+2", "10.", "-1.", "-2.5", "0.25",
                  "1e300", "1e-300", "7"]
NAME_POOL = ["x", "y", "z", "a", "b", "_", "_t", "x1", "acc", "row", "w_2"]


def show_type(t) -> str:
    if isinstance(t, str):
        return t
    if t[0] == "pair":
        return f"{show_type(t[1])} * {show_type(t[2])}"
    return f"list({show_type(t[1])})"


class Gen:
    """Builds one program from hypothesis ``draw`` calls."""

    def __init__(self, draw, ill: bool, max_depth: int, huge: bool = True):
        self.draw = draw
        self.huge = huge
        self.ill = ill
        self.injected = False
        self.max_depth = max_depth
        self.counter = 0
        self.funcs = []        # (name, param type, result type)

    # ---- choices ----------------------------------------------------------------------------
    def pick(self, options):
        return self.draw(st.sampled_from(options))

    def int(self, lo, hi):
        return self.draw(st.integers(lo, hi))

    def chance(self, n) -> bool:
        """True with probability about 1/n."""
        return self.draw(st.integers(0, n - 1)) == 0

    def fresh(self) -> str:
        self.counter += 1
        if self.chance(6):
            return self.pick(NAME_POOL)
        return f"v{self.counter}"

    # ---- literals and atoms -----------------------------------------------------------------
    def float_lit(self) -> str:
        return self.pick(FLOAT_LITERALS)

    def atom(self, ty, env) -> str:
        names = [n for n, t in env.items() if t == ty]
        if names and self.chance(2):
            return self.pick(names)
        if ty == F:
            return self.float_lit()
        if ty == B:
            return self.pick(["true", "false"])
        if ty == U:
            return "()"
        if ty[0] == "pair":
            return f"({self.atom(ty[1], env)}, {self.atom(ty[2], env)})"
        if ty == ROWS:
            return 'File.read("data.csv")'
        if self.chance(3):
            return self.pick(["[]", "nil", "lst()"])
        return "[" + ", ".join(self.atom(ty[1], env) for _ in range(self.int(1, 3))) + "]"

    # ---- expressions ------------------------------------------------------------------------
    def expr(self, ty, env, depth, tail: bool = False) -> str:
        """An expression of type ``ty``; parenthesised where it is a ``let``/``if`` that would
        reach too far right, unless it is in ``tail`` position (a ``let`` body, a function body)."""
        text = self._expr(ty, env, depth)
        if not tail and (text.startswith(("let ", "if ", "-")) or "\n" in text):
            return f"({text})"
        return text

    def _expr(self, ty, env, depth) -> str:
        if self.ill and not self.injected and self.chance(12):
            self.injected = True
            return self.mistake(ty, env, depth)
        if depth <= 0:
            return self.atom(ty, env)
        d = depth - 1
        forms = ["atom", "let", "let", "draw", "observe", "resample", "if"]
        forms += ["call"] * bool(self.funcs_returning(ty))
        if ty == F:
            forms += ["arith", "arith", "named", "neg", "hd", "len", "fold", "data", "dist_var"]
        elif ty == B:
            forms += ["cmp", "cmp", "hd", "dist_var"]
        elif ty != U and ty[0] == "pair":
            forms += ["tuple", "tuple"]
        elif ty != U and ty[0] == "list":
            forms += ["lit", "cons", "tl", "rev", "hd"]
            if ty == List(F):
                forms += ["range", "map", "row"]
        form = self.pick(forms)
        if form == "atom":
            return self.atom(ty, env)
        if form == "let":
            vt = self.pick(VALUE_TYPES)
            value = self.expr(vt, env, d)
            pat, binds = self.pattern(vt)
            return f"let {pat} = {value} in{self.comment()}\n{self.expr(ty, {**env, **binds}, d, True)}"
        if form == "draw":
            vt = self.pick([F, F, B])
            name = self.fresh()
            note = self.pick(["", "", "", "sample "] + ["symbolic "] * self.chance(6))
            if self.chance(4):   # a distribution bound to a name first
                dn = self.fresh()
                return (f"let {dn} = {self.dist(vt, env, d)} in\nlet {note}{name} <- {dn} in\n"
                        f"{self.expr(ty, {**env, name: vt}, d, True)}")
            return f"let {note}{name} <- {self.dist(vt, env, d)} in\n{self.expr(ty, {**env, name: vt}, d, True)}"
        if form == "observe":
            vt = self.pick([F, F, B])
            value = self.observed(vt, env, d)
            obs = f"observe({self.dist(vt, env, d)}, {value})"
            if self.chance(4):
                return f"let _ = {obs} in\n{self.expr(ty, env, d, True)}"
            return f"let () = {obs} in\n{self.expr(ty, env, d, True)}"
        if form == "resample":
            return f"let () = resample() in\n{self.expr(ty, env, d, True)}"
        if form == "if":
            return (f"if {self.expr(B, env, d)} then {self.expr(ty, env, d)} "
                    f"else {self.expr(ty, env, d)}")
        if form == "call":
            name, pt, _ = self.pick(self.funcs_returning(ty))
            arg = self.expr(pt, env, d)
            if pt == U:
                return f"{name}()"
            if pt != U and not isinstance(pt, str) and pt[0] == "pair" and self.chance(2):
                return f"{name}({self.expr(pt[1], env, d)}, {self.expr(pt[2], env, d)})"
            return f"{name}({arg})"
        if form == "arith":
            op = self.pick(["+", "-", "*", "/"])
            return f"({self.expr(F, env, d)} {op} {self.expr(F, env, d)})"
        if form == "named":
            op = self.pick(["add", "sub", "mul", "div"])
            return f"{op}({self.expr(F, env, d)}, {self.expr(F, env, d)})"
        if form == "neg":
            a = self.atom(F, env)
            return f"-({a})" if a.startswith("-") else f"-{a}"
        if form == "hd":
            return f"List.hd({self.nonempty_list(ty, env, d)})"
        if form == "len":
            return f"List.len({self.expr(self.pick([List(F), List(B), ROWS]), env, d)})"
        if form == "fold":
            folds = [f for f in self.funcs if f[1] == Pair(F, F) and f[2] == F]
            if folds:
                name = self.pick(folds)[0]
                xs = self.pick([self.expr(List(F), env, d), f'List.map({self.row_fn()}, File.read("data.csv"))'])
                return f"fold({name}, {xs}, {self.expr(F, env, d)})"
            return self.atom(F, env)
        if form == "data":
            return 'List.hd(List.hd(File.read("data.csv")))'
        if form == "dist_var":
            vt = ty
            name = self.fresh()
            return f"let {name} <- {self.dist(vt, env, d)} in\n{name}"
        if form == "cmp":
            if self.chance(3):
                t = self.pick([B, Pair(F, F), List(F)])
                return f"({self.expr(t, env, d)} = {self.expr(t, env, d)})"
            op = self.pick(["<", "=", "lt", "eq"])
            a, b = self.expr(F, env, d), self.expr(F, env, d)
            return f"({a} {op} {b})" if op in "<=" else f"{op}({a}, {b})"
        if form == "tuple":
            a, b = self.expr(ty[1], env, d), self.expr(ty[2], env, d)
            return f"pair({a}, {b})" if self.chance(4) else f"({a}, {b})"
        if form == "lit":
            n = self.int(0, 3)
            if n == 1 and self.chance(3):
                return f"lst({self.expr(ty[1], env, d)})"
            return "[" + ", ".join(self.expr(ty[1], env, d) for _ in range(n)) + "]"
        if form == "cons":
            head, tail = self.expr(ty[1], env, d), self.expr(ty, env, d)
            return f"cons({head}, {tail})" if self.chance(3) else f"({head} :: {tail})"
        if form == "tl":
            return f"List.tl({self.nonempty_list(ty[1], env, d)})"
        if form == "rev":
            return f"List.rev({self.expr(ty, env, d)})"
        if form == "range":
            a = self.int(-3, 5)
            b = a + self.int(0, 6)
            if self.chance(5):   # bounds that are not literals, or a > b (an error at run time)
                return f"List.range({self.expr(F, env, d)}, {self.expr(F, env, d)})"
            if self.huge and self.chance(8):
                return self.pick(["List.range(0., 1e12)", "List.range(-1e300, 1e300)", "List.range(0., 1e9)",
                                  "List.range(0., (1. / 0.))", "List.range((0. / 0.), 1.)"])
            return f"List.range({a}., {b}.)"
        if form == "map":
            maps = [f for f in self.funcs if f[1] == F and f[2] == F]
            if maps:
                return f"List.map({self.pick(maps)[0]}, {self.expr(List(F), env, d)})"
            return self.atom(ty, env)
        if form == "row":
            return 'List.hd(File.read("data.csv"))'
        raise AssertionError(form)

    def comment(self) -> str:
        if self.chance(8):
            return self.pick(["  # a comment", " (* a block comment *)", " (* a\nblock (* comment *)", " #",
                              " (*) *)", " # (* not a block comment"])
        return ""

    def nonempty_list(self, elem_ty, env, d) -> str:
        """A list of ``elem_ty``, usually not empty (List.hd/tl of [] is a run-time error)."""
        if elem_ty == List(F) and self.chance(2):
            return 'File.read("data.csv")'
        if self.chance(5):
            return self.expr(List(elem_ty), env, d)
        return "[" + ", ".join(self.expr(elem_ty, env, d) for _ in range(self.int(1, 3))) + "]"

    def funcs_returning(self, ty):
        return [f for f in self.funcs if f[2] == ty]

    def row_fn(self) -> str:
        rows = [f for f in self.funcs if f[1] == List(F) and f[2] == F]
        return rows[0][0] if rows else "hd_row"

    def observed(self, vt, env, d) -> str:
        if vt == B:
            return self.expr(B, env, d)
        return self.pick([self.float_lit(), self.expr(F, env, d), "1.", "0.", "2."])

    def pattern(self, ty, top: bool = True):
        """A pattern for a value of ``ty`` and the names it binds."""
        if ty == U and self.chance(2):
            return "()", {}
        if not isinstance(ty, str) and ty[0] == "pair" and self.chance(2):
            a, ba = self.pattern(ty[1], False)
            b, bb = self.pattern(ty[2], False)
            return (f"{a}, {b}" if top and self.chance(3) else f"({a}, {b})"), {**ba, **bb}
        name = self.fresh()
        return name, {name: ty}

    # ---- distributions ----------------------------------------------------------------------
    def dist(self, vt, env, d) -> str:
        """A distribution over ``vt`` (float or bool): valid or invalid parameters, or arbitrary
        expressions as parameters."""
        if vt == B:
            family = self.pick(["bernoulli", "bernoulli", "delta"])
        else:
            family = self.pick(["gaussian", "beta", "binomial", "beta_binomial", "negative_binomial",
                                "exponential", "gamma", "poisson", "categorical", "uniform_int",
                                "student_t", "delta"])
        mode = self.pick(["valid", "valid", "valid", "invalid", "expr"])
        if family == "delta":
            return f"delta({self.expr(vt, env, d) if mode == 'expr' else self.atom(vt, env)})"
        if family == "categorical":
            lo = self.int(0, 3)
            probs = self.pick([[1.0], [0.5, 0.5], [0.2, 0.3, 0.5], [0.25, 0.25, 0.25, 0.25]])
            hi = lo + len(probs) - 1
            if mode == "invalid":
                how = self.pick(["sum", "length", "negative", "bounds"])
                if how == "sum":
                    probs = [p * 2 for p in probs]
                elif how == "length":
                    hi += 1
                elif how == "negative":
                    probs = [-p for p in probs]
                else:
                    lo, hi = hi + 1, lo
            ps = "[" + ", ".join(repr(p) for p in probs) + "]"
            if mode == "expr":
                ps = self.expr(List(F), env, d)
            return f"categorical({lo}., {hi}., {ps})"
        valid = {
            "gaussian": [["0.", "-1.", "3.5", "1e3"], ["1.", "0.5", "4.", "1e-6"]],
            "beta": [["1.", "2.", "0.5"], ["1.", "3.", "0.1"]],
            "bernoulli": [["0.5", "0.", "1.", "0.9"]],
            "binomial": [["0.", "1.", "5.", "10.", "2.5"], ["0.", "0.3", "1."]],
            "beta_binomial": [["0.", "3.", "10."], ["1.", "2."], ["0.5", "1."]],
            "negative_binomial": [["1.", "3.", "0.5"], ["0.5", "1.", "0.1"]],
            "exponential": [["1.", "2.", "0.1"]],
            "gamma": [["1.", "2.", "0.5"], ["1.", "3.", "0.2"]],
            "poisson": [["0.", "1.", "4.5", "100."]],
            "uniform_int": None,
            "student_t": [["0.", "2."], ["1.", "0.5"], ["2.", "3.", "30."]],
        }[family]
        invalid = {
            "gaussian": [None, ["0.", "-1.", "(0. / 0.)"]],
            "beta": [["0.", "-1."], ["0.", "-2."]],
            "bernoulli": [["-0.1", "1.5", "(0. / 0.)"]],
            "binomial": [["-1.", "(1. / 0.)"], ["1.1", "-0.5"]],
            "beta_binomial": [["-2."], ["0.", "-1."], ["0.", "-1."]],
            "negative_binomial": [["0.", "-1."], ["1.5", "-0.1"]],
            "exponential": [["0.", "-1.", "(0. / 0.)"]],
            "gamma": [["0.", "-1."], ["0.", "-2."]],
            "poisson": [["-1.", "(1. / 0.)", "(0. / 0.)"]],
            "student_t": [None, ["0.", "-1."], ["1.", "0.5", "-1."]],
        }.get(family)
        if family == "uniform_int":
            a = self.int(-3, 5)
            b = a + self.int(0, 4)
            if mode == "invalid":
                a, b = self.pick([(b + 1, a), (a + 0.5, b + 0.5)])
            args = [f"{float(a)!r}", f"{float(b)!r}"]
        else:
            args = [self.pick(options) for options in valid]
            if mode == "invalid":
                k = self.pick([i for i, opts in enumerate(invalid) if opts])
                args[k] = self.pick(invalid[k])
        if mode == "expr":
            k = self.int(0, len(args) - 1)
            args[k] = self.expr(F, env, d)
        return f"{family}({', '.join(args)})"

    # ---- mistakes (ill-typed or ill-formed programs) -----------------------------------------
    def mistake(self, ty, env, depth) -> str:
        d = max(depth - 1, 0)
        kind = self.pick(["type", "type", "unbound", "unknown", "arity", "pattern", "library",
                          "resample", "fold", "dist_value", "compare_chain", "symbolic"])
        if kind == "type":
            other = self.pick([t for t in VALUE_TYPES + [ROWS] if t != ty])
            return self.expr(other, env, d)
        if kind == "unbound":
            return self.pick(["nope", "inf", "nan", "x_unbound", "List", "File"])
        if kind == "unknown":
            return f"{self.pick(['foo', 'normal', 'List.nth', 'File.write', 'Math.exp'])}({self.expr(F, env, d)})"
        if kind == "arity":
            return self.pick([f"gaussian({self.expr(F, env, d)})", "List.hd()", "resample(())",
                              "observe(gaussian(0., 1.))", "pair(1.)", "List.range(1.)",
                              f"bernoulli(0.5, {self.expr(F, env, d)})"])
        if kind == "pattern":
            pat = self.pick(["(a, b)", "()", "(a, (b, c))"])
            return f"let {pat} = {self.expr(F, env, d)} in\n{self.expr(ty, env, d)}"
        if kind == "library":
            return self.pick(["List.hd", "List.map(List.hd, [[1.]])", "fold(add, [1.], 0.)",
                              'File.read(1.)', 'File.read("missing.csv")', '"a string"', 'File.read("")',
                              'File.read(".")', 'File.read("data.csv/")', 'File.read("model.si")',
                              'File.read("/dev/null")', 'File.read("data.csv", "data.csv")'])
        if kind == "resample":
            return f"let x <- resample() in {self.expr(ty, env, d)}"
        if kind == "fold":
            return f"fold(nope, [1.], {self.expr(ty, env, d)})"
        if kind == "dist_value":
            return self.pick(["gaussian(0., 1.)", "(bernoulli(0.5), 1.)", "[poisson(1.)]"])
        if kind == "compare_chain":
            return "(1. < 2. < 3.)"
        return f"let symbolic s <- beta(1., 1.) in\nlet () = observe(bernoulli(s), true) in\n{self.expr(ty, env, d)}"

    # ---- functions and the program ----------------------------------------------------------
    def function(self, index) -> str:
        signatures = [(Pair(F, F), F), (F, F), (List(F), F), (U, F), (F, Pair(F, F)),
                      (Pair(F, B), B), (Pair(Pair(F, F), F), List(F))]
        pt, rt = signatures[index % len(signatures)] if index < len(signatures) else self.pick(signatures)
        name = f"f{index}"
        pat, binds = self.pattern(pt)
        if pt == Pair(F, F) and rt == F and self.chance(2):   # a streaming step: draw, observe, resample
            y, x = self.fresh(), self.fresh()
            if x == y:
                x = y + "_"
            body = (f"let x1 <- gaussian({x}, 1.) in\nlet () = observe(gaussian(x1, 0.5), {y}) in\n"
                    f"let () = resample() in\n{self.expr(F, {y: F, x: F, 'x1': F}, 1, True)}")
            pat = f"({y}, {x})"
        else:
            body = self.expr(rt, binds, self.int(0, 2), True)
        if self.ill and not self.injected and self.chance(30):   # recursion
            self.injected = True
            body = f"{name}({self.atom(pt, binds)})"
            pt, rt = pt, rt
        self.funcs.append((name, pt, rt))
        return f"val {name} = fun {pat} ->\n  {body}\nin\n"

    def program(self) -> str:
        prelude = "val hd_row = fun row -> List.hd(row) in\n"
        self.funcs.append(("hd_row", List(F), F))
        for i in range(self.int(0, 4)):
            prelude += self.function(i)
        ty = self.pick(RESULT_TYPES)
        if self.ill and self.chance(12):
            ty = self.pick([List(List(F)), List(List(F)), ("dist",)])
            if ty == ("dist",):
                return prelude + "gaussian(0., 1.)\n"
        main = self.expr(ty, {}, self.int(1, self.max_depth), True)
        if self.ill and not self.injected:
            self.injected = True
            main = self.mistake(ty, {}, 2)
        return prelude + main + "\n"


@st.composite
def programs(draw, ill: bool | None = None, max_depth: int = 4, huge: bool = True) -> str:
    """A Siren program as text; well typed unless ``ill`` (None: either). ``huge``: sometimes a
    ``List.range`` with enormous or infinite bounds."""
    if ill is None:
        ill = draw(st.integers(0, 3)) == 0
    return Gen(draw, ill, max_depth, huge).program()


@st.composite
def many_files(draw, most: int = 100):
    """A program that reads ``n`` different CSV files (up to ``most``), and those files by name."""
    n = draw(st.integers(1, most))
    files = {f"d{i}.csv": f"v\n{i}\n".encode() for i in range(n)}
    reads = [f'List.len(File.read("d{i}.csv"))' for i in range(n)]
    if draw(st.booleans()):   # the same file read again
        reads.append('List.len(File.read("d0.csv"))')
    return " + ".join(reads) + "\n", files


# ---- mutations ------------------------------------------------------------------------------

TOKEN = re.compile(r'\s+|#[^\n]*|\(\*|\*\)|"[^"\n]*"?|[A-Za-z_][A-Za-z0-9_.]*|\d*\.?\d+(?:[eE][-+]?\d+)?\.?'
                   r"|->|<-|::|.", re.DOTALL)
VOCAB = ["let", "in", "val", "fun", "->", "<-", "(", ")", "[", "]", ",", "=", "if", "then", "else",
         "fold", "observe", "resample", "sample", "symbolic", "::", "nil", "true", "1.", "-", "*",
         "/", "<", "(*", "*)", "#", '"', "List.hd", "File.read", "gaussian", "()", "x", ".", "e",
         "1e999", "0x1", "--", "inf"]
RANDOM_CHARS = list("()[]{},;:=<>-+*/.#\"'\\`@$%^&|~!?_\t\n\r\x0b\x0c") + ["\x00", "é", "λ", "\u00a0",
                                                                           "\u2028", "\ufeff", "𝑥"]
NON_UTF8 = [b"\xff", b"\xfe\xff", b"\xc3", b"\x80", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80"]


@st.composite
def mutated(draw, source: str, non_utf8: bool = True) -> bytes:
    """``source`` with one to four token/byte-level mutations, as bytes."""
    tokens = TOKEN.findall(source)
    for _ in range(draw(st.integers(1, 4))):
        if not tokens:
            tokens = [""]
        i = draw(st.integers(0, len(tokens) - 1))
        how = draw(st.sampled_from(["delete", "delete", "duplicate", "swap", "replace", "insert_char",
                                    "insert_token", "truncate"]))
        if how == "delete":
            del tokens[i]
        elif how == "duplicate":
            tokens.insert(i, tokens[i])
        elif how == "swap" and i + 1 < len(tokens):
            tokens[i], tokens[i + 1] = tokens[i + 1], tokens[i]
        elif how == "replace":
            tokens[i] = draw(st.sampled_from(VOCAB))
        elif how == "insert_char":
            tokens.insert(i, draw(st.sampled_from(RANDOM_CHARS)))
        elif how == "insert_token":
            tokens.insert(i, " " + draw(st.sampled_from(VOCAB)) + " ")
        elif how == "truncate":
            tokens = tokens[:i]
    data = "".join(tokens).encode("utf-8")
    if non_utf8 and draw(st.integers(0, 4)) == 0:
        at = draw(st.integers(0, len(data)))
        data = data[:at] + draw(st.sampled_from(NON_UTF8)) + data[at:]
    return data


# ---- data files -----------------------------------------------------------------------------

# A streamed model over the rows of a CSV file: the second column observed, the first (and a
# third if present) feeding the transition.
DATA_MODEL = """\
val step = fun (row, x) ->
  let t = List.hd(row) in
  let y = List.hd(List.tl(row)) in
  let x1 <- gaussian(x + 0. * t, 1.) in
  let () = observe(gaussian(x1, 0.5), y) in
  let () = resample() in
  x1
in
val rows = fun () -> File.read("data.csv") in
fold(step, rows(), 0.)
"""

GOOD_FIELDS = ["0", "1.5", "-2", "3e2", "1E-3", ".5", "5.", " 7 ", "-0", "1e308", "inf", "-inf", "nan", "+1"]
BAD_FIELDS = ["", "x", "1,5", '"1"', "1..2", "--1", "0x10", "1e", "nan(0)", "١", "\u00a0", "1 2", "∞"]


@st.composite
def csv_files(draw, bad: bool = True, cr_only: bool = True, non_utf8: bool = True) -> bytes:
    """A CSV file for ``DATA_MODEL``: a header, rows of 0-4 fields, good or bad fields, various line
    endings and blank lines; ``bad=False`` keeps to files the model reads without a data error."""
    header = draw(st.sampled_from(["t,y", "t,y,z", "a", "", "t;y", "\ufefft,y"])) if bad else "t,y"
    endings = ["\n", "\r\n"] + (["\r"] if cr_only and bad else [])
    nl = draw(st.sampled_from(endings))
    rows = []
    for _ in range(draw(st.integers(0, 8))):
        n = draw(st.integers(0, 4)) if bad else draw(st.integers(2, 3))
        fields = []
        for _ in range(n):
            if bad and draw(st.integers(0, 7)) == 0:
                fields.append(draw(st.sampled_from(BAD_FIELDS)))
            else:
                fields.append(draw(st.sampled_from(GOOD_FIELDS if bad else GOOD_FIELDS[:10])))
        rows.append(",".join(fields))
    text = header + nl + nl.join(rows)
    if draw(st.booleans()):
        text += nl
    if bad and draw(st.integers(0, 5)) == 0:
        text += nl * draw(st.integers(1, 3))      # blank lines at the end
    if bad and rows and draw(st.integers(0, 7)) == 0:
        text = text.replace(nl, nl + nl, 1)       # a blank line in the middle
    data = text.encode("utf-8")
    if bad and draw(st.integers(0, 9)) == 0:
        data = draw(st.sampled_from([b"", b"\n", b"t,y\n1,2\x00\n", b"\xef\xbb\xbft,y\n1,2\n"]
                                    + [b"t,y\n\xff\xfe,1\n", b"t,y\n1,\xc3\n"] * non_utf8))
    return data


@st.composite
def mutated_csv(draw, non_utf8: bool = True) -> bytes:
    """A valid data file with byte-level mutations."""
    data = bytearray(draw(csv_files(bad=False, cr_only=False)))
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(data)))
        how = draw(st.sampled_from(["delete", "insert", "duplicate", "truncate"]))
        if how == "delete" and i < len(data):
            del data[i]
        elif how == "insert":
            choices = b",.\n\r -+e0123456789 \"#" + (b"\xff\x80" if non_utf8 else b"")
            data[i:i] = bytes([draw(st.sampled_from(list(choices)))])
        elif how == "duplicate":
            j = draw(st.integers(i, min(len(data), i + 8)))
            data[i:i] = data[i:j]
        else:
            data = data[:i]
    return bytes(data)


# ---- command lines --------------------------------------------------------------------------

@st.composite
def command_lines(draw, model: str, out_dir: str, data: str | None = None, missing_dir: bool = True) -> list:
    """A command line around ``model``: mostly ``sirenc run`` with varied options, sometimes
    ``sirenc check`` or a compilation to a file (``missing_dir``: sometimes into a folder that
    does not exist) or a stage."""
    mode = draw(st.sampled_from(["run"] * 8 + ["check", "compile"]))
    if mode == "check":
        argv = ["check", model, "-m", draw(st.sampled_from(["ssi", "ds", "bp", "pf"]))]
        if draw(st.booleans()):
            argv.append("--json")
        return argv
    if mode == "compile":
        stage = draw(st.sampled_from(["so", "ast", "siren", "smc", "llvm"]))
        if stage == "so":
            if missing_dir and draw(st.integers(0, 3)) == 0:
                return [model, "-o", f"{out_dir}/no/such/folder/model.so"]
            return [model, "-o", f"{out_dir}/model.so"]
        return [model, f"--emit={stage}"]
    argv = ["run", model, "-p", str(draw(st.sampled_from([1, 2, 7, 30]))),
            "--seed", str(draw(st.integers(0, 3)))]
    if draw(st.integers(0, 3)) == 0:
        argv += ["--resampler", draw(st.sampled_from(["multinomial", "stratified", "residual"]))]
    if draw(st.integers(0, 3)) == 0:
        argv += ["--ess-threshold", draw(st.sampled_from(["0.5", "1", "2"]))]
    if draw(st.integers(0, 3)) == 0:
        argv += ["--threads", "2"]
    extra = draw(st.sampled_from([[], [], ["--json"], ["-v"], ["--no-check"], ["-W", "all"]]))
    if data is not None:
        argv += ["--data", data]
    return argv + extra


# ---- the differential property: resample() and unused draws do not change the answer ---------

STEP = ("val step = fun (y, x) ->\n  let x1 <- delta(x + y) in\n  let () = observe(gaussian(x1, 1.), y) in\n"
        "{extra}  x1\nin\n")
INSERTIONS = ["let () = resample() in", "let _u <- gaussian(0., 1.) in", "let _u <- bernoulli(0.3) in",
              "let _u <- poisson(2.) in", "let () = observe(gaussian(0., 1.), 0.3) in"]


@st.composite
def delta_programs(draw):
    """A pf program whose random variables are all ``delta`` draws, and a variant of it with
    ``resample()``, unused draws or constant observations inserted between its lines (and in
    its folded step function). Every particle holds the same values with the same weight, so
    both estimates are exact and must be identical. Returns ``(program, variant)``."""
    names = []
    lines = []
    for i in range(draw(st.integers(1, 7))):
        def operand():
            return draw(st.sampled_from(names + ["1.", "2.5", "-0.5", "0."]))
        op = draw(st.sampled_from(["+", "-", "*"]))
        kind = draw(st.sampled_from(["delta", "delta", "let", "observe", "fold", "if", "list"]))
        if kind == "delta":
            lines.append(f"let x{i} <- delta({operand()} {op} {operand()}) in")
        elif kind == "let":
            lines.append(f"let x{i} = {operand()} {op} {operand()} in")
        elif kind == "observe":
            lines.append(f"let () = observe(gaussian({operand()}, 2.), {operand()}) in")
            continue
        elif kind == "fold":
            lines.append(f"let x{i} = fold(step, [{operand()}, {operand()}], {operand()}) in")
        elif kind == "if":
            lines.append(f"let b{i} <- delta({operand()} < {operand()}) in")
            lines.append(f"let x{i} = if b{i} then {operand()} else {operand()} in")
        else:
            lines.append(f"let x{i} = List.hd(List.rev([{operand()}, {operand()}])) in")
        names.append(f"x{i}")
    result = draw(st.sampled_from([names[-1], f"({', '.join(names)})", f"[{', '.join(names)}]"])) \
        if names else "0."
    variant = list(lines)
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(variant)))
        variant.insert(at, draw(st.sampled_from(INSERTIONS)))
    extra = "".join(f"  {draw(st.sampled_from(INSERTIONS))}\n" for _ in range(draw(st.integers(0, 2))))
    program = STEP.format(extra="") + "\n".join(lines + [result]) + "\n"
    changed = STEP.format(extra=extra) + "\n".join(variant + [result]) + "\n"
    return program, changed


# ---- big programs -----------------------------------------------------------------------------

STRESS_KINDS = ["parens", "lets", "draws", "sum", "list", "ifs", "negs", "calls", "cons", "tuple",
                "comment", "name", "number", "observes", "range_fold"]


@st.composite
def big_programs(draw, most: int = 50):
    """A program that is large in one direction: nesting, a long chain of lets or of draws with
    resample points, a long sum, list, tuple, comment, name or number literal... Returns
    ``(kind, size, program)``."""
    kind = draw(st.sampled_from(STRESS_KINDS))
    scales = [s for s in (10, 100, 1000, 5000, 20000) if s < most] + [most]
    n = draw(st.integers(1, draw(st.sampled_from(scales))))
    return kind, n, _big(kind, n)


def _big(kind: str, n: int) -> str:
    if kind == "parens":
        return "(" * n + "1." + ")" * n
    if kind == "lets":
        return "".join(f"let x{i} = {i}. in\n" for i in range(n)) + f"x{n - 1}\n"
    if kind == "draws":
        return ("".join(f"let x{i} <- gaussian({'x' + str(i - 1) if i else '0.'}, 1.) in\nlet () = resample() in\n"
                        for i in range(n)) + f"x{n - 1}\n")
    if kind == "observes":
        return ("let x <- gaussian(0., 1.) in\n"
                + "".join(f"let () = observe(gaussian(x, 1.), {i % 3}.) in\n" for i in range(n)) + "x\n")
    if kind == "sum":
        return " + ".join(["1."] * n) + "\n"
    if kind == "list":
        return "List.len([" + ", ".join(["1."] * n) + "])\n"
    if kind == "ifs":
        return "if true then " * n + "1." + " else 2." * n + "\n"
    if kind == "negs":
        return "-" * n + "1.\n"
    if kind == "calls":
        return "val f = fun x -> x + 1. in\n" + "f(" * n + "0." + ")" * n + "\n"
    if kind == "cons":
        return "List.len(" + "1. :: " * n + "nil)\n"
    if kind == "tuple":
        return "(" + ", ".join(["1."] * (n + 1)) + ")\n"
    if kind == "comment":
        return "(* " + "x" * n * 100 + " *)\n" + "# " + "y" * n * 100 + "\n1.\n"
    if kind == "name":
        return f"let {'a' * n * 10} = 1. in {'a' * n * 10}\n"
    if kind == "number":
        return "1" * n * 10 + "." + "0" * n * 10 + "\n"
    # a fold over List.range with a resample per step
    return ("val step = fun (i, x) ->\n  let x1 <- gaussian(x, 1.) in\n  let () = observe(gaussian(x1, 1.), i) in\n"
            f"  let () = resample() in\n  x1\nin\nfold(step, List.range(0., {n * 20}.), 0.)\n")


# ---- odd command-line options ---------------------------------------------------------------

ODD_OPTIONS = {
    "-p": ["0", "-1", "1", "abc", "1.5", "", "9223372036854775808",
           "2147483648", "3000000000", "100000000000"],   # more than fit: a usage error naming the limit
    "--seed": ["-1", "0", "18446744073709551615", "18446744073709551616", "x", "1e3"],
    "--threads": ["0", "-2", "1", "2", "256", "257", "99999999999"],
    "--ess-threshold": ["nan", "-0.0", "1", "1.0000001", "inf", "-inf", "1e-320", "x"],
    "--resampler": ["systematic", "residual", "bogus", ""],
    "--max-rvs": ["0", "-1", "1", "1000000", "x"],
    "--analysis-budget": ["0", "1", "2", "-5", "99999999999999999999"],
    "-m": ["pf", "ssi", "ds", "bp", "mh", ""],
    "-W": ["unused", "all", "none", "bogus"],
    "--data": ["nope.csv", ".", "given.csv", "model.si", "", "/dev/null", "data.csv"],
    "--memory-limit": ["0", "-1", "1", "1K", "64M", "4.5G", "x", "1e9", ""],
}


@st.composite
def odd_command_lines(draw, model: str = "model.si") -> list:
    """``sirenc run`` (or ``check``) with one to three options given odd values."""
    argv = [draw(st.sampled_from(["run", "run", "run", "check"])), model]
    for _ in range(draw(st.integers(1, 3))):
        option = draw(st.sampled_from(sorted(ODD_OPTIONS)))
        values = ODD_OPTIONS[option]
        if argv[0] == "check" and option in ("-p", "--seed", "--threads", "--ess-threshold", "--resampler",
                                             "--data", "--memory-limit"):
            continue
        argv += [option, draw(st.sampled_from(values))]
    return argv
