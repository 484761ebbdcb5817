"""A fast path for everyday LaTeX: rewrite it into plain notation for the plain reader.

latex2sympy2's ANTLR grammar costs about 30 ms per expression; most LaTeX in solutions uses a
small vocabulary (``\\frac``, ``\\sqrt``, ``^{}``, ``\\cdot``, ``\\pi``, function names), which
this module turns into plain notation that the plain reader parses in about 1 ms. Anything else
(integrals, limits, sums, ``\\pm``, text, matrices...) returns None and goes to latex2sympy2.
"""

from __future__ import annotations

import re

_SIMPLE = {
    "cdot": "*", "times": "*", "div": "/", "pi": " pi ", "infty": " oo ", "le": "<=", "leq": "<=",
    "ge": ">=", "geq": ">=", "ne": "!=", "neq": "!=", "lt": "<", "gt": ">", "approx": "≈",
    "left": "", "right": "", "big": "", "Big": "", "bigg": "", "Bigg": "", "displaystyle": "",
    "langle": "<", "rangle": ">", "theta": " theta ", "alpha": " alpha ", "beta": " beta ",
    "phi": " phi ", "mu": " mu ", "sigma": " sigma ", "lambda": " lambda_ ",
    # Greek letters are names (latex2sympy2 would read \gamma as Euler's constant).
    "gamma": " gamma ", "delta": " delta ", "epsilon": " epsilon ", "varepsilon": " epsilon ",
    "omega": " omega ", "rho": " rho ", "tau": " tau ", "psi": " psi ", "chi": " chi ", "zeta": " zeta ",
    "eta": " eta ", "xi": " xi ", "nu": " nu ", "kappa": " kappa ", "varphi": " phi ", "vartheta": " theta ",
}
_FUNCTIONS = {"sin", "cos", "tan", "sec", "csc", "cot", "ln", "log", "exp", "arcsin", "arccos", "arctan",
              "sinh", "cosh", "tanh"}
_COMMAND = re.compile(r"\\([a-zA-Z]+)|\\(.)")
#: text written in LaTeX: a command, an escaped bracket or spacing, a braced script, a dollar sign
LATEX_HINT = re.compile(r"\\[A-Za-z]|\\[{}()\[\],;:! ]|[_^]\{|\$")
#: LaTeX the answer comparison does not send through `to_plain` although it might be taken: tuples
#: and intervals, a mixed number (`2\frac{1}{2}`), a function with a bare argument (`\sin x \cos x`);
#: Math-Verify reads them right
NOT_FAST = re.compile(r"[,\[\]]|\d\s*\\[dt]?frac|\\(?:sin|cos|tan|sec|csc|cot|ln|log|exp|arc\w+|sinh|cosh|tanh)"
                      r"(?!\s*(?:\(|\\left\())")


class _Unsupported(Exception):
    pass


def _group(s: str, i: int) -> tuple[str, int]:
    """The braced group starting at s[i] == '{' and the index after it."""
    depth = 0
    for j in range(i, len(s)):
        if s[j] == "{":
            depth += 1
        elif s[j] == "}":
            depth -= 1
            if depth == 0:
                return s[i + 1:j], j + 1
    raise _Unsupported("unbalanced braces")


def _arg(s: str, i: int) -> tuple[str, int]:
    """A command argument: a braced group or a single character."""
    while i < len(s) and s[i] == " ":
        i += 1
    if i >= len(s):
        raise _Unsupported("missing argument")
    if s[i] == "{":
        return _group(s, i)
    if s[i] == "\\":
        raise _Unsupported("command as a bare argument")
    return s[i], i + 1


def _convert(s: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(s):
        ch = s[i]
        if ch == "\\":
            m = _COMMAND.match(s, i)
            if m is None:
                raise _Unsupported("lone backslash")
            name = m.group(1)
            i = m.end()
            if name is None:
                sym = m.group(2)
                if sym in ",;:! ":
                    out.append(" ")
                elif sym in "{}":
                    out.append(sym)
                elif sym == "%":
                    out.append("%")
                else:
                    raise _Unsupported(f"\\{sym}")
            elif name in ("frac", "dfrac", "tfrac"):
                num, i = _arg(s, i)
                den, i = _arg(s, i)
                if re.match(r"\s*d", num) and re.match(r"\s*d", den):
                    raise _Unsupported("a derivative written as a fraction")
                out.append(f"(({_convert(num)})/({_convert(den)}))")
            elif name == "sqrt":
                if i < len(s) and s[i] == "[":
                    close = s.find("]", i)
                    if close < 0:
                        raise _Unsupported("sqrt index")
                    index = s[i + 1:close]
                    body, i = _arg(s, close + 1)
                    out.append(f"(({_convert(body)})^(1/({_convert(index)})))")
                else:
                    body, i = _arg(s, i)
                    out.append(f" sqrt({_convert(body)})")
            elif name in _FUNCTIONS:
                if s.startswith("_", i) or re.match(r"\^\s*\{?\s*-", s[i:]):
                    raise _Unsupported("a based logarithm or an inverse function")
                out.append(f" {name}")
            elif name in _SIMPLE:
                word = _SIMPLE[name]
                # "\theta_{prime}" is one name: no space between the letter and its subscript.
                out.append(" " + word.strip() if s.startswith("_", i) and word.strip().isalpha() else word)
            else:
                raise _Unsupported(f"\\{name}")
        elif ch in "^_":
            if i + 1 < len(s) and s[i + 1] == "{":
                body, i = _group(s, i + 1)
                if ch == "_":
                    if not re.fullmatch(r"[A-Za-z0-9]+", body):
                        raise _Unsupported("complex subscript")
                    out.append("_" + body)
                else:
                    out.append(f"^({_convert(body)})")
            else:
                out.append(ch)
                i += 1
        elif ch == "{":
            body, i = _group(s, i)
            out.append(f"({_convert(body)})")
        elif ch in "&$'\"#@;":
            raise _Unsupported(ch)
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def to_plain(latex: str) -> str | None:
    """Plain notation with the same meaning as `latex` (already normalised), or None when the
    snippet uses anything beyond the supported vocabulary."""
    try:
        return _convert(latex)
    except (_Unsupported, RecursionError):
        return None
