"""A length of time written in two or three units: "2 hours and 30 minutes", "1 h 15 min",
"3 minutes 20 seconds".

`last_duration(text)` finds the last such phrase when nothing with a digit follows it, so that a
sentence that ends on one states the whole duration, not its last number. `duration_forms(text)`
gives the value of a text that is one such phrase (words after it allowed) in minutes, hours and
seconds, the units a reference may count in: "2 hours and 30 minutes" is 150 (minutes), 5/2
(hours) or 9000 (seconds). Only hours, minutes and seconds are read; "2 miles and 30 minutes" is
not a duration.

    >>> duration_forms("2 hours and 30 minutes")
    ['150', '5/2', '9000']
"""

from __future__ import annotations

import re
from fractions import Fraction

_H = r"(?:hours?|hrs?|h)"
_M = r"(?:minutes?|mins?|m)"
_S = r"(?:seconds?|secs?|s)"
_NUM = r"\d+(?:\.\d+)?"
_JOIN = r"\.?\s*,?\s*(?:and\s+)?"
DURATION = re.compile(
    rf"(?i)(?<![\w.])(?:(?P<h>{_NUM})\s*{_H}{_JOIN}(?P<m>{_NUM})\s*{_M}(?:{_JOIN}(?P<s>{_NUM})\s*{_S})?"
    rf"|(?P<m2>{_NUM})\s*{_M}{_JOIN}(?P<s2>{_NUM})\s*{_S})\b\.?")


def last_duration(text: str) -> re.Match[str] | None:
    """The last duration phrase of `text`, when no digit follows it; else None."""
    found = None
    for m in DURATION.finditer(text):
        found = m
    return found if found is not None and not re.search(r"\d", text[found.end():]) else None


def duration_forms(text: str) -> list[str]:
    """The value of `text`, one duration phrase and words after it, in minutes, hours and seconds
    (see the module docstring); empty when `text` is not one."""
    m = DURATION.match(text.strip())
    if m is None or re.search(r"\d", text.strip()[m.end():]):
        return []
    hours = Fraction(m.group("h") or 0)
    minutes = Fraction(m.group("m") or m.group("m2") or 0)
    seconds = Fraction(m.group("s") or m.group("s2") or 0)
    total = hours * 3600 + minutes * 60 + seconds
    return [str(total / 60), str(total / 3600), str(total)]
