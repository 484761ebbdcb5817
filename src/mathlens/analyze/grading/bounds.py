"""Answers too large to compare: refused in the calling process before any parser sees them.

An answer that differs from the reference as text is parsed, and a model's output is hostile
input. These checks are linear in the text and cost microseconds; what they refuse is
`unparseable`, with the reason, instead of a parse that would run into the worker's time budget:

* longer than `MAX_ANSWER_CHARS` characters (an "answer" that long is prose);
* brackets nested deeper than the parser's limit (`\\frac` inside `\\frac` 3,000 times, 20,000
  parentheses);
* a power tower whose value has more digits than the parser's limit (`9^9^9^9`,
  `9^{9^{9^{9}}}`): the size is estimated from the digits, never computed;
* a factorial of a number above the parser's limit (`100000!`, `(10^6)!`), which a parser may
  otherwise evaluate while reading it.

    >>> answer_bounds("9^{9^{9^{9}}}", "predicted")
    'predicted: a power would have more than 100,000 digits'
    >>> answer_bounds("2^{10}", "predicted")
    ''
"""

from __future__ import annotations

import math
import re

from mathlens.analyze.verify.limits import DEFAULT_LIMITS, nesting_depth

MAX_ANSWER_CHARS = 2000  # a longer "answer" is prose, not something to parse
_POWER_BASE = re.compile(r"(?<![\w.])\d+(?:\.\d+)?\s*(?:\^|\*\*)")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_OPENING = {"{": "}", "(": ")"}
_FACTORIAL = re.compile(r"(?<![\w.])(?:(\d+)|\((\d[^()]{0,200})\))\s*!")


def _log10_power(text: str, i: int, depth: int = 0) -> tuple[float, int] | None:
    """log10 of the value of the power tower of plain numbers starting at `i`, and where it ends;
    None when what starts there is not such a tower."""
    m = _NUMBER.match(text, i)
    if m is None or depth > DEFAULT_LIMITS.max_nesting:
        return None
    value = math.log10(max(float(m.group(0)), 1.0)) if len(m.group(0)) < 300 else float(len(m.group(0)))
    j = m.end()
    while j < len(text) and text[j] == " ":
        j += 1
    op = 2 if text.startswith("**", j) else 1 if text.startswith("^", j) else 0
    if not op:
        return value, j
    j += op
    while j < len(text) and text[j] == " ":
        j += 1
    closing = _OPENING.get(text[j:j + 1])
    inner = _log10_power(text, j + 1 if closing else j, depth + 1)
    if inner is None:
        return None
    exponent, k = inner
    if closing:
        if not text.startswith(closing, k):
            return None
        k += 1
    if value == 0.0:
        return 0.0, k
    return (math.inf if exponent > 15 else value * 10.0**exponent), k


def power_digits(text: str) -> float:
    """The most digits any power tower of plain numbers in `text` would have (0 when none)."""
    most = 0.0
    for m in _POWER_BASE.finditer(text):
        tower = _log10_power(text, m.start())
        if tower is not None:
            most = max(most, tower[0])
    return most


def answer_bounds(text: str, side: str) -> str:
    """Why `text` is refused (prefixed with `side`), or "" when it can be compared."""
    if len(text) > MAX_ANSWER_CHARS:
        return f"{side}: too long to be an answer" if side == "predicted" else f"{side}: too long to compare"
    if nesting_depth(text) > DEFAULT_LIMITS.max_nesting:
        return f"{side}: brackets nested deeper than {DEFAULT_LIMITS.max_nesting}"
    if power_digits(text) > DEFAULT_LIMITS.max_digits:
        return f"{side}: a power would have more than {DEFAULT_LIMITS.max_digits:,} digits"
    if factorial_operand(text) > DEFAULT_LIMITS.max_factorial:
        return f"{side}: factorial of a number above {DEFAULT_LIMITS.max_factorial:,}"
    return ""


def factorial_operand(text: str) -> float:
    """The largest number a factorial in `text` is taken of (`100000!`, `(10^6)!`; 0 when none):
    a plain number, or a bracketed power tower of plain numbers, before a `!`."""
    most = 0.0
    for m in _FACTORIAL.finditer(text):
        if m.group(1):
            value = float(m.group(1)) if len(m.group(1)) < 300 else math.inf
        else:
            tower = _log10_power(text, m.start(2))
            if tower is None or not text.startswith(")", tower[1]):
                continue
            value = math.inf if tower[0] > 300 else 10.0 ** tower[0]
        most = max(most, value)
    return most
