"""Plain keyboard notation (``x^2 y``, ``sqrt(x+2)``, ``d/dx(...)``, ``<-8, 1>``) into SymPy.

The text is first rewritten into a Python-like string (calculus notation becomes calls to helper
names that start with ``zzq``, which raw input may not contain) and then handed to SymPy's
``parse_expr`` with implicit multiplication, ``^`` as power and function application without
brackets. Evaluation is off while parsing, so the caller can inspect the tree before any number
is computed. Nothing here is bounded in time: call it through ``parse.parse_math``.
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

from mathlens.analyze.verify.reading import DEFAULT_READING, Reading
from mathlens.analyze.verify.text import find_close, replace_calls

_TRANSFORMS = (*standard_transformations, convert_xor, implicit_multiplication_application)
FUNCTION_LETTERS = "fghFGH"

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
_NAMES_BY_LENGTH = sorted(_FUNCTIONS, key=len, reverse=True)
# Plain names a letter run may end with; "xsin(x)" is read as "x sin(x)", never x*s*i*n*x.
_LETTER_RUN_CALL = re.compile(r"[A-Za-z]+(?=\s*\()")

_UNICODE = {
    "−": "-", "–": "-", "×": "*", "·": "*", "⋅": "*", "÷": "/", "√": " sqrt", "π": "pi", "∞": "oo",
    "²": "^2", "³": "^3", "⁴": "^4", "≤": "<=", "≥": ">=", "≠": "!=", "→": "->", "⟨": "<", "⟩": ">",
    "θ": "theta", "α": "alpha", "β": "beta", "λ": "lambda_", "μ": "mu", "σ": "sigma", "φ": "phi",
    "∂": "∂", "∫": " integral ", "∇": "nabla ", "\u00a0": " ",
}
# "√3", "2√y", "√2.5": the radical applies to the number or letter right after it.
_RADICAL = re.compile(r"√\s*(\d+(?:\.\d+)?|[A-Za-z](?![A-Za-z(]))")
# "45°" is (45*pi/180): the factor binds to its number, so "2235° ÷ 360°" keeps its meaning.
_DEGREE_NUMBER = re.compile(r"(\d+(?:\.\d+)?)\s*°")
# A primed name that is not a function call or a derivative of y, u, v: m' is a name of its own.
_PRIMED_NAME = re.compile(r"(?<![A-Za-z_\\])([A-Za-z])('+)(?![\w('])")
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

_THOUSANDS = re.compile(r"(?<![\d.,])(\d{1,3})((?:,\d{3})+)(?![\d,])(?!\.\d*,)")
# "011" is 11 (a Python literal with a leading zero is not a number at all).
_LEADING_ZEROS = re.compile(r"(?<![\d.])0+(?=\d)")
# "sin x cos x" is sin(x)*cos(x), "ln 2x" is ln(2x): a function name before a bare argument
# takes that one argument (SymPy's implicit application would swallow the rest of the product).
_BARE_ARGUMENT = re.compile(
    r"\b(sin|cos|tan|cot|sec|csc|sinh|cosh|tanh|arcsin|arccos|arctan|ln|log)(\^\s*\(?\d+\)?)?[ \t]+"
    r"(\d+(?:\.\d+)?(?:\s*(?:theta|alpha|beta|phi|pi)\b|[a-zA-Z](?![a-zA-Z(_]))?|(?:theta|alpha|beta|phi|pi)\b"
    r"|[a-zA-Z](?![a-zA-Z(_]))")
# "3 x 4" is 3 times 4, but in "sin^2 x (1 - y)" the x follows an exponent: a variable.
_TIMES_X = re.compile(r"((?<![\w.^])\d+(?:\.\d+)?|(?<!\^\(\d)\))\s+[x×]\s+(?=[\d(]|\.\d)")
_PERCENT = re.compile(r"(\d)\s*%")
_ABS = re.compile(r"\|([^|]+)\|")
_NORM = re.compile(r"\|\|([^|]+)\|\||‖([^‖]+)‖")
_PRIME_CALL = re.compile(r"\b([fghyFGHuv])('+)\s*\(")
_PRIME_BARE = re.compile(r"\b([yuv])('+)(?![\w(])")
_DY_DX = re.compile(r"\bd(\^?\d)?([a-zA-Z])\s*/\s*d([a-z])(\^?\d)?(?![a-zA-Z(])")
_PARTIAL_NAMED = re.compile(r"∂(\^?\d)?\s*([a-zA-Z])\s*/\s*∂\s*([a-z])(?:\s*∂\s*([a-z]))?")
_D_DX = re.compile(r"(?:\bd|∂)(\^?\d)?\s*/\s*(?:d|∂)\s*([a-z])(\^?\d)?\s*")
_LOG_BASE = re.compile(r"\blog_\{?([0-9a-z]+)\}?\s*\(")
_LIMIT = re.compile(r"\blim(?:it)?\s*_?\s*\{?\s*\(?\s*(?:as\s+)?([a-z])\s*(?:->|to|\\to)\s*"
                    r"(-?\s*(?:oo|inf(?:inity)?|\d+(?:\.\d+)?|[a-z]|pi))\s*([+-])?\s*\)?\}?\s*(?:of\s+)?")
_INTEGRAL = re.compile(r"\b(?:integral|int)\b(?:\s+of)?\s*")
_BOUNDS_SUB = re.compile(r"^_\{?([^}\s^]+)\}?\s*\^\s*\{?([^}\s]+?)\}?\s+")
_BOUNDS_WORDS = re.compile(r"^from\s+(\S+)\s+to\s+(\S+)\s+(?:of\s+)?")


def _unglue(m: re.Match[str]) -> str:
    """``xsin(`` -> ``x sin(``; ``arctan(`` stays whole (the longest known name wins)."""
    word = m.group()
    if word in _FUNCTIONS or word.startswith("zzq"):
        return word
    for name in _NAMES_BY_LENGTH:
        if word.endswith(name) and len(word) > len(name):
            return word[: -len(name)] + " " + name
    return word


def _bracket_argument(m: re.Match[str]) -> str:
    power = m.group(2).replace(" ", "").replace("(", "").replace(")", "") if m.group(2) else ""
    return f"({m.group(1)}({m.group(3)})){power}" if power else f"{m.group(1)}({m.group(3)})"


def normalize(text: str, reading: Reading = DEFAULT_READING) -> str:
    """Rewrite plain notation into the string handed to ``parse_expr``."""
    s = _RADICAL.sub(r" sqrt(\1)", text) if "√" in text else text
    if "°" in s:
        s = s.replace("°", "") if reading.units else _DEGREE_NUMBER.sub(r"(\1*pi/180)", s).replace("°", "*pi/180")
    s = _PRIMED_NAME.sub(lambda m: m.group() if m.group(1) in "yuvfghFGH" else
                         f"{m.group(1)}_{'prime' * len(m.group(2))}", s)
    for src, dst in _UNICODE.items():
        if src in s:
            s = s.replace(src, dst)
    s = _THOUSANDS.sub(lambda m: m.group(1) + m.group(2).replace(",", ""), s)
    while _TIMES_X.search(s):
        s = _TIMES_X.sub(r"\1*", s)
    s = _PERCENT.sub(r"\1" if reading.units else r"\1/100", s)
    s = re.sub(r"(?<![<>!=:])==?(?!=)", "=", s.replace(":=", "="))
    s = s.replace("**", "^")
    s = _NORM.sub(lambda m: f"zzqnorm({m.group(1) or m.group(2)})", s)
    s = _ABS.sub(r"Abs(\1)", s)
    s = _LEADING_ZEROS.sub("", s)
    s = _BARE_ARGUMENT.sub(_bracket_argument, s)
    s = _LETTER_RUN_CALL.sub(_unglue, s)
    s = re.sub(r"(?<=[0-9)])(" + "|".join(_NAMES_BY_LENGTH) + r")(?=\s*\()", r" \1", s)
    s = _rewrite_calculus(s, reading)
    s = re.sub(r"\bnabla\s+([a-zA-Z])\b", r"nabla_\1", s)
    s = re.sub(r"\bgrad\s*\(?\s*([a-zA-Z])\s*\)?(?![\w(])", r"nabla_\1", s)
    # "grad f(-1, 4)": the gradient at a point, as "∇f(-1, 4)" is
    s = re.sub(r"\bgrad\s+([a-zA-Z])(?=\s*\()", r"nabla_\1", s)
    return s


def _order(raw: str | None) -> int:
    return int(raw.lstrip("^")) if raw else 1


def _rewrite_calculus(s: str, reading: Reading = DEFAULT_READING) -> str:
    """Derivatives, primes, integrals, limits and based logarithms as helper calls."""
    s = _PARTIAL_NAMED.sub(lambda m: f"{m.group(2)}_{m.group(3)}{m.group(4) or ''}", s)
    s = _DY_DX.sub(lambda m: f"zzqdiff({m.group(2)}({m.group(3)}),{m.group(3)},{_order(m.group(1))})"
                   if m.group(2) not in "fghFGH" else f"{m.group(2)}_{m.group(3) * _order(m.group(1))}", s)
    prime_call = _PRIME_CALL if not reading.functions else \
        re.compile(rf"\b([fghyFGHuv{''.join(sorted(reading.functions))}])('+)\s*\(")
    s = prime_call.sub(lambda m: f"zzqp{len(m.group(2))}{m.group(1)}(", s)
    bare = {m.group(1) for m in _PRIME_BARE.finditer(s)}
    s = _PRIME_BARE.sub(lambda m: f"zzqdiff({m.group(1)}zzqfx,x,{len(m.group(2))})", s)
    for letter in bare:  # in "y'' + y = 0" the plain y is the function too
        s = re.sub(rf"(?<![A-Za-z_']){letter}(?![\w('(])", f"{letter}(x)", s)
    s = s.replace("zzqfx", "(x)")
    s = replace_calls(s, _LOG_BASE, lambda m, inner: f"zzqlog(({inner}),{m.group(1)})")
    s = _wrap_operator(s, _D_DX, lambda m, body: f"zzqdiff(({body}),{m.group(2)},{_order(m.group(1))})")
    s = _wrap_operator(s, _LIMIT, _limit_call)
    s = _rewrite_integrals(s)
    return s


def _limit_call(m: re.Match[str], body: str) -> str:
    point = m.group(2).replace(" ", "")
    side = {"+": "zzqlimr", "-": "zzqliml"}.get(m.group(3) or "", "zzqlim")
    return f"{side}(({body}),{m.group(1)},{point})"


def _operand_end(s: str, start: int) -> int:
    """Where the operand of a prefix operator (``d/dx``, ``lim``) ends: a bracket group if it
    starts with one, else the rest of the side up to the next top-level relation or comma."""
    i = start
    if i < len(s) and s[i] in "([":
        close = find_close(s, i)
        if close is not None and (close + 1 >= len(s) or s[close + 1] in " =<>,;)"):
            return close + 1
    depth = 0
    while i < len(s):
        ch = s[i]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            if depth == 0:
                return i
            depth -= 1
        elif depth == 0 and ch in "=<>,;" and not s.startswith("->", i - 1):
            return i
        i += 1
    return i


def _wrap_operator(s: str, pattern: re.Pattern[str], build: Callable[[re.Match[str], str], str]) -> str:
    out: list[str] = []
    pos = 0
    for _ in range(50):
        m = pattern.search(s, pos)
        if m is None:
            break
        end = _operand_end(s, m.end())
        body = s[m.end():end].strip() or "0"
        if body.startswith("[") and body.endswith("]"):
            body = body[1:-1]
        out.append(s[pos:m.start()])
        out.append(build(m, body))
        pos = end
    out.append(s[pos:])
    return "".join(out)


def _rewrite_integrals(s: str) -> str:
    for _ in range(20):
        m = _INTEGRAL.search(s)
        if m is None:
            return s
        rest = s[m.end():]
        lower = upper = None
        b = _BOUNDS_SUB.match(rest) or _BOUNDS_WORDS.match(rest)
        if b:
            lower, upper = b.group(1), b.group(2)
            rest = rest[b.end():]
        d = re.search(r"(?<![A-Za-z])d([a-z])(?![A-Za-z])", rest)
        if d is None:
            return s  # no differential: leave it, the parse will fail and say so
        body = rest[:d.start()].strip() or "1"
        bounds = f",({lower}),({upper})" if lower is not None else ""
        s = s[:m.start()] + f"zzqint(({body}),{d.group(1)}{bounds})" + rest[d.end():]
    return s


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
