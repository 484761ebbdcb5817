"""Numbers written in a base: `1011_2`, `1011_{2}`, `(342)_5`, `101_{(2)}`, `\\text{2A}_{16}`,
`1254_{\\text{six}}`.

A number with a base subscript stands for its digits in that base, and the digits are the answer
(a question that asks for base 2 wants base-2 digits):

* two based numbers are equal when the bases and the digits are the same (`1011_2` = `1011_{2}`;
  `1011_2` is not `1011_3`, nor `23_8`, which has the same value in another base);
* a based number and plain digits are equal when the digits are the same (`1011` = `1011_2`: the
  base was left to the question); other digits differ even when the value agrees (`11` is not
  `1011_2`), since the digits asked for were not given.

Digits are numerals and capital letters valid in the base, with at least one numeral, so a
subscripted name (`a_5`, `x_{12}`, `A_{16}`) is not a number here.

    >>> compare_bases("1011", "1011_{2}")
    'equal'
    >>> compare_bases("11", "1011_2")
    'different'
"""

from __future__ import annotations

import re

from mathlens.analyze.readers.normalize import strip_text_wrappers

_WORDS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
          "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16}
_BASED = re.compile(r"^\(?((?=[0-9A-Z]*[0-9])[0-9A-Z]+)\)?_\{?\s*\(?\s*(\d{1,2}|[a-z]+)\s*\)?\s*\}?$")
_PLAIN = re.compile(r"^[0-9][0-9A-Z]*$")
_DIGITS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def read_based(text: str) -> tuple[str, int] | None:
    """`(digits, base)` of a number written with a base subscript, or None."""
    t = strip_text_wrappers(text).replace("$", "").replace(" ", "").strip()
    m = _BASED.match(t)
    if m is None:
        return None
    word = m.group(2)
    base = int(word) if word.isdigit() else _WORDS.get(word)
    digits = m.group(1).lstrip("0") or "0"
    if base is None or not 2 <= base <= 36 or any(_DIGITS.index(d) >= base for d in digits):
        return None
    return digits, base


def compare_bases(pred: str, ref: str) -> str | None:
    """`equal` / `different` when either answer is a based number (see the module docstring), None
    when neither is, or when the other answer is neither a based number nor plain digits."""
    a, b = read_based(pred), read_based(ref)
    if a is None and b is None:
        return None
    if a is not None and b is not None:
        return "equal" if a == b else "different"
    based, other = (a, ref) if a is not None else (b, pred)
    assert based is not None
    plain = strip_text_wrappers(other).replace("$", "").strip()
    if not _PLAIN.match(plain):
        return None
    return "equal" if (plain.lstrip("0") or "0") == based[0] else "different"
