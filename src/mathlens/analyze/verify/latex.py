"""LaTeX (``\\frac``, ``\\sqrt``, ``\\int``, ``\\lim``, ``\\nabla f``) into SymPy.

The conversion itself is latex2sympy2_extended's (the parser behind Math-Verify); this module
rewrites the notation it drops or misreads (primes, partial-derivative names, ``\\nabla f``,
degrees) and parses with evaluation off, so that the caller can bound the tree first.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

import sympy

from mathlens.analyze.verify.plain_text import PRIME_BARE
from mathlens.analyze.verify.reading import DEFAULT_READING, Reading


@cache
def _converter() -> tuple[Any, Any]:
    """latex2sympy2 and its configuration, imported on first use: most LaTeX goes through the fast
    rewrite into plain notation, and the grammar costs half a second to load."""
    from latex2sympy2_extended import latex2sympy
    from latex2sympy2_extended.latex2sympy2 import ConversionConfig

    return latex2sympy, ConversionConfig(lowercase_symbols=False, interpret_as_mixed_fractions=False)


def latex2sympy(text: str) -> Any:
    """Convert LaTeX with latex2sympy2 under this project's configuration (a norm ``‖v‖`` is read
    as ``|v|``: the step checker takes the length of a vector inside bars)."""
    convert, config = _converter()
    return convert(text.replace("‖", "|"), conversion_config=config)

_SPACING = re.compile(r"\\(?:left|right|big|Big|bigg|Bigg)(?![a-zA-Z])|(?<!\\)\\[,;:! ]|\\q?quad(?![a-zA-Z])|"
                      r"\\displaystyle(?![a-zA-Z])|\\limits(?![a-zA-Z])")
_BOXED = re.compile(r"\\(?:boxed|fbox)\{")
_PARTIAL = re.compile(r"\\frac\{\s*\\partial(?:\^\{?(\d)\}?)?\s*([a-zA-Z])\s*\}\{\s*\\partial\s*([a-z])"
                      r"(?:\^\{?(\d)\}?)?\s*(?:\\partial\s*([a-z]))?\s*\}")
_DY_DX = re.compile(r"\\frac\{\s*d(?:\^\{?(\d)\}?)?\s*([a-zA-Z])\s*\}\{\s*d\s*([a-z])(?:\^\{?\d\}?)?\s*\}")
# "dz/dt" typed with a slash inside LaTeX is the derivative \frac{dz}{dt}, not dz times 1/dt.
_SLASH_DERIVATIVE = re.compile(r"(?<![A-Za-z\\])d([a-zA-Z])\s*/\s*d([a-z])(?![A-Za-z(])")
_PRIME = re.compile(r"([a-zA-Z])('+|\^\{?\\prime\}?)\s*\(")
_NABLA_CALL = re.compile(r"\\nabla\s*([a-zA-Z])\s*\(")
_NABLA = re.compile(r"\\nabla\s*([a-zA-Z])")
# "90^\circ" and "90^{\circ}": a brace is taken only with its partner ("\frac{1 - \cos 90^\circ}{2}").
_DEGREES = re.compile(r"\^\s*(?:\{\s*\\circ\s*\}|\\circ(?![a-zA-Z]))")
_DEGREE_NUMBER = re.compile(rf"(\d+(?:\.\d+)?)\s*{_DEGREES.pattern}")
# "A_{\text{hexagon}}": a subscript in words is part of the name.
_TEXT_SUBSCRIPT = re.compile(r"_\{\s*\\(?:text|mathrm)\{([A-Za-z ]+)\}\s*\}")
# A unit with an exponent ("\text{ cm}^3") goes as a whole, or its exponent lands on the number.
_TEXT_POWER = re.compile(r"\\(?:text|mathrm|textbf|mbox)\{\s*[A-Za-z][A-Za-z ]*\}\s*\^\s*\{?\d\}?")
_TEXT = re.compile(r"\\(?:text|mathrm|textbf|mbox)\{\s*([^{}]*)\}")
# A primed name that is not a function call or a derivative of y, u, v: m' is a name of its own.
#: a function's name written without its backslash in LaTeX (``\frac{d}{dx} sin(x)``), which
#: latex2sympy2 reads as a product of letters (s·i·n)
_BARE_FUNCTION = re.compile(r"(?<![A-Za-z\\])(arcsin|arccos|arctan|sinh|cosh|tanh|sin|cos|tan|sec|csc|cot|"
                            r"ln|log|exp)(?![A-Za-z])")
# "\\log_2{8} \\cdot 2", "\\log_2 3 \\cdot \\log_3 4": a function's bare argument ends at an explicit
# product sign (or at the next logarithm), where latex2sympy2 would take the whole product.
_ARGUMENT_BEFORE_PRODUCT = re.compile(
    r"(\\(?:log|ln|sin|cos|tan|sec|csc|cot|sinh|cosh|tanh|arcsin|arccos|arctan|exp)(?:_\{[^{}]*\}|_\w)?)\s*"
    r"(\{[^{}]*\}|\d+(?:\.\d+)?|[A-Za-z](?![A-Za-z]))(?=\s*(?:\\cdot|\\times|\\(?:log|ln)(?![A-Za-z])))")
_SUBSCRIPTED_I = re.compile(r"(?<![A-Za-z\\])I_(\{[^{}]*\}|\w)")
_PRIMED_NAME = re.compile(r"(?<![A-Za-z\\])([A-Za-z])('+)(?![\w('])")


def normalize(text: str, reading: Reading = DEFAULT_READING) -> str:
    """Rewrite the LaTeX constructs latex2sympy2 drops or misreads."""
    s = _SPACING.sub(" ", re.sub(r"\\left\s*\.", " ", text))  # "\left. f \right|_{x=2}": no bracket opens
    s = _evaluated_between(s)
    s = _derivative_before_bar(s)
    s = re.sub(r"\\([a-zA-Z]+)('+)", lambda m: f"\\{m.group(1)}_{{{'prime' * len(m.group(2))}}}", s)
    s = _PRIMED_NAME.sub(lambda m: m.group() if m.group(1) in "yuvfghFGH" else
                         f"{m.group(1)}_{{{'prime' * len(m.group(2))}}}", s)
    s = _unwrap_boxed(s)
    # "\|v\|", "\left\| v \right\|": a norm, which the plain reader knows as "‖v‖"
    s = re.sub(r"\\left\s*\\\||\\right\s*\\\||\\\|", "‖", s)
    s = s.replace(r"\dfrac", r"\frac").replace(r"\tfrac", r"\frac")
    s = re.sub(r"\\frac\s*(\d)\s*(\d)", r"\\frac{\1}{\2}", s)  # \frac54 -> \frac{5}{4}
    s = re.sub(r"\\frac\s*(\{[^{}]*\})\s*(\d)", r"\\frac\1{\2}", s)
    s = _explicit_products(s)
    s = _PARTIAL.sub(_partial_name, s)
    s = _SLASH_DERIVATIVE.sub(r"\\frac{d\1}{d\2}", s)
    s = _DY_DX.sub(_total_derivative, s)
    s = _PRIME.sub(lambda m: f"zzqprime{_prime_order(m.group(2))}{m.group(1)}(", s)
    s = PRIME_BARE.sub(lambda m: rf"\frac{{d}}{{dx}} {m.group(1)}(x)", s)
    s = _NABLA_CALL.sub(lambda m: f"zzqgrad0{m.group(1)}(", s)
    s = _NABLA.sub(r"\\nabla_{\1}", s)
    if reading.units:
        s = _DEGREES.sub(" ", s)
    else:
        s = _DEGREE_NUMBER.sub(r"(\1\\cdot\\frac{\\pi}{180})", s)
        s = _DEGREES.sub(r"\\cdot\\frac{\\pi}{180}", s)
    # A named operation (\text{gcd}(a, b), \operatorname{lcm}) must not vanish and leave its
    # arguments behind as a bare pair: it becomes an unknown symbol that cannot be checked.
    s = re.sub(r"\\(?:text|mathrm|operatorname)\{\s*[A-Za-z]{2,}\s*\}\s*(?=[(\[])", r"\\mathrm{zzqop}", s)
    s = _TEXT_SUBSCRIPT.sub(lambda m: "_{" + m.group(1).replace(" ", "") + "}", s)
    s = _TEXT_POWER.sub(" ", s)
    s = re.sub(r"\\(gcd|lcm|max|min|deg|det)\b", r"\\mathrm{zzqop}", s)
    s = _TEXT.sub(lambda m: m.group(1) if m.group(1).strip() in ("", "and", "or")
                  else m.group() if m.group(1) == "zzqop" else " ", s)
    s = s.replace("\\%", " " if reading.units else "\\cdot\\frac{1}{100}")
    s = _BARE_FUNCTION.sub(r"\\\1", s)
    s = _ARGUMENT_BEFORE_PRODUCT.sub(lambda m: f"{m.group(1)}({m.group(2).strip('{}')})", s)
    # "I_1" is a name (an integral the solution calls I_1): latex2sympy2 would read the imaginary
    # unit and drop the subscript; the name is put back by `_plain_names`
    s = _SUBSCRIPTED_I.sub(r"\\mathrm{zzqcapi}_\1", s)
    return s.strip()


_EVAL_BAR = re.compile(r"\|\s*[_^]")
_RELATION = re.compile(r"=|<|>|\\[lg]eq?(?![a-zA-Z])|\\approx|\\neq")
_DERIVATIVE = re.compile(r"\\frac\s*\{\s*(?:d|\\partial)(?![a-zA-Z])|\\partial")


#: the bounds after an evaluation bracket or bar: `]_0^3`, `|_{1}^{e}`
_BOUNDS = re.compile(r"(?P<mark>[\]|])\s*_\s*(?P<a>\{[^{}=]*\}|[^\s{}=^\\])\s*\^\s*(?P<b>\{[^{}]*\}|[^\s{}\\])")
_LETTER = re.compile(r"(?<![\\A-Za-z])([a-zA-Z])(?![A-Za-z])")
_DIFFERENTIAL = re.compile(r"(?<![\\A-Za-z])d\s*([a-z])(?![A-Za-z])")


def _evaluated_between(s: str) -> str:
    """``\\left[\\frac{x^3}{3}\\right]_0^3`` (also ``[F]_a^b`` and ``F\\big|_a^b``): F at the upper bound
    minus F at the lower one, in the one variable F has (or the integral's, ``dx``, when F has
    several letters). With no such variable the text is left as it is."""
    out, pos = [], 0
    for m in _BOUNDS.finditer(s):
        if m.start() < pos:
            continue
        if m.group("mark") == "]":
            depth, start = 0, -1
            for i in range(m.start(), pos - 1, -1):
                depth += {"]": 1, "[": -1}.get(s[i], 0)
                if depth == 0:
                    start = i
                    break
            if start < 0:
                continue
            body, lead = s[start + 1:m.start()], start
        else:
            lead = max((r.end() for r in _RELATION.finditer(s, pos, m.start())), default=pos)
            body = s[lead:m.start()]
        if not body.strip() or body.count("{") != body.count("}"):
            continue
        letters = {x for x in _LETTER.findall(re.sub(r"\\[A-Za-z]+", " ", body)) if x != "e"}
        wanted = set(_DIFFERENTIAL.findall(s)) & letters if len(letters) > 1 else letters
        if len(wanted) != 1:
            continue
        var = wanted.pop()
        upper, lower = (_at(body, var, m.group(k)) for k in ("b", "a"))
        out.append(f"{s[pos:lead]} (({upper}) - ({lower}))")
        pos = m.end()
    out.append(s[pos:])
    return "".join(out)


def _at(body: str, var: str, bound: str) -> str:
    """`body` with its letter `var` replaced by the bound (``{3}`` or ``3``) in brackets."""
    value = f"({bound[1:-1] if bound.startswith('{') else bound})"
    return _LETTER.sub(lambda x: value if x.group(1) == var else x.group(), body)


def _derivative_before_bar(s: str) -> str:
    """``\\frac{d}{dx}(x^3)\\big|_{x=2}``: differentiate, then evaluate at x = 2. latex2sympy2
    applies the bar to ``(x^3)`` alone, before the derivative (giving the derivative of 8, which
    is 0), so a side holding a derivative before a bar is bracketed whole."""
    out, pos = [], 0
    for bar in _EVAL_BAR.finditer(s):
        start = max((r.end() for r in _RELATION.finditer(s, pos, bar.start())), default=pos)
        body = s[start:bar.start()]
        if _DERIVATIVE.search(body) and body.count("{") == body.count("}") and body.count("(") == body.count(")"):
            out.append(f"{s[pos:start]}({body.strip()})")
            pos = bar.start()
    out.append(s[pos:])
    return "".join(out)


def _explicit_products(s: str) -> str:
    """Write juxtaposed numbers and brackets as products.

    latex2sympy2 reads an integer followed by a positive rational as a mixed number whatever its
    configuration says, so ``(-1)(4)`` would become -5 and ``2\frac{1}{2}`` 5/2; we read
    juxtaposition as multiplication, as the plain reader does.
    """
    # A whole number right before a fraction of whole numbers is a mixed number (3\frac{1}{4}).
    s = re.sub(r"(?<![\w.}^])(\d+)\s*\\frac\{(\d+)\}\{(\d+)\}", r"(\1+\\frac{\2}{\3})", s)
    s = re.sub(r"\)\s*\(", r")\\cdot(", s)
    s = re.sub(r"(?<![_\d])(\d+)\s*\(", r"\1\\cdot(", s)  # not a subscript: \log_8 (x)
    s = re.sub(r"\)\s*(\d)", r")\\cdot \1", s)
    return re.sub(r"(\d)\s*\\frac", r"\1\\cdot\\frac", s)


def _prime_order(mark: str) -> int:
    return mark.count("'") or 1


def _partial_name(m: re.Match[str]) -> str:
    order = int(m.group(1) or 1)
    first, second = m.group(3), m.group(5)
    if second:
        return f"{m.group(2)}_{{{first}{second}}}"
    return f"{m.group(2)}_{{{first * max(order, int(m.group(4) or 1))}}}"


def _total_derivative(m: re.Match[str]) -> str:
    order = int(m.group(1) or 1)
    name, var = m.group(2), m.group(3)
    wrt = var if order == 1 else f"{var}^{order}"
    top = "d" if order == 1 else f"d^{order}"
    return rf"\frac{{{top}}}{{d{wrt}}} {name}({var})"


def _unwrap_boxed(s: str) -> str:
    for _ in range(5):
        m = _BOXED.search(s)
        if m is None:
            return s
        depth = 0
        for i in range(m.end() - 1, len(s)):
            if s[i] == "{":
                depth += 1
            elif s[i] == "}":
                depth -= 1
                if depth == 0:
                    s = s[:m.start()] + s[m.end():i] + s[i + 1:]
                    break
        else:
            return s
    return s


_PRIME_CALL = re.compile(r"zzq(prime|grad)(\d)([a-zA-Z])\(")


def parse_side(text: str) -> sympy.Basic:
    """Parse one (normalised) LaTeX side without evaluating numbers where possible."""
    text = text.strip()
    primes = list(_PRIME_CALL.finditer(text))
    if primes:
        return _parse_with_primes(text)
    try:
        with sympy.evaluate(False):
            value = latex2sympy(text)
    except Exception:
        # A few rules (mixed fractions such as 2\frac12) fail unevaluated; without powers or
        # factorials nothing in the side can grow, so an evaluated parse is safe.
        if "^" in text or "!" in text or "binom" in text:
            raise
        value = latex2sympy(text)
    if isinstance(value, sympy.MatrixBase):
        value = sympy.ImmutableMatrix(value)
    if not isinstance(value, sympy.Basic):
        raise TypeError(f"not a mathematical value: {type(value).__name__}")
    return _plain_names(value)


def _plain_names(value: sympy.Basic) -> sympy.Basic:
    """``f_{xy}`` -> ``f_xy``: the same name the plain reader gives; in LaTeX a lone ``i`` is
    the imaginary unit (as in MATH solutions) unless it is also used as an index."""
    names: dict[sympy.Basic, sympy.Basic] = {
        s: sympy.Symbol(s.name.replace("{", "").replace("}", "").replace("zzqcapi", "I")) for s in value.free_symbols
        if isinstance(s, sympy.Symbol) and ("{" in s.name or "}" in s.name or s.name.startswith("zzqcapi"))}
    symbols = {getattr(s, "name", "") for s in value.free_symbols}
    if "i" in symbols and not any(n.endswith("_i") for n in symbols) and not value.has(sympy.Sum):
        names[sympy.Symbol("i")] = sympy.I
    return value.xreplace(names) if names else value


def _parse_with_primes(text: str) -> sympy.Basic:
    """Replace ``f'(x)`` by a placeholder symbol, parse, then put ``Derivative(f(x), x)`` back."""
    replacements: dict[sympy.Symbol, sympy.Basic] = {}
    out: list[str] = []
    pos = 0
    for n, m in enumerate(_PRIME_CALL.finditer(text)):
        close = text.find(")", m.end())
        if close < 0:
            raise ValueError("unbalanced bracket after a prime")
        args = [a.strip() for a in text[m.end():close].split(",") if a.strip()]
        if not args or not all(re.fullmatch(r"[a-zA-Z0-9.+-]+", a) for a in args):
            raise ValueError("unsupported arguments of a primed function")
        placeholder = f"zzqplaceholder{chr(ord('a') + n % 26)}"
        syms = [sympy.sympify(a) for a in args]
        deriv: sympy.Basic
        if m.group(1) == "grad":  # \nabla f(-1, 4): the gradient at a point
            deriv = sympy.Function(f"nabla_{m.group(3)}")(*syms)
        else:
            fn = sympy.Function(m.group(3))
            var = syms[0] if isinstance(syms[0], sympy.Symbol) else sympy.Symbol("x")
            deriv = sympy.Derivative(fn(var), (var, int(m.group(2))))
            if var != syms[0]:
                deriv = sympy.Subs(deriv, var, syms[0])
        replacements[sympy.Symbol(placeholder)] = deriv
        out.append(text[pos:m.start()])
        out.append(f" \\mathrm{{{placeholder}}} ")
        pos = close + 1
    out.append(text[pos:])
    with sympy.evaluate(False):
        value = latex2sympy("".join(out))
    if not isinstance(value, sympy.Basic):
        raise TypeError(f"not a mathematical value: {type(value).__name__}")
    return value.xreplace(replacements)
