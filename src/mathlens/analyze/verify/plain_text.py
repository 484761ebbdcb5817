"""Plain keyboard notation rewritten into the string SymPy's parser reads (no SymPy needed).

``normalize`` turns Unicode operators, radicals, degrees, thousands separators, ``3 x 4``,
absolute values and norms, primes, ``dy/dx``, ``d/dx(...)``, limits, integrals and based
logarithms into a Python-like string: calculus notation becomes calls to helper names that start
with ``zzq`` (raw input may not contain them), which `plain` hands to ``parse_expr``. Only text
work happens here, so the answer checker can read answers this way without loading SymPy.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from mathlens.analyze.verify.reading import DEFAULT_READING, Reading
from mathlens.analyze.verify.text import find_close, replace_calls

#: the functions the parser knows by name (`plain._FUNCTIONS` maps each to its SymPy function)
FUNCTION_NAMES: tuple[str, ...] = (
    "sin", "cos", "tan", "cot", "sec", "csc", "arcsin", "arccos", "arctan", "asin", "acos", "atan",
    "arccot", "sinh", "cosh", "tanh", "ln", "log", "exp", "sqrt", "cbrt", "abs", "Abs", "floor", "ceil",
    "ceiling", "gcd", "lcm", "max", "min", "factorial", "binomial", "choose",
)
_FUNCTIONS = frozenset(FUNCTION_NAMES)
_NAMES_BY_LENGTH = sorted(FUNCTION_NAMES, key=len, reverse=True)
# Plain names a letter run may end with; "xsin(x)" is read as "x sin(x)", never x*s*i*n*x.
_LETTER_RUN_CALL = re.compile(r"[A-Za-z]+(?=\s*\()")

_UNICODE = {
    "−": "-", "–": "-", "×": "*", "·": "*", "⋅": "*", "÷": "/", "√": " sqrt", "π": "pi", "∞": "oo",
    "²": "^2", "³": "^3", "⁴": "^4", "≤": "<=", "≥": ">=", "≠": "!=", "→": "->", "⟨": "<", "⟩": ">",
    "θ": "theta", "α": "alpha", "β": "beta", "λ": "lambda_", "μ": "mu", "σ": "sigma", "φ": "phi",
    "∂": "∂", "∫": " integral ", "∇": "nabla ", "\u00a0": " ",
}
_PI_BEFORE_LETTER = re.compile(r"π(?=[A-Za-z])")
_TRIG_OF_PI_TIMES = re.compile(r"\b(sin|cos|tan|sec|csc|cot)\s*π([A-Za-z])(?![A-Za-z(])")
# "√3", "2√y", "√2.5": the radical applies to the number or letter right after it.
_RADICAL = re.compile(r"√\s*(\d+(?:\.\d+)?|[A-Za-z](?![A-Za-z(]))")
# "45°" is (45*pi/180): the factor binds to its number, so "2235° ÷ 360°" keeps its meaning.
_DEGREE_NUMBER = re.compile(r"(\d+(?:\.\d+)?)\s*°")
# A primed name that is not a function call or a derivative of y, u, v: m' is a name of its own.
_PRIMED_NAME = re.compile(r"(?<![A-Za-z_\\])([A-Za-z])('+)(?![\w('])")
_THOUSANDS = re.compile(r"(?<![\d.,])(\d{1,3})((?:,\d{3})+)(?![\d,])(?!\.\d*,)")
# "011" is 11 (a Python literal with a leading zero is not a number at all).
_LEADING_ZEROS = re.compile(r"(?<![\d.])0+(?=\d)")
# "2e-1" in a solution is 2e - 1 (e Euler's number or a name), not 0.2: a number, e and a signed
# number are not read as scientific notation (the letter then follows the reading rules for e;
# "1e-5" is no longer 0.00001). "2e5", with no sign, is still the literal 200000.
_NUMBER_E = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)([eE])(?=[-+]\d)")
# "sin x cos x" is sin(x)*cos(x), "ln 2x" is ln(2x): a function name before a bare argument
# takes that one argument (SymPy's implicit application would swallow the rest of the product).
_GREEK_OR_PI = r"(?:theta|alpha|beta|phi|pi)\b"
_BARE_ARGUMENT = re.compile(
    r"\b(sin|cos|tan|cot|sec|csc|sinh|cosh|tanh|arcsin|arccos|arctan|ln|log)(\^\s*\(?\d+\)?)?[ \t]+"
    rf"(\d+(?:\.\d+)?(?:\s*{_GREEK_OR_PI}|[a-zA-Z](?![a-zA-Z(_]))?|{_GREEK_OR_PI}"
    r"|[a-zA-Z](?![a-zA-Z(_]))")
# "3 x 4" is 3 times 4, but in "sin^2 x (1 - y)" the x follows an exponent: a variable.
_TIMES_X = re.compile(r"((?<![\w.^])\d+(?:\.\d+)?|(?<!\^\(\d)\))\s+[x×]\s+(?=[\d(]|\.\d)")
_PERCENT = re.compile(r"(\d)\s*%")
_ABS = re.compile(r"\|([^|]+)\|")
_NORM = re.compile(r"\|\|([^|]+)\|\||‖([^‖]+)‖")
_PRIME_CALL = re.compile(r"\b([fghyFGHuv])('+)\s*\(")
#: a bare primed y, u or v (`y''`, not the call `y'(x)`): the derivative of that function of x
PRIME_BARE = re.compile(r"\b([yuv])('+)(?![\w(])")
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
    if "π" in s:  # "πr²" is pi times r squared, not the letters p, i, r; "sin πx" is sin(pi*x)
        s = _PI_BEFORE_LETTER.sub("pi*", _TRIG_OF_PI_TIMES.sub(r"\1(pi*\2)", s))
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
    s = _NUMBER_E.sub(r"\1*\2", s)
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
    bare = {m.group(1) for m in PRIME_BARE.finditer(s)}
    s = PRIME_BARE.sub(lambda m: f"zzqdiff({m.group(1)}zzqfx,x,{len(m.group(2))})", s)
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
