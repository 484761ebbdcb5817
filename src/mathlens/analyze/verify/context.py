"""What a solution may refer to: the question's definitions and the values stated so far.

A `Context` holds functions (``f(x, y) = x^2 y`` from the question) and numeric values of names
(``A = -14`` stated in an earlier step). `substitute` rewrites a claim's side with them:

* ``f(-1, 4)`` -> the body of ``f`` at that point;
* ``f'(x)``, ``d/dx f(x)`` -> the derivative of the body;
* ``f_x``, ``f_xy``, ``f_{xy}`` (and ``∂f/∂x``, parsed to the same name) -> partial derivatives;
* ``nabla_f`` (``∇f``, ``\\nabla f``, ``grad f``) -> the tuple of first partial derivatives;
* a name with a stated numeric value -> that value (except the letters in `UNKNOWN_NAMES` and the
  parameters of defined functions).

Names that still refer to an undefined function after this make a claim unverifiable.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

import sympy
from sympy.core.function import AppliedUndef

from mathlens.analyze.verify.plain import norm
from mathlens.analyze.verify.reading import DEFAULT_READING, Reading
from mathlens.analyze.verify.signs import PlusMinus

# Letters that usually stand for unknowns: a value stated for them ("x = 2") solves an equation
# and is checked against it, but is not substituted into later relations, where the same letter
# is often an unknown again.
UNKNOWN_NAMES = frozenset("xyztnkuvw") | frozenset({
    "alpha", "beta", "gamma", "theta", "phi", "lambda", "lambda_", "mu", "sigma", "omega", "r", "s", "m"})
_PARTIAL_NAME = re.compile(r"^([A-Za-z])_\{?([a-z]{1,3})\}?$")
_NABLA_NAME = re.compile(r"^nabla_\{?([A-Za-z])\}?$")


@dataclass(frozen=True)
class FunctionDef:
    """``name(params) = body``."""

    name: str
    params: tuple[sympy.Symbol, ...]
    body: sympy.Basic
    given: bool = False  # defined by the question (a solution may not redefine it)


@dataclass(frozen=True)
class Context:
    """Definitions a claim is checked against. Immutable: `with_function` / `with_value` copy."""

    functions: dict[str, FunctionDef] = field(default_factory=dict)
    values: dict[str, sympy.Basic] = field(default_factory=dict)
    # Equations stated but not yet solved (``2x + 3 = 7``), newest last, as ``lhs - rhs``; all
    # from one step (`equation_age` steps ago).
    equations: tuple[sympy.Basic, ...] = ()
    # The point most recently named ("at (-1, 4)"): where "∇f = <-8, 1>" is evaluated.
    point: tuple[sympy.Basic, ...] = ()
    # Steps since the pending equation was stated: "x = 3" is checked against it only while it
    # is fresh (this step or the one before), not against an equation of another sub-problem.
    equation_age: int = 0
    # How the solution's notation is read (``e`` as a variable, extra function letters).
    reading: Reading = DEFAULT_READING
    # The equation stated by the very last statement (``lhs - rhs``), None after anything else:
    # an equation right after it may rewrite it.
    last_equation: sympy.Basic | None = None
    # The last side of the chain that ended the previous step, as written (text, notation): a
    # step that starts with "= ..." goes on from it.
    carry: tuple[str, str] | None = None

    def with_function(self, fn: FunctionDef) -> Context:
        """A copy with `fn` added (replacing an earlier definition of the same name)."""
        return replace(self, functions={**self.functions, fn.name: fn})

    def with_value(self, name: str, value: sympy.Basic) -> Context:
        """A copy where `name` has the numeric `value`."""
        return replace(self, values={**self.values, name: value})

    def with_equation(self, lhs: sympy.Basic, rhs: sympy.Basic) -> Context:
        """A copy that remembers the equation ``lhs = rhs`` as one being solved. Equations of one
        step are kept together; a later step's equation replaces them (an older one is usually
        about another question or case)."""
        try:
            diff = sympy.expand(lhs - rhs)
        except (TypeError, ValueError):
            return self
        if self.equation_age == 0:  # several equations of one step ("x^3 = 0 and x^2 - x - 72 = 0")
            return replace(self, equations=(*self.equations[-5:], diff), last_equation=diff)
        return replace(self, equations=(diff,), equation_age=0, last_equation=diff)

    def names(self) -> set[str]:
        """Every name the context gives a value or a definition."""
        return {*self.values, *self.functions}

    def next_step(self) -> Context:
        """A copy for the next step: the pending equation is one step older."""
        return replace(self, equation_age=self.equation_age + 1)

    def forget(self, names: set[str]) -> Context:
        """A copy without the values of `names` (a step that solves for a name again)."""
        if not names & set(self.values):
            return self
        return replace(self, values={k: v for k, v in self.values.items() if k not in names})

    def with_point(self, point: tuple[sympy.Basic, ...]) -> Context:
        """A copy whose current point is `point`."""
        return replace(self, point=point)

    def knows(self, name: str) -> bool:
        """True when `name` is a defined function or a name with a value."""
        return name in self.functions or name in self.values


def _derivative_of(fn: FunctionDef, letters: str) -> sympy.Basic | None:
    names = {p.name: p for p in fn.params}
    expr = fn.body
    for letter in letters:
        var = names.get(letter)
        if var is None:
            return None
        expr = sympy.diff(expr, var)
    return expr


def _apply(fn: FunctionDef, args: tuple[Any, ...]) -> sympy.Basic | None:
    if len(args) != len(fn.params):
        return None
    return fn.body.subs(dict(zip(fn.params, args, strict=True)), simultaneous=True)


def substitute(expr: sympy.Basic, ctx: Context) -> tuple[sympy.Basic, bool]:
    """`expr` with the context's definitions applied and calculus operators carried out.

    Returns the new expression and whether a derivative or gradient of a defined function was
    used: ``f_x = ...`` or ``f'(x) = ...`` is a claim of identity, never an equation to solve.
    Replacing a name by its value, or ``f(x)`` by the body of ``f``, does not count (``f(x) = x``
    is usually an equation).
    """
    used = False
    mapping: dict[sympy.Basic, sympy.Basic] = {}
    for sym in expr.free_symbols:
        if not isinstance(sym, sympy.Symbol):
            continue
        name = sym.name
        if name in ctx.values and (isinstance(ctx.values[name], sympy.Tuple)
                                   or (name not in UNKNOWN_NAMES and not _is_parameter(name, ctx))):
            mapping[sym] = ctx.values[name]
            continue
        m = _PARTIAL_NAME.match(name)
        if m and m.group(1) in ctx.functions:
            d = _derivative_of(ctx.functions[m.group(1)], m.group(2))
            if d is not None:
                mapping[sym] = d
                used = True
            continue
        m = _NABLA_NAME.match(name)
        if m and m.group(1) in ctx.functions:
            fn = ctx.functions[m.group(1)]
            mapping[sym] = sympy.Tuple(*(sympy.diff(fn.body, p) for p in fn.params))
            used = True
    # |v| of a vector is its length (Abs of a tuple has no meaning in SymPy): a name with a vector
    # value, or a gradient at a point, inside bars
    if mapping and expr.has(sympy.Tuple):
        expr = _names_at_points(expr, mapping, ctx)
    vectors = {k for k, v in mapping.items() if isinstance(v, sympy.Tuple)}
    if expr.has(sympy.Abs):
        expr = expr.replace(lambda n: isinstance(n, sympy.Abs) and _vector_valued(n.args[0], vectors),
                            lambda n: norm(n.args[0]))
    if mapping:
        expr = expr.xreplace(mapping)
    if expr.has(sympy.Derivative):
        along = {d: _along_curve(d, ctx) for d in expr.atoms(sympy.Derivative)}
        along = {d: v for d, v in along.items() if v is not None}
        if along:
            expr = expr.xreplace(along)
            used = True
    for _ in range(4):  # P(P(x)): the inner call first, then the outer one
        calls = {a for a in expr.atoms(AppliedUndef) if a.func.__name__ in ctx.functions}
        if not calls:
            break
        expr = expr.xreplace({c: _apply(ctx.functions[c.func.__name__], c.args) or c for c in calls})
        # f(x) = x is often an equation to solve; f(7) = ... has numbers on both sides anyway.
    # A gradient evaluated at a point: nabla_f(-1, 4) parses as a call of the name nabla_f.
    for call in list(expr.atoms(AppliedUndef)):
        m = _NABLA_NAME.match(call.func.__name__)
        if m and m.group(1) in ctx.functions:
            fn = ctx.functions[m.group(1)]
            grad = sympy.Tuple(*(sympy.diff(fn.body, p) for p in fn.params))
            at = dict(zip(fn.params, call.args, strict=False))
            expr = expr.xreplace({call: grad.subs(at, simultaneous=True)})
            used = True
    if expr.has(sympy.Derivative, sympy.Subs, sympy.Limit) or _has_definite_integral(expr):
        expr = _carry_out(expr)
    return expr, used


def _along_curve(d: sympy.Derivative, ctx: Context) -> sympy.Basic | None:
    """``dy/dx`` on a curve given by parameter (``x = t^2 - 1``, ``y = t^3 - 3t``): x is itself a
    function of t, so the derivative is (dy/dt)/(dx/dt), not the derivative of y's formula with t
    renamed x. None when the variable of `d` is not such a function (a first derivative only)."""
    if len(d.variable_count) != 1 or d.variable_count[0][1] != 1:
        return None
    var = d.variable_count[0][0]
    curve = ctx.functions.get(getattr(var, "name", ""))
    if curve is None or len(curve.params) != 1 or curve.params[0] == var or not curve.body.has(curve.params[0]):
        return None
    param = curve.params[0]

    def on_curve(node: sympy.Basic) -> bool:
        fn = ctx.functions.get(node.func.__name__) if isinstance(node, AppliedUndef) else None
        return fn is not None and node.args == (var,) and fn.params == (param,)

    quantity = d.expr.replace(on_curve, lambda node: ctx.functions[node.func.__name__].body)
    quantity = quantity.xreplace({var: curve.body})
    return sympy.diff(quantity, param) / sympy.diff(curve.body, param)


def _names_at_points(expr: sympy.Basic, mapping: dict[sympy.Basic, sympy.Basic], ctx: Context) -> sympy.Basic:
    """``f_x(-1, 4)``, which reads as the product of the name and a pair: the name's value at that
    point, when the value is in the parameters of a defined function of as many variables (a
    partial derivative of f(x, y), a name given an expression in x and y). Otherwise unchanged."""

    def point_of(node: sympy.Basic) -> tuple[sympy.Basic, sympy.Tuple] | None:
        if not isinstance(node, sympy.Mul) or len(node.args) != 2:
            return None
        name, point = node.args if isinstance(node.args[1], sympy.Tuple) else node.args[::-1]
        if name in mapping and isinstance(point, sympy.Tuple) and all(
                isinstance(p, sympy.Expr) and p.is_number for p in point):
            return name, point
        return None

    def at(node: sympy.Basic) -> sympy.Basic:
        found = point_of(node)
        assert found is not None
        name, point = found
        value = mapping[name]
        symbols = {getattr(s, "name", "") for s in value.free_symbols}
        for fn in ctx.functions.values():
            if len(fn.params) == len(point) and symbols <= {p.name for p in fn.params}:
                return value.subs(dict(zip(fn.params, point, strict=True)), simultaneous=True)
        return node

    return expr.replace(lambda n: point_of(n) is not None, at)


def _is_parameter(name: str, ctx: Context) -> bool:
    return any(p.name == name for fn in ctx.functions.values() for p in fn.params)


def _has_definite_integral(expr: sympy.Basic) -> bool:
    return any(len(lim) == 3 for i in expr.atoms(sympy.Integral) for lim in i.limits)


def _carry_out(expr: sympy.Basic) -> sympy.Basic:
    """Evaluate derivatives, substitutions, limits and definite integrals (not indefinite ones:
    those are compared through differentiation)."""
    repl: dict[sympy.Basic, sympy.Basic] = {}
    for node in sympy.preorder_traversal(expr):
        definite = isinstance(node, sympy.Integral) and all(len(lim) == 3 for lim in node.limits)
        if definite or isinstance(node, sympy.Derivative | sympy.Subs | sympy.Limit):
            repl[node] = node.doit()
    return expr.xreplace(repl) if repl else expr


def undefined_references(expr: sympy.Basic, ctx: Context) -> list[str]:
    """Names in `expr` that point at something the context does not define."""
    missing: list[str] = []
    for call in expr.atoms(AppliedUndef):
        missing.append(f"{call.func.__name__}(...)")
    for sym in expr.free_symbols:
        name = getattr(sym, "name", "")
        partial = _PARTIAL_NAME.match(name)
        if (partial is not None and partial.group(1) in "fghFGH") or _NABLA_NAME.match(name):
            missing.append(name)
    if expr.has(sympy.Derivative):
        missing.append("a derivative of an undefined function")
    for call in expr.atoms(sympy.Function):
        if type(call).__name__ == "norm" and call.args[0].free_symbols:
            missing.append(f"the length of {sympy.sstr(call.args[0])}")
    return sorted(set(missing))


def definition_of(lhs: sympy.Basic, rhs: sympy.Basic, ctx: Context) -> Context | None:
    """If ``lhs = rhs`` defines something (a new function ``f(x, y) = ...`` or a name), the
    context with that definition added; otherwise None."""
    if isinstance(lhs, AppliedUndef) and lhs.args and all(isinstance(a, sympy.Symbol) for a in lhs.args):
        name = lhs.func.__name__
        known = ctx.functions.get(name)
        if rhs.has(lhs.func) or not rhs.free_symbols:
            return None  # f(x) = 6 in running text is a value of f, rarely a constant function
        params = tuple(a for a in lhs.args if isinstance(a, sympy.Symbol))
        if known is None:
            return ctx.with_function(FunctionDef(name, params, rhs))
        if not rhs.free_symbols & set(params):
            return None  # "a surface f(x, y, z) = c": a level of the f defined, not a new f
        if not known.given and len(params) == len(known.params) and not _same_body(known, params, rhs):
            # A solution trying candidates ("f(x) = 2 ... f(x) = -1") defines f again.
            return ctx.with_function(FunctionDef(name, params, rhs))
        return None
    if isinstance(lhs, sympy.Symbol):
        name = lhs.name
        if _NABLA_NAME.match(name):
            return None
        pm = _PARTIAL_NAME.match(name)
        if pm and (pm.group(1) in ctx.functions or pm.group(1) in "fghFGH"):
            return None  # f_x names a derivative: a claim about it, never a new name
        if rhs.has(lhs):
            return None
        value, _ = substitute(rhs, ctx)
        if isinstance(value, PlusMinus):
            return ctx  # x = 2 ± √3: two values, neither of which the name keeps
        ctx = _as_function(name, value, ctx)
        if name in UNKNOWN_NAMES and not (value.is_number or isinstance(value, sympy.Tuple)):
            return ctx  # u = x^2 + 1: a definition, but u stays a variable of its own
        return ctx.with_value(name, value)
    return None


def _as_function(name: str, value: sympy.Basic, ctx: Context) -> Context:
    """``y = ln(x^2 + 1)`` also defines y as a function of x, so that a later ``dy/dx`` or ``y'``
    is worked out from it."""
    known = ctx.functions.get(name)
    if not isinstance(value, sympy.Expr) or (known is not None and known.given):
        return ctx
    if value.is_Symbol:
        # "u = y" (a product rule's parts) renames a quantity: it says nothing of what u varies
        # with, and an earlier u(x) of the solution no longer holds
        return replace(ctx, functions={k: f for k, f in ctx.functions.items() if k != name})
    variables = [s for s in value.free_symbols if isinstance(s, sympy.Symbol)]
    if len(variables) != 1 or variables[0].name == name or len(name.split("_")[0]) != 1:
        return ctx
    return ctx.with_function(FunctionDef(name, (variables[0],), value))


def _same_body(fn: FunctionDef, params: tuple[sympy.Symbol, ...], body: sympy.Basic) -> bool:
    try:
        old = fn.body.xreplace(dict(zip(fn.params, params, strict=True)))
        return bool(sympy.expand(old - body) == 0)
    except (TypeError, ValueError):
        return False


def given(ctx: Context) -> Context:
    """`ctx` with every function marked as given by the question."""
    return replace(ctx, functions={k: replace(f, given=True) for k, f in ctx.functions.items()})


def at_point(expr: sympy.Basic, ctx: Context) -> sympy.Basic | None:
    """`expr` evaluated at the context's current point, when its free symbols are the parameters
    of a defined function of that many variables; otherwise None."""
    if not ctx.point:
        return None
    names = {getattr(s, "name", "") for s in expr.free_symbols}
    for fn in ctx.functions.values():
        if len(fn.params) == len(ctx.point) and names <= {p.name for p in fn.params}:
            return expr.subs(dict(zip(fn.params, ctx.point, strict=True)), simultaneous=True)
    return None


def _vector_valued(arg: sympy.Basic, vectors: set[sympy.Basic]) -> bool:
    return arg in vectors or (isinstance(arg, AppliedUndef) and bool(_NABLA_NAME.match(arg.func.__name__)))


def defined_names(ctx: Context) -> set[str]:
    """The names `ctx` defines (values and functions)."""
    return ctx.names()
