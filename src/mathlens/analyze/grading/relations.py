"""Two rules about how an answer is stated: an approximation after the exact value, and a value
given with the name of what it is.

* `split_approximation`: in `x = \\frac{1}{3} \\approx 0.33` (also `≈`, `\\simeq`, "approximately",
  "or about") the exact part is the answer; the approximation is kept aside, and is compared only
  with a reference that is itself a decimal (`0.33`).
* `option_answer`: `(D) 42` names option D and its value: against a reference that is an option
  letter the label is compared, against anything else the value;
* `compare_named`: `\\cos(x) = \\frac{42}{59}` and `\\sin(x) = \\frac{42}{59}` state the same value
  of two different things. When both sides are equations and at least one left side only names
  the value (`\\cos(x)`, `f(2)`, `P(A)`, `\\angle ABC`, `AB`), they are equal only when the names
  are the same (as text, or as the same expression: `\\cos x` and `\\cos(x)`) and so are the
  values. Two equations that define a function (`f(x) = ...`, `y = ...`) keep the existing rule
  (their right sides are compared), and so do two equations in unknowns (`x = 3`, `y = 3`).
* `asked_value`: `a + b = 7`, where the question asks for `$a+b$`, states the value 7 of the
  expression asked for. An equation with an expression on its left is otherwise an answer of its
  own (the plane `2x + 3y - z = 4` is not 4), so the rule holds only when that left side stands
  in the question's text as a whole term and its right side shares no letter with it.

    >>> split_approximation(r"x = \\frac{1}{3} \\approx 0.33")
    ('x = \\\\frac{1}{3}', '0.33')
    >>> compare_named("f(2) = 5", "f(3) = 5", lambda a, b: "equal")
    'different'
    >>> asked_value("a + b = 7", "If $a - b = 1$ and $ab = 12$, find $a + b$.")
    ('7', 'a + b')
"""

from __future__ import annotations

import re
from collections.abc import Callable

from mathlens.analyze.readers.normalize import normalize_answer
from mathlens.analyze.readers.quick import decide
from mathlens.analyze.readers.statements import lhs_kind, split_equals

Status = str
_APPROX = re.compile(r"\s*,?\s*(?:or\s+)?(?:\\approx|≈|\\simeq|≃|\\doteq|(?<![A-Za-z])(?:approximately|approx\.?|"
                     r"about|roughly|nearly)(?![A-Za-z]))\s*")
_BRACKETED = re.compile(r"\s*\(\s*(?:\\approx|≈|approximately|approx\.?|about|roughly)\s*([^()]+?)\s*\)\s*$")
_NUMERIC = re.compile(r"^[-+−]?(?:\\?\$|€|£)?\s*\.?\d")
_BARE_NAME = re.compile(r"^\s*(?:\\?[A-Za-z]+(?:_\{?\w+\}?)?'*|[A-Za-z]\([a-z]\))\s*=?\s*$")
# `y`, `f(x)`, `g(t, s)`, `f'(x)`, `dy/dx`: left sides that define a function of a variable
_DEFINES = re.compile(r"^(?:y'*|[A-Za-z](?:_\w+)?'*\(\s*[a-z](?:\s*,\s*[a-z])*\s*\)|d\^?\d*y\s*/\s*dx\^?\d*|"
                      r"\\frac\{d\^?\{?\d*\}?y\}\{dx\^?\{?\d*\}?\})$")


def split_approximation(s: str) -> tuple[str, str | None]:
    """`(exact, approximation)`: the answer before an approximation sign and the value after it
    (None when there is none). `x \\approx 0.33` alone is the approximation itself."""
    bracketed = _BRACKETED.search(s)
    if bracketed is not None and s[: bracketed.start()].strip():  # `7/12 (about 0.583)`
        s = f"{s[: bracketed.start()].rstrip()} \\approx {bracketed.group(1)}"
    m = _APPROX.search(s)
    if m is None or m.start() == 0 or not s[: m.start()].strip():
        return s, None
    head, tail = s[: m.start()].strip(), s[m.end():].strip().rstrip(".")
    if not _NUMERIC.match(tail):
        return s, None  # "symmetric about the origin": not an approximation
    if _BARE_NAME.match(head):
        return tail, None  # "x ≈ 0.33": no exact value was given
    return head, tail


