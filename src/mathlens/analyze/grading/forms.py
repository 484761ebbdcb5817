"""Rewrite an answer string into the form it is compared in, before any parsing.

Cheap, string-only steps, run in the calling process:

* `prepare`: `\\mathrm{e}` / `\\mathrm{i}` become `e` / `i` (Math-Verify drops them: it reads
  `2\\mathrm{e}^3` as `2`); a sentence "the radius is infinity" is reduced to `infinity`;
  `(E)` is `E`; unit words after a symbolic answer go (`128*pi/5 cubic units`);
  `\\begin{cases} x = 1 \\\\ y = 2 \\end{cases}` becomes `x = 1, y = 2`;
* `items`: the members of a list written with commas, semicolons, "or", "and", `\\{...\\}` or
  `±`; a parenthesised tuple, a vector or an interval is one item;
* `degrees_to_radians`: `\\sin(90^\\circ - x)` -> `\\sin(90\\pi/180 - x)`, inside trig only.

    >>> prepare("128*pi/5 cubic units")
    '128*pi/5'
    >>> items("x = -2 or x = 1")
    ['x = -2', 'x = 1']
"""

from __future__ import annotations

import re

from mathlens.analyze.grading.structures import split_brackets
from mathlens.analyze.readers.normalize import PLUS_MINUS, answer_word
from mathlens.analyze.readers.numberwords import mixed_in_words, words_to_digits
from mathlens.analyze.readers.numeric import read_number
from mathlens.analyze.readers.setwords import sets_in_words
from mathlens.analyze.readers.statements import (
    FUNCTION_NAMES,
    LINK,
    alternatives,
    lhs_kind,
    reduce_statement,
    split_equals,
    split_top_level,
)

MAX_ITEMS = 24

_LATEX_SPACE = re.compile(r"(?<!\\)\\(?:[,;:]|\s)|~")
_ROMAN_CONST = re.compile(r"\\(?:mathrm|operatorname|text|mathit)\s*\{\s*([ei])\s*\}")
_ENVS = r"(?:cases|aligned|align\*?|gathered)"
_CASES = re.compile(r"\\begin\{" + _ENVS + r"\}(.*?)\\end\{" + _ENVS + r"\}", re.S)
_TRAILING_TEXT = re.compile(r"\s*\\(?:text|textnormal|textrm|textit|textsf|mbox|mathrm|operatorname)\s*"
                            r"\{\s*(?!per\s*cent|pct)[A-Za-z][A-Za-z .^23/]*\}(?:\s*\^\s*\{?[23]\}?)?\s*$")
_SQUARE_METRES = re.compile(r"\s+m\s*\^\s*\{?[23]\}?\s*$")
_UNIT_TAIL = re.compile(r"(?:\s+[A-Za-z]{2,}\.?(?:\^?[23])?)+\s*$")
_LETTER = re.compile(r"^\(\s*([A-Za-z])\s*\)$|^\\text\{\s*\(?([A-Za-z])\)?\s*\}$|^([A-Z])\)$")
_MIXED = re.compile(r"^(-?)(\d+)\s+(\d+)\s*/\s*(\d+)$")
_DECIMAL_COMMA = re.compile(r"^-?\d+,(?!\d{3}$)\d+$")  # `0,25`; `1,000` is a thousand, `3, 5` a list
_PM_SIGN = re.compile(r"±|\\pm(?![A-Za-z])|\+/-")
_RELATION = re.compile(r"<=|>=|≤|≥|\\[lg]eq?\b|\\[lg]t\b|(?<![-<])<(?![-=])|(?<![->])>(?!=)")
_DEGREE = re.compile(r"(\d+(?:\.\d+)?)\s*(?:\^\s*\{?\s*\\circ\s*\}?|°|\\degree|\s*degrees?\b)")
_LEFT_RIGHT = re.compile(r"\\(?:left|right)(?=[()\[\]|.<>]|\\[{}])|\\displaystyle")
_TWO_WORDS = re.compile(r"[A-Za-z]{3,}\s+[A-Za-z]{3,}")
_DIGIT_OR_BRACE = re.compile(r"[\d}]")
_INFINITY_WORD = re.compile(r"(?i)^(?:infinity|infty|inf|infinite)$")
_DELIMITED = re.compile(r"^\$([^$]+)\$\s*([A-Za-z ]*)$")
_PLAIN_ROOT = re.compile(r"(?<![\\A-Za-z])sqrt\s*(\d+(?:\.\d+)?)")
_RATIO = re.compile(r"(?i)^(\d+)\s+(?:in|out\s+of)\s+(\d+)$")
_STRAY_BACKSLASH = re.compile(r"(?<!\\)\\(?=\d)")
_THOUSANDS = re.compile(r"(?<=\d),\s*\\!\s*(?=\d{3}(?!\d))|(?<=\d)\\!\s*,\s*(?=\d{3}(?!\d))")


