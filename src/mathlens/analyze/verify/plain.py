"""Plain keyboard notation (``x^2 y``, ``sqrt(x+2)``, ``d/dx(...)``, ``<-8, 1>``) into SymPy.

The text is first rewritten into a Python-like string (calculus notation becomes calls to helper
names that start with ``zzq``, which raw input may not contain) and then handed to SymPy's
``parse_expr`` with implicit multiplication, ``^`` as power and function application without
brackets. Evaluation is off while parsing, so the caller can inspect the tree before any number
is computed. Nothing here is bounded in time: call it through ``parse.parse_math``. The
rewriting needs no SymPy and lives in `plain_text` (``normalize`` is re-exported here).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import sympy
from sympy.parsing.sympy_parser import (
    convert_xor,
    implicit_multiplication_application,
    parse_expr,
    standard_transformations,
)

from mathlens.analyze.verify.plain_text import normalize as normalize  # re-exported: parse and callers read it here
from mathlens.analyze.verify.reading import DEFAULT_READING, Reading

_TRANSFORMS = (*standard_transformations, convert_xor, implicit_multiplication_application)
FUNCTION_LETTERS = "fghFGH"

# the same names as plain_text.FUNCTION_NAMES (a test holds them equal)
_FUNCTIONS: dict[str, Any] = {
    "sin": sympy.sin, "cos": sympy.cos, "tan": sympy.tan, "cot": sympy.cot, "sec": sympy.sec,
    "csc": sympy.csc, "arcsin": sympy.asin, "arccos": sympy.acos, "arctan": sympy.atan,
    "asin": sympy.asin, "acos": sympy.acos, "atan": sympy.atan, "arccot": sympy.acot,
    "sinh": sympy.sinh, "cosh": sympy.cosh, "tanh": sympy.tanh, "ln": sympy.log, "log": sympy.log,
    "exp": sympy.exp, "sqrt": sympy.sqrt, "cbrt": sympy.cbrt, "abs": sympy.Abs, "Abs": sympy.Abs,
    "floor": sympy.floor, "ceil": sympy.ceiling, "ceiling": sympy.ceiling, "gcd": sympy.gcd,
    "lcm": sympy.lcm, "max": sympy.Max,
    "min": sympy.Min,
    # Held unevaluated: the size check must see the argument before anything is computed.
    "factorial": lambda n: sympy.factorial(n, evaluate=False),
    "binomial": lambda n, k: sympy.binomial(n, k, evaluate=False),
    "choose": lambda n, k: sympy.binomial(n, k, evaluate=False),
}
_CONSTANTS: dict[str, Any] = {"e": sympy.E, "pi": sympy.pi, "oo": sympy.oo, "inf": sympy.oo,
                              "infinity": sympy.oo, "infty": sympy.oo}

# Segment, point and acronym names ("AB", "PQ", "GCF"): one name, not a product of letters.
_CAPITALS = re.compile(r"(?<![A-Za-z_])([A-Z]{2,3})(?![A-Za-z_(])")


def _u_derivative(expr: Any, var: Any, order: Any = 1) -> sympy.Basic:
    return sympy.Derivative(expr, (var, int(order)))


def _u_prime(name: str, order: int) -> Callable[..., sympy.Basic]:
    def build(*args: Any) -> sympy.Basic:
        if args and isinstance(args[0], sympy.Symbol):
            return sympy.Derivative(sympy.Function(name)(*args), (args[0], order))
        # f'(2): the derivative at a point
        var = sympy.Symbol("x")
        return sympy.Subs(sympy.Derivative(sympy.Function(name)(var), (var, order)), var, args[0])

    return build


def _u_vector(*args: Any) -> sympy.Tuple:
    return sympy.Tuple(*args)


def _u_integral(expr: Any, var: Any, lower: Any = None, upper: Any = None) -> sympy.Basic:
    if lower is None:
        return sympy.Integral(expr, var)
    return sympy.Integral(expr, (var, lower, upper))


def _u_limit(expr: Any, var: Any, point: Any, direction: str = "+-") -> sympy.Basic:
    return sympy.Limit(expr, var, point, dir=direction)


class norm(sympy.Function):
    """Euclidean length of a vector; stays unevaluated on a name until the name is replaced."""

    @classmethod
    def eval(cls, arg: Any) -> sympy.Basic | None:
        if isinstance(arg, sympy.Tuple):
            return sympy.sqrt(sympy.Add(*(sympy.Pow(v, 2) for v in arg)))
        if arg.is_number:
            return sympy.Abs(arg)
        return None


def _u_norm(value: Any) -> sympy.Basic:
    if isinstance(value, tuple | list):
        value = sympy.Tuple(*value)
    return norm(value)


def _u_log(arg: Any, base: Any) -> sympy.Basic:
    return sympy.log(arg, base)


HELPERS: dict[str, Any] = {
    "zzqdiff": _u_derivative, "zzqvec": _u_vector, "zzqint": _u_integral, "zzqlim": _u_limit,
    "zzqlimr": lambda e, v, p: _u_limit(e, v, p, "+"), "zzqliml": lambda e, v, p: _u_limit(e, v, p, "-"),
    "zzqlog": _u_log, "zzqnorm": _u_norm,
}


def base_namespace() -> dict[str, Any]:
    """Names SymPy's parser may resolve: sympy constructors, functions, constants, our helpers.

    Builtins are left out on purpose: ``parse_expr`` evaluates Python code, and with the default
    namespace a string such as ``__import__('os')`` would run.
    """
    ns: dict[str, Any] = {"__builtins__": {}}
    for name in ("Symbol", "Integer", "Float", "Rational", "Function", "Add", "Mul", "Pow", "Tuple",
                 "Derivative", "Integral", "Limit", "Sum", "Abs", "I", "E", "pi", "oo",
                 "Eq", "Ne", "Lt", "Le", "Gt", "Ge", "Matrix", "FiniteSet", "Interval", "Union",
                 "UnevaluatedExpr", "Number"):
        ns[name] = getattr(sympy, name)
    ns.update(_FUNCTIONS)
    ns.update(_CONSTANTS)
    ns.update(HELPERS)
    ns["factorial"] = _FUNCTIONS["factorial"]  # the parser's "n!" rule calls this name
    # Capital E and I are plain variables in model text; Euler's number is written "e".
    ns["E"] = sympy.Symbol("E")
    ns["I"] = sympy.Symbol("I")
    return ns


_NAMESPACE = base_namespace()

def _local_names(s: str, reading: Reading = DEFAULT_READING) -> dict[str, Any]:
    """Per-expression names: f, g, h (and the solution's own function letters) applied to
    arguments are functions; primes are derivatives; capital pairs are names."""
    local: dict[str, Any] = {}
    for letter in FUNCTION_LETTERS + "yuv" + "".join(sorted(reading.functions)):
        if re.search(rf"(?<![A-Za-z_.]){letter}\(", s):
            local[letter] = sympy.Function(letter)
    for m in re.finditer(r"zzqdiff\(([A-Za-z])\(", s):  # "ds/dt": s is a function of t
        local[m.group(1)] = sympy.Function(m.group(1))
    for m in _CAPITALS.finditer(s):
        if m.group(1) not in _NAMESPACE:
            local[m.group(1)] = sympy.Symbol(m.group(1))
    if reading.e_variable:
        local["e"] = sympy.Symbol("e")
    for m in re.finditer(r"\b(nabla_[A-Za-z])\(", s):
        local[m.group(1)] = sympy.Function(m.group(1))
    for m in re.finditer(r"zzqp(\d)([A-Za-z])", s):
        local[m.group(0)] = _u_prime(m.group(2), int(m.group(1)))
    return local


def parse_side(text: str, reading: Reading = DEFAULT_READING) -> sympy.Basic:
    """Parse one side of a relation (already normalised) without evaluating it."""
    s = text.strip()
    local = _local_names(s, reading)
    value = parse_expr(s, local_dict=local, global_dict=dict(_NAMESPACE), transformations=_TRANSFORMS,
                       evaluate=False)
    return to_sympy(value)


def to_sympy(value: Any) -> sympy.Basic:
    """Python containers the parser may return (tuple, list, set) as SymPy containers."""
    if isinstance(value, tuple | list):
        return sympy.Tuple(*(to_sympy(v) for v in value))
    if isinstance(value, set | frozenset):
        return sympy.FiniteSet(*(to_sympy(v) for v in value))
    if isinstance(value, int):
        return sympy.Integer(value)
    if isinstance(value, sympy.Basic):
        return value
    if isinstance(value, type) and issubclass(value, sympy.Function):
        return sympy.Symbol(value.__name__)
    raise TypeError(f"not a mathematical value: {type(value).__name__}")