_OPTION = re.compile(r"^\s*(?:\\(?:text(?:bf)?|mathbf|textrm)\s*\{\s*)?\(\s*([A-Ea-e])\s*\)\s*\}?[\s~]*"
                     r"(?:\\[ ,;:!]\s*)*(?P<rest>.*)$", re.S)
_LETTER_ONLY = re.compile(r"^\s*(?:\\(?:text(?:bf)?|mathbf|textrm)\s*\{\s*)?\(?\s*([A-Ea-e])\s*\)?\s*\}?\s*$")


def option_answer(pred: str, ref: str) -> str:
    """`(D) 42` or `\\textbf{(C)}\\ 12` names an option and its value: against a reference that is
    an option letter the label is the answer (`D`), against anything else the value (`42`)."""
    m = _OPTION.match(pred)
    if m is None or not m.group("rest").strip():
        return pred
    letter = _LETTER_ONLY.match(ref)
    return m.group(1) if letter else m.group("rest").strip()


def _same_name(a: str, b: str) -> bool:
    if normalize_answer(a) == normalize_answer(b):
        return True
    read = decide(a, b)  # `\cos x` and `\cos(x)`: the same expression, read without the worker
    return read is not None and read[0] == "equal"


def compare_named(pred: str, ref: str, same: Callable[[str, str], Status]) -> Status | None:
    """The verdict on two equations naming their values (see the module docstring), or None when
    the rule does not apply. `same(a, b)` compares two values and returns a status."""
    ps, rs = split_equals(pred), split_equals(ref)
    if len(ps) != 2 or len(rs) != 2 or not all(x.strip() for x in (*ps, *rs)):
        return None
    left_p, left_r = ps[0].strip(), rs[0].strip()
    kinds = lhs_kind(left_p), lhs_kind(left_r)
    if "name" not in kinds or not all(k in ("name", "variable") for k in kinds):
        return None
    if _DEFINES.match(left_p) and _DEFINES.match(left_r):
        return None  # `f(x) = 2x + 3` against `y = 2x + 3`: the same function
    if not _same_name(left_p, left_r):
        return "different"
    return same(ps[1].strip(), rs[1].strip())


_MATH_MARKS = re.compile(r"\$+|\\[()\[\]]|\\(?:left|right)(?![A-Za-z])|\\[dt](?=frac)")
_AROUND_OPERATOR = re.compile(r"\s*([-+*/^=(),{}]|\\cdot|\\times)\s*")
_LETTERS = re.compile(r"[A-Za-z]")
_COMMAND = re.compile(r"\\[A-Za-z]+")


def _compact(s: str) -> str:
    """Math written without its delimiters, `\\left`/`\\right`, or spaces around operators, so
    that `$a + b$` and `a+b` read alike."""
    return _AROUND_OPERATOR.sub(r"\1", _MATH_MARKS.sub(" ", s)).strip()


def asked_value(pred: str, question: str) -> tuple[str, str] | None:
    """`(value, expression)` when `pred` is `expression = value` and the question asks for that
    expression (see the module docstring); None otherwise."""
    sides = split_equals(pred)
    if len(sides) != 2 or lhs_kind(sides[0]) != "expression":
        return None
    left, value = sides[0].strip(), sides[1].strip()
    letters = set(_LETTERS.findall(_COMMAND.sub("", value)))
    if not value or letters & set(_LETTERS.findall(_COMMAND.sub("", left))):
        return None  # `a + b = 2c` gives a value in terms of c; `a + b = 7 - a` gives none
    term = _compact(left)
    if len(term) < 3:
        return None
    # a whole term: not part of a longer one (`a+b` in `2a+b+c`), nor a side of an equation the
    # question gives (`a+b=7` in "if $a+b=7$ ...", which is what is known, not what is asked)
    whole = rf"(?<![\w\\^_{{+\-*/=]){re.escape(term)}(?![\w(^_+\-*/=<>])"
    return (value, left) if re.search(whole, _compact(question)) else None
