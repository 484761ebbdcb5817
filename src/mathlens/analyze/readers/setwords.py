"""Sets of real numbers written out: set-builder notation and phrases in words.

`sets_in_words` turns `\\{x \\mid 2 \\le x < 7\\}` (also `\\{x : ...\\}`, `\\{x \\in \\mathbb{R} \\mid ...\\}`)
into the condition that defines it, and "all real numbers greater than 5" (less than, at least, at
most, greater than or equal to...) into `x > 5`, "all real numbers except 2" into `x < 2 or x > 2`;
"all real numbers" and `\\mathbb{R}` become `-oo < x < oo`. The interval rules then compare them as
sets. `x \\in \\{-1, 1\\}` is the list of its members, `|x| > 2` the two rays outside (-2, 2) and
`|x| \\le 3` the interval [-3, 3], and `\\emptyset`, `\\varnothing`, `∅`, `\\{\\}` are the words "empty
set" (the same answer as "no solution").

    >>> sets_in_words("all real numbers greater than 5")
    'x > 5'
"""

from __future__ import annotations

import re

_SET_BUILDER = re.compile(r"^(?:\\left)?\\?\{\s*([a-z])\s*(?:\\in\s*\\mathbb\s*\{?R\}?\s*)?(?:\\mid|\||:|\\colon)\s*"
                          r"(.+?)\s*(?:\\right)?\\?\}$")
_ABSOLUTE = re.compile(r"^(?:\\left)?\|\s*([a-z])\s*(?:\\right)?\|\s*(<=|>=|<|>|≤|≥|\\leq?|\\geq?|\\lt|\\gt)"
                       r"\s*(\d+(?:/\d+)?)$")
_MEMBER_OF_FINITE = re.compile(r"^[a-z]\s*(?:\\in|∈)\s*(\\\{[^<>≤≥]*\\\}|\{[^<>≤≥]*\})$")
_EMPTY = re.compile(r"^(?:\\emptyset|\\varnothing|∅|\\\{\s*\\\}|\{\s*\})$")
_REALS = r"(?:all\s+)?real\s+numbers?(?:\s+[a-z])?"
_REAL_WORDS = (
    (re.compile(rf"(?i)^{_REALS}\s+(?:that\s+are\s+)?greater\s+than\s+or\s+equal\s+to\s+(.+)$"), "x >= {}"),
    (re.compile(rf"(?i)^{_REALS}\s+(?:that\s+are\s+)?less\s+than\s+or\s+equal\s+to\s+(.+)$"), "x <= {}"),
    (re.compile(rf"(?i)^{_REALS}\s+(?:that\s+are\s+)?(?:greater|larger|bigger)\s+than\s+(.+)$"), "x > {}"),
    (re.compile(rf"(?i)^{_REALS}\s+(?:that\s+are\s+)?(?:less|smaller)\s+than\s+(.+)$"), "x < {}"),
    (re.compile(rf"(?i)^{_REALS}\s+(?:that\s+are\s+)?at\s+least\s+(.+)$"), "x >= {}"),
    (re.compile(rf"(?i)^{_REALS}\s+(?:that\s+are\s+)?at\s+most\s+(.+)$"), "x <= {}"),
    (re.compile(rf"(?i)^{_REALS}\s+(?:except|other\s+than|but)\s+(?:for\s+)?(?:[a-z]\s*=\s*)?(-?\d+(?:/\d+)?)$"),
     "x < {0} or x > {0}"),
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
    absolute = _ABSOLUTE.match(t)
    if absolute:  # `|x| > 2`: outside (-2, 2); `|x| \le 3`: between -3 and 3
        var, op, bound = absolute.groups()
        below = op.startswith("<") or op in ("\\le", "\\leq", "\\lt", "≤")
        strict = op in ("<", ">", "\\lt", "\\gt")
        sign = ("<" if strict else "<=")
        if below:
            return f"-{bound} {sign} {var} {sign} {bound}"
        return f"{var} {'<' if strict else '<='} -{bound} or {var} {'>' if strict else '>='} {bound}"
    member = _MEMBER_OF_FINITE.match(t)
    if member:  # `x \in \{-1, 1\}`: the solutions listed
        return member.group(1)
    if _EMPTY.match(t):
        return "empty set"
    for pattern, form in _REAL_WORDS:
        w = pattern.match(t.strip().rstrip("."))
        if w:
            return form.format(*w.groups())
    return t