def _unit_words_gone(s: str) -> str:
    if (square := _SQUARE_METRES.search(s)) and re.search(r"\d\s*$", s[: square.start()]):
        return s[: square.start()].rstrip()  # `25 m^2`: one letter with a power after a number is a unit
    m = _UNIT_TAIL.search(s)
    if not m:
        return s
    words = re.findall(r"[A-Za-z]+", m.group(0))
    head = s[: m.start()].rstrip()
    if any(w.lower() in FUNCTION_NAMES or w.lower().startswith(("percent", "pct", "degree")) for w in words):
        return s  # a percentage or an angle in degrees is read by the number and degree rules
    if not re.search(r"[\d)}\]]\s*$|pi\s*$", head):
        return s
    return head


def cases_as_list(s: str) -> str:
    """`\\begin{cases} x = 1 \\\\ y = 2 \\end{cases}` -> `x = 1, y = 2` (rows of a system)."""
    m = _CASES.search(s)
    if not m:
        return s
    rows = [r.replace("&", "").strip() for r in re.split(r"\\\\", m.group(1)) if r.strip()]
    if not rows or not all(len(split_equals(r)) == 2 for r in rows):
        return s
    return s[: m.start()] + ", ".join(rows) + s[m.end():]


def prepare(s: str) -> str:
    """The form an answer is compared in; see the module docstring."""
    t = s.strip()
    t = _THOUSANDS.sub(",", t)  # `11,\! 111,\! 100`: LaTeX's spacing inside a thousands separator
    t = _STRAY_BACKSLASH.sub("", t)  # `\15` (a dollar sign lost its `$`): no LaTeX command starts with a digit
    delimited = _DELIMITED.match(t)
    if delimited:  # `$\frac{\pi}{4}$ radians`: the math, then its unit words
        t = (delimited.group(1) + " " + delimited.group(2)).strip()
    t = _PLAIN_ROOT.sub(r"sqrt(\1)", t)  # `sqrt2`, `3sqrt5`: keyboard roots of a number
    ratio = _RATIO.match(t)
    if ratio:  # "1 in 6", "3 out of 8": a probability or a share
        t = f"{ratio.group(1)}/{ratio.group(2)}"
    t = mixed_in_words(t)  # "two and a half": `2 1/2`
    if not re.search(r"\d", t) and (written := words_to_digits(t)) != t and read_number(written) is not None:
        t = written  # "twelve", "twenty-five marbles"
    t = _ROMAN_CONST.sub(lambda m: m.group(1), t)
    t = _LATEX_SPACE.sub(" ", t)  # `2\,\frac{1}{2}`: a thin space, not a list comma
    t = _LEFT_RIGHT.sub("", t)
    if LINK.search(t) and not answer_word(t) and _TWO_WORDS.search(t):
        t = reduce_statement(t)
    t = cases_as_list(sets_in_words(t))
    mixed = _MIXED.match(t)
    if mixed and int(mixed.group(3)) < int(mixed.group(4)):
        sign, whole, num, den = mixed.groups()
        t = f"{sign}{int(whole) * int(den) + int(num)}/{den}"
    letter = _LETTER.match(t)
    if letter:
        return letter.group(1) or letter.group(2) or letter.group(3)
    t = _TRAILING_TEXT.sub("", t) if _DIGIT_OR_BRACE.search(_TRAILING_TEXT.sub("", t)) else t
    t = _unit_words_gone(t)
    return _INFINITY_WORD.sub("oo", t.strip())


def decimal_commas(pred: str, ref: str) -> tuple[str, str]:
    """`0,25` against `\\frac14` is the decimal 0.25; against another comma or a list ("6 and 8")
    it may be a list."""
    if "," in pred and "," in ref:
        return pred, ref

    def fix(s: str, other: str) -> str:
        # against a list ("6 and 8") the comma of `6,8` separates items too
        return s.replace(",", ".") if _DECIMAL_COMMA.match(s.strip()) and len(items(other)) < 2 else s
    return fix(pred, ref), fix(ref, pred)


_CONSTANT_OF_INTEGRATION = re.compile(r"\s*\+\s*(?:C|K|c)(?:_\{?\d\}?)?\s*$")
_CONSTANT_TERM = re.compile(r"(?:^|[+\-])\s*(?:C|K|c)(?:_\{?\d\}?)?\s*(?=$|[+\-])")


