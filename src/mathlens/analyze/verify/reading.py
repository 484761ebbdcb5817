"""How a solution's notation is read: choices that depend on the whole solution, not one snippet.

A few symbols mean different things in different solutions. ``e`` is Euler's number unless the
solution uses it as a variable (``e = 5``, ``a + b + c + d + e``); ``p(x)`` is a function call
when the solution defines ``p(x) = ...``, a product otherwise; ``%`` and ``°`` are either
arithmetic (``/100``, ``π/180``) or units (``50%`` as the number 50, ``2235° ÷ 360°``).
`reading_for` decides the first two from the question and the steps; the unit reading is tried by
the step checker as a second reading of a claim (a claim is false only if false under both).

    >>> reading_for(["Let e = 5 and f = 2."]).e_variable
    True
    >>> sorted(reading_for(["p(x) = x^2 + 1, so p(2) = 5"]).functions)
    ['p']
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace

# "e = 5", "e \le 3", "e, f", "d + e": e stated or listed as a quantity (not "e^x", "2e").
_E_VARIABLE = re.compile(
    r"(?<![\w\\^.{'])e\s*&?\s*(?:=|<|>|\\le|\\ge|\\neq|≤|≥)(?![=>])"
    r"|(?<![\w\\])[a-d]\s*[,+]\s*e(?![\w^])|(?<![\w\\])\d*[a-z]\s*\+\s*e\s*&?\s*=(?!=)"
    r"|(?<![\w\\^])e\s*[,+]\s*[f-h](?![\w(])")
_FUNCTION_BEFORE = re.compile(r"(?:ln|log|exp)\s*$")
# A function defined by name: "p(x) = ...", "q(t) =", "P(n) :=".
_FUNCTION_DEF = re.compile(r"(?<![\w\\])([a-zA-Z])\s*\(\s*[a-z]\s*\)\s*:?=")
# Letters never taken as function names (constants, differentials, common variables).
_NOT_FUNCTIONS = frozenset("edxyz")
_EULER = re.compile(r"\\ln\b|\bln\b|\bexp\b|\\exp\b|(?<![A-Za-z\\])e\s*\^\s*\{?[^}\s]{0,12}[a-z]"
                    r"|euler|natural log", re.I)
# A single letter next to an operator, bracket, number or math delimiter: a quantity of the
# solution ("a + b", "f(x, y)", "$x$", "2x").
_LETTER = re.compile(r"(?:(?<=[=+\-*/^(),<>{}$\d])|(?<=[=+\-*/^(),<>{}$]\s))([a-zA-Z])(?![A-Za-z])"
                     r"|(?<![A-Za-z\\])([a-zA-Z])(?=\s?[=+\-*/^(),<>{}$])")
_RADIANS = re.compile(r"radian|\b(?:sin|cos|tan|cot|sec|csc)\s*\\?(?:left)?\(?[^)=]{0,20}(?:π|\\pi|\bpi\b)", re.I)
_MAX_SCAN = 200_000


@dataclass(frozen=True)
class Reading:
    """Per-solution reading choices, passed to every parse of the solution.

    `e_variable`: ``e`` is a plain name. `functions`: extra letters read as function names when
    applied to brackets (``f g h F G H`` always are). `units`: ``%`` and ``°`` are units that
    leave the number as written (the second reading of a claim).
    """

    e_variable: bool = False
    functions: frozenset[str] = frozenset()
    units: bool = False
    #: what confirms a guess (`guesses.py`): ``e`` is Euler's number (the solution writes ``ln``,
    #: ``exp``, ``e^{...x...}`` or names Euler); single letters the solution uses as quantities
    #: (next to an operator, bracket or number); angles are in radians (``π`` in a trigonometric
    #: argument, or the word "radian")
    euler: bool = False
    letters: frozenset[str] = frozenset()
    radians: bool = False

    def as_units(self) -> Reading:
        """The same reading with ``%`` and ``°`` as units."""
        return replace(self, units=True)


DEFAULT_READING = Reading()


def reading_for(texts: Iterable[str]) -> Reading:
    """The reading of a solution made of `texts` (question first, then the steps)."""
    text = "\n".join(t[:_MAX_SCAN] for t in texts if t)[:_MAX_SCAN]
    # "\\ln e = 1", "exp e": e as the argument of a function is Euler's number, not a quantity
    e_variable = any(not (m.group().startswith("e") and _FUNCTION_BEFORE.search(text, max(0, m.start() - 8), m.start()))
                     for m in _E_VARIABLE.finditer(text))
    functions = frozenset(m.group(1) for m in _FUNCTION_DEF.finditer(text)
                          if m.group(1) not in _NOT_FUNCTIONS and m.group(1) not in "fghFGH")
    letters = frozenset(a or b for a, b in _LETTER.findall(text))
    return Reading(e_variable=e_variable, functions=functions, euler=bool(_EULER.search(text)), letters=letters,
                   radians=bool(_RADIANS.search(text)))
