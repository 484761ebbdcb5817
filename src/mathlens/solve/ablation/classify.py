"""What kind of prompt element a math span is, and how symbolic notation reads in words.

The calculus seed (000, §3.2) decomposes a prompt into mathematical expressions, numerical and
coordinate references, instructional keywords and linguistic features, and its Table 1 also
ablates symbolic notation (`∇f`) on its own. Math spans fall into three of those types:

* ``coordinate`` — a point or tuple of numbers `(-1, 4)`, an interval `[0, 2]`, a value given to
  a variable `x = 2`, `t → 0`, a bare number or a quantity with a unit (`48`, `2 ft/s`);
* ``notation`` — an operator symbol standing on its own: `∇f`, `dy/dx`, `∂f/∂x`, `f'(x)`, `f_x`,
  `∫`, `Σ`, `lim`, `‖v‖`;
* ``expression`` — everything else: function definitions, equations, vectors, integrands.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

MathType = Literal["coordinate", "notation", "expression", "skip"]

_NUM = (r"[-−+]?(?:\d+(?:\.\d+)?|\.\d+)(?:/\d+)?(?:π|pi)?|[-−+]?\d*(?:π|pi|e)(?:/\d+)?"
        r"|[-−+]?(?:∞|inf(?:inity)?)")
# Angle-bracket vectors are expressions (the seed lists "coordinate vectors" with f(x) and ∇f).
_TUPLE = rf"[\(\[](?:{_NUM})(?:,(?:{_NUM}))+[\)\]]"
_REL = r"(?:=|→|->|<=|>=|<|>|≤|≥)"
_VAR = r"(?:[A-Za-z]\w{0,2}|\([A-Za-z](?:,[A-Za-z])+\))"
_COORD = re.compile(
    rf"^(?:{_TUPLE}|[A-Z](?:{_TUPLE})|{_VAR}{_REL}(?:{_TUPLE}|{_NUM})|\$?(?:{_NUM})%?|[A-Z]=(?:{_TUPLE}))$")
_QUANTITY = re.compile(rf"^\$?(?:{_NUM})\s+[A-Za-z]{{1,6}}(?:/[A-Za-z]{{1,6}})?(?:\^\d|²|³)?$")
_NUMBER_ONLY = re.compile(rf"^\$?(?:{_NUM})%?$")

_FRAC = re.compile(r"\\[dt]?frac\{([^{}]*)\}\{([^{}]*)\}")
_LATEX_NOISE = re.compile(r"\\left|\\right|\\[,;:! ]|\\displaystyle|\\mathrm|\\operatorname")
_LATEX_WORDS = {r"\nabla": "∇", r"\partial": "∂", r"\infty": "∞", r"\pi": "π", r"\to": "→", r"\leq": "≤",
                r"\geq": "≥", r"\le": "≤", r"\ge": "≥", r"\int": "∫", r"\sum": "Σ", r"\prod": "∏",
                r"\lim": "lim", r"\iint": "∬", r"\oint": "∮", r"\|": "‖", r"\parallel": "‖", r"\cdot": "·",
                r"\langle": "⟨", r"\rangle": "⟩"}


def normalize(text: str, latex: bool) -> str:
    """A compact form for classification: delimiters, LaTeX spacing and blanks removed."""
    s = text
    if latex:
        s = re.sub(r"^\$\$|\$\$$|^\$|\$$|^\\\(|\\\)$|^\\\[|\\\]$", "", s.strip())
        s = _LATEX_NOISE.sub("", s)
        for _ in range(3):
            s = _FRAC.sub(lambda m: f"{_unbrace(m.group(1))}/{_unbrace(m.group(2))}", s)
        for word, sym in sorted(_LATEX_WORDS.items(), key=lambda kv: -len(kv[0])):
            s = re.sub(re.escape(word) + r"(?![A-Za-z])", sym, s)
        s = re.sub(r"\\(?:vec|overrightarrow|mathbf|hat|widehat)\{?([A-Za-z])\}?", r"vec\1", s)
        s = re.sub(r"\^\{([^{}]*)\}", r"^\1", s)
        s = re.sub(r"_\{([^{}]*)\}", r"_\1", s)
    s = s.replace("−", "-").replace("||", "‖")
    return re.sub(r"\s+", "", s)


def _unbrace(s: str) -> str:
    s = s.strip()
    return s if re.fullmatch(r"[\w∂]+", s.replace(" ", "")) else f"({s})"


@dataclass(frozen=True)
class Notation:
    """A recognised symbol: the word that names it (for apposition) and how it reads aloud."""

    names: tuple[str, ...]
    words: str


def notation_of(norm: str) -> Notation | None:
    """Read a normalised span as stand-alone notation, or None when it is not one.

    >>> notation_of("∇f").words
    'the gradient of f'
    """
    if m := re.fullmatch(r"∇([A-Za-z])?", norm):
        return Notation(("gradient",), f"the gradient of {m.group(1)}" if m.group(1) else "the gradient")
    if m := re.fullmatch(r"\(?(d|∂)([A-Za-z])?\)?/\(?(d|∂)([A-Za-z])\)?", norm):
        partial = m.group(1) == "∂"
        kind = "partial derivative" if partial else "derivative"
        what = f" of {m.group(2)}" if m.group(2) else ""
        return Notation(("derivative", "partial"), f"the {kind}{what} with respect to {m.group(4)}")
    if m := re.fullmatch(r"([A-Za-z])('+)(?:\(([^()]*)\))?", norm):
        order = {1: "", 2: "second ", 3: "third "}.get(len(m.group(2)), f"order-{len(m.group(2))} ")
        arg = m.group(3)
        at = f" at {arg}" if arg and re.fullmatch(_NUM + r"|" + _TUPLE, arg) else ""
        return Notation(("derivative",), f"the {order}derivative of {m.group(1)}{at}")
    if m := re.fullmatch(r"([fghuzFGw])_([xyzt]{1,2})", norm):
        wrt = " and ".join(m.group(2))
        order = "second " if len(m.group(2)) == 2 else ""
        return Notation(("partial", "derivative"),
                        f"the {order}partial derivative of {m.group(1)} with respect to {wrt}")
    if norm in {"∫", "∬", "∭", "∮"}:
        return Notation(("integral",), "the integral")
    if norm in {"Σ", "∑"}:
        return Notation(("sum", "series"), "the sum")
    if norm == "∏":
        return Notation(("product",), "the product")
    if norm == "lim":
        return Notation(("limit",), "the limit")
    if m := re.fullmatch(r"[‖|](vec)?([A-Za-z])[‖|]", norm):
        return Notation(("length", "norm", "magnitude"), f"the length of {m.group(2)}")
    if m := re.fullmatch(r"vec([A-Za-z])", norm):
        return Notation(("vector",), f"the vector {m.group(1)}")
    return None


_FUNCTION_NAME = re.compile(r"(?:sin|cos|tan|sec|csc|cot|arcsin|arccos|arctan|sinh|cosh|tanh|ln|log|exp|sqrt"
                            r"|d[a-zθ])")
_UNIT = re.compile(r"(?:[A-Za-z]{2,5}|m|s|h|g)/[A-Za-z]{1,5}(?:\^\d|²|³)?")


def classify(text: str, latex: bool) -> MathType:
    """The element type of one math span (see the module docstring); `skip` for a bare function
    name ("where ln is the natural logarithm") or a unit ("in ft/s"), which are not elements."""
    norm = normalize(text, latex)
    if _COORD.match(norm) or _QUANTITY.match(text.strip()):
        return "coordinate"
    if notation_of(norm) is not None:
        return "notation"
    if _FUNCTION_NAME.fullmatch(norm) or _UNIT.fullmatch(norm):
        return "skip"
    return "expression"


def is_bare_number(text: str, latex: bool) -> bool:
    """A number or quantity with no variable or bracket: removed alone, without its preposition."""
    return bool(_NUMBER_ONLY.match(normalize(text, latex)) or _QUANTITY.match(text.strip()))