def without_constant(pred: str, ref: str) -> tuple[str, str]:
    """`\\frac{x^2}{2} + C` against `\\frac{x^2}{2}`: a constant of integration on one side only goes."""
    p, r = _CONSTANT_OF_INTEGRATION.search(pred), _CONSTANT_OF_INTEGRATION.search(ref)
    if p and not _CONSTANT_TERM.search(ref):
        return pred[: p.start()], ref
    if r and not _CONSTANT_TERM.search(pred):
        return pred, ref[: r.start()]
    return pred, ref


def drop_names(pred: str, ref: str) -> tuple[str, str]:
    """`f'(2) = 12` against `12` is `12`: a left side that only names the value goes."""
    def value(s: str, other: str) -> str:
        sides = split_equals(s)
        if len(sides) == 2 and len(split_equals(other)) == 1 and lhs_kind(sides[0]) == "name":
            return sides[1].strip()
        return s
    return value(pred, ref), value(ref, pred)


def _expand_pm(s: str) -> list[str]:
    pm = PLUS_MINUS.match(s.strip())
    if pm and _nested(pm.group(1)) and len(_PM_SIGN.findall(s)) == 1:
        # `\frac{-b \pm \sqrt{D}}{2a}`: inside brackets the sign applies to the term after it only
        return [_PM_SIGN.sub(lambda _: "+", s), _PM_SIGN.sub(lambda _: "-", s)]
    if not pm or "=" in pm.group(1):
        name = None
        if pm and len(sides := split_equals(pm.group(1))) == 2:
            name = sides[0].strip()
        if not pm or name is None:
            return [s]
        head = sides[1].strip()
        tail = pm.group(2).strip()
        return [f"{name} = {head} + {tail}" if head else f"{name} = {tail}",
                f"{name} = {head} - {tail}" if head else f"{name} = -{tail}"]
    head, tail = pm.group(1).strip().rstrip("+").strip(), pm.group(2).strip()
    return [f"{head} + {tail}" if head else tail, f"{head} - ({tail})" if head else f"-({tail})"]


def _nested(head: str) -> bool:
    """True when the end of `head` is inside brackets or braces."""
    depth = 0
    for ch in head:
        depth += 1 if ch in "([{" else -1 if ch in ")]}" and depth else 0
    return depth > 0


def _set_body(s: str) -> str | None:
    t = s.strip()
    for left, right in (("\\{", "\\}"), ("{", "}"), ("\\left\\{", "\\right\\}")):
        if t.startswith(left) and t.endswith(right) and "," in t:
            return t[len(left): len(t) - len(right)]
    return None


def items(s: str) -> list[str]:
    """The members of a listed answer (one item when it is not a list); at most `MAX_ITEMS`."""
    if s.strip().startswith("\\langle") and split_brackets(s) is not None:
        return [s]  # one vector: its commas separate entries, not answers
    body = _set_body(s)
    pieces = alternatives(body if body is not None else s)
    if len(pieces) > 1 and all(_RELATION.search(p) for p in pieces):
        return [s]  # "x < -1 or x > 2" is one set, a union of conditions
    out: list[str] = []
    for p in pieces[:MAX_ITEMS]:
        out += _expand_pm(p)
    return out or [s]


def is_relation_list(s: str) -> bool:
    """`x < -1 or x > 2`: conditions joined by "or" (a union), not a list of answers."""
    pieces = alternatives(s)
    return len(pieces) > 1 and all(_RELATION.search(p) for p in pieces)


def is_tuple(s: str) -> bool:
    """A parenthesised tuple or an angle-bracket vector with two or more entries."""
    t = s.strip()
    if (t[:1] == "(" and t[-1:] == ")") or (t[:1] == "<" and t[-1:] == ">") or t.startswith("\\langle"):
        inner = t[7:-7] if t.startswith("\\langle") else t[1:-1]
        return len(split_top_level(inner, ",")) > 1
    return False


def degrees_to_radians(s: str) -> str:
    """Degrees become radians (`90^\\circ` -> `90 pi/180`). Only the symbolic path uses it: a
    bare `30°` has already been compared as the number 30."""
    if not _DEGREE.search(s):
        return s
    latex = "\\" in s
    return _DEGREE.sub(lambda m: f"\\left(\\frac{{{m.group(1)}\\pi}}{{180}}\\right)" if latex
                       else f"({m.group(1)}*pi/180)", s)
