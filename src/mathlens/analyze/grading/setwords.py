"""Sets of real numbers written out: set-builder notation and phrases in words.

`sets_in_words` turns `\\{x \\mid 2 \\le x < 7\\}` (also `\\{x : ...\\}`, `\\{x \\in \\mathbb{R} \\mid ...\\}`)
into the condition that defines it, and "all real numbers greater than 5" (less than, at least, at
most, greater than or equal to...) into `x > 5`; "all real numbers" and `\\mathbb{R}` become
`-oo < x < oo`. The interval rules then compare them as sets.

    >>> sets_in_words("all real numbers greater than 5")
    'x > 5'
"""

from __future__ import annotations

import re

_SET_BUILDER = re.compile(r"^(?:\\left)?\\?\{\s*([a-z])\s*(?:\\in\s*\\mathbb\s*\{?R\}?\s*)?(?:\\mid|\||:|\\colon)\s*"
                          r"(.+?)\s*(?:\\right)?\\?\}$")
_REALS = r"(?:all\s+)?real\s+numbers?(?:\s+[a-z])?"
_REAL_WORDS = (
    (re.compile(rf"(?i)^{_REALS}\s+(?:that\s+are\s+)?greater\s+than\s+or\s+equal\s+to\s+(.+)$"), "x >= {}"),
    (re.compile(rf"(?i)^{_REALS}\s+(?:that\s+are\s+)?less\s+than\s+or\s+equal\s+to\s+(.+)$"), "x <= {}"),
    (re.compile(rf"(?i)^{_REALS}\s+(?:that\s+are\s+)?(?:greater|larger|bigger)\s+than\s+(.+)$"), "x > {}"),
    (re.compile(rf"(?i)^{_REALS}\s+(?:that\s+are\s+)?(?:less|smaller)\s+than\s+(.+)$"), "x < {}"),
    (re.compile(rf"(?i)^{_REALS}\s+(?:that\s+are\s+)?at\s+least\s+(.+)$"), "x >= {}"),
    (re.compile(rf"(?i)^{_REALS}\s+(?:that\s+are\s+)?at\s+most\s+(.+)$"), "x <= {}"),
    (re.compile(rf"(?i)^(?:{_REALS}|\\mathbb\s*\{{?R\}}?|ℝ)$"), "-oo < x < oo"),
)


def set_phrase(t: str) -> bool:
    """True when `t` is a set of reals written in words ("all real numbers greater than 5")."""
    return any(p.match(t.strip().rstrip(".")) for p, _ in _REAL_WORDS)


def sets_in_words(t: str) -> str:
    """`\\{x \\mid 2 \\le x < 7\\}` -> `2 \\le x < 7`; "all real numbers greater than 5" -> `x > 5`;
    "all real numbers" -> `-oo < x < oo`: a set written out becomes the condition that defines it."""
    m = _SET_BUILDER.match(t)
    if m and re.search(r"<|>|\\[lg]e|\\[lg]t|≤|≥|\\in\b", m.group(2)):
        return m.group(2)
    for pattern, form in _REAL_WORDS:
        w = pattern.match(t.strip().rstrip("."))
        if w:
            return form.format(*w.groups())
    return t


